// The bench/gemm.sh ops: f32 row-major matmuls, one function each (M x N x K).

func.func @mm128(%a: tensor<128x128xf32>, %b: tensor<128x128xf32>) -> tensor<128x128xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<128x128xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<128x128xf32>) -> tensor<128x128xf32>
	%r = linalg.matmul ins(%a, %b : tensor<128x128xf32>, tensor<128x128xf32>)
	    outs(%c : tensor<128x128xf32>) -> tensor<128x128xf32>
	return %r : tensor<128x128xf32>
}

func.func @mm512(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<512x512xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<512x512xf32>) -> tensor<512x512xf32>
	%r = linalg.matmul ins(%a, %b : tensor<512x512xf32>, tensor<512x512xf32>)
	    outs(%c : tensor<512x512xf32>) -> tensor<512x512xf32>
	return %r : tensor<512x512xf32>
}

func.func @mm1024(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<1024x1024xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
	%r = linalg.matmul ins(%a, %b : tensor<1024x1024xf32>, tensor<1024x1024xf32>)
	    outs(%c : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
	return %r : tensor<1024x1024xf32>
}

func.func @mm2048(%a: tensor<2048x2048xf32>, %b: tensor<2048x2048xf32>) -> tensor<2048x2048xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<2048x2048xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
	%r = linalg.matmul ins(%a, %b : tensor<2048x2048xf32>, tensor<2048x2048xf32>)
	    outs(%c : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
	return %r : tensor<2048x2048xf32>
}

func.func @seed1024x512x256(%a: tensor<1024x256xf32>, %b: tensor<256x512xf32>) -> tensor<1024x512xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<1024x512xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<1024x512xf32>) -> tensor<1024x512xf32>
	%r = linalg.matmul ins(%a, %b : tensor<1024x256xf32>, tensor<256x512xf32>)
	    outs(%c : tensor<1024x512xf32>) -> tensor<1024x512xf32>
	return %r : tensor<1024x512xf32>
}
