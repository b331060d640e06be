// The bundled example: the seed's matmul (1024x256 · 256x512) and an
// attention-like batch matmul with its rhs stored transposed, in two
// functions, as a model would have them.
!lhs = tensor<1024x256xf32>
!rhs = tensor<256x512xf32>
!out = tensor<1024x512xf32>

module @example {
  func.func @projection(%a: !lhs, %b: !rhs) -> !out {
    %zero = arith.constant 0.000000e+00 : f32
    %init = tensor.empty() : !out
    %acc = linalg.fill ins(%zero : f32) outs(%init : !out) -> !out
    %r = linalg.matmul ins(%a, %b : !lhs, !rhs) outs(%acc : !out) -> !out
    return %r : !out
  }

  func.func @scores(%q: tensor<8x256x64xf32>, %k: tensor<8x256x64xf32>) -> tensor<8x256x256xf32> {
    %zero = arith.constant 0.000000e+00 : f32
    %init = tensor.empty() : tensor<8x256x256xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<8x256x256xf32>) -> tensor<8x256x256xf32>
    %r = linalg.batch_matmul
        indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>,
                         affine_map<(b, m, n, k) -> (b, n, k)>,
                         affine_map<(b, m, n, k) -> (b, m, n)>]
        ins(%q, %k : tensor<8x256x64xf32>, tensor<8x256x64xf32>)
        outs(%acc : tensor<8x256x256xf32>) -> tensor<8x256x256xf32>
    return %r : tensor<8x256x256xf32>
  }
}
