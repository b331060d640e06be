// A stand-in input for the bad cfgs: they must fail before it is read.
func.func @matmul(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>,
    %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>)
      outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}
