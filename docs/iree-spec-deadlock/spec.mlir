// A tuning spec as `autosched export --format iree-spec` writes it (one matcher,
// for the first matmul of program.mlir): see README.md beside this file.
module @autosched_spec attributes {transform.with_named_sequence} {
  transform.named_sequence @apply_op_config(%op: !transform.any_op {transform.readonly}, %config: !transform.any_param {transform.readonly}) {
    transform.annotate %op "compilation_info" = %config : !transform.any_op, !transform.any_param
    transform.yield
  }
  transform.named_sequence @match_matmul_32x48x64_f32t_f32t_f32t(%op: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param) {
    %b, %m, %n, %k = transform.iree.match.contraction %op, lhs_type = f32, rhs_type = f32, output_type = f32, indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] : !transform.any_op -> !transform.param<i64>
    transform.iree.match.dims_equal %b, [] : !transform.param<i64>
    transform.iree.match.dims_equal %m, [32] : !transform.param<i64>
    transform.iree.match.dims_equal %n, [48] : !transform.param<i64>
    transform.iree.match.dims_equal %k, [64] : !transform.param<i64>
    %config = transform.param.constant #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [16, 48, 0], cache_parallel = [16, 48, 0], cache_reduction = [0, 0, 32], vector_common_parallel = [4, 16, 0], vector_reduction = [0, 0, 1]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>, {enable_loop_peeling}>> -> !transform.any_param
    transform.yield %op, %config : !transform.any_op, !transform.any_param
  }
  transform.named_sequence @__kernel_config(%variant_op: !transform.any_op {transform.consumed}) -> !transform.any_op
      attributes {iree_codegen.tuning_spec_entrypoint} {
    %res = transform.foreach_match in %variant_op
        @match_matmul_32x48x64_f32t_f32t_f32t -> @apply_op_config
        : (!transform.any_op) -> !transform.any_op
    transform.yield %res : !transform.any_op
  }
}
