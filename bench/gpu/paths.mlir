// The CUDA paths of issue 33 not yet run on a GPU, for
// CFG=bench/gpu/paths.cfg bench/gpu/batch.sh: a ragged f16 matmul (1000^3:
// no mma tile divides it, compiled with IREE's padding), a batch matmul
// (8 x 1024^3 f16 -> f32) and a matmul with B stored transposed (N x K,
// 2048^3 f16 -> f32, as attention's Q.K^T is written).
func.func @ragged_1000(%a: tensor<1000x1000xf16>, %b: tensor<1000x1000xf16>, %c: tensor<1000x1000xf32>) -> tensor<1000x1000xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<1000x1000xf16>, tensor<1000x1000xf16>) outs(%c : tensor<1000x1000xf32>) -> tensor<1000x1000xf32>
  return %r : tensor<1000x1000xf32>
}
func.func @batch_8x1024(%a: tensor<8x1024x1024xf16>, %b: tensor<8x1024x1024xf16>, %c: tensor<8x1024x1024xf32>) -> tensor<8x1024x1024xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<8x1024x1024xf16>, tensor<8x1024x1024xf16>) outs(%c : tensor<8x1024x1024xf32>) -> tensor<8x1024x1024xf32>
  return %r : tensor<8x1024x1024xf32>
}
func.func @bt_2048(%a: tensor<2048x2048xf16>, %b: tensor<2048x2048xf16>, %c: tensor<2048x2048xf32>) -> tensor<2048x2048xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%a, %b : tensor<2048x2048xf16>, tensor<2048x2048xf16>) outs(%c : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  return %r : tensor<2048x2048xf32>
}
