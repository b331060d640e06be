// A tuning spec of 12 matchers (as `autosched export --format iree-spec` writes
// them), one per matmul of program.mlir: see README.md beside this file.
module @autosched_spec attributes {transform.with_named_sequence} {
  transform.named_sequence @apply_op_config(%op: !transform.any_op {transform.readonly}, %config: !transform.any_param {transform.readonly}) {
    transform.annotate %op "compilation_info" = %config : !transform.any_op, !transform.any_param
    transform.yield
  }
  transform.named_sequence @match_mm_32x48x64(%op: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param) {
    %b, %m, %n, %k = transform.iree.match.contraction %op, lhs_type = f32, rhs_type = f32, output_type = f32, indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] : !transform.any_op -> !transform.param<i64>
    transform.iree.match.dims_equal %b, [] : !transform.param<i64>
    transform.iree.match.dims_equal %m, [32] : !transform.param<i64>
    transform.iree.match.dims_equal %n, [48] : !transform.param<i64>
    transform.iree.match.dims_equal %k, [64] : !transform.param<i64>
    %config = transform.param.constant #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [16, 16, 0], cache_parallel = [16, 16, 0], cache_reduction = [0, 0, 16], vector_common_parallel = [4, 16, 0], vector_reduction = [0, 0, 1]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>, {enable_loop_peeling}>> -> !transform.any_param
    transform.yield %op, %config : !transform.any_op, !transform.any_param
  }
  transform.named_sequence @match_mm_32x64x48(%op: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param) {
    %b, %m, %n, %k = transform.iree.match.contraction %op, lhs_type = f32, rhs_type = f32, output_type = f32, indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] : !transform.any_op -> !transform.param<i64>
    transform.iree.match.dims_equal %b, [] : !transform.param<i64>
    transform.iree.match.dims_equal %m, [32] : !transform.param<i64>
    transform.iree.match.dims_equal %n, [64] : !transform.param<i64>
    transform.iree.match.dims_equal %k, [48] : !transform.param<i64>
    %config = transform.param.constant #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [16, 16, 0], cache_parallel = [16, 16, 0], cache_reduction = [0, 0, 16], vector_common_parallel = [4, 16, 0], vector_reduction = [0, 0, 1]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>, {enable_loop_peeling}>> -> !transform.any_param
    transform.yield %op, %config : !transform.any_op, !transform.any_param
  }
  transform.named_sequence @match_mm_64x48x32(%op: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param) {
    %b, %m, %n, %k = transform.iree.match.contraction %op, lhs_type = f32, rhs_type = f32, output_type = f32, indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] : !transform.any_op -> !transform.param<i64>
    transform.iree.match.dims_equal %b, [] : !transform.param<i64>
    transform.iree.match.dims_equal %m, [64] : !transform.param<i64>
    transform.iree.match.dims_equal %n, [48] : !transform.param<i64>
    transform.iree.match.dims_equal %k, [32] : !transform.param<i64>
    %config = transform.param.constant #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [16, 16, 0], cache_parallel = [16, 16, 0], cache_reduction = [0, 0, 16], vector_common_parallel = [4, 16, 0], vector_reduction = [0, 0, 1]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>, {enable_loop_peeling}>> -> !transform.any_param
    transform.yield %op, %config : !transform.any_op, !transform.any_param
  }
  transform.named_sequence @match_mm_16x32x64(%op: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param) {
    %b, %m, %n, %k = transform.iree.match.contraction %op, lhs_type = f32, rhs_type = f32, output_type = f32, indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] : !transform.any_op -> !transform.param<i64>
    transform.iree.match.dims_equal %b, [] : !transform.param<i64>
    transform.iree.match.dims_equal %m, [16] : !transform.param<i64>
    transform.iree.match.dims_equal %n, [32] : !transform.param<i64>
    transform.iree.match.dims_equal %k, [64] : !transform.param<i64>
    %config = transform.param.constant #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [16, 16, 0], cache_parallel = [16, 16, 0], cache_reduction = [0, 0, 16], vector_common_parallel = [4, 16, 0], vector_reduction = [0, 0, 1]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>, {enable_loop_peeling}>> -> !transform.any_param
    transform.yield %op, %config : !transform.any_op, !transform.any_param
  }
  transform.named_sequence @match_mm_48x32x16(%op: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param) {
    %b, %m, %n, %k = transform.iree.match.contraction %op, lhs_type = f32, rhs_type = f32, output_type = f32, indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] : !transform.any_op -> !transform.param<i64>
    transform.iree.match.dims_equal %b, [] : !transform.param<i64>
    transform.iree.match.dims_equal %m, [48] : !transform.param<i64>
    transform.iree.match.dims_equal %n, [32] : !transform.param<i64>
    transform.iree.match.dims_equal %k, [16] : !transform.param<i64>
    %config = transform.param.constant #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [16, 16, 0], cache_parallel = [16, 16, 0], cache_reduction = [0, 0, 16], vector_common_parallel = [4, 16, 0], vector_reduction = [0, 0, 1]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>, {enable_loop_peeling}>> -> !transform.any_param
    transform.yield %op, %config : !transform.any_op, !transform.any_param
  }
  transform.named_sequence @match_mm_32x32x32(%op: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param) {
    %b, %m, %n, %k = transform.iree.match.contraction %op, lhs_type = f32, rhs_type = f32, output_type = f32, indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] : !transform.any_op -> !transform.param<i64>
    transform.iree.match.dims_equal %b, [] : !transform.param<i64>
    transform.iree.match.dims_equal %m, [32] : !transform.param<i64>
    transform.iree.match.dims_equal %n, [32] : !transform.param<i64>
    transform.iree.match.dims_equal %k, [32] : !transform.param<i64>
    %config = transform.param.constant #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [16, 16, 0], cache_parallel = [16, 16, 0], cache_reduction = [0, 0, 16], vector_common_parallel = [4, 16, 0], vector_reduction = [0, 0, 1]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>, {enable_loop_peeling}>> -> !transform.any_param
    transform.yield %op, %config : !transform.any_op, !transform.any_param
  }
  transform.named_sequence @match_mm_64x64x16(%op: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param) {
    %b, %m, %n, %k = transform.iree.match.contraction %op, lhs_type = f32, rhs_type = f32, output_type = f32, indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] : !transform.any_op -> !transform.param<i64>
    transform.iree.match.dims_equal %b, [] : !transform.param<i64>
    transform.iree.match.dims_equal %m, [64] : !transform.param<i64>
    transform.iree.match.dims_equal %n, [64] : !transform.param<i64>
    transform.iree.match.dims_equal %k, [16] : !transform.param<i64>
    %config = transform.param.constant #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [16, 16, 0], cache_parallel = [16, 16, 0], cache_reduction = [0, 0, 16], vector_common_parallel = [4, 16, 0], vector_reduction = [0, 0, 1]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>, {enable_loop_peeling}>> -> !transform.any_param
    transform.yield %op, %config : !transform.any_op, !transform.any_param
  }
  transform.named_sequence @match_mm_16x16x64(%op: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param) {
    %b, %m, %n, %k = transform.iree.match.contraction %op, lhs_type = f32, rhs_type = f32, output_type = f32, indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] : !transform.any_op -> !transform.param<i64>
    transform.iree.match.dims_equal %b, [] : !transform.param<i64>
    transform.iree.match.dims_equal %m, [16] : !transform.param<i64>
    transform.iree.match.dims_equal %n, [16] : !transform.param<i64>
    transform.iree.match.dims_equal %k, [64] : !transform.param<i64>
    %config = transform.param.constant #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [16, 16, 0], cache_parallel = [16, 16, 0], cache_reduction = [0, 0, 16], vector_common_parallel = [4, 16, 0], vector_reduction = [0, 0, 1]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>, {enable_loop_peeling}>> -> !transform.any_param
    transform.yield %op, %config : !transform.any_op, !transform.any_param
  }
  transform.named_sequence @match_mm_32x48x16(%op: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param) {
    %b, %m, %n, %k = transform.iree.match.contraction %op, lhs_type = f32, rhs_type = f32, output_type = f32, indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] : !transform.any_op -> !transform.param<i64>
    transform.iree.match.dims_equal %b, [] : !transform.param<i64>
    transform.iree.match.dims_equal %m, [32] : !transform.param<i64>
    transform.iree.match.dims_equal %n, [48] : !transform.param<i64>
    transform.iree.match.dims_equal %k, [16] : !transform.param<i64>
    %config = transform.param.constant #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [16, 16, 0], cache_parallel = [16, 16, 0], cache_reduction = [0, 0, 16], vector_common_parallel = [4, 16, 0], vector_reduction = [0, 0, 1]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>, {enable_loop_peeling}>> -> !transform.any_param
    transform.yield %op, %config : !transform.any_op, !transform.any_param
  }
  transform.named_sequence @match_mm_48x48x48(%op: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param) {
    %b, %m, %n, %k = transform.iree.match.contraction %op, lhs_type = f32, rhs_type = f32, output_type = f32, indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] : !transform.any_op -> !transform.param<i64>
    transform.iree.match.dims_equal %b, [] : !transform.param<i64>
    transform.iree.match.dims_equal %m, [48] : !transform.param<i64>
    transform.iree.match.dims_equal %n, [48] : !transform.param<i64>
    transform.iree.match.dims_equal %k, [48] : !transform.param<i64>
    %config = transform.param.constant #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [16, 16, 0], cache_parallel = [16, 16, 0], cache_reduction = [0, 0, 16], vector_common_parallel = [4, 16, 0], vector_reduction = [0, 0, 1]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>, {enable_loop_peeling}>> -> !transform.any_param
    transform.yield %op, %config : !transform.any_op, !transform.any_param
  }
  transform.named_sequence @match_mm_16x64x32(%op: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param) {
    %b, %m, %n, %k = transform.iree.match.contraction %op, lhs_type = f32, rhs_type = f32, output_type = f32, indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] : !transform.any_op -> !transform.param<i64>
    transform.iree.match.dims_equal %b, [] : !transform.param<i64>
    transform.iree.match.dims_equal %m, [16] : !transform.param<i64>
    transform.iree.match.dims_equal %n, [64] : !transform.param<i64>
    transform.iree.match.dims_equal %k, [32] : !transform.param<i64>
    %config = transform.param.constant #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [16, 16, 0], cache_parallel = [16, 16, 0], cache_reduction = [0, 0, 16], vector_common_parallel = [4, 16, 0], vector_reduction = [0, 0, 1]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>, {enable_loop_peeling}>> -> !transform.any_param
    transform.yield %op, %config : !transform.any_op, !transform.any_param
  }
  transform.named_sequence @match_mm_64x16x48(%op: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param) {
    %b, %m, %n, %k = transform.iree.match.contraction %op, lhs_type = f32, rhs_type = f32, output_type = f32, indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] : !transform.any_op -> !transform.param<i64>
    transform.iree.match.dims_equal %b, [] : !transform.param<i64>
    transform.iree.match.dims_equal %m, [64] : !transform.param<i64>
    transform.iree.match.dims_equal %n, [16] : !transform.param<i64>
    transform.iree.match.dims_equal %k, [48] : !transform.param<i64>
    %config = transform.param.constant #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [16, 16, 0], cache_parallel = [16, 16, 0], cache_reduction = [0, 0, 16], vector_common_parallel = [4, 16, 0], vector_reduction = [0, 0, 1]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>, {enable_loop_peeling}>> -> !transform.any_param
    transform.yield %op, %config : !transform.any_op, !transform.any_param
  }
  transform.named_sequence @__kernel_config(%variant_op: !transform.any_op {transform.consumed}) -> !transform.any_op
      attributes {iree_codegen.tuning_spec_entrypoint} {
    %res = transform.foreach_match in %variant_op
        @match_mm_32x48x64 -> @apply_op_config,
        @match_mm_32x64x48 -> @apply_op_config,
        @match_mm_64x48x32 -> @apply_op_config,
        @match_mm_16x32x64 -> @apply_op_config,
        @match_mm_48x32x16 -> @apply_op_config,
        @match_mm_32x32x32 -> @apply_op_config,
        @match_mm_64x64x16 -> @apply_op_config,
        @match_mm_16x16x64 -> @apply_op_config,
        @match_mm_32x48x16 -> @apply_op_config,
        @match_mm_48x48x48 -> @apply_op_config,
        @match_mm_16x64x32 -> @apply_op_config,
        @match_mm_64x16x48 -> @apply_op_config
        : (!transform.any_op) -> !transform.any_op
    transform.yield %res : !transform.any_op
  }
}
