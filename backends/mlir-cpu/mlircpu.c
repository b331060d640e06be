/*
 * The mlir-cpu backend: tunes a matmul dispatch for this CPU with MLIR's
 * transform dialect, compiles it with the pinned LLVM toolchain and times it
 * in the autosched-measure child, checked exactly against OpenBLAS dgemm
 * and compared with the library routine of the op's precision (OpenBLAS,
 * oneDNN).
 *
 * Kernel ABI. Each artifact is a shared object exporting
 *	void dispatch(const void *lhs, const void *rhs, void *acc);
 * (MLIR's bare-pointer calling convention of func @dispatch). lhs, rhs and
 * acc point at dense row-major buffers laid out exactly as the dispatch's
 * operands are stored (batch first; a transposed operand stays transposed),
 * 64-byte aligned. The call computes acc += lhs·rhs in place.
 * A kernel built for threads > 1 runs an OpenMP team of OMP_NUM_THREADS.
 *
 * Knobs: tile_m/n/k (cache tiles), vector_m/n/k (register tile), threads,
 * pack_b (1: B packed into register-tile panels, 0: read in place),
 * pack_a (1: A's cache tile packed into register-tile panels, 0: read in
 * place, the default).
 * Baseline (untuned default, codegen.c mlircpu_complete): tile 64x256x256,
 * a register tile two vectors wide with 8 rows on 32 vector registers
 * (AVX-512: 8x32 in f32, 16 accumulators + 2 B + 1 broadcast of 32 zmm) or
 * 6 on 16 (AVX2: 6x16, 15 of 16 ymm), 1 thread; a cache tile shrinks to the
 * largest divisor of the op's dimension, the N and K register tiles to
 * divisors of their cache tile, the M register tile only to fit in it (the
 * schedule peels the rest).
 */
#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend_int.h"
#include "backends/mlir-cpu/mlircpu_int.h"
#include "build_config.h"
#include "util/util.h"

/* Bytes of an element of the type the kernel accumulates in. */
static size_t
acc_bytes(const struct op_desc *op)
{
	size_t n = analysis_elem_size(op->acc);

	/* f16/bf16 arithmetic is done in f32 lanes on AVX2. */
	return n == 2 ? 4 : n ? n : 4;
}

int64_t
mlircpu_lanes(const struct op_desc *op)
{
	return mlircpu_isa()->vec_bytes / (int64_t)acc_bytes(op);
}

int
mlircpu_vector_ok(const struct op_desc *op, int64_t vm, int64_t vn, int64_t vk)
{
	int64_t lanes = mlircpu_lanes(op), regs_n;

	if (vm < 1 || vn < 1 || vk < 1 || vk > 8 || vm > 16)
		return 0;
	if (vn % lanes != 0 && vn != op->n)
		return 0;
	regs_n = (vn + lanes - 1) / lanes;
	return vm * regs_n + regs_n + 1 <= mlircpu_isa()->vec_regs;
}

/*
 * The tile of a dimension d near t: min(t, d), or the largest divisor of d
 * below it (a multiple of multiple_of) when that is at least half of it:
 * whole tiles are cheaper than a rest, but a dimension with no divisor near
 * t (a prime) keeps t and a rest.
 */
static int64_t
tile_near(int64_t d, int64_t t, int64_t multiple_of)
{
	int64_t x;

	if (t >= d)
		return d;
	for (x = t; x * 2 >= t; x--) {
		if (d % x == 0 && x % multiple_of == 0)
			return x;
	}
	return t;
}

/*
 * The default candidates of each knob, from the op's shape and this CPU
 * (README: "The default space"), the default config's values first: cache
 * tiles near the powers of two 16…512 (M), 64…1024 (N, multiples of the
 * vector width where N allows) and 64…512 (K) — the dimension's divisor
 * nearest below, else the power of two with a rest (tile_near) — K kept to
 * tiles whose narrowest B panel (K × one vector) fits L1 and N to tiles
 * whose B block at the smallest K tile fits L2; register tiles 1–4 vectors
 * wide (or all of a narrow N) and 2–14 rows (at most M), as far as the
 * registers hold them (the vector_ok rule); vector_k 1; threads 1 (the job
 * adds the CPUs it measures on). A skinny op (M ≤ MLIRCPU_SKINNY_M) adds
 * K tiles of 8…32 rows and the whole of N: B streamed a few rows at a time.
 */
