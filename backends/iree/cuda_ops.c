/*
 * backend iree with [Env] gpu_arch: IREE 3.13's CUDA codegen of a matmul,
 * tuned through compilation_info (cuda.c), compiled here to PTX with its
 * launch shape and checked by ptxas (cuda_compile.c), and measured by
 * autosched-gpu-measure (measure/) on the GPU: checked exactly against
 * cuBLAS, timed with CUDA events. Where there is no GPU the candidates are
 * staged (the stage hook) and measured where one is (bench/gpu.sh).
 */
#include <sys/stat.h>

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend_int.h"
#include "backends/iree/cuda_int.h"
#include "backends/iree/iree_int.h"
#include "build_config.h"
#include "util/util.h"

#define CUDA_BACKEND_TAG	"autosched iree-cuda v1"

/* The harness's TYPE of op, or NULL when IREE's CUDA path lacks it. */
static const char *
cuda_type(const struct op_desc *op)
{
	if (op->lhs != op->rhs)
		return NULL;
	if (op->lhs == ELEM_F16)
		return op->acc == ELEM_F32 ? "f16f32" : op->acc == ELEM_F16 ?
		    "f16" : NULL;
	if (op->lhs == ELEM_BF16)
		return op->acc == ELEM_F32 ? "bf16f32" : NULL;
	return op->lhs == ELEM_F32 && op->acc == ELEM_F32 ? "f32" : NULL;
}

static int
cuda_supports(const struct op_desc *op, const char **reason)
{
	if (op->kind == NULL || (strcmp(op->kind, "matmul") != 0 &&
	    strcmp(op->kind, "batch_matmul") != 0)) {
		*reason = "iree on CUDA tunes matmuls and batch matmuls only";
		return 0;
	}
	if (op->m < 1 || op->n < 1 || op->k < 1 || (cuda_is_batch(op) &&
	    op->batch < 1)) {
		*reason = "iree on CUDA needs static, non-empty shapes";
		return 0;
	}
	if (cuda_type(op) == NULL) {
		*reason = "iree on CUDA supports f16 (into f32 or f16), bf16 into "
		    "f32 and f32 only";
		return 0;
	}
	*reason = NULL;
	return 1;
}

static void
cuda_baseline(const struct op_desc *op, struct config *c)
{
	(void)op;
	memset(c, 0, sizeof *c);
	c->v[KNOB_THREADS] = 1;
}

/* ptxas: $AUTOSCHED_PTXAS, $CUDA_HOME/bin, /usr/local/cuda/bin, PATH. */
static char *
ptxas_find(void)
{
	const char *e = getenv("AUTOSCHED_PTXAS"), *h = getenv("CUDA_HOME");
	const char *path = getenv("PATH");
	char *p, *copy, *dir, *save;

	if (e != NULL && *e != '\0')
		return access(e, X_OK) == 0 ? xstrdup(e) : NULL;
	p = h != NULL && *h == '/' ? xasprintf("%s/bin/ptxas", h) :
	    xstrdup("/usr/local/cuda/bin/ptxas");
	if (access(p, X_OK) == 0)
		return p;
	free(p);
	if (path == NULL)
		return NULL;
	copy = xstrdup(path);
	p = NULL;
	for (dir = strtok_r(copy, ":", &save); dir != NULL && p == NULL;
	    dir = strtok_r(NULL, ":", &save)) {
		p = util_path_join(dir, "ptxas");
		if (*dir != '/' || access(p, X_OK) != 0) {
			free(p);
			p = NULL;
		}
	}
	free(copy);
	return p;
}

/* gpu_arch = auto: the GPU here, as autosched-gpu-measure --probe sees it. */
static const struct cuda_arch *
arch_detect(const char *harness, char **err)
{
	char *const argv[] = { (char *)harness, "--probe", NULL };
	struct proc_opts o;
	struct proc_result pr;
	const struct cuda_arch *a = NULL;
	char name[16], *e = NULL;
	const char *cc;
	int maj, min;

	memset(&o, 0, sizeof o);
	memset(&pr, 0, sizeof pr);
	o.timeout = 60;
	if (proc_run(argv, &o, &pr, &e) != 0 || !pr.exited || pr.status != 0 ||
	    (cc = strstr(pr.out, "\"cc\":\"")) == NULL ||
	    sscanf(cc + 6, "%d.%d", &maj, &min) != 2) {
		util_seterr(err, "[Env] gpu_arch = auto: no GPU found here (%s);"
		    " name one of %s", e != NULL ? e : pr.err != NULL &&
		    *pr.err ? pr.err : "autosched-gpu-measure --probe failed",
		    cuda_arch_names());
		goto out;
	}
	snprintf(name, sizeof name, "sm_%d%d%s", maj, min, maj == 9 ? "a" : "");
	if ((a = cuda_arch_find(name)) == NULL)
		util_seterr(err, "[Env] gpu_arch = auto: this GPU is %s, which "
		    "IREE 3.13's CUDA target lacks; name one of %s", name,
		    cuda_arch_names());
out:
	free(e);
	proc_result_free(&pr);
	return a;
}

