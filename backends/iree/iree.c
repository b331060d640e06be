/*
 * The iree backend: tunes IREE's own llvm-cpu code generation of a matmul
 * dispatch. Each candidate is the dispatch with a compilation_info on its
 * contraction (IREE 3.13's #iree_cpu.lowering_config levels, pipeline
 * DoubleTilingExpert), compiled by iree-compile for this CPU, checked by
 * iree-run-module against the harness's exact reference on the mlir-cpu
 * backend's verification data, and timed by iree-benchmark-module the
 * dispatch profiler's way. The baseline is IREE's own choice: the dispatch
 * with no compilation_info.
 *
 * Knobs, in the loops' order (batch,) m, n, k:
 *   tile_m, tile_n   distribution and cache_parallel (the workgroup tile)
 *   tile_k           cache_reduction
 *   vector_m/n       vector_common_parallel
 *   vector_k         vector_reduction
 *   threads          the runtime's task workers, pinned to the job's CPUs
 * The config whose knobs are all 0 but threads is IREE's own choice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend_int.h"
#include "backends/iree/iree_int.h"
#include "build_config.h"
#include "util/util.h"

/* The version of how this backend builds its candidates (toolchain string). */
#define IREE_BACKEND_TAG	"autosched iree v1"

/* f32 lanes of this CPU's widest vectors the codegen uses. */
static int64_t
lanes(const struct op_desc *op)
{
	int64_t bytes = __builtin_cpu_supports("avx512f") ? 64 :
	    __builtin_cpu_supports("avx2") ? 32 : 16;
	size_t e = analysis_elem_size(op->acc);

	return bytes / (int64_t)(e >= 4 ? e : 4);
}

/* Register tiles IREE unrolls into a sane number of vector registers. */
static int
iree_vector_ok(const struct op_desc *op, int64_t vm, int64_t vn, int64_t vk)
{
	int64_t l = lanes(op), regs = l >= 16 ? 32 : 16;

	if (vm < 1 || vn < 1 || vk < 1 || vm > 16 || vk > 16)
		return 0;
	return vm * ((vn + l - 1) / l) <= 2 * regs;
}

static int64_t
at_most(int64_t t, int64_t d)
{
	return t < d ? t : d;
}

/*
 * The default candidates: workgroup tiles 8…128 (M) and 16…256 (N), the
 * K cache tile 32…256 or all of K, register tiles of 1–8 rows and 1–4
 * vectors (or all of a narrow N), vector_k 1, 4 or 8, 1 thread.
 */
static void
iree_rules(const struct op_desc *op, struct space_rules *r)
{
	static const int64_t tm[] = { 8, 16, 32, 64, 128 };
	static const int64_t tn[] = { 16, 32, 64, 128, 256 };
	static const int64_t tk[] = { 32, 64, 128, 256 };
	static const int64_t vm[] = { 1, 2, 4, 6, 8 };
	static const int64_t vk[] = { 1, 4, 8 };
	int64_t l = lanes(op), x;
	size_t i;

	memset(r, 0, sizeof *r);
	r->knobs = KNOB_BIT(KNOB_TILE_M) | KNOB_BIT(KNOB_TILE_N) |
	    KNOB_BIT(KNOB_TILE_K) | KNOB_BIT(KNOB_VECTOR_M) |
	    KNOB_BIT(KNOB_VECTOR_N) | KNOB_BIT(KNOB_VECTOR_K) |
	    KNOB_BIT(KNOB_THREADS);
	/* The default is IREE's own: every knob 0 but threads. */
	r->defaults.v[KNOB_THREADS] = 1;
	r->own_default = 1;
	for (i = 0; i < sizeof tm / sizeof tm[0]; i++)
		backend_cand_add(r, KNOB_TILE_M, at_most(tm[i], op->m));
	for (i = 0; i < sizeof tn / sizeof tn[0]; i++)
		backend_cand_add(r, KNOB_TILE_N, at_most(tn[i], op->n));
	for (i = 0; i < sizeof tk / sizeof tk[0]; i++)
		backend_cand_add(r, KNOB_TILE_K, at_most(tk[i], op->k));
	backend_cand_add(r, KNOB_TILE_K, op->k);
	for (i = 0; i < sizeof vm / sizeof vm[0]; i++)
		backend_cand_add(r, KNOB_VECTOR_M, at_most(vm[i], op->m));
	if (op->n < 4 * l)
		backend_cand_add(r, KNOB_VECTOR_N, op->n);
	for (x = 1; x <= 4; x++)
		backend_cand_add(r, KNOB_VECTOR_N, at_most(x * l, op->n));
	for (i = 0; i < sizeof vk / sizeof vk[0]; i++)
		backend_cand_add(r, KNOB_VECTOR_K, at_most(vk[i], op->k));
	backend_cand_add(r, KNOB_THREADS, 1);
	r->vector_ok = iree_vector_ok;
	/* IREE peels (or masks) what whole tiles leave. */
	r->ragged = KNOB_BIT(KNOB_TILE_M) | KNOB_BIT(KNOB_TILE_N) |
	    KNOB_BIT(KNOB_TILE_K) | KNOB_BIT(KNOB_VECTOR_M) |
	    KNOB_BIT(KNOB_VECTOR_N) | KNOB_BIT(KNOB_VECTOR_K);
}