static void
mlircpu_candidates(const struct op_desc *op, struct space_rules *r)
{
	static const int64_t tm[] = { 16, 32, 64, 128, 256, 512 };
	static const int64_t tn[] = { 64, 128, 256, 512, 1024 };
	static const int64_t tk[] = { 64, 128, 256, 512 };
	static const int64_t tk_skinny[] = { 8, 16, 32 };
	static const int64_t vm[] = { 2, 4, 6, 8, 12, 14 };
	const struct mlircpu_isa *isa = mlircpu_isa();
	int64_t lanes = mlircpu_lanes(op), elem = (int64_t)analysis_elem_size(op->rhs);
	int64_t x, kmin = 0;
	int skinny = op->m <= MLIRCPU_SKINNY_M;
	size_t i;
	int k;

	for (k = 0; k < KNOB_COUNT; k++) {
		if (r->knobs & KNOB_BIT(k))
			backend_cand_add(r, (enum knob)k, r->defaults.v[k]);
	}
	if (elem < 1)
		elem = 4;
	for (i = 0; skinny && i < sizeof tk_skinny / sizeof tk_skinny[0]; i++)
		backend_cand_add(r, KNOB_TILE_K, tile_near(op->k, tk_skinny[i], 1));
	for (i = 0; i < sizeof tk / sizeof tk[0]; i++) {
		x = tile_near(op->k, tk[i], 1);
		if (x * lanes * elem <= isa->l1d)
			backend_cand_add(r, KNOB_TILE_K, x);
	}
	for (i = 0; i < r->ncand[KNOB_TILE_K]; i++) {
		if (kmin == 0 || r->cand[KNOB_TILE_K][i] < kmin)
			kmin = r->cand[KNOB_TILE_K][i];
	}
	for (i = 0; i < sizeof tm / sizeof tm[0]; i++)
		backend_cand_add(r, KNOB_TILE_M, tile_near(op->m, tm[i], 1));
	if (skinny)
		backend_cand_add(r, KNOB_TILE_N, op->n);
	for (i = 0; i < sizeof tn / sizeof tn[0]; i++) {
		x = tile_near(op->n, tn[i], op->n % lanes == 0 ? lanes : 1);
		if (x * kmin * elem <= isa->l2)
			backend_cand_add(r, KNOB_TILE_N, x);
	}
	for (i = 0; i < sizeof vm / sizeof vm[0]; i++)
		backend_cand_add(r, KNOB_VECTOR_M, vm[i] < op->m ? vm[i] : op->m);
	if (op->n <= 4 * lanes)
		backend_cand_add(r, KNOB_VECTOR_N, op->n);
	for (x = 1; x <= 4; x++)
		backend_cand_add(r, KNOB_VECTOR_N, x * lanes);
	backend_cand_add(r, KNOB_VECTOR_K, 1);
	backend_cand_add(r, KNOB_THREADS, 1);
	/*
	 * B packed, or read in place where its rows are contiguous along N
	 * (not transposed): for few rows of A a panel is not reused enough to
	 * pay for its copy (64x3072x768: +16% at 1 thread, same tiles).
	 */
	backend_cand_add(r, KNOB_PACK_B, 1);
	if (mlircpu_nopack_ok(op))
		backend_cand_add(r, KNOB_PACK_B, 0);
	/*
	 * A read in place, or packed into panels where the template can
	 * (docs/avx2.md: rows of A 4 KiB apart share L1 sets with B's panel).
	 */
	backend_cand_add(r, KNOB_PACK_A, 0);
	if (mlircpu_pack_a_ok(op))
		backend_cand_add(r, KNOB_PACK_A, 1);
}

