/*
 * The iree backend's CUDA target: the space of IREE 3.13's TileAndFuse
 * pipeline for an NVIDIA GPU (mma.sync m16n8k16 for f16 and bf16 inputs,
 * the SIMT form for f32), the rules that keep a candidate from failing in
 * iree-compile or at launch, and the compilation_info it is compiled with.
 *
 * Knobs (mma.sync):
 *   tile_m, tile_n   workgroup = [tile_m, tile_n, 0]
 *   tile_k           reduction = [0, 0, tile_k / 16] (intrinsic K steps)
 *                    A tile that does not divide M, N or K is padded up to
 *                    it: padding = [tile_m, tile_n, tile_k], as IREE's own
 *                    config has it for such shapes (without, "op was not
 *                    bufferized"); written only then (PTX otherwise equal)
 *   vector_m/n       the warp tile: subgroup = [vector_m / 16, vector_n / 8, 0];
 *                    workgroup_size = 32 · (tile_m / vector_m) · (tile_n / vector_n)
 *   pack_b           promote_operands = [0, 1] (A and B through shared memory) or []
 *   pad_smem         1: IREE pads the promoted tiles' rows by 4 elements (fewer
 *                    bank conflicts); 0: gpu_pipeline_options =
 *                    <no_reduce_shared_memory_bank_conflicts = true> (PTX
 *                    differs; with pack_b 0 there is nothing to pad)
 * Knobs (SIMT, f32):
 *   tile_m, tile_n   workgroup; tile_k: reduction in elements
 *   vector_m/n       the thread tile: thread = [vector_m, vector_n, 0];
 *                    workgroup_size = [32, threads / 32, 1]
 * A batch matmul (linalg.batch_matmul) takes the same knobs, one matrix a
 * workgroup (each list led by the batch dimension); transposed operands
 * are written as the program stores them (linalg's indexing_maps), and
 * the shared-memory rule counts their tiles so.
 * block_dim_x/y/z follow from the tiles (not searched); pipeline_depth
 * (prefetch_num_stages) changes nothing on CUDA in IREE 3.13 (identical
 * PTX): both are reported as knobs this target does not take.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend_int.h"
#include "backends/iree/cuda_int.h"
#include "util/util.h"

/* IREE 3.13's own limits for the first three; Hopper's 227 KiB by attribute. */
static const struct cuda_arch arches[] = {
	{ "sm_80", 0, 166912, NULL },
	{ "sm_86", 0, 101376, NULL },
	{ "sm_89", 0, 101376, NULL },
	{ "sm_90a", 1, 232448, "+ptx80" },
};

const struct cuda_arch *
cuda_arch_find(const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < sizeof arches / sizeof arches[0]; i++)
		if (strcmp(arches[i].name, name) == 0)
			return &arches[i];
	return NULL;
}

const char *
cuda_arch_names(void)
{
	return "sm_80, sm_86, sm_89, sm_90a";
}

int
backend_gpu_arch_known(const char *name)
{
	return strcmp(name, "auto") == 0 || cuda_arch_find(name) != NULL;
}

const char *
backend_gpu_arches(void)
{
	return cuda_arch_names();
}

int
cuda_is_batch(const struct op_desc *op)
{
	return analysis_kind_batch(op->kind);
}

int64_t
cuda_batch(const struct op_desc *op)
{
	return cuda_is_batch(op) && op->batch > 1 ? op->batch : 1;
}

int
cuda_is_mma(const struct op_desc *op)
{
	return op->lhs == ELEM_F16 || op->lhs == ELEM_BF16;
}

/* The intrinsic of op's types. */
static const char *
mma_kind(const struct op_desc *op)
{
	if (op->lhs == ELEM_BF16)
		return "NV_MMA_SYNC_F32_16x8x16_BF16";
	return op->acc == ELEM_F16 ? "NV_MMA_SYNC_F16_16x8x16_F16" :
	    "NV_MMA_SYNC_F32_16x8x16_F16";
}

