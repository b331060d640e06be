// bench/conv.sh SETS=sample: five of ResNet-50's 20 distinct convs (resnet50.mlir):
// the 7x7 stride-2 stem, a 1x1 stride-1 (a plain matmul), a 3x3 at 56x56, a
// 1x1 stride-2 and a 3x3 at 14x14.
func.func @stem_7x7s2_3_64(%x: tensor<1x224x224x3xf32>, %w: tensor<7x7x3x64xf32>) -> tensor<1x112x112x64xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 3, 3, 0] high[0, 2, 2, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %z : f32
  } : tensor<1x224x224x3xf32> to tensor<1x229x229x3xf32>
  %e = tensor.empty() : tensor<1x112x112x64xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x112x112x64xf32>) -> tensor<1x112x112x64xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %w : tensor<1x229x229x3xf32>, tensor<7x7x3x64xf32>) outs(%i : tensor<1x112x112x64xf32>) -> tensor<1x112x112x64xf32>
  return %0 : tensor<1x112x112x64xf32>
}
func.func @l1_3x3_64_64(%x: tensor<1x56x56x64xf32>, %w: tensor<3x3x64x64xf32>) -> tensor<1x56x56x64xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %z : f32
  } : tensor<1x56x56x64xf32> to tensor<1x58x58x64xf32>
  %e = tensor.empty() : tensor<1x56x56x64xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x56x56x64xf32>) -> tensor<1x56x56x64xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x58x58x64xf32>, tensor<3x3x64x64xf32>) outs(%i : tensor<1x56x56x64xf32>) -> tensor<1x56x56x64xf32>
  return %0 : tensor<1x56x56x64xf32>
}
func.func @l1_1x1_64_256(%x: tensor<1x56x56x64xf32>, %w: tensor<1x1x64x256xf32>) -> tensor<1x56x56x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x56x56x256xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x56x56x256xf32>) -> tensor<1x56x56x256xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x56x56x64xf32>, tensor<1x1x64x256xf32>) outs(%i : tensor<1x56x56x256xf32>) -> tensor<1x56x56x256xf32>
  return %0 : tensor<1x56x56x256xf32>
}
func.func @l2_1x1s2_256_128(%x: tensor<1x56x56x256xf32>, %w: tensor<1x1x256x128xf32>) -> tensor<1x28x28x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x28x28x128xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x28x28x128xf32>) -> tensor<1x28x28x128xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x56x56x256xf32>, tensor<1x1x256x128xf32>) outs(%i : tensor<1x28x28x128xf32>) -> tensor<1x28x28x128xf32>
  return %0 : tensor<1x28x28x128xf32>
}
func.func @l3_3x3_256_256(%x: tensor<1x14x14x256xf32>, %w: tensor<3x3x256x256xf32>) -> tensor<1x14x14x256xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %z : f32
  } : tensor<1x14x14x256xf32> to tensor<1x16x16x256xf32>
  %e = tensor.empty() : tensor<1x14x14x256xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x14x14x256xf32>) -> tensor<1x14x14x256xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x16x16x256xf32>, tensor<3x3x256x256xf32>) outs(%i : tensor<1x14x14x256xf32>) -> tensor<1x14x14x256xf32>
  return %0 : tensor<1x14x14x256xf32>
}