static void
mlircpu_rules(const struct op_desc *op, struct space_rules *r)
{
	memset(r, 0, sizeof *r);
	r->knobs = KNOB_BIT(KNOB_TILE_M) | KNOB_BIT(KNOB_TILE_N) |
	    KNOB_BIT(KNOB_TILE_K) | KNOB_BIT(KNOB_VECTOR_M) |
	    KNOB_BIT(KNOB_VECTOR_N) | KNOB_BIT(KNOB_VECTOR_K) |
	    KNOB_BIT(KNOB_THREADS) | KNOB_BIT(KNOB_PACK_B) |
	    KNOB_BIT(KNOB_PACK_A);
	mlircpu_complete(op, NULL, &r->defaults);
	mlircpu_candidates(op, r);
	r->vector_ok = mlircpu_vector_ok;
	/* The schedule splits off (or peels) what whole tiles leave. */
	r->ragged = KNOB_BIT(KNOB_TILE_M) | KNOB_BIT(KNOB_TILE_N) |
	    KNOB_BIT(KNOB_TILE_K) | KNOB_BIT(KNOB_VECTOR_M) |
	    KNOB_BIT(KNOB_VECTOR_N) | KNOB_BIT(KNOB_VECTOR_K);
}

static void
mlircpu_baseline(const struct op_desc *op, struct config *c)
{
	mlircpu_complete(op, NULL, c);
}

static int
mlircpu_supports(const struct op_desc *op, const char **reason)
{
	if (op->kind == NULL || (strcmp(op->kind, "matmul") != 0 &&
	    strcmp(op->kind, "batch_matmul") != 0 &&
	    !analysis_kind_quantized(op->kind))) {
		*reason = "mlir-cpu tunes matmul, batch_matmul and their "
		    "quantized forms only";
		return 0;
	}
	if (analysis_kind_quantized(op->kind) && (op->lhs != ELEM_I8 ||
	    op->rhs != ELEM_I8 || op->acc != ELEM_I32)) {
		*reason = "mlir-cpu tunes quantized matmuls of i8 x i8 -> i32";
		return 0;
	}
	return backend_shape_ok(op, 1, "mlir-cpu needs static, non-empty "
	    "shapes", "mlir-cpu supports f32, f64, f16/bf16 (into f32 or "
	    "themselves) and i8xi8->i32 (signed or unsigned) only", reason);
}

/* The AUTOSCHED_TEST_FAULT kind aimed at the config called name, if any. */
static enum mlircpu_fault
fault_for(const char *name)
{
	static const char *const kinds[] = { "", "compile_fail", "compile_hang",
	    "crash", "hang", "wrong", "sleep", "nothing", "im2col" };

	return (enum mlircpu_fault)backend_test_fault(name, kinds,
	    sizeof kinds / sizeof kinds[0]);
}

/* plugin_hash's work, its cache held by the caller's lock. */
static int
plugin_hash_locked(const char *path, char out[17], char **err)
{
	static char done_path[PATH_MAX], done_hash[17];
	char *buf = NULL, *e = NULL;
	size_t n = 0;

	if (strcmp(path, done_path) == 0) {
		memcpy(out, done_hash, sizeof done_hash);
		return 0;
	}
	if (util_read_file(path, (size_t)256 << 20, &buf, &n, &e) != 0) {
		util_seterr(err, "mlir-cpu: MLIR plugin %s not found or "
		    "unreadable (set AUTOSCHED_MLIR_PLUGIN): %s", path, e);
		free(e);
		return -1;
	}
	util_hash_hex(buf, n, out);
	free(buf);
	if (strlen(path) < sizeof done_path) {
		strcpy(done_path, path);
		memcpy(done_hash, out, sizeof done_hash);
	}
	return 0;
}

/*
 * The hash of the plugin's bytes (part of every kernel's cache key), read
 * once per process: each op's backend asks, from any thread. 0, or -1 with
 * *err.
 */
static int
plugin_hash(const char *path, char out[17], char **err)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	int rc;

	pthread_mutex_lock(&lock);
	rc = plugin_hash_locked(path, out, err);
	pthread_mutex_unlock(&lock);
	return rc;
}

char *
mlircpu_plugin_path(void)
{
	return backend_find_helper("autosched-mlir-plugin.so", "AUTOSCHED_MLIR_PLUGIN",
	    R_OK);
}