/* Warp (mma) or thread (SIMT) tiles: the intrinsic's multiples, no sure spill. */
static int
cuda_vector_ok(const struct op_desc *op, int64_t vm, int64_t vn, int64_t vk)
{
	(void)vk;
	if (!cuda_is_mma(op))
		return vm >= 1 && vn >= 1 && vm * vn <= 64;
	/* 32 threads hold the warp's f32 accumulators: ≤ 128 registers each. */
	return vm % 16 == 0 && vn % 8 == 0 && vm * vn <= 64 * 64 * 2 &&
	    vm * vn / 32 <= 128;
}

static void
cand_list(struct space_rules *r, enum knob k, const int64_t *v, size_t n,
    int64_t dim)
{
	size_t i;

	for (i = 0; i < n; i++)
		backend_cand_add(r, k, v[i] < dim ? v[i] : dim);
}

void
iree_cuda_rules(const struct op_desc *op, struct space_rules *r)
{
	static const int64_t mt[] = { 32, 64, 128, 256 };
	static const int64_t mk[] = { 16, 32, 64, 128 };
	static const int64_t mw[] = { 16, 32, 64, 128 };
	static const int64_t st[] = { 32, 64, 128, 256 };
	static const int64_t sk[] = { 8, 16, 32 };
	static const int64_t sv[] = { 1, 2, 4, 8 };
	int mma = cuda_is_mma(op);

	memset(r, 0, sizeof *r);
	r->knobs = KNOB_BIT(KNOB_TILE_M) | KNOB_BIT(KNOB_TILE_N) |
	    KNOB_BIT(KNOB_TILE_K) | KNOB_BIT(KNOB_VECTOR_M) |
	    KNOB_BIT(KNOB_VECTOR_N);
	/* IREE's own choice: every knob 0 (threads 1 names it, as for llvm-cpu). */
	r->own_default = 1;
	cand_list(r, KNOB_TILE_M, mma ? mt : st, 4, op->m);
	cand_list(r, KNOB_TILE_N, mma ? mt : st, 4, op->n);
	if (mma) {
		/* IREE pads what whole tiles leave (lowering_config padding). */
		r->ragged = KNOB_BIT(KNOB_TILE_M) | KNOB_BIT(KNOB_TILE_N) |
		    KNOB_BIT(KNOB_TILE_K);
		r->knobs |= KNOB_BIT(KNOB_PACK_B) | KNOB_BIT(KNOB_PAD_SMEM);
		backend_cand_add(r, KNOB_PACK_B, 1);
		backend_cand_add(r, KNOB_PACK_B, 0);
		backend_cand_add(r, KNOB_PAD_SMEM, 1);
		backend_cand_add(r, KNOB_PAD_SMEM, 0);
		cand_list(r, KNOB_TILE_K, mk, 4, op->k);
		cand_list(r, KNOB_VECTOR_M, mw, 4, op->m);
		cand_list(r, KNOB_VECTOR_N, mw, 4, op->n);
	} else {
		cand_list(r, KNOB_TILE_K, sk, 3, op->k);
		cand_list(r, KNOB_VECTOR_M, sv, 4, op->m);
		cand_list(r, KNOB_VECTOR_N, sv, 4, op->n);
	}
	r->vector_ok = cuda_vector_ok;
}

int64_t
cuda_block_threads(const struct op_desc *op, const struct config *c)
{
	int64_t n = (c->v[KNOB_TILE_M] / c->v[KNOB_VECTOR_M]) *
	    (c->v[KNOB_TILE_N] / c->v[KNOB_VECTOR_N]);

	return cuda_is_mma(op) ? 32 * n : n;
}

/*
 * Shared memory of the promoted A and B tiles, rows padded by 4 (pad_smem),
 * each as the operand is stored (one matrix of a batch a workgroup).
 * Unpromoted, none, but where a tile does not divide M, N or K: IREE 3.13
 * then stages the padded result tile there, tile_m * tile_n * (the
 * accumulator's bytes + 1) (read back from its compiles, either type).
 */
