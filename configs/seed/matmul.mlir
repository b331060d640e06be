!matrixA_type = tensor<1024x256xf32>
!matrixB_type = tensor<256x512xf32>
!matrixC_type = tensor<1024x512xf32>

module @arithmetic {
   func.func @matmul(
        %arg0: !matrixA_type , %arg1: !matrixB_type)
            -> !matrixC_type {
        %cst = arith.constant 0.000000e+00 : f32
        %init = tensor.empty() : !matrixC_type
        %1 = linalg.fill ins(%cst : f32) outs(%init : !matrixC_type) -> !matrixC_type
        %3 = linalg.matmul ins(%arg0, %arg1: !matrixA_type, !matrixB_type)
                            outs(%1: !matrixC_type)
            -> !matrixC_type
        func.return %3 : !matrixC_type
    }
}