/* The arch of params (auto: detected). NULL with *err. */
static const struct cuda_arch *
arch_of(const struct backend_params *p, const char *harness, char **err)
{
	const struct cuda_arch *a;

	if (p->gpu_arch != NULL && strcmp(p->gpu_arch, "auto") == 0) {
		if (harness == NULL) {
			util_seterr(err, "[Env] gpu_arch = auto: "
			    "autosched-gpu-measure not found to ask the GPU");
			return NULL;
		}
		return arch_detect(harness, err);
	}
	if ((a = cuda_arch_find(p->gpu_arch)) == NULL)
		util_seterr(err, "[Env] gpu_arch = %s: expected auto or one of %s",
		    p->gpu_arch ? p->gpu_arch : "(none)", cuda_arch_names());
	return a;
}

/* autosched-gpu-measure: as the other helpers, else the build's measure/. */
static char *
gpu_harness_find(void)
{
	char *p = backend_find_helper("autosched-gpu-measure",
	    "AUTOSCHED_GPU_MEASURE", X_OK);

	if (access(p, X_OK) == 0 || getenv("AUTOSCHED_GPU_MEASURE") != NULL)
		return p;
	free(p);
	p = xstrdup(AUTOSCHED_BINARY_DIR "/measure/autosched-gpu-measure");
	if (access(p, X_OK) == 0)
		return p;
	free(p);
	return NULL;
}

static int
cuda_available(const struct backend_params *params, char **err)
{
	struct iree_tools t;
	char *p;

	if (iree_tools_find(params->iree_bin, &t, err) != 0)
		return -1;
	iree_tools_free(&t);
	if ((p = ptxas_find()) == NULL) {
		util_seterr(err, "backend iree for CUDA needs ptxas (the CUDA "
		    "toolkit: /usr/local/cuda/bin, $CUDA_HOME/bin, PATH, or "
		    "AUTOSCHED_PTXAS)");
		return -1;
	}
	free(p);
	return 0;
}

static int
cuda_open(const struct backend_params *params, const struct op_desc *op,
    const char *dispatch_mlir, struct backend **out, char **err)
{
	struct backend *be;

	if (iree_backend_new("iree-cuda", cuda_supports, params, op,
	    dispatch_mlir, &be, err) != 0)
		return -1;
	be->gpu_harness = gpu_harness_find();
	if (cuda_available(params, err) != 0 ||
	    (be->arch = arch_of(params, be->gpu_harness, err)) == NULL) {
		iree_backend_free(be);
		return -1;
	}
	be->ptxas = ptxas_find();
	be->toolchain = xasprintf("iree-compile %s; %s", be->tools.version,
	    CUDA_BACKEND_TAG);
	be->cpu = xasprintf("NVIDIA GPU %s", be->arch->name);
	be->flags = xasprintf("iree cuda %s TileAndFuse", be->arch->name);
	*out = be;
	return 0;
}

static void
cuda_release(void *art)
{
	struct cuda_art *a = art;

	if (a == NULL)
		return;
	cuda_art_free(a);
	free(a);
}

static int
cuda_prepare(struct backend *be, const struct config *cfg,
    struct trial_result *res, void **art, char **err)
{
	struct cuda_art *a;
	char *why;

	(void)err;
	*art = NULL;
	trial_result_clear(res);
	if ((why = cuda_rule_broken(&be->op, cfg, be->arch)) != NULL) {
		res->status = TRIAL_COMPILE_FAILED;
		util_seterr(&res->error, "refused: %s", why);
		free(why);
		return 0;
	}
	a = xcalloc(1, sizeof *a);
	if (cuda_compile(be, cfg, a, res) != 0) {
		cuda_release(a);
		if (!res->env_failure)
			return 0;	/* res says why: a recorded outcome */
		*err = xstrdup(res->error ? res->error : "compile failed");
		return -1;
	}
	*art = a;
	return 0;
}