static int64_t
cuda_smem(const struct op_desc *op, const struct config *c)
{
	const int64_t *v = c->v;
	int64_t pad = v[KNOB_PAD_SMEM] ? 4 : 0, a, b;

	if (!cuda_is_mma(op))
		return 0;
	if (v[KNOB_PACK_B] == 0)
		return op->m % v[KNOB_TILE_M] || op->n % v[KNOB_TILE_N] ||
		    op->k % v[KNOB_TILE_K] ? v[KNOB_TILE_M] * v[KNOB_TILE_N] *
		    (int64_t)(analysis_elem_size(op->acc) + 1) : 0;
	/* A tile's rows are its stored inner dimension (K of a transposed B). */
	a = op->transpose_a ? v[KNOB_TILE_K] * (v[KNOB_TILE_M] + pad) :
	    v[KNOB_TILE_M] * (v[KNOB_TILE_K] + pad);
	b = op->transpose_b ? v[KNOB_TILE_N] * (v[KNOB_TILE_K] + pad) :
	    v[KNOB_TILE_K] * (v[KNOB_TILE_N] + pad);
	return 2 * (a + b);
}

char *
cuda_rule_broken(const struct op_desc *op, const struct config *c,
    const struct cuda_arch *arch)
{
	const int64_t *v = c->v;
	int64_t t, s;

	if (v[KNOB_TILE_M] == 0)
		return NULL;	/* IREE's own choice */
	if (!cuda_is_mma(op) && (op->m % v[KNOB_TILE_M] ||
	    op->n % v[KNOB_TILE_N] || op->k % v[KNOB_TILE_K]))
		return xasprintf("rule divisibility: tile %lldx%lldx%lld does "
		    "not divide %lldx%lldx%lld (IREE: op was not bufferized; "
		    "only the mma form is padded)",
		    (long long)v[0], (long long)v[1], (long long)v[2],
		    (long long)op->m, (long long)op->n, (long long)op->k);
	if (cuda_is_mma(op) && (v[KNOB_VECTOR_M] % 16 || v[KNOB_VECTOR_N] % 8 ||
	    v[KNOB_TILE_K] % 16))
		return xasprintf("rule intrinsic: warp tile %lldx%lld and tile_k "
		    "%lld must be multiples of mma.sync's 16x8x16",
		    (long long)v[KNOB_VECTOR_M], (long long)v[KNOB_VECTOR_N],
		    (long long)v[KNOB_TILE_K]);
	if (v[KNOB_TILE_M] % v[KNOB_VECTOR_M] || v[KNOB_TILE_N] %
	    v[KNOB_VECTOR_N])
		return xasprintf("rule tiles: %s tile %lldx%lld does not divide "
		    "the workgroup tile %lldx%lld", cuda_is_mma(op) ? "warp" :
		    "thread", (long long)v[KNOB_VECTOR_M],
		    (long long)v[KNOB_VECTOR_N], (long long)v[KNOB_TILE_M],
		    (long long)v[KNOB_TILE_N]);
	t = cuda_block_threads(op, c);
	if (t > 1024 || t < 32 || t % 32)
		return xasprintf("rule threads: %lld threads a block (%s); "
		    "expected a multiple of 32 from 32 to 1024", (long long)t,
		    cuda_is_mma(op) ? "32 per warp tile" : "one per thread tile");
	if ((s = cuda_smem(op, c)) > arch->smem_max)
		return xasprintf("rule shared-memory: %lld bytes for the %s "
		    "tiles, above %s's %ld", (long long)s, v[KNOB_PACK_B] ?
		    "A and B" : "padded result", arch->name, arch->smem_max);
	return NULL;
}

/*
 * The compilation_info of cfg (NULL: IREE's own choice). Caller frees.
 * convert_acc_gemm, as IREE's own config has it, lets the op accumulate into
 * an argument (annotate's programs) as well as into a fill (the candidates:
 * the same PTX with or without it). A batch matmul's lists lead with the
 * batch dimension, as IREE's own config for one: workgroup [1, …],
 * reduction and subgroup [0, …], thread [1, …] (one matrix a workgroup).
 */
