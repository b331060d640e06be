// The bench/gemm.sh mixed-precision ops (the tables' second part): int8 into
// i32 (signed, and unsigned x signed as oneDNN's u8s8), bf16 and f16 into f32,
// and the IREE example's f16 batch_matmul 16x1024x1024x80 (attention-like:
// 16 heads, 1024 tokens, head dim 80).
func.func @i8(%a: tensor<1024x1024xi8>, %b: tensor<1024x1024xi8>, %c: tensor<1024x1024xi32>) -> tensor<1024x1024xi32> {
	%r = linalg.matmul ins(%a, %b : tensor<1024x1024xi8>, tensor<1024x1024xi8>)
	    outs(%c : tensor<1024x1024xi32>) -> tensor<1024x1024xi32>
	return %r : tensor<1024x1024xi32>
}

func.func @u8i8(%a: tensor<1024x1024xi8>, %b: tensor<1024x1024xi8>, %c: tensor<1024x1024xi32>) -> tensor<1024x1024xi32> {
	%r = linalg.generic {indexing_maps = [
	    affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
	    affine_map<(m, n, k) -> (m, n)>],
	    iterator_types = ["parallel", "parallel", "reduction"]}
	    ins(%a, %b : tensor<1024x1024xi8>, tensor<1024x1024xi8>) outs(%c : tensor<1024x1024xi32>) {
	^bb0(%x: i8, %y: i8, %z: i32):
		%x1 = arith.extui %x : i8 to i32
		%y1 = arith.extsi %y : i8 to i32
		%p = arith.muli %x1, %y1 : i32
		%s = arith.addi %z, %p : i32
		linalg.yield %s : i32
	} -> tensor<1024x1024xi32>
	return %r : tensor<1024x1024xi32>
}

func.func @bf16(%a: tensor<1024x1024xbf16>, %b: tensor<1024x1024xbf16>, %c: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
	%r = linalg.matmul ins(%a, %b : tensor<1024x1024xbf16>, tensor<1024x1024xbf16>)
	    outs(%c : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
	return %r : tensor<1024x1024xf32>
}

func.func @f16(%a: tensor<1024x1024xf16>, %b: tensor<1024x1024xf16>, %c: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
	%r = linalg.matmul ins(%a, %b : tensor<1024x1024xf16>, tensor<1024x1024xf16>)
	    outs(%c : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
	return %r : tensor<1024x1024xf32>
}

func.func @bmm_f16(%a: tensor<16x1024x80xf16>, %b: tensor<16x80x1024xf16>, %c: tensor<16x1024x1024xf16>) -> tensor<16x1024x1024xf16> {
	%r = linalg.batch_matmul ins(%a, %b : tensor<16x1024x80xf16>, tensor<16x80x1024xf16>)
	    outs(%c : tensor<16x1024x1024xf16>) -> tensor<16x1024x1024xf16>
	return %r : tensor<16x1024x1024xf16>
}
