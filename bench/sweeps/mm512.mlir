// 512x512x512 f32 matmul: the square sweep of the tuner benchmark.
func.func @mm512(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<512x512xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<512x512xf32>) -> tensor<512x512xf32>
	%r = linalg.matmul ins(%a, %b : tensor<512x512xf32>, tensor<512x512xf32>)
	    outs(%c : tensor<512x512xf32>) -> tensor<512x512xf32>
	return %r : tensor<512x512xf32>
}
