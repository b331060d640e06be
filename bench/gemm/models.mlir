// The bench/gemm.sh set "models": the matmul shapes of the real models in
// ../shared/models (DeepSeek-R1-Qwen-1.5B decode and a 40-token prefill block,
// MobileBERT), as their programs write them (row-major, f32), one function each.

func.func @decode_qo(%a: tensor<1x1536xf32>, %b: tensor<1536x1536xf32>) -> tensor<1x1536xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<1x1536xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<1x1536xf32>) -> tensor<1x1536xf32>
	%r = linalg.matmul ins(%a, %b : tensor<1x1536xf32>, tensor<1536x1536xf32>)
	    outs(%c : tensor<1x1536xf32>) -> tensor<1x1536xf32>
	return %r : tensor<1x1536xf32>
}

func.func @decode_up(%a: tensor<1x1536xf32>, %b: tensor<1536x8960xf32>) -> tensor<1x8960xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<1x8960xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<1x8960xf32>) -> tensor<1x8960xf32>
	%r = linalg.matmul ins(%a, %b : tensor<1x1536xf32>, tensor<1536x8960xf32>)
	    outs(%c : tensor<1x8960xf32>) -> tensor<1x8960xf32>
	return %r : tensor<1x8960xf32>
}

func.func @decode_down(%a: tensor<1x8960xf32>, %b: tensor<8960x1536xf32>) -> tensor<1x1536xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<1x1536xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<1x1536xf32>) -> tensor<1x1536xf32>
	%r = linalg.matmul ins(%a, %b : tensor<1x8960xf32>, tensor<8960x1536xf32>)
	    outs(%c : tensor<1x1536xf32>) -> tensor<1x1536xf32>
	return %r : tensor<1x1536xf32>
}

func.func @decode_lmhead(%a: tensor<1x1536xf32>, %b: tensor<1536x151936xf32>) -> tensor<1x151936xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<1x151936xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<1x151936xf32>) -> tensor<1x151936xf32>
	%r = linalg.matmul ins(%a, %b : tensor<1x1536xf32>, tensor<1536x151936xf32>)
	    outs(%c : tensor<1x151936xf32>) -> tensor<1x151936xf32>
	return %r : tensor<1x151936xf32>
}

func.func @prefill_up(%a: tensor<40x1536xf32>, %b: tensor<1536x8960xf32>) -> tensor<40x8960xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<40x8960xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<40x8960xf32>) -> tensor<40x8960xf32>
	%r = linalg.matmul ins(%a, %b : tensor<40x1536xf32>, tensor<1536x8960xf32>)
	    outs(%c : tensor<40x8960xf32>) -> tensor<40x8960xf32>
	return %r : tensor<40x8960xf32>
}

func.func @prefill_down(%a: tensor<40x8960xf32>, %b: tensor<8960x1536xf32>) -> tensor<40x1536xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<40x1536xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<40x1536xf32>) -> tensor<40x1536xf32>
	%r = linalg.matmul ins(%a, %b : tensor<40x8960xf32>, tensor<8960x1536xf32>)
	    outs(%c : tensor<40x1536xf32>) -> tensor<40x1536xf32>
	return %r : tensor<40x1536xf32>
}

func.func @prefill_scores(%a: tensor<12x40x128xf32>, %b: tensor<12x128x40xf32>) -> tensor<12x40x40xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<12x40x40xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<12x40x40xf32>) -> tensor<12x40x40xf32>
	%r = linalg.batch_matmul ins(%a, %b : tensor<12x40x128xf32>, tensor<12x128x40xf32>)
	    outs(%c : tensor<12x40x40xf32>) -> tensor<12x40x40xf32>
	return %r : tensor<12x40x40xf32>
}

func.func @prefill_context(%a: tensor<12x40x40xf32>, %b: tensor<12x40x128xf32>) -> tensor<12x40x128xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<12x40x128xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<12x40x128xf32>) -> tensor<12x40x128xf32>
	%r = linalg.batch_matmul ins(%a, %b : tensor<12x40x40xf32>, tensor<12x40x128xf32>)
	    outs(%c : tensor<12x40x128xf32>) -> tensor<12x40x128xf32>
	return %r : tensor<12x40x128xf32>
}

func.func @bert_scores(%a: tensor<384x32xf32>, %b: tensor<32x384xf32>) -> tensor<384x384xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<384x384xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<384x384xf32>) -> tensor<384x384xf32>
	%r = linalg.matmul ins(%a, %b : tensor<384x32xf32>, tensor<32x384xf32>)
	    outs(%c : tensor<384x384xf32>) -> tensor<384x384xf32>
	return %r : tensor<384x384xf32>
}

func.func @bert_context(%a: tensor<384x384xf32>, %b: tensor<384x32xf32>) -> tensor<384x32xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<384x32xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<384x32xf32>) -> tensor<384x32xf32>
	%r = linalg.matmul ins(%a, %b : tensor<384x384xf32>, tensor<384x32xf32>)
	    outs(%c : tensor<384x32xf32>) -> tensor<384x32xf32>
	return %r : tensor<384x32xf32>
}

func.func @bert_logits(%a: tensor<384x512xf32>, %b: tensor<512x2xf32>) -> tensor<384x2xf32> {
	%cst = arith.constant 0.000000e+00 : f32
	%init = tensor.empty() : tensor<384x2xf32>
	%c = linalg.fill ins(%cst : f32) outs(%init : tensor<384x2xf32>) -> tensor<384x2xf32>
	%r = linalg.matmul ins(%a, %b : tensor<384x512xf32>, tensor<512x2xf32>)
	    outs(%c : tensor<384x2xf32>) -> tensor<384x2xf32>
	return %r : tensor<384x2xf32>
}