/* CPU model and the flags that matter for code generation, from /proc/cpuinfo. */
static void
cpu_describe(char **model, char **flags)
{
	static const char *const wanted[] = { "avx", "avx2", "avx512bw",
	    "avx512f", "avx512vl", "avx512_bf16", "avx512_fp16",
	    "avx512_vnni", "avx_vnni", "amx_bf16", "amx_int8", "amx_tile",
	    "f16c", "fma", "sse4_2", NULL };
	char *buf = NULL, *line, *save, *tok, *s2, *out, *colon;
	size_t len, i;
	int seen[32] = { 0 };

	*model = backend_cpu_model();
	out = xcalloc(1, 512);
	if (util_read_file("/proc/cpuinfo", 4 << 20, &buf, &len, NULL) == 0) {
		for (line = strtok_r(buf, "\n", &save); line != NULL;
		    line = strtok_r(NULL, "\n", &save)) {
			if (strncmp(line, "flags", 5) != 0 ||
			    (colon = strchr(line, ':')) == NULL)
				continue;
			for (tok = strtok_r(colon + 1, " \t", &s2); tok != NULL;
			    tok = strtok_r(NULL, " \t", &s2)) {
				for (i = 0; wanted[i] != NULL; i++) {
					if (strcmp(tok, wanted[i]) == 0)
						seen[i] = 1;
				}
			}
			break;
		}
	}
	/* wanted[] is sorted, so the list comes out sorted. */
	for (i = 0; wanted[i] != NULL; i++) {
		if (seen[i]) {
			if (*out)
				strcat(out, ",");
			strcat(out, wanted[i]);
		}
	}
	free(buf);
	*flags = out;
}

/* Free be and what it holds: all of it, or what a failed open had filled. */
static void
mlircpu_close(struct backend *be)
{
	if (be == NULL)
		return;
	free(be->dispatch);
	free(be->work_dir);
	free(be->llvm_bin);
	free(be->harness);
	free(be->plugin);
	free(be->toolchain);
	free(be->cpu);
	free(be->flags);
	free(be->cpus);
	if (be->exec_owned)
		executor_close(be->exec);
	free(be);
}

static int
mlircpu_open(const struct backend_params *params, const struct op_desc *op,
    const char *dispatch_mlir, struct backend **out, char **err)
{
	struct backend *be;
	const char *bin = getenv("AUTOSCHED_LLVM_BIN");
	char *opt, *clang, *v1, *v2, *flags;
	size_t len = 0;
	int i;

	*out = NULL;
	be = xcalloc(1, sizeof *be);
	if (backend_open_base("mlir-cpu", mlircpu_supports, params, op,
	    &be->work_dir, &be->harness, &be->exec, &be->exec_owned,
	    err) != 0) {
		free(be);
		return -1;
	}
	be->params = *params;
	be->op = *op;
	be->dispatch = xstrdup(dispatch_mlir);
	be->llvm_bin = xstrdup(bin != NULL && *bin ? bin : AUTOSCHED_LLVM_BIN);
	be->plugin = mlircpu_plugin_path();
	if (plugin_hash(be->plugin, be->plugin_hash, err) != 0)
		goto fail;
	opt = util_path_join(be->llvm_bin, "mlir-opt");
	clang = util_path_join(be->llvm_bin, "clang-" AUTOSCHED_LLVM_VERSION);
	v1 = backend_tool_version(opt, NULL);
	v2 = backend_tool_version(clang, NULL);
	/* The schedule version keys results like the tools' versions do. */
	be->toolchain = xasprintf("mlir-opt %s; %s; %s", v1, v2,
	    MLIRCPU_SCHEDULE_TAG);
	free(opt);
	free(clang);
	free(v1);
	free(v2);
	cpu_describe(&be->cpu, &flags);
	/* The target records the vector ISA the kernels are built for. */
	be->flags = xasprintf("isa=%s/%dx%dB %s", mlircpu_isa()->name,
	    mlircpu_isa()->vec_regs, mlircpu_isa()->vec_bytes, flags);
	free(flags);
	if (params->cpus != NULL && params->ncpus > 0) {
		be->cpus = xcalloc((size_t)params->ncpus, 12);
		for (i = 0; i < params->ncpus; i++)
			len += (size_t)sprintf(be->cpus + len, "%s%d",
			    i ? "," : "", params->cpus[i]);
	}
	*out = be;
	return 0;
fail:
	mlircpu_close(be);
	return -1;
}