static void
iree_baseline(const struct op_desc *op, struct config *c)
{
	(void)op;
	memset(c, 0, sizeof *c);
	c->v[KNOB_THREADS] = 1;
}

static int
iree_supports(const struct op_desc *op, const char **reason)
{
	if (op->kind == NULL || (strcmp(op->kind, "matmul") != 0 &&
	    strcmp(op->kind, "batch_matmul") != 0)) {
		*reason = "iree tunes matmul and batch_matmul only";
		return 0;
	}
	return backend_shape_ok(op, 0, "iree needs static, non-empty shapes",
	    "iree supports f32, f64, f16 (into f32 or f16), bf16 into f32 and "
	    "i8xi8->i32 only", reason);
}

static int
iree_available(const struct backend_params *params, char **err)
{
	struct iree_tools t;

	if (iree_tools_find(params->iree_bin, &t, err) != 0)
		return -1;
	iree_tools_free(&t);
	return 0;
}

static char *
iree_about(void)
{
	struct iree_tools t;
	char *s;

	if (iree_tools_find(NULL, &t, NULL) != 0)
		return xasprintf("IREE: not found (backend iree; expects %s: "
		    "bash scripts/deps.sh)", AUTOSCHED_IREE_VERSION);
	s = xasprintf("IREE %s (%s; backend iree expects %s)", t.version,
	    t.compile, AUTOSCHED_IREE_VERSION);
	iree_tools_free(&t);
	return s;
}

/* The AUTOSCHED_TEST_FAULT kind aimed at the config called name, if any. */
static enum iree_fault
fault_for(const char *name)
{
	static const char *const kinds[] = { "", "compile_fail", "wrong",
	    "hang" };

	return (enum iree_fault)backend_test_fault(name, kinds,
	    sizeof kinds / sizeof kinds[0]);
}

int
iree_backend_new(const char *name,
    int (*supports)(const struct op_desc *, const char **),
    const struct backend_params *params, const struct op_desc *op,
    const char *dispatch, struct backend **out, char **err)
{
	struct backend *be = xcalloc(1, sizeof *be);

	*out = NULL;
	if (backend_open_base(name, supports, params, op, &be->work_dir,
	    &be->harness, &be->exec, &be->exec_owned, err) != 0) {
		free(be);
		return -1;
	}
	pthread_mutex_init(&be->mu, NULL);
	be->params = *params;
	be->op = *op;
	be->dispatch = xstrdup(dispatch);
	if (iree_tools_find(params->iree_bin, &be->tools, err) != 0) {
		iree_backend_free(be);
		return -1;
	}
	*out = be;
	return 0;
}

void
iree_backend_free(struct backend *be)
{
	if (be == NULL)
		return;
	free(be->dispatch);
	free(be->work_dir);
	iree_tools_free(&be->tools);
	free(be->harness);
	free(be->gpu_harness);
	free(be->ptxas);
	free(be->toolchain);
	free(be->cpu);
	free(be->flags);
	free(be->data_dir);
	free(be->not_verified);
	if (be->exec_owned)
		executor_close(be->exec);
	pthread_mutex_destroy(&be->mu);
	free(be);
}

void
iree_backend_target(struct backend *be, char **cpu, char **flags,
    char **toolchain)
{
	*cpu = xstrdup(be->cpu);
	*flags = xstrdup(be->flags);
	*toolchain = xstrdup(be->toolchain);
}