char *
cuda_attr(const struct op_desc *op, const struct config *c)
{
	const int64_t *v = c->v;
	long long tm = v[KNOB_TILE_M], tn = v[KNOB_TILE_N], tk = v[KNOB_TILE_K];
	long long vm = v[KNOB_VECTOR_M], vn = v[KNOB_VECTOR_N];
	long long t;
	const char *b1 = cuda_is_batch(op) ? "1, " : "";
	const char *b0 = cuda_is_batch(op) ? "0, " : "";
	char *pad = NULL, *s;

	if (tm == 0)
		return NULL;
	t = (long long)cuda_block_threads(op, c);
	if (cuda_is_mma(op) && (op->m % tm || op->n % tn || op->k % tk))
		pad = xasprintf("padding = [%s%lld, %lld, %lld], ", b1, tm, tn,
		    tk);
	if (!cuda_is_mma(op))
		return xasprintf("#iree_codegen.compilation_info<lowering_config"
		    " = #iree_gpu.lowering_config<{workgroup = [%s%lld, %lld, 0], "
		    "reduction = [%s0, 0, %lld], thread = [%s%lld, %lld, 0]}>, "
		    "translation_info = #iree_codegen.translation_info<pipeline "
		    "= #iree_gpu.pipeline<TileAndFuse> workgroup_size = [32, "
		    "%lld, 1] subgroup_size = 32>>", b1, tm, tn, b0, tk, b1, vm,
		    vn, t / 32);
	s = xasprintf("#iree_codegen.compilation_info<lowering_config = "
	    "#iree_gpu.lowering_config<{convert_acc_gemm, mma_kind = "
	    "#iree_gpu.mma_layout<%s>, %s"
	    "promote_operands = [%s], workgroup = [%s%lld, %lld, 0], reduction "
	    "= [%s0, 0, %lld], subgroup = [%s%lld, %lld, 0]}>, translation_info "
	    "= #iree_codegen.translation_info<pipeline = "
	    "#iree_gpu.pipeline<TileAndFuse> workgroup_size = [%lld, 1, 1] "
	    "subgroup_size = 32%s>>", mma_kind(op), pad != NULL ? pad : "",
	    v[KNOB_PACK_B] ? "0, 1" : "", b1, tm, tn, b0, tk / 16, b0, vm / 16,
	    vn / 8, t, v[KNOB_PAD_SMEM] ? "" : ", {gpu_pipeline_options = "
	    "#iree_gpu.pipeline_options<no_reduce_shared_memory_bank_conflicts "
	    "= true>}");
	free(pad);
	return s;
}

/* Ampere's capabilities under another arch's name, PTX ISA and shared memory. */
static char *
target_attr(const struct cuda_arch *a)
{
	return xasprintf("#hal.executable.target<\"cuda\", \"cuda-nvptx-fb\", "
	    "{iree_codegen.target_info = #iree_gpu.target<arch = \"%s\", "
	    "features = \"%s\", wgp = <compute = fp64|fp32|fp16|int64|int32|"
	    "int16|int8, storage = b64|b32|b16|b8, subgroup = shuffle|"
	    "arithmetic, dot = dp4xi8toi32, mma = [<NV_MMA_SYNC_F32_16x8x16_F16>"
	    ", <NV_MMA_SYNC_F16_16x8x16_F16>, <NV_MMA_SYNC_F32_16x8x16_BF16>], "
	    "subgroup_size_choices = [32], max_workgroup_sizes = [1024, 1024, "
	    "64], max_thread_count_per_workgroup = 1024, "
	    "max_workgroup_memory_bytes = %ld, max_workgroup_counts = "
	    "[2147483647, 65535, 65535]>>}>", a->name, a->ptx_features,
	    a->smem_max);
}

