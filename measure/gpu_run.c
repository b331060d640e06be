/*
 * What autosched-gpu-measure does on the GPU: the op's data, the check of
 * a kernel's result (every element against cuBLAS's, sampled elements
 * against exact dot products, the output poisoned with NaN first), and
 * the timing of kernels, of cuBLAS at the same shape and types, and of the
 * peak loop, all with CUDA events. One JSON line per thing measured.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/gpu_data.h"
#include "measure/gpu_int.h"

#define SAMPLES_MAX	200
#define SAMPLE_MS	2.0	/* each sample runs launches for about this long */
#define NDOTS		512
/* cuBLAS's enums (cublas_api.h, library_types.h). */
#define CUDA_R_16F	2
#define CUDA_R_32F	0
#define CUDA_R_16BF	14
#define CUBLAS_COMPUTE_16F	64
#define CUBLAS_COMPUTE_32F	68
#define CUBLAS_GEMM_DEFAULT	(-1)
#define CUBLAS_OP_N		0
#define CUBLAS_OP_T		1
#define CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES	8
#define CU_FUNC_ATTRIBUTE_NUM_REGS	4
#define CU_JIT_ERROR_LOG_BUFFER	5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES	6

const char *
gpu_json_str(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	buf[o++] = '"';
	for (; *s != '\0' && o + 8 < len; s++) {
		if (*s == '"' || *s == '\\')
			buf[o++] = '\\', buf[o++] = *s;
		else if ((unsigned char)*s < 0x20)
			buf[o++] = ' ';
		else
			buf[o++] = *s;
	}
	buf[o++] = '"';
	buf[o] = '\0';
	return buf;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* NVML's SM clock (MHz), temperature (°C) and power (W), where it answers. */
static void
sensors(struct gpu *g, struct gpu_timing *t)
{
	unsigned v;

	if (g->nvml.lib == NULL)
		return;
	if (g->nvml.clock(g->nvml.dev, 1 /* NVML_CLOCK_SM */, &v) == 0)
		t->sm_mhz = v;
	if (g->nvml.temp(g->nvml.dev, 0 /* NVML_TEMPERATURE_GPU */, &v) == 0)
		t->temp_c = v;
	if (g->nvml.power(g->nvml.dev, &v) == 0)
		t->power_w = v / 1000;
}

/* Run launch n times between the two events; the ms per launch. */
static gpu_cures
sample(struct gpu *g, gpu_launch_fn launch, void *arg, int n, double *ms)
{
	gpu_cures r;
	float t;
	int i;

	if ((r = g->cu.event_record(g->e0, NULL)) != 0)
		return r;
	for (i = 0; i < n; i++)
		if ((r = launch(g, arg)) != 0)
			return r;
	if ((r = g->cu.event_record(g->e1, NULL)) != 0 ||
	    (r = g->cu.event_sync(g->e1)) != 0 ||
	    (r = g->cu.event_elapsed(&t, g->e0, g->e1)) != 0)
		return r;
	*ms = (double)t / n;
	return 0;
}

gpu_cures
gpu_time(struct gpu *g, gpu_launch_fn launch, void *arg,
    struct gpu_timing *t)
{
	double s[SAMPLES_MAX], one, total = 0, mean = 0, var = 0;
	gpu_cures r;
	int i, n, per;

	memset(t, 0, sizeof *t);
	for (i = 0; i < g->o->warmup; i++)
		if ((r = launch(g, arg)) != 0)
			return r;
	if ((r = g->cu.ctx_sync()) != 0 || (r = sample(g, launch, arg, 1,
	    &one)) != 0)
		return r;
	per = one > 0 ? (int)ceil(SAMPLE_MS / one) : 1000;
	per = per < 1 ? 1 : per > 1000 ? 1000 : per;
	for (n = 0; n < SAMPLES_MAX && (n < 5 || total < g->o->min_time * 1e3);
	    n++) {
		if ((r = sample(g, launch, arg, per, &s[n])) != 0)
			return r;
		total += s[n] * per;
		mean += s[n];
	}
	mean /= n;
	for (i = 0; i < n; i++)
		var += (s[i] - mean) * (s[i] - mean);
	qsort(s, (size_t)n, sizeof s[0], cmp_double);
	t->median_ms = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	t->min_ms = s[0];
	t->cv = mean > 0 ? sqrt(var / n) / mean : 0;
	t->samples = n;
	t->launches = n * per;
	sensors(g, t);
	return 0;
}

/*
 * cuBLAS into C (row-major: the column-major product Cᵀ = Bᵀ·Aᵀ; a B
 * stored N×K is read transposed (CUBLAS_OP_T), and so an A stored K×M).
 * A batch: cublasGemmStridedBatchedEx, one matrix after the other.
 */
static gpu_cures
launch_cublas(struct gpu *g, void *arg)
{
	const struct gpu_opts *o = g->o;
	gpu_ptr c = *(gpu_ptr *)arg;
	float one = 1, zero = 0;
	uint16_t h1 = 0x3c00, h0 = 0;
	int in = o->type == GPU_F32 ? CUDA_R_32F : o->type == GPU_BF16F32 ?
	    CUDA_R_16BF : CUDA_R_16F;
	int out = o->type == GPU_F16 ? CUDA_R_16F : CUDA_R_32F;
	int f16 = o->type == GPU_F16, st;
	int opb = o->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
	int opa = o->ta ? CUBLAS_OP_T : CUBLAS_OP_N;
	int ldb = (int)(o->tb ? o->k : o->n), lda = (int)(o->ta ? o->m : o->k);
	const void *al = f16 ? (void *)&h1 : (void *)&one;
	const void *be = f16 ? (void *)&h0 : (void *)&zero;
	int ct = f16 ? CUBLAS_COMPUTE_16F : CUBLAS_COMPUTE_32F;

	if (o->batch > 1)
		st = g->blas.gemm_batched(g->blas_h, opb, opa, (int)o->n,
		    (int)o->m, (int)o->k, al, (void *)(uintptr_t)g->b, in, ldb,
		    (long long)o->k * o->n, (void *)(uintptr_t)g->a, in, lda,
		    (long long)o->m * o->k, be, (void *)(uintptr_t)c, out,
		    (int)o->n, (long long)o->m * o->n, (int)o->batch, ct,
		    CUBLAS_GEMM_DEFAULT);
	else
		st = g->blas.gemm_ex(g->blas_h, opb, opa, (int)o->n, (int)o->m,
		    (int)o->k, al, (void *)(uintptr_t)g->b, in, ldb,
		    (void *)(uintptr_t)g->a, in, lda, be, (void *)(uintptr_t)c,
		    out, (int)o->n, ct, CUBLAS_GEMM_DEFAULT);
	return st == 0 ? 0 : 1000 + st;
}

/* The exact-dot mismatches of result host (checked against g->dots). */
static long
dot_mismatches(const struct gpu *g, const void *host, long *first)
{
	long bad = 0;
	int i;
	float v;

	*first = -1;
	for (i = 0; i < g->ndots; i++) {
		size_t at = (size_t)g->ij[2 * i] * (size_t)g->o->n +
		    (size_t)g->ij[2 * i + 1];

		v = gpu_out_at(g->o->type, host, at);
		if (!((double)v == g->dots[i])) {
			if (bad++ == 0)
				*first = (long)at;
		}
	}
	return bad;
}

/* Poison C with NaN (a tile the kernel skips stays NaN). */
static gpu_cures
poison(struct gpu *g, gpu_ptr c)
{
	size_t n = gpu_elems_c(g->o);

	return g->o->type == GPU_F16 ? g->cu.memset16(c, 0x7e00, n) :
	    g->cu.memset32(c, 0x7fc00000u, n);
}

/* A failed driver call, said as a JSON line of kind with name. */
static void
print_error(const char *kind, const char *name, const char *status,
    const char *what)
{
	char a[256], b[1024];

	printf("{\"kind\":\"%s\",\"name\":%s,\"status\":\"%s\",\"error\":%s}\n",
	    kind, gpu_json_str(name, a, sizeof a), status,
	    gpu_json_str(what, b, sizeof b));
	fflush(stdout);
}

int
gpu_data_setup(struct gpu *g)
{
	const struct gpu_opts *o = g->o;
	size_t na = gpu_elems_a(o), nb = gpu_elems_b(o);
	size_t nc = gpu_elems_c(o), is = gpu_in_size(o->type);
	size_t os = gpu_out_size(o->type);
	int range = o->type == GPU_F16 ? 1 : 2, i;
	uint64_t seed = o->seed | 1;
	void *tmp;
	gpu_cures r;

	g->ha = malloc(na * sizeof(float));
	g->hb = malloc(nb * sizeof(float));
	g->out = malloc(nc * os);
	g->ref = malloc(nc * os);
	tmp = malloc((na > nb ? na : nb) * is);
	g->ndots = NDOTS;
	g->ij = malloc(2 * NDOTS * sizeof(long));
	g->dots = malloc(NDOTS * sizeof(double));
	if (g->ha == NULL || g->hb == NULL || g->out == NULL || g->ref ==
	    NULL || tmp == NULL || g->ij == NULL || g->dots == NULL) {
		print_error("data", "host", "error", "out of memory");
		return -1;
	}
	gpu_fill(g->ha, na, range, &seed);
	gpu_fill(g->hb, nb, range, &seed);
	/* A batch's rows stacked: the corners are the first and last matrix's. */
	gpu_samples(o->batch * o->m, o->n, &seed, g->ij, NDOTS);
	for (i = 0; i < NDOTS; i++)
		g->dots[i] = gpu_dot(o, g->ha, g->hb, g->ij[2 * i],
		    g->ij[2 * i + 1]);
	if ((r = g->cu.mem_alloc(&g->a, na * is)) != 0 ||
	    (r = g->cu.mem_alloc(&g->b, nb * is)) != 0 ||
	    (r = g->cu.mem_alloc(&g->c, nc * os)) != 0 ||
	    (r = g->cu.mem_alloc(&g->cref, nc * os)) != 0)
		goto fail;
	gpu_encode(o->type, g->ha, na, tmp);
	if ((r = g->cu.htod(g->a, tmp, na * is)) != 0)
		goto fail;
	gpu_encode(o->type, g->hb, nb, tmp);
	if ((r = g->cu.htod(g->b, tmp, nb * is)) != 0)
		goto fail;
	free(tmp);
	return 0;
fail:
	free(tmp);
	print_error("data", "device", "error", gpu_cu_error(&g->cu, r));
	return -1;
}

static void
print_timing(const struct gpu_timing *t, double flops)
{
	printf(",\"median_ms\":%.6f,\"min_ms\":%.6f,\"cv\":%.4f,\"samples\":%d,"
	    "\"launches\":%d,\"tflops\":%.3f,\"sm_mhz\":%u,\"temp_c\":%u,"
	    "\"power_w\":%u", t->median_ms, t->min_ms, t->cv, t->samples,
	    t->launches, t->median_ms > 0 ? flops / (t->median_ms * 1e9) : 0,
	    t->sm_mhz, t->temp_c, t->power_w);
}

static double
op_flops(const struct gpu_opts *o)
{
	return 2.0 * (double)o->batch * (double)o->m * (double)o->n *
	    (double)o->k;
}

int
gpu_run_cublas(struct gpu *g)
{
	struct gpu_timing t;
	gpu_ptr c = g->cref;
	long first, bad;
	gpu_cures r;
	char e[128];

	if (g->blas_h == NULL) {
		print_error("cublas", "cublas", "error", "cuBLAS not loaded");
		return 0;
	}
	if (g->o->batch > 1 && g->blas.gemm_batched == NULL) {
		print_error("cublas", "cublas", "error", "cuBLAS has no "
		    "cublasGemmStridedBatchedEx (a batch matmul)");
		return 0;
	}
	if ((r = poison(g, c)) != 0 || (r = launch_cublas(g, &c)) != 0 ||
	    (r = g->cu.ctx_sync()) != 0 || (r = g->cu.dtoh(g->ref, c,
	    gpu_elems_c(g->o) * gpu_out_size(g->o->type))) != 0) {
		snprintf(e, sizeof e, "%s (%d)", r > 1000 ? "cublasGemmEx "
		    "failed" : gpu_cu_error(&g->cu, r), r);
		print_error("cublas", "cublas", "error", e);
		return r > 1000 ? 0 : -1;
	}
	bad = dot_mismatches(g, g->ref, &first);
	g->ref_ok = bad == 0;
	if ((r = gpu_time(g, launch_cublas, &c, &t)) != 0) {
		print_error("cublas", "cublas", "error", gpu_cu_error(&g->cu, r));
		return -1;
	}
	printf("{\"kind\":\"cublas\",\"name\":\"cublas\",\"lib\":\"%s\","
	    "\"status\":\"%s\",\"checked_by\":\"exact-dot(%d)\",\"mismatches\":"
	    "%ld", g->blas.path, bad ? "wrong_result" : "ok", g->ndots, bad);
	print_timing(&t, op_flops(g->o));
	printf("}\n");
	fflush(stdout);
	return 0;
}

/* A loaded kernel and its arguments (A, B, C). */
struct launch_k {
	const struct gpu_kernel	*k;
	gpu_fn			 fn;
	void			*args[3];
};

static gpu_cures
launch_kernel(struct gpu *g, void *arg)
{
	struct launch_k *l = arg;
	const struct gpu_kernel *k = l->k;

	return g->cu.launch(l->fn, k->grid[0], k->grid[1], k->grid[2],
	    k->block[0], k->block[1], k->block[2], k->smem, NULL, l->args,
	    NULL);
}

/* Read the kernel's PTX and load it (the driver JITs it). 0, or -1 with why. */
static int
kernel_load(struct gpu *g, const struct gpu_kernel *k, gpu_mod *mod,
    gpu_fn *fn, char *why, size_t len)
{
	char log[2048] = "";
	int opt[2] = { CU_JIT_ERROR_LOG_BUFFER,
	    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *val[2] = { log, (void *)(uintptr_t)sizeof log };
	char *text = NULL;
	long size;
	FILE *f;
	gpu_cures r;

	if ((f = fopen(k->path, "rb")) == NULL || fseek(f, 0, SEEK_END) != 0 ||
	    (size = ftell(f)) < 0 || size > (64 << 20) ||
	    fseek(f, 0, SEEK_SET) != 0 || (text = calloc(1,
	    (size_t)size + 1)) == NULL ||
	    fread(text, 1, (size_t)size, f) != (size_t)size) {
		snprintf(why, len, "%s: cannot read", k->path);
		goto fail;
	}
	if ((r = g->cu.module_load(mod, text, 2, opt, val)) != 0) {
		snprintf(why, len, "%s: the driver refused it: %s: %s",
		    k->path, gpu_cu_error(&g->cu, r), log);
		goto fail;
	}
	if ((r = g->cu.module_fn(fn, *mod, k->entry)) != 0 ||
	    (k->smem > 48 * 1024 && (r = g->cu.fn_set_attr(*fn,
	    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
	    (int)k->smem)) != 0)) {
		snprintf(why, len, "%s: entry %s (%u B shared): %s", k->path,
		    k->entry, k->smem, gpu_cu_error(&g->cu, r));
		g->cu.module_unload(*mod);
		goto fail;
	}
	if (f != NULL)
		fclose(f);
	free(text);
	return 0;
fail:
	if (f != NULL)
		fclose(f);
	free(text);
	return -1;
}

/* Every element of the kernel's C against cuBLAS's (or against NaN). */
static long
ref_mismatches(const struct gpu *g, long *first)
{
	size_t i, n = gpu_elems_c(g->o);
	long bad = 0;
	float x, y;

	*first = -1;
	for (i = 0; i < n; i++) {
		/* Without a reference: no element may be left NaN. */
		x = gpu_out_at(g->o->type, g->out, i);
		y = g->ref_ok ? gpu_out_at(g->o->type, g->ref, i) : x;
		if (!(x == y) && bad++ == 0)
			*first = (long)i;
	}
	return bad;
}

/* Run once on poisoned C and check; 0, 1 (wrong) or a negative CUresult. */
static int
kernel_check(struct gpu *g, struct launch_k *l, long *bad, long *first)
{
	gpu_cures r;
	long f2;

	if ((r = poison(g, g->c)) != 0 || (r = launch_kernel(g, l)) != 0 ||
	    (r = g->cu.ctx_sync()) != 0 || (r = g->cu.dtoh(g->out, g->c,
	    gpu_elems_c(g->o) * gpu_out_size(g->o->type))) != 0)
		return -r;
	*bad = ref_mismatches(g, first) + dot_mismatches(g, g->out, &f2);
	if (*first < 0)
		*first = f2;
	return *bad != 0;
}

int
gpu_run_kernel(struct gpu *g, const struct gpu_kernel *k)
{
	struct launch_k l = { k, NULL, { &g->a, &g->b, &g->c } };
	struct gpu_timing t;
	char why[3072], nm[256];
	gpu_mod mod;
	long bad = 0, first = -1;
	int rc, regs = 0;

	if (kernel_load(g, k, &mod, &l.fn, why, sizeof why) != 0) {
		print_error("kernel", k->name, "error", why);
		return 1;
	}
	(void)g->cu.fn_get_attr(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, l.fn);
	if ((rc = kernel_check(g, &l, &bad, &first)) < 0 ||
	    (rc == 0 && (rc = -gpu_time(g, launch_kernel, &l, &t)) < 0)) {
		snprintf(why, sizeof why, "launch (grid %u,%u,%u block %u,%u,%u"
		    " smem %u): %s", k->grid[0], k->grid[1], k->grid[2],
		    k->block[0], k->block[1], k->block[2], k->smem,
		    gpu_cu_error(&g->cu, -rc));
		print_error("kernel", k->name, "crashed", why);
		return -1;	/* the context may be lost: stop */
	}
	printf("{\"kind\":\"kernel\",\"name\":%s,\"status\":\"%s\","
	    "\"checked_by\":\"%s\",\"mismatches\":%ld,\"first_bad\":%ld,"
	    "\"regs\":%d", gpu_json_str(k->name, nm, sizeof nm),
	    rc ? "wrong_result" : "ok", g->ref_ok ?
	    "exact:cublas(all)+dot" : "exact:dot(sample)+nan", bad, first,
	    regs);
	if (rc == 0)
		print_timing(&t, op_flops(g->o));
	printf("}\n");
	fflush(stdout);
	g->cu.module_unload(mod);
	return rc;
}

/* The peak loop's launch: grid of blocks of 256 threads, iters iterations. */
struct launch_p {
	gpu_fn		 fn;
	unsigned	 grid;
	unsigned	 iters;
	gpu_ptr		 out;
	void		*args[2];
};

static gpu_cures
launch_peak(struct gpu *g, void *arg)
{
	struct launch_p *p = arg;

	return g->cu.launch(p->fn, p->grid, 1, 1, 256, 1, 1, 0, NULL, p->args,
	    NULL);
}

int
gpu_run_peak(struct gpu *g)
{
	struct launch_p p;
	struct gpu_timing t;
	double fpi;
	char *ptx = gpu_peak_ptx(g->o->type, 256, &fpi);
	gpu_mod mod = NULL;
	gpu_cures r;
	double ms;

	memset(&p, 0, sizeof p);
	/* Eight blocks of eight warps per SM: every scheduler has work. */
	p.grid = (unsigned)(g->sms > 0 ? g->sms : 1) * 8;
	p.iters = 256;
	p.args[0] = &p.out;
	p.args[1] = &p.iters;
	if ((r = g->cu.module_load(&mod, ptx, 0, NULL, NULL)) != 0 ||
	    (r = g->cu.module_fn(&p.fn, mod, "autosched_peak")) != 0 ||
	    (r = g->cu.mem_alloc(&p.out, (size_t)p.grid * 256 * 4)) != 0 ||
	    (r = launch_peak(g, &p)) != 0 || (r = g->cu.ctx_sync()) != 0 ||
	    (r = sample(g, launch_peak, &p, 1, &ms)) != 0)
		goto fail;
	/* About 5 ms a launch. */
	p.iters = (unsigned)fmax(16, fmin(1 << 24, p.iters * 5.0 / fmax(ms,
	    1e-3)));
	if ((r = gpu_time(g, launch_peak, &p, &t)) != 0)
		goto fail;
	printf("{\"kind\":\"peak\",\"name\":\"%s\",\"status\":\"ok\","
	    "\"what\":\"%s\",\"grid\":%u,\"iters\":%u", g->o->type_name,
	    g->o->type == GPU_F32 ? "fma.rn.f32 register loop" :
	    "mma.sync.m16n8k16 register loop", p.grid, p.iters);
	print_timing(&t, fpi * p.grid * p.iters);
	printf("}\n");
	fflush(stdout);
	g->cu.mem_free(p.out);
	g->cu.module_unload(mod);
	free(ptx);
	return 0;
fail:
	print_error("peak", g->o->type_name, "error", gpu_cu_error(&g->cu, r));
	free(ptx);
	return -1;
}