/* "NAME,PTX,ENTRY,GX,GY,GZ,BX,BY,BZ,SMEM" for the harness. Caller frees. */
static char *
kernel_spec(const char *name, const char *ptx, const struct cuda_launch *l)
{
	return xasprintf("%s,%s,%s,%u,%u,%u,%u,%u,%u,%u", name, ptx, l->entry,
	    l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
	    l->block[2], l->smem);
}

/*
 * The harness's --op: "M,N,K,TYPE", then ",bB" for a batch matmul and
 * ",ta" / ",tb" for operands stored transposed. Caller frees.
 */
static char *
op_arg(const struct op_desc *op)
{
	char b[32] = "";

	if (cuda_is_batch(op))
		snprintf(b, sizeof b, ",b%lld", (long long)cuda_batch(op));
	return xasprintf("%lld,%lld,%lld,%s%s%s%s", (long long)op->m,
	    (long long)op->n, (long long)op->k, cuda_type(op), b,
	    op->transpose_a ? ",ta" : "", op->transpose_b ? ",tb" : "");
}

/* The harness's JSON line of kind in out, or NULL. Caller decrefs. */
static json_t *
line_of(const char *out, const char *kind)
{
	char pat[48];
	const char *p = out, *e;
	json_t *j;

	snprintf(pat, sizeof pat, "{\"kind\":\"%s\"", kind);
	while ((p = strstr(p, pat)) != NULL) {
		e = strchr(p, '\n');
		j = json_loadb(p, e ? (size_t)(e - p) : strlen(p), 0, NULL);
		if (j != NULL)
			return j;
		p++;
	}
	return NULL;
}

/* res from the harness's JSON line j. */
static void
cuda_result(json_t *j, const struct op_desc *op, struct trial_result *res)
{
	char st[32], by[96], e[512];

	backend_json_str(j, "status", st, sizeof st);
	backend_json_str(j, "checked_by", by, sizeof by);
	if (strcmp(st, "ok") != 0) {
		backend_json_str(j, "error", e, sizeof e);
		res->status = strcmp(st, "wrong_result") == 0 ?
		    TRIAL_WRONG_RESULT : TRIAL_CRASHED;
		util_seterr(&res->error, "%s: %s%s%.0f mismatches", st, e,
		    *e ? "; " : "", backend_json_num(j, "mismatches"));
		return;
	}
	res->status = TRIAL_OK;
	res->median_ms = backend_json_num(j, "median_ms");
	res->min_ms = backend_json_num(j, "min_ms");
	res->max_ms = res->median_ms;
	res->cv = backend_json_num(j, "cv");
	res->reps = (int)backend_json_num(j, "samples");
	/* The op's work over the median, as for every backend. */
	res->gflops = res->median_ms > 0 ? 2.0 * (double)cuda_batch(op) *
	    (double)op->m * (double)op->n * (double)op->k /
	    (res->median_ms * 1e6) : 0;
	res->verified = *by != '\0';
	snprintf(res->checked_by, sizeof res->checked_by, "%s", by);
}

/* A small count of j's key (clocks, °C, W): 0 when absent or not one. */
static int
json_small(json_t *j, const char *key)
{
	double v = backend_json_num(j, key);

	return v >= 0 && v <= 1e6 ? (int)v : 0;
}

/*
 * The GPU's fields of res: its name and memory clock from the harness's
 * device line, the SM clock, temperature and power from the result line j
 * (as NVML read them at the end of the timed samples; 0: NVML absent).
 */
static void
cuda_gpu_fields(const char *out, json_t *j, struct trial_result *res)
{
	json_t *dev = line_of(out, "device");

	if (dev != NULL) {
		backend_json_str(dev, "name", res->gpu, sizeof res->gpu);
		res->mem_mhz = json_small(dev, "mem_mhz");
		json_decref(dev);
	}
	res->sm_mhz = json_small(j, "sm_mhz");
	res->temp_c = json_small(j, "temp_c");
	res->power_w = json_small(j, "power_w");
}

/*
 * The peak line of out into res (reference runs): GFLOP/s and what was
 * timed; left 0 and "" when the harness could not measure it.
 */
