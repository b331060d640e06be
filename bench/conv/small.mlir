// bench/conv.sh SETS=small: two small convolutions of ResNet-50's kinds
// (a padded 3x3 at 14x14x32, a stride-2 1x1 32->64 at 28x28), to check in
// about a minute that the benchmark runs end to end. Not figures.
func.func @small_3x3_32_32(%x: tensor<1x14x14x32xf32>, %w: tensor<3x3x32x32xf32>) -> tensor<1x14x14x32xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %z : f32
  } : tensor<1x14x14x32xf32> to tensor<1x16x16x32xf32>
  %e = tensor.empty() : tensor<1x14x14x32xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x14x14x32xf32>) -> tensor<1x14x14x32xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x16x16x32xf32>, tensor<3x3x32x32xf32>) outs(%i : tensor<1x14x14x32xf32>) -> tensor<1x14x14x32xf32>
  return %0 : tensor<1x14x14x32xf32>
}
func.func @small_1x1s2_32_64(%x: tensor<1x28x28x32xf32>, %w: tensor<1x1x32x64xf32>) -> tensor<1x14x14x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x14x14x64xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x14x14x64xf32>) -> tensor<1x14x14x64xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x28x28x32xf32>, tensor<1x1x32x64xf32>) outs(%i : tensor<1x14x14x64xf32>) -> tensor<1x14x14x64xf32>
  return %0 : tensor<1x14x14x64xf32>
}
