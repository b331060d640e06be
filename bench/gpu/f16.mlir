// The four f16/bf16 ops of issue 33's GPU bench (the f32 one is in five.mlir),
// for CFG=bench/gpu/f16.cfg bench/gpu/batch.sh: f16 x f16 -> f32 4096^3 and
// the seed's 3456x1024x2048, bf16 x bf16 -> f32 4096^3, f16 -> f16 2048^3.
func.func @f16f32_4096(%a: tensor<4096x4096xf16>, %b: tensor<4096x4096xf16>, %c: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4096x4096xf16>, tensor<4096x4096xf16>) outs(%c : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %r : tensor<4096x4096xf32>
}
func.func @f16f32_seed(%a: tensor<3456x2048xf16>, %b: tensor<2048x1024xf16>, %c: tensor<3456x1024xf32>) -> tensor<3456x1024xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<3456x2048xf16>, tensor<2048x1024xf16>) outs(%c : tensor<3456x1024xf32>) -> tensor<3456x1024xf32>
  return %r : tensor<3456x1024xf32>
}
func.func @bf16f32_4096(%a: tensor<4096x4096xbf16>, %b: tensor<4096x4096xbf16>, %c: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) outs(%c : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %r : tensor<4096x4096xf32>
}
func.func @f16_2048(%a: tensor<2048x2048xf16>, %b: tensor<2048x2048xf16>, %c: tensor<2048x2048xf16>) -> tensor<2048x2048xf16> {
  %r = linalg.matmul ins(%a, %b : tensor<2048x2048xf16>, tensor<2048x2048xf16>) outs(%c : tensor<2048x2048xf16>) -> tensor<2048x2048xf16>
  return %r : tensor<2048x2048xf16>
}