static void
mlircpu_target(struct backend *be, char **cpu, char **flags, char **toolchain)
{
	*cpu = xstrdup(be->cpu);
	*flags = xstrdup(be->flags);
	*toolchain = xstrdup(be->toolchain);
}

/* A compiled candidate waiting for its measurement (prepare → measure). */
struct mlircpu_art {
	char			*so;
	int			 threads;
	enum mlircpu_fault	 fault;
};

static int
mlircpu_prepare(struct backend *be, const struct config *cfg,
    struct trial_result *res, void **art, char **err)
{
	struct mlircpu_art *a;
	struct config c;
	enum mlircpu_fault fault;
	char name[160], *sched, *so;

	(void)err;
	*art = NULL;
	trial_result_clear(res);
	space_config_name(cfg, (KNOB_BIT(KNOB_THREADS) << 1) - 1, name,
	    sizeof name);
	fault = fault_for(name);
	mlircpu_complete(&be->op, cfg, &c);
	if (c.v[KNOB_PACK_B] == 0 && !mlircpu_nopack_ok(&be->op)) {
		/* Refused before compiling (the default space never offers it). */
		res->status = TRIAL_COMPILE_FAILED;
		res->error = xstrdup("pack_b = 0 needs B stored K x N and one "
		    "element type for A, B and the accumulator; list pack_b = "
		    "[1] for this op");
		return 0;
	}
	if (c.v[KNOB_PACK_A] == 1 && !mlircpu_pack_a_ok(&be->op)) {
		res->status = TRIAL_COMPILE_FAILED;
		res->error = xstrdup("pack_a = 1 needs f32 A, B and accumulator "
		    "and A not transposed; list pack_a = [0] for this op");
		return 0;
	}
	sched = mlircpu_schedule(&be->op, &c, fault);
	so = mlircpu_compile(be, sched, (int)c.v[KNOB_THREADS], fault, res);
	free(sched);
	if (so != NULL) {
		a = xcalloc(1, sizeof *a);
		a->so = so;
		a->threads = (int)c.v[KNOB_THREADS];
		a->fault = fault;
		*art = a;
	}
	return 0;
}

static int
mlircpu_measure_art(struct backend *be, void *art, struct trial_result *res,
    char **err)
{
	struct mlircpu_art *a = art;

	if (a == NULL)
		return 0;
	return mlircpu_measure(be, a->so, a->threads, a->fault, 0, res, err);
}

static void
mlircpu_release(void *art)
{
	struct mlircpu_art *a = art;

	if (a == NULL)
		return;
	free(a->so);
	free(a);
}

static int
mlircpu_evaluate(struct backend *be, const struct config *cfg,
    struct trial_result *res, char **err)
{
	struct mlircpu_art *a;
	void *art;
	int rc = 0;

	if (mlircpu_prepare(be, cfg, res, &art, err) != 0)
		return -1;
	if ((a = art) != NULL)
		rc = mlircpu_measure(be, a->so, a->threads, a->fault, 1, res,
		    err);
	mlircpu_release(art);
	return rc;
}

static int
mlircpu_reference(struct backend *be, int threads, struct trial_result *res,
    char **err)
{
	trial_result_clear(res);
	return mlircpu_measure(be, NULL, threads > 0 ? threads : 1, FAULT_NONE,
	    1, res, err);
}

/* The schedule of op's completed cfg, fused with its epilogue or not. */
static char *
mlircpu_export(const struct op_desc *op, const struct config *cfg,
    const char *seq_name, int fused)
{
	struct config c;

	mlircpu_complete(op, cfg, &c);
	return mlircpu_schedule_op(op, &c, seq_name, fused);
}

static char *
mlircpu_export_op(const struct op_desc *op, const struct config *cfg,
    const char *seq_name)
{
	return mlircpu_export(op, cfg, seq_name, 0);
}

static char *
mlircpu_export_op_fused(const struct op_desc *op, const struct config *cfg,
    const char *seq_name)
{
	return mlircpu_export(op, cfg, seq_name, 1);
}