static void
cuda_peak_fields(const char *out, const struct op_desc *op,
    struct trial_result *res)
{
	json_t *p = line_of(out, "peak");
	char st[32];

	if (p == NULL)
		return;
	backend_json_str(p, "status", st, sizeof st);
	if (strcmp(st, "ok") == 0 && backend_json_num(p, "tflops") > 0) {
		res->peak_gflops = backend_json_num(p, "tflops") * 1e3;
		snprintf(res->peak_routine, sizeof res->peak_routine, "%s",
		    cuda_is_mma(op) ? "peak:mma.sync.m16n8k16" :
		    "peak:fma.rn.f32");
	}
	json_decref(p);
}

/*
 * Run the harness on the op with spec (NULL: cuBLAS alone, and with peak
 * the peak loop after it); fill res from kind.
 */
static int
harness_run(struct backend *be, const char *spec, const char *kind,
    int peak, struct trial_result *res, char **err)
{
	char *opa = op_arg(&be->op), mt[32], seed[24];
	char *argv[14];
	struct executor_run run;
	struct executor_result x;
	json_t *j = NULL;
	int n = 0, rc = 0;

	snprintf(mt, sizeof mt, "%g", be->params.min_time > 0 ?
	    be->params.min_time : 0.2);
	snprintf(seed, sizeof seed, "%llu",
	    (unsigned long long)be->params.seed % 1000000);
	argv[n++] = be->gpu_harness, argv[n++] = "--op", argv[n++] = opa;
	argv[n++] = "--min-time", argv[n++] = mt, argv[n++] = "--seed";
	argv[n++] = seed;
	if (spec != NULL)
		argv[n++] = "--kernel", argv[n++] = (char *)spec;
	if (peak)
		argv[n++] = "--peak";
	argv[n] = NULL;
	memset(&run, 0, sizeof run);
	memset(&x, 0, sizeof x);
	run.argv = argv;
	run.threads = 1;
	run.timeout = be->params.timeout > 0 ? be->params.timeout : 120;
	run.label = be->op.name;
	if (be->gpu_harness == NULL || executor_run(be->exec, &run, &x,
	    err) != 0) {
		if (be->gpu_harness == NULL)
			util_seterr(err, "autosched-gpu-measure not found "
			    "(AUTOSCHED_GPU_MEASURE)");
		res->env_failure = 1;
		free(opa);
		return -1;
	}
	if (x.outcome == EXECUTOR_ENV_FAILED ||
	    x.outcome == EXECUTOR_CANCELLED) {
		util_seterr(err, "autosched-gpu-measure: %s", x.why ? x.why :
		    "could not run");
		res->env_failure = 1;
		rc = -1;
	} else if (x.outcome == EXECUTOR_EXITED && x.status == 3) {
		util_seterr(err, "no GPU to measure on here (%.*s); stage the "
		    "candidates for a GPU host instead (bench/gpu.sh)",
		    (int)strcspn(x.err, "\n"), x.err);
		res->env_failure = 1;
		rc = -1;
	} else if ((j = line_of(x.out, kind)) == NULL) {
		res->status = x.outcome == EXECUTOR_TIMEOUT ? TRIAL_TIMEOUT :
		    TRIAL_CRASHED;
		util_seterr(&res->error, "autosched-gpu-measure: no %s result "
		    "(exit %d): %s", kind, x.status, x.err);
	} else {
		cuda_result(j, &be->op, res);
		cuda_gpu_fields(x.out, j, res);
		if (peak)
			cuda_peak_fields(x.out, &be->op, res);
	}
	snprintf(res->host, sizeof res->host, "%s", x.host);
	json_decref(j);
	executor_result_free(&x);
	free(opa);
	return rc;
}

static int
cuda_measure(struct backend *be, void *art, struct trial_result *res,
    char **err)
{
	struct cuda_art *a = art;
	char *spec;
	int rc;

	if (a == NULL)
		return 0;
	spec = kernel_spec("candidate", a->ptx, &a->l);
	rc = harness_run(be, spec, "kernel", 0, res, err);
	free(spec);
	if (rc == 0 && res->status == TRIAL_OK && be->params.cv_max > 0 &&
	    res->cv > be->params.cv_max)
		res->status = TRIAL_UNSTABLE;
	return rc;
}

static int
cuda_evaluate(struct backend *be, const struct config *cfg,
    struct trial_result *res, char **err)
{
	void *art;
	int rc;

