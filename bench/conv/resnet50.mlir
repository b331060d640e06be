// bench/conv.sh: the 20 distinct convolutions of ResNet-50 v1 (f32, batch 1,
// 224x224 input, NHWC/HWCF as tpp-mlir's linalg ResNet-50 writes them), one
// function each: the 7x7 stride-2 stem (padding 3 before, 2 after), and per
// layer the bottlenecks' 1x1 convs (stride 2 on the first block's first 1x1
// and projection in layers 2-4, as v1 has it) and the 3x3 (padding 1).
// Derived from the architecture for autosched's benchmark; weights are
// arguments.
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
func.func @l1_1x1s1_64_64(%x: tensor<1x56x56x64xf32>, %w: tensor<1x1x64x64xf32>) -> tensor<1x56x56x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x56x56x64xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x56x56x64xf32>) -> tensor<1x56x56x64xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x56x56x64xf32>, tensor<1x1x64x64xf32>) outs(%i : tensor<1x56x56x64xf32>) -> tensor<1x56x56x64xf32>
  return %0 : tensor<1x56x56x64xf32>
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
func.func @l1_1x1_256_64(%x: tensor<1x56x56x256xf32>, %w: tensor<1x1x256x64xf32>) -> tensor<1x56x56x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x56x56x64xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x56x56x64xf32>) -> tensor<1x56x56x64xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x56x56x256xf32>, tensor<1x1x256x64xf32>) outs(%i : tensor<1x56x56x64xf32>) -> tensor<1x56x56x64xf32>
  return %0 : tensor<1x56x56x64xf32>
}
func.func @l2_1x1s2_256_128(%x: tensor<1x56x56x256xf32>, %w: tensor<1x1x256x128xf32>) -> tensor<1x28x28x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x28x28x128xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x28x28x128xf32>) -> tensor<1x28x28x128xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x56x56x256xf32>, tensor<1x1x256x128xf32>) outs(%i : tensor<1x28x28x128xf32>) -> tensor<1x28x28x128xf32>
  return %0 : tensor<1x28x28x128xf32>
}
func.func @l2_3x3_128_128(%x: tensor<1x28x28x128xf32>, %w: tensor<3x3x128x128xf32>) -> tensor<1x28x28x128xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %z : f32
  } : tensor<1x28x28x128xf32> to tensor<1x30x30x128xf32>
  %e = tensor.empty() : tensor<1x28x28x128xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x28x28x128xf32>) -> tensor<1x28x28x128xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x30x30x128xf32>, tensor<3x3x128x128xf32>) outs(%i : tensor<1x28x28x128xf32>) -> tensor<1x28x28x128xf32>
  return %0 : tensor<1x28x28x128xf32>
}
func.func @l2_1x1_128_512(%x: tensor<1x28x28x128xf32>, %w: tensor<1x1x128x512xf32>) -> tensor<1x28x28x512xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x28x28x512xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x28x28x512xf32>) -> tensor<1x28x28x512xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x28x28x128xf32>, tensor<1x1x128x512xf32>) outs(%i : tensor<1x28x28x512xf32>) -> tensor<1x28x28x512xf32>
  return %0 : tensor<1x28x28x512xf32>
}
func.func @l2_proj_1x1s2_256_512(%x: tensor<1x56x56x256xf32>, %w: tensor<1x1x256x512xf32>) -> tensor<1x28x28x512xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x28x28x512xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x28x28x512xf32>) -> tensor<1x28x28x512xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x56x56x256xf32>, tensor<1x1x256x512xf32>) outs(%i : tensor<1x28x28x512xf32>) -> tensor<1x28x28x512xf32>
  return %0 : tensor<1x28x28x512xf32>
}
func.func @l2_1x1_512_128(%x: tensor<1x28x28x512xf32>, %w: tensor<1x1x512x128xf32>) -> tensor<1x28x28x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x28x28x128xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x28x28x128xf32>) -> tensor<1x28x28x128xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x28x28x512xf32>, tensor<1x1x512x128xf32>) outs(%i : tensor<1x28x28x128xf32>) -> tensor<1x28x28x128xf32>
  return %0 : tensor<1x28x28x128xf32>
}
func.func @l3_1x1s2_512_256(%x: tensor<1x28x28x512xf32>, %w: tensor<1x1x512x256xf32>) -> tensor<1x14x14x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x14x14x256xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x14x14x256xf32>) -> tensor<1x14x14x256xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x28x28x512xf32>, tensor<1x1x512x256xf32>) outs(%i : tensor<1x14x14x256xf32>) -> tensor<1x14x14x256xf32>
  return %0 : tensor<1x14x14x256xf32>
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
func.func @l3_1x1_256_1024(%x: tensor<1x14x14x256xf32>, %w: tensor<1x1x256x1024xf32>) -> tensor<1x14x14x1024xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x14x14x1024xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x14x14x1024xf32>) -> tensor<1x14x14x1024xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x14x14x256xf32>, tensor<1x1x256x1024xf32>) outs(%i : tensor<1x14x14x1024xf32>) -> tensor<1x14x14x1024xf32>
  return %0 : tensor<1x14x14x1024xf32>
}
func.func @l3_proj_1x1s2_512_1024(%x: tensor<1x28x28x512xf32>, %w: tensor<1x1x512x1024xf32>) -> tensor<1x14x14x1024xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x14x14x1024xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x14x14x1024xf32>) -> tensor<1x14x14x1024xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x28x28x512xf32>, tensor<1x1x512x1024xf32>) outs(%i : tensor<1x14x14x1024xf32>) -> tensor<1x14x14x1024xf32>
  return %0 : tensor<1x14x14x1024xf32>
}
func.func @l3_1x1_1024_256(%x: tensor<1x14x14x1024xf32>, %w: tensor<1x1x1024x256xf32>) -> tensor<1x14x14x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x14x14x256xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x14x14x256xf32>) -> tensor<1x14x14x256xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x14x14x1024xf32>, tensor<1x1x1024x256xf32>) outs(%i : tensor<1x14x14x256xf32>) -> tensor<1x14x14x256xf32>
  return %0 : tensor<1x14x14x256xf32>
}
func.func @l4_1x1s2_1024_512(%x: tensor<1x14x14x1024xf32>, %w: tensor<1x1x1024x512xf32>) -> tensor<1x7x7x512xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7x7x512xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x7x7x512xf32>) -> tensor<1x7x7x512xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x14x14x1024xf32>, tensor<1x1x1024x512xf32>) outs(%i : tensor<1x7x7x512xf32>) -> tensor<1x7x7x512xf32>
  return %0 : tensor<1x7x7x512xf32>
}
func.func @l4_3x3_512_512(%x: tensor<1x7x7x512xf32>, %w: tensor<3x3x512x512xf32>) -> tensor<1x7x7x512xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %z : f32
  } : tensor<1x7x7x512xf32> to tensor<1x9x9x512xf32>
  %e = tensor.empty() : tensor<1x7x7x512xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x7x7x512xf32>) -> tensor<1x7x7x512xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x9x9x512xf32>, tensor<3x3x512x512xf32>) outs(%i : tensor<1x7x7x512xf32>) -> tensor<1x7x7x512xf32>
  return %0 : tensor<1x7x7x512xf32>
}
func.func @l4_1x1_512_2048(%x: tensor<1x7x7x512xf32>, %w: tensor<1x1x512x2048xf32>) -> tensor<1x7x7x2048xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7x7x2048xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x7x7x2048xf32>) -> tensor<1x7x7x2048xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x7x7x512xf32>, tensor<1x1x512x2048xf32>) outs(%i : tensor<1x7x7x2048xf32>) -> tensor<1x7x7x2048xf32>
  return %0 : tensor<1x7x7x2048xf32>
}
func.func @l4_proj_1x1s2_1024_2048(%x: tensor<1x14x14x1024xf32>, %w: tensor<1x1x1024x2048xf32>) -> tensor<1x7x7x2048xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7x7x2048xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x7x7x2048xf32>) -> tensor<1x7x7x2048xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x14x14x1024xf32>, tensor<1x1x1024x2048xf32>) outs(%i : tensor<1x7x7x2048xf32>) -> tensor<1x7x7x2048xf32>
  return %0 : tensor<1x7x7x2048xf32>
}
func.func @l4_1x1_2048_512(%x: tensor<1x7x7x2048xf32>, %w: tensor<1x1x2048x512xf32>) -> tensor<1x7x7x512xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7x7x512xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x7x7x512xf32>) -> tensor<1x7x7x512xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x7x7x2048xf32>, tensor<1x1x2048x512xf32>) outs(%i : tensor<1x7x7x512xf32>) -> tensor<1x7x7x512xf32>
  return %0 : tensor<1x7x7x512xf32>
}