static int
iree_open(const struct backend_params *params, const struct op_desc *op,
    const char *dispatch_mlir, struct backend **out, char **err)
{
	struct backend *be;

	if (iree_backend_new("iree", iree_supports, params, op, dispatch_mlir,
	    &be, err) != 0)
		return -1;
	be->toolchain = xasprintf("iree-compile %s; %s", be->tools.version,
	    IREE_BACKEND_TAG);
	be->cpu = backend_cpu_model();
	/* The codegen targets the host: vector width stands for its flags. */
	be->flags = xasprintf("llvm-cpu host, %lld-bit vectors",
	    (long long)lanes(&(struct op_desc){ .acc = ELEM_F32 }) * 32);
	*out = be;
	return 0;
}

/* A compiled candidate waiting for its measurement (prepare → measure). */
struct iree_cand {
	struct iree_art		 art;
	int			 threads;
	enum iree_fault		 fault;
};

static void
iree_release(void *art)
{
	struct iree_cand *c = art;

	if (c == NULL)
		return;
	iree_art_free(&c->art);
	free(c);
}

static int
iree_prepare(struct backend *be, const struct config *cfg,
    struct trial_result *res, void **art, char **err)
{
	struct iree_cand *c;
	char name[160], *attr;
	int rc;

	*art = NULL;
	trial_result_clear(res);
	/* The op's data, once, before measurements run at once. */
	if (iree_data_make(be, err) != 0)
		return -1;
	c = xcalloc(1, sizeof *c);
	space_config_name(cfg, (KNOB_BIT(KNOB_THREADS) << 1) - 1, name,
	    sizeof name);
	c->fault = fault_for(name);
	c->threads = (int)cfg->v[KNOB_THREADS];
	attr = iree_attr(&be->op, cfg, c->fault);
	rc = iree_compile(be, attr, &c->art, res);
	free(attr);
	if (rc != 0) {
		iree_release(c);
		return 0;	/* res says why: a recorded outcome */
	}
	/* IREE's own choice, said once: what the tuned configs compete with. */
	pthread_mutex_lock(&be->mu);
	if (cfg->v[KNOB_TILE_M] == 0 && !be->told_default) {
		be->told_default = 1;
		fprintf(stderr, "autosched: iree: %s: IREE's own config: %s\n",
		    be->op.name, c->art.chosen ? c->art.chosen :
		    "(not dumped)");
	}
	pthread_mutex_unlock(&be->mu);
	*art = c;
	return 0;
}

static int
iree_measure_cand(struct backend *be, void *art, struct trial_result *res,
    char **err)
{
	struct iree_cand *c = art;

	if (c == NULL)
		return 0;
	return iree_measure(be, &c->art, c->threads, c->fault, 0, res, err);
}

static int
iree_evaluate(struct backend *be, const struct config *cfg,
    struct trial_result *res, char **err)
{
	struct iree_cand *c;
	void *art;
	int rc = 0;

	if (iree_prepare(be, cfg, res, &art, err) != 0)
		return -1;
	if ((c = art) != NULL)
		rc = iree_measure(be, &c->art, c->threads, c->fault, 1, res,
		    err);
	iree_release(art);
	return rc;
}

/* The cache's checks, then the executor's (the harness's --target as probe). */
static int
iree_begin(struct backend *be, char **err)
{
	char *probe[] = { be->harness, "--target", NULL };

	if (backend_cache_check("iree", be->params.work_dir, err) != 0 ||
	    backend_cache_check("iree", be->work_dir, err) != 0)
		return -1;
	return executor_begin(be->exec, probe, be->cpu, err);
}

static int
iree_reference_op(struct backend *be, int threads, struct trial_result *res,
    char **err)
{
	trial_result_clear(res);
	return iree_reference(be, threads, res, err);
}

static char *
iree_export_attr(const struct op_desc *op, const struct config *cfg)
{
	return iree_attr(op, cfg, IREE_FAULT_NONE);
}

const struct backend_ops iree_backend = {
	.name = "iree",
	.description = "IREE's own llvm-cpu codegen (iree-compile, "
	    "iree-benchmark-module " AUTOSCHED_IREE_VERSION "), tuned through "
	    "compilation_info",
	.rules = iree_rules,
	.baseline = iree_baseline,
	.supports = iree_supports,
	.available = iree_available,
	.about = iree_about,
	.open = iree_open,
	.target = iree_backend_target,
	.evaluate = iree_evaluate,
	.prepare = iree_prepare,
	.measure = iree_measure_cand,
	.release = iree_release,
	.begin = iree_begin,
	.reference = iree_reference_op,
	.close = iree_backend_free,
	.export_iree_attr = iree_export_attr,
	.schedule_tag = IREE_BACKEND_TAG,
};