/* The kernels of the n ops at their configs. Caller frees. */
static enum mlircpu_kernel *
export_kernels(const struct op_desc *const *ops,
    const struct config *const *cfgs, size_t n)
{
	enum mlircpu_kernel *kernels = xcalloc(n ? n : 1, sizeof *kernels);
	struct config c;
	size_t i;

	for (i = 0; i < n; i++) {
		mlircpu_complete(ops[i], cfgs[i], &c);
		kernels[i] = mlircpu_kernel(ops[i], &c);
	}
	return kernels;
}

static char *
mlircpu_export_module(const char *seq_name, const struct op_desc *const *ops,
    const struct config *const *cfgs, size_t n)
{
	enum mlircpu_kernel *kernels = export_kernels(ops, cfgs, n);
	char *out = mlircpu_schedule_module(seq_name, kernels, n);

	free(kernels);
	return out;
}

/* The VNNI kernel's pass is the plugin's; so is the quantized ops' split. */
static char *
mlircpu_export_plugin(const struct op_desc *const *ops,
    const struct config *const *cfgs, size_t n)
{
	enum mlircpu_kernel *kernels = export_kernels(ops, cfgs, n);
	size_t i;

	for (i = 0; i < n && kernels[i] != KERNEL_DOT_VNNI &&
	    !analysis_kind_quantized(ops[i]->kind); i++)
		;
	free(kernels);
	return i < n ? mlircpu_plugin_path() : NULL;
}

/*
 * The same ISA and vector width compile.c gives clang for the measured
 * kernels (after build's -march=native: a cap's -march wins).
 */
static char *
mlircpu_export_cflags(void)
{
	return xasprintf("%s -mprefer-vector-width=%d %s", mlircpu_isa_march(),
	    mlircpu_isa()->vec_bytes * 8, MLIRCPU_RTLIB);
}

/* The plugin's autosched-vectorize-rest at this CPU's vector width. */
static char *
mlircpu_export_rest_pass(int threads, char **plugin)
{
	*plugin = mlircpu_plugin_path();
	return xasprintf("autosched-vectorize-rest{threads=%d vector-bits=%d}",
	    threads, mlircpu_isa()->vec_bytes * 8);
}

/* The plugin's autosched-math-approx (plugin/math_approx.cpp). */
static char *
mlircpu_export_math_pass(char **plugin)
{
	*plugin = mlircpu_plugin_path();
	return xstrdup("autosched-math-approx");
}

/* The plugin's autosched-fold-init (plugin/fold_init.cpp). */
static char *
mlircpu_export_init_pass(char **plugin)
{
	*plugin = mlircpu_plugin_path();
	return xstrdup("autosched-fold-init");
}

/* The plugin's autosched-vectorize-copies (plugin/vectorize_copies.cpp),
 * as lower.pipeline.in runs it on the measured kernels. */
static char *
mlircpu_export_copy_pass(char **plugin)
{
	*plugin = mlircpu_plugin_path();
	return xstrdup("autosched-vectorize-copies");
}

const struct backend_ops mlircpu_backend = {
	.name = "mlir-cpu",
	.description = "MLIR transform-dialect schedules compiled for this CPU "
	    "(LLVM " AUTOSCHED_LLVM_VERSION "), timed against OpenBLAS",
	.rules = mlircpu_rules,
	.baseline = mlircpu_baseline,
	.supports = mlircpu_supports,
	.open = mlircpu_open,
	.target = mlircpu_target,
	.evaluate = mlircpu_evaluate,
	.prepare = mlircpu_prepare,
	.measure = mlircpu_measure_art,
	.release = mlircpu_release,
	.begin = mlircpu_begin,
	.reference = mlircpu_reference,
	.clock = NULL,
	.close = mlircpu_close,
	.export_op = mlircpu_export_op,
	.export_op_fused = mlircpu_export_op_fused,
	.export_module = mlircpu_export_module,
	.export_plugin = mlircpu_export_plugin,
	.export_cflags = mlircpu_export_cflags,
	.export_rest_pass = mlircpu_export_rest_pass,
	.export_math_pass = mlircpu_export_math_pass,
	.export_init_pass = mlircpu_export_init_pass,
	.export_copy_pass = mlircpu_export_copy_pass,
	.schedule_tag = MLIRCPU_SCHEDULE_TAG,
	.schedule_serial_since = MLIRCPU_SCHEDULE_SERIAL_SINCE,
};
