// 1024x512x256 f32 matmul (the seed's op): a non-square sweep of the tuner benchmark.
func.func @mm1024(%a: tensor<1024x256xf32>, %b: tensor<256x512xf32>) -> tensor<1024x512xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<1024x512xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<1024x512xf32>) -> tensor<1024x512xf32>
	%r = linalg.matmul ins(%a, %b : tensor<1024x256xf32>, tensor<256x512xf32>)
	    outs(%c : tensor<1024x512xf32>) -> tensor<1024x512xf32>
	return %r : tensor<1024x512xf32>
}
