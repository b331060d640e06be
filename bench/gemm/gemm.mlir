// The bench/gemm.sh f32 ops: row-major matmuls, one function each (M x N x K): 128^3, 512^3,
// 1024^3, 2048^3, the seed's 1024x512x256, the dispatch profiler's 3456x1024x2048 and 768x512x1024,
// and two transformer-like projections.

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

// the dispatch profiler's large shape
func.func @tr3456x1024x2048(%a: tensor<3456x2048xf32>, %b: tensor<2048x1024xf32>) -> tensor<3456x1024xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<3456x1024xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<3456x1024xf32>) -> tensor<3456x1024xf32>
	%r = linalg.matmul ins(%a, %b : tensor<3456x2048xf32>, tensor<2048x1024xf32>)
	    outs(%c : tensor<3456x1024xf32>) -> tensor<3456x1024xf32>
	return %r : tensor<3456x1024xf32>
}

// the dispatch profiler's example
func.func @tr768x512x1024(%a: tensor<768x1024xf32>, %b: tensor<1024x512xf32>) -> tensor<768x512xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<768x512xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<768x512xf32>) -> tensor<768x512xf32>
	%r = linalg.matmul ins(%a, %b : tensor<768x1024xf32>, tensor<1024x512xf32>)
	    outs(%c : tensor<768x512xf32>) -> tensor<768x512xf32>
	return %r : tensor<768x512xf32>
}

// transformer-like: 64 tokens through a 768->3072 projection
func.func @tx64x3072x768(%a: tensor<64x768xf32>, %b: tensor<768x3072xf32>) -> tensor<64x3072xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<64x3072xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<64x3072xf32>) -> tensor<64x3072xf32>
	%r = linalg.matmul ins(%a, %b : tensor<64x768xf32>, tensor<768x3072xf32>)
	    outs(%c : tensor<64x3072xf32>) -> tensor<64x3072xf32>
	return %r : tensor<64x3072xf32>
}

// transformer-like: 128 tokens through a 3072->768 projection
func.func @tx128x768x3072(%a: tensor<128x3072xf32>, %b: tensor<3072x768xf32>) -> tensor<128x768xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<128x768xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<128x768xf32>) -> tensor<128x768xf32>
	%r = linalg.matmul ins(%a, %b : tensor<128x3072xf32>, tensor<3072x768xf32>)
	    outs(%c : tensor<128x768xf32>) -> tensor<128x768xf32>
	return %r : tensor<128x768xf32>
}
