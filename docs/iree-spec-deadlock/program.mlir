// Twelve small f32 matmuls, each its own executable: see README.md beside this file.
func.func @f0(%a: tensor<32x64xf32>, %b: tensor<64x48xf32>, %c: tensor<32x48xf32>) -> tensor<32x48xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<32x64xf32>, tensor<64x48xf32>) outs(%c : tensor<32x48xf32>) -> tensor<32x48xf32>
  return %0 : tensor<32x48xf32>
}
func.func @f1(%a: tensor<32x48xf32>, %b: tensor<48x64xf32>, %c: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<32x48xf32>, tensor<48x64xf32>) outs(%c : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %0 : tensor<32x64xf32>
}
func.func @f2(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>, %c: tensor<64x48xf32>) -> tensor<64x48xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>) outs(%c : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %0 : tensor<64x48xf32>
}
func.func @f3(%a: tensor<16x64xf32>, %b: tensor<64x32xf32>, %c: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}
func.func @f4(%a: tensor<48x16xf32>, %b: tensor<16x32xf32>, %c: tensor<48x32xf32>) -> tensor<48x32xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<48x16xf32>, tensor<16x32xf32>) outs(%c : tensor<48x32xf32>) -> tensor<48x32xf32>
  return %0 : tensor<48x32xf32>
}
func.func @f5(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<32x32xf32>, tensor<32x32xf32>) outs(%c : tensor<32x32xf32>) -> tensor<32x32xf32>
  return %0 : tensor<32x32xf32>
}
func.func @f6(%a: tensor<64x16xf32>, %b: tensor<16x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<64x16xf32>, tensor<16x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}
func.func @f7(%a: tensor<16x64xf32>, %b: tensor<64x16xf32>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}
func.func @f8(%a: tensor<32x16xf32>, %b: tensor<16x48xf32>, %c: tensor<32x48xf32>) -> tensor<32x48xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<32x16xf32>, tensor<16x48xf32>) outs(%c : tensor<32x48xf32>) -> tensor<32x48xf32>
  return %0 : tensor<32x48xf32>
}
func.func @f9(%a: tensor<48x48xf32>, %b: tensor<48x48xf32>, %c: tensor<48x48xf32>) -> tensor<48x48xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<48x48xf32>, tensor<48x48xf32>) outs(%c : tensor<48x48xf32>) -> tensor<48x48xf32>
  return %0 : tensor<48x48xf32>
}
func.func @f10(%a: tensor<16x32xf32>, %b: tensor<32x64xf32>, %c: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<16x32xf32>, tensor<32x64xf32>) outs(%c : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}
func.func @f11(%a: tensor<64x48xf32>, %b: tensor<48x16xf32>, %c: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<64x48xf32>, tensor<48x16xf32>) outs(%c : tensor<64x16xf32>) -> tensor<64x16xf32>
  return %0 : tensor<64x16xf32>
}