	if (cuda_prepare(be, cfg, res, &art, err) != 0)
		return -1;
	rc = cuda_measure(be, art, res, err);
	cuda_release(art);
	return rc;
}

/*
 * cuBLAS at the op's shape and types, through the same timing, and the
 * device's peak for those types (--peak) beside it: what best/cuBLAS and
 * the % of peak of the reports are made of.
 */
static int
cuda_reference(struct backend *be, int threads, struct trial_result *res,
    char **err)
{
	(void)threads;
	trial_result_clear(res);
	if (harness_run(be, NULL, "cublas", 1, res, err) != 0)
		return -1;
	snprintf(res->ref_routine, sizeof res->ref_routine, "cublas:GemmEx");
	res->ref_same_precision = 1;
	return 0;
}

/* Copy from to to (a small file). 0, or -1 with *err. */
static int
copy_file(const char *from, const char *to, char **err)
{
	char *buf = NULL;
	size_t len;
	int rc;

	if (util_read_file(from, (size_t)64 << 20, &buf, &len, err) != 0)
		return -1;
	rc = util_write_file(to, buf, len, err);
	free(buf);
	return rc;
}

static int
cuda_stage(struct backend *be, void *art, const char *dir, const char *name,
    char **line, char **err)
{
	struct cuda_art *a = art;
	char *ptx = xasprintf("%s/%s.ptx", dir, name);
	char *vm = xasprintf("%s/%s.vmfb", dir, name), *rel;
	char *side = xasprintf("%s/%s.iree", dir, name);
	char *rt = xasprintf("function mm\nrepeat %d\n", cuda_repeat(&be->op));
	int rc = -1;

	*line = NULL;
	/* NAME.iree: how IREE's runtime runs NAME.vmfb (--batch_size = repeat). */
	if (a != NULL && copy_file(a->ptx, ptx, err) == 0 &&
	    copy_file(a->vmfb, vm, err) == 0 &&
	    util_write_file(side, rt, strlen(rt), err) == 0) {
		rel = xasprintf("%s.ptx", name);
		*line = kernel_spec(name, rel, &a->l);
		free(rel);
		rc = 0;
	}
	free(ptx);
	free(vm);
	free(side);
	free(rt);
	return rc;
}

static int
cuda_begin(struct backend *be, char **err)
{
	if (backend_cache_check("iree", be->params.work_dir, err) != 0 ||
	    backend_cache_check("iree", be->work_dir, err) != 0)
		return -1;
	return 0;
}

static char *
cuda_export_attr(const struct op_desc *op, const struct config *cfg)
{
	return cuda_attr(op, cfg);
}

const struct backend_ops iree_cuda_backend = {
	.name = "iree-cuda",
	.description = "IREE's CUDA codegen (TileAndFuse, mma.sync; iree-compile "
	    AUTOSCHED_IREE_VERSION "), tuned through compilation_info, "
	    "measured by autosched-gpu-measure against cuBLAS",
	.rules = iree_cuda_rules,
	.baseline = cuda_baseline,
	.supports = cuda_supports,
	.available = cuda_available,
	.open = cuda_open,
	.target = iree_backend_target,
	.evaluate = cuda_evaluate,
	.prepare = cuda_prepare,
	.measure = cuda_measure,
	.release = cuda_release,
	.stage = cuda_stage,
	.begin = cuda_begin,
	.reference = cuda_reference,
	.close = iree_backend_free,
	.export_iree_attr = cuda_export_attr,
	.schedule_tag = CUDA_BACKEND_TAG,
	.knob_note = "pipeline_depth (IREE's prefetch_num_stages) does nothing "
	    "on IREE 3.13's CUDA path (identical PTX) and is not searched; "
	    "block_dim_x/y/z follow from the tiles (32 threads a warp tile, one "
	    "a thread tile for f32); the warp (or thread) tile is vector_m x "
	    "vector_n, promote_operands is pack_b, the 4-element row padding "
	    "of the promoted tiles is pad_smem (0: IREE's "
	    "no_reduce_shared_memory_bank_conflicts)",
	.spec_note = "IREE 3.13 never reads a tuning spec for CUDA "
	    "(--iree-codegen-tuning-spec-path is silently ignored there, even a "
	    "missing file): no spec can carry this config. Use `autosched "
	    "annotate PROGRAM.mlir` instead: it writes the tuned "
	    "compilation_info on the op, which IREE's CUDA path reads",
};