/* The tensor type of a rows x cols operand of op (batch first). Caller frees. */
static char *
tensor_type(const struct op_desc *op, int64_t rows, int64_t cols,
    enum elem_type t)
{
	if (cuda_is_batch(op))
		return xasprintf("tensor<%lldx%lldx%lldx%s>", (long long)op->batch,
		    (long long)rows, (long long)cols, analysis_elem_name(t));
	return xasprintf("tensor<%lldx%lldx%s>", (long long)rows,
	    (long long)cols, analysis_elem_name(t));
}

/*
 * The op as the program has it: linalg.matmul or linalg.batch_matmul, with
 * indexing_maps where an operand is stored transposed (IREE 3.13 no longer
 * knows linalg.matmul_transpose_b), and ci (the compilation_info or "").
 * Caller frees.
 */
static char *
op_text(const struct op_desc *op, const char *ci, const char *a,
    const char *b, const char *c)
{
	const char *d = cuda_is_batch(op) ? "d0, d1, d2, d3" : "d0, d1, d2";
	const char *bt = cuda_is_batch(op) ? "d0, " : "";
	const char *m = cuda_is_batch(op) ? "d1" : "d0";
	const char *n = cuda_is_batch(op) ? "d2" : "d1";
	const char *k = cuda_is_batch(op) ? "d3" : "d2";
	char *maps;
	char *s;

	if (op->transpose_a || op->transpose_b)
		maps = xasprintf("indexing_maps = [affine_map<(%s) -> (%s%s, %s)>"
		    ", affine_map<(%s) -> (%s%s, %s)>, affine_map<(%s) -> "
		    "(%s%s, %s)>] ", d, bt, op->transpose_a ? k : m,
		    op->transpose_a ? m : k, d, bt, op->transpose_b ? n : k,
		    op->transpose_b ? k : n, d, bt, m, n);
	else
		maps = xstrdup("");
	s = xasprintf("linalg.%s %s%sins(%%a, %%b : %s, %s) outs(%%init : %s) "
	    "-> %s", cuda_is_batch(op) ? "batch_matmul" : "matmul", maps, ci,
	    a, b, c, c);
	free(maps);
	return s;
}

char *
cuda_module(const struct op_desc *op, const struct config *cfg,
    const struct cuda_arch *arch)
{
	const char *acc = analysis_elem_name(op->acc);
	char *attr = cfg != NULL ? cuda_attr(op, cfg) : NULL, *ci, *head, *s;
	char *ta, *tb, *tc, *mm;

	ci = attr != NULL ? xasprintf("{compilation_info = %s} ", attr) :
	    xstrdup("");
	if (arch->by_attr) {
		char *t = target_attr(arch);

		head = xasprintf("module attributes {hal.device.targets = "
		    "[#hal.device.target<\"cuda\", [%s]> : !hal.device]} {\n", t);
		free(t);
	} else
		head = xstrdup("module {\n");
	ta = op->transpose_a ? tensor_type(op, op->k, op->m, op->lhs) :
	    tensor_type(op, op->m, op->k, op->lhs);
	tb = op->transpose_b ? tensor_type(op, op->n, op->k, op->rhs) :
	    tensor_type(op, op->k, op->n, op->rhs);
	tc = tensor_type(op, op->m, op->n, op->acc);
	mm = op_text(op, ci, ta, tb, tc);
	s = xasprintf("%s  func.func @mm(%%a: %s, %%b: %s) -> %s {\n"
	    "    %%zero = arith.constant 0.0 : %s\n"
	    "    %%empty = tensor.empty() : %s\n"
	    "    %%init = linalg.fill ins(%%zero : %s) outs(%%empty : %s) -> %s\n"
	    "    %%r = %s\n"
	    "    return %%r : %s\n  }\n}\n", head, ta, tb, tc, acc, tc, acc, tc,
	    tc, mm, tc);
	free(attr);
	free(ci);
	free(head);
	free(ta);
	free(tb);
	free(tc);
	free(mm);
	return s;
}
