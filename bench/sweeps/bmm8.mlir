// batch_matmul 8x256x256x128 f32: the batched sweep of the tuner benchmark.
func.func @bmm8(%a: tensor<8x256x128xf32>, %b: tensor<8x128x256xf32>) -> tensor<8x256x256xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<8x256x256xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<8x256x256xf32>) -> tensor<8x256x256xf32>
	%r = linalg.batch_matmul ins(%a, %b : tensor<8x256x128xf32>, tensor<8x128x256xf32>)
	    outs(%c : tensor<8x256x256xf32>) -> tensor<8x256x256xf32>
	return %r : tensor<8x256x256xf32>
}
