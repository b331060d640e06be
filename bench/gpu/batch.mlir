// The seed's op (002): f16 x f16 -> f32, 3456x1024x2048, for bench/gpu/batch.sh.
func.func @mm(%a: tensor<3456x2048xf16>, %b: tensor<2048x1024xf16>, %c: tensor<3456x1024xf32>) -> tensor<3456x1024xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<3456x2048xf16>, tensor<2048x1024xf16>) outs(%c : tensor<3456x1024xf32>) -> tensor<3456x1024xf32>
  return %r : tensor<3456x1024xf32>
}
