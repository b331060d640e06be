/*
 * autosched-measure: the child the mlir-cpu backend runs to time one kernel
 * (or OpenBLAS, for the reference) on deterministic data, verify it against
 * OpenBLAS first, and print one JSON line with the timings.
 */
#include <sys/types.h>

#include <cblas.h>
#include <dlfcn.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* OpenBLAS extension, not in every cblas.h. */
void	openblas_set_num_threads(int);

enum mtype { T_F32, T_F64, T_F16, T_BF16, T_I8, T_I32, T_NONE };

static const char *const mtype_names[] = { "f32", "f64", "f16", "bf16", "i8",
    "i32" };

/* The kernel ABI: see mlircpu.c. */
typedef void (*kernel_fn)(const void *, const void *, void *);

struct job {
	const char	*kernel;	/* .so path; NULL = OpenBLAS reference */
	long		 batch, m, n, k;
	enum mtype	 lt, rt, at;
	int		 ta, tb;
	int		 threads;
	int		 warmup, min_reps, max_reps;
	double		 min_time;
	uint64_t	 seed;
	int		 verify;
	const char	*fault;		/* crash | hang | wrong | NULL */
	const char	*cpus;
};

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fputs("autosched-measure: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static size_t
mtype_size(enum mtype t)
{
	switch (t) {
	case T_F64:
		return 8;
	case T_F16:
	case T_BF16:
		return 2;
	case T_I8:
		return 1;
	default:
		return 4;
	}
}

static enum mtype
mtype_parse(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof mtype_names / sizeof mtype_names[0]; i++) {
		if (strcmp(s, mtype_names[i]) == 0)
			return (enum mtype)i;
	}
	die("unknown element type %s", s);
}

/* IEEE half <-> float, done by hand so that no compiler extension is needed. */
static float
half_to_float(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	float v;

	if (e == 0)
		v = ldexpf((float)m, -24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexpf((float)(m | 0x400), e - 25);
	return (h & 0x8000) ? -v : v;
}

/* Exact for the small integers we generate. */
static uint16_t
float_to_half(float f)
{
	uint32_t x, sign, mant;
	int e;

	memcpy(&x, &f, 4);
	sign = (x >> 16) & 0x8000;
	if (f == 0)
		return (uint16_t)sign;
	e = (int)((x >> 23) & 0xff) - 127 + 15;
	mant = (x >> 13) & 0x3ff;
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (e <= 0)
		return (uint16_t)sign;
	return (uint16_t)(sign | ((uint32_t)e << 10) | mant);
}

static float
bf16_to_float(uint16_t h)
{
	uint32_t x = (uint32_t)h << 16;
	float f;

	memcpy(&f, &x, 4);
	return f;
}

static uint16_t
float_to_bf16(float f)
{
	uint32_t x;

	memcpy(&x, &f, 4);
	return (uint16_t)(x >> 16);
}

static double
elem_get(enum mtype t, const void *p, size_t i)
{
	switch (t) {
	case T_F32:
		return ((const float *)p)[i];
	case T_F64:
		return ((const double *)p)[i];
	case T_F16:
		return half_to_float(((const uint16_t *)p)[i]);
	case T_BF16:
		return bf16_to_float(((const uint16_t *)p)[i]);
	case T_I8:
		return ((const int8_t *)p)[i];
	case T_I32:
		return ((const int32_t *)p)[i];
	default:
		return 0;
	}
}

static void
elem_set(enum mtype t, void *p, size_t i, double v)
{
	switch (t) {
	case T_F32:
		((float *)p)[i] = (float)v;
		break;
	case T_F64:
		((double *)p)[i] = v;
		break;
	case T_F16:
		((uint16_t *)p)[i] = float_to_half((float)v);
		break;
	case T_BF16:
		((uint16_t *)p)[i] = float_to_bf16((float)v);
		break;
	case T_I8:
		((int8_t *)p)[i] = (int8_t)v;
		break;
	case T_I32:
		((int32_t *)p)[i] = (int32_t)v;
		break;
	default:
		break;
	}
}

/* Integer-valued data so that every float result is exact (as the profiler). */
static int
elem_range(enum mtype t)
{
	switch (t) {
	case T_F16:
	case T_BF16:
		return 3;
	case T_I8:
	case T_I32:
		return 4;
	default:
		return 7;
	}
}

static uint64_t
rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static void *
buf_new(enum mtype t, size_t n, uint64_t *rng)
{
	size_t bytes = (n * mtype_size(t) + 63) / 64 * 64;
	void *p;
	size_t i;
	int r = elem_range(t);

	p = aligned_alloc(64, bytes ? bytes : 64);
	if (p == NULL)
		die("out of memory (%zu bytes)", bytes);
	memset(p, 0, bytes);
	for (i = 0; i < n; i++)
		elem_set(t, p, i, (double)((int)(rng_next(rng) % (uint64_t)(2 * r + 1)) - r));
	return p;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void
pin(const char *list)
{
	cpu_set_t set;
	char *copy, *tok, *save;

	CPU_ZERO(&set);
	copy = strdup(list);
	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save))
		CPU_SET(atoi(tok), &set);
	free(copy);
	if (sched_setaffinity(0, sizeof set, &set) != 0)
		die("sched_setaffinity: %s", strerror(errno));
}

/* Copy an operand to f32 (sgemm) or keep f64 (dgemm), as OpenBLAS wants it. */
static void *
to_blas(enum mtype t, const void *p, size_t n, int dbl)
{
	void *out;
	size_t i;

	out = malloc((n ? n : 1) * (dbl ? 8 : 4));
	if (out == NULL)
		die("out of memory");
	for (i = 0; i < n; i++) {
		if (dbl)
			((double *)out)[i] = elem_get(t, p, i);
		else
			((float *)out)[i] = (float)elem_get(t, p, i);
	}
	return out;
}

/*
 * The expected result acc0 + lhs·rhs in double: OpenBLAS for floats (sgemm
 * or dgemm with beta = 1, one call per batch), a plain loop for integers.
 */
static double *
reference_result(const struct job *j, const void *lhs, const void *rhs,
    const void *acc0)
{
	size_t sa = (size_t)j->m * j->k, sb = (size_t)j->k * j->n;
	size_t sc = (size_t)j->m * j->n, total = sc * j->batch, i;
	double *want;
	long b, r, c, kk;
	int dbl = j->at == T_F64;

	want = malloc((total ? total : 1) * sizeof *want);
	if (want == NULL)
		die("out of memory");
	if (j->at == T_I32) {
		for (b = 0; b < j->batch; b++) {
			for (r = 0; r < j->m; r++)
			for (c = 0; c < j->n; c++) {
				int64_t s = (int64_t)elem_get(j->at, acc0,
				    b * sc + r * j->n + c);
				for (kk = 0; kk < j->k; kk++) {
					size_t ia = j->ta ? kk * j->m + r :
					    r * j->k + kk;
					size_t ib = j->tb ? c * j->k + kk :
					    kk * j->n + c;
					s += (int64_t)elem_get(j->lt, lhs,
					    b * sa + ia) *
					    (int64_t)elem_get(j->rt, rhs,
					    b * sb + ib);
				}
				want[b * sc + r * j->n + c] = (double)(int32_t)s;
			}
		}
		return want;
	}

	void *a = to_blas(j->lt, lhs, sa * j->batch, dbl);
	void *bm = to_blas(j->rt, rhs, sb * j->batch, dbl);
	void *cm = to_blas(j->at, acc0, total, dbl);
	for (b = 0; b < j->batch; b++) {
		if (dbl)
			cblas_dgemm(CblasRowMajor,
			    j->ta ? CblasTrans : CblasNoTrans,
			    j->tb ? CblasTrans : CblasNoTrans,
			    j->m, j->n, j->k, 1.0,
			    (double *)a + b * sa, j->ta ? j->m : j->k,
			    (double *)bm + b * sb, j->tb ? j->k : j->n, 1.0,
			    (double *)cm + b * sc, j->n);
		else
			cblas_sgemm(CblasRowMajor,
			    j->ta ? CblasTrans : CblasNoTrans,
			    j->tb ? CblasTrans : CblasNoTrans,
			    j->m, j->n, j->k, 1.0f,
			    (float *)a + b * sa, j->ta ? j->m : j->k,
			    (float *)bm + b * sb, j->tb ? j->k : j->n, 1.0f,
			    (float *)cm + b * sc, j->n);
	}
	for (i = 0; i < total; i++)
		want[i] = dbl ? ((double *)cm)[i] : ((float *)cm)[i];
	free(a);
	free(bm);
	free(cm);
	return want;
}

/*
 * Tolerance. With integer-valued data every partial sum is an integer no
 * larger than bound; if bound fits the accumulator's significand the result
 * is exact whatever the order of the additions, so nothing but 0 is right.
 * Otherwise (long K, f16/bf16 accumulators) allow the classic error bound
 * of a K-term dot product, a few ulps of bound per term.
 */
static double
tolerance(const struct job *j)
{
	double eps, bound;
	int digits;

	switch (j->at) {
	case T_I32:
		return 0;
	case T_F64:
		digits = 53;
		break;
	case T_F16:
		digits = 11;
		break;
	case T_BF16:
		digits = 8;
		break;
	default:
		digits = 24;
		break;
	}
	bound = (double)j->k * elem_range(j->lt) * elem_range(j->rt) +
	    elem_range(j->at);
	if (bound <= ldexp(1, digits))
		return 0;
	eps = ldexp(1, 1 - digits);
	return 2.0 * (double)j->k * eps * bound;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void
blas_call(const struct job *j, const void *a, const void *b, void *c)
{
	size_t sa = (size_t)j->m * j->k, sb = (size_t)j->k * j->n;
	size_t sc = (size_t)j->m * j->n;
	long i;

	for (i = 0; i < j->batch; i++) {
		if (j->at == T_F64)
			cblas_dgemm(CblasRowMajor,
			    j->ta ? CblasTrans : CblasNoTrans,
			    j->tb ? CblasTrans : CblasNoTrans,
			    j->m, j->n, j->k, 1.0,
			    (const double *)a + i * sa, j->ta ? j->m : j->k,
			    (const double *)b + i * sb, j->tb ? j->k : j->n,
			    1.0, (double *)c + i * sc, j->n);
		else
			cblas_sgemm(CblasRowMajor,
			    j->ta ? CblasTrans : CblasNoTrans,
			    j->tb ? CblasTrans : CblasNoTrans,
			    j->m, j->n, j->k, 1.0f,
			    (const float *)a + i * sa, j->ta ? j->m : j->k,
			    (const float *)b + i * sb, j->tb ? j->k : j->n,
			    1.0f, (float *)c + i * sc, j->n);
	}
}

static void
usage(void)
{
	fprintf(stderr, "usage: autosched-measure [--kernel SO | --blas] "
	    "--shape BxMxNxK --types L,R,A [--trans TA,TB] [--threads N] "
	    "[--warmup N] [--min-time S] [--reps MIN,MAX] [--seed N] "
	    "[--verify 0|1] [--cpus LIST] [--fault crash|hang|wrong]\n"
	    "       autosched-measure --hang\n");
	exit(2);
}

static void
parse_args(int argc, char **argv, struct job *j)
{
	int i, blas = 0;
	char l[16], r[16], a[16];

	memset(j, 0, sizeof *j);
	j->batch = j->m = j->n = j->k = 0;
	j->lt = j->rt = j->at = T_F32;
	j->threads = 1;
	j->warmup = 1;
	j->min_reps = 3;
	j->max_reps = 1000;
	j->min_time = 0.2;
	j->seed = 42;
	j->verify = 1;
	for (i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(o, "--hang") == 0) {
			/* Stands in for a compiler that never returns. */
			for (;;)
				pause();
		}
		if (strcmp(o, "--blas") == 0) {
			blas = 1;
			continue;
		}
		if (v == NULL)
			usage();
		i++;
		if (strcmp(o, "--kernel") == 0)
			j->kernel = v;
		else if (strcmp(o, "--shape") == 0) {
			if (sscanf(v, "%ldx%ldx%ldx%ld", &j->batch, &j->m,
			    &j->n, &j->k) != 4)
				usage();
		} else if (strcmp(o, "--types") == 0) {
			if (sscanf(v, "%15[^,],%15[^,],%15s", l, r, a) != 3)
				usage();
			j->lt = mtype_parse(l);
			j->rt = mtype_parse(r);
			j->at = mtype_parse(a);
		} else if (strcmp(o, "--trans") == 0) {
			if (sscanf(v, "%d,%d", &j->ta, &j->tb) != 2)
				usage();
		} else if (strcmp(o, "--threads") == 0)
			j->threads = atoi(v);
		else if (strcmp(o, "--warmup") == 0)
			j->warmup = atoi(v);
		else if (strcmp(o, "--min-time") == 0)
			j->min_time = atof(v);
		else if (strcmp(o, "--reps") == 0) {
			if (sscanf(v, "%d,%d", &j->min_reps, &j->max_reps) != 2)
				usage();
		} else if (strcmp(o, "--seed") == 0)
			j->seed = strtoull(v, NULL, 10);
		else if (strcmp(o, "--verify") == 0)
			j->verify = atoi(v);
		else if (strcmp(o, "--cpus") == 0)
			j->cpus = v;
		else if (strcmp(o, "--fault") == 0)
			j->fault = v;
		else
			usage();
	}
	if ((j->kernel == NULL) == (blas == 0))
		usage();
	if (j->batch < 1 || j->m < 1 || j->n < 1 || j->k < 1)
		die("bad shape");
	if (j->min_reps < 1 || j->max_reps < j->min_reps)
		die("bad repetition bounds");
	if (j->threads < 1)
		j->threads = 1;
	if (j->kernel == NULL && j->at != T_F32 && j->at != T_F64)
		j->lt = j->rt = j->at = T_F32;	/* the reference is sgemm */
}

int
main(int argc, char **argv)
{
	struct job j;
	kernel_fn fn = NULL;
	void *dl = NULL, *lhs, *rhs, *acc0, *acc;
	double *times, *want, t0, t, total = 0, max_err = 0, tol = 0;
	double sum = 0, sq = 0, mean, sd;
	size_t nc, bytes_c, i;
	uint64_t rng;
	int reps = 0, verified = 0, wrong = 0;
	json_t *out;
	char *line;

	parse_args(argc, argv, &j);
	if (j.cpus != NULL)
		pin(j.cpus);
	/* Keep OpenBLAS' own threads off the CPUs while a kernel is timed. */
	openblas_set_num_threads(j.kernel != NULL ? 1 : j.threads);

	if (j.kernel != NULL) {
		dl = dlopen(j.kernel, RTLD_NOW | RTLD_LOCAL);
		if (dl == NULL)
			die("dlopen: %s", dlerror());
		fn = (kernel_fn)dlsym(dl, "dispatch");
		if (fn == NULL)
			die("dlsym dispatch: %s", dlerror());
	}
	if (j.fault != NULL && strcmp(j.fault, "crash") == 0)
		raise(SIGSEGV);
	if (j.fault != NULL && strcmp(j.fault, "hang") == 0) {
		for (;;)
			pause();
	}

	rng = j.seed * 0x9e3779b97f4a7c15ULL + 1;
	lhs = buf_new(j.lt, (size_t)j.batch * j.m * j.k, &rng);
	rhs = buf_new(j.rt, (size_t)j.batch * j.k * j.n, &rng);
	nc = (size_t)j.batch * j.m * j.n;
	acc0 = buf_new(j.at, nc, &rng);
	bytes_c = (nc * mtype_size(j.at) + 63) / 64 * 64;
	acc = aligned_alloc(64, bytes_c);
	if (acc == NULL)
		die("out of memory");
	memcpy(acc, acc0, bytes_c);

	if (j.verify && fn != NULL) {
		fn(lhs, rhs, acc);
		tol = tolerance(&j);
		if (j.fault != NULL && strcmp(j.fault, "wrong") == 0) {
			/* Test-only: an error the tolerance cannot hide. */
			double v = elem_get(j.at, acc, nc / 2);

			elem_set(j.at, acc, nc / 2, v + 1 + 2 * tol + fabs(v));
		}
		want = reference_result(&j, lhs, rhs, acc0);
		for (i = 0; i < nc; i++) {
			double d = fabs(elem_get(j.at, acc, i) - want[i]);

			if (!(d <= max_err))
				max_err = d;	/* also catches NaN */
		}
		free(want);
		verified = 1;
		wrong = !(max_err <= tol);
	}

	times = malloc((size_t)j.max_reps * sizeof *times);
	if (times == NULL)
		die("out of memory");
	if (!wrong) {
		for (i = 0; i < (size_t)j.warmup; i++) {
			if (fn != NULL)
				fn(lhs, rhs, acc);
			else
				blas_call(&j, lhs, rhs, acc);
		}
		while (reps < j.max_reps &&
		    (reps < j.min_reps || total < j.min_time)) {
			t0 = now();
			if (fn != NULL)
				fn(lhs, rhs, acc);
			else
				blas_call(&j, lhs, rhs, acc);
			t = now() - t0;
			times[reps++] = t * 1e3;
			total += t;
		}
	}

	out = json_object();
	json_object_set_new(out, "status", json_string(wrong ? "wrong" : "ok"));
	json_object_set_new(out, "verified", json_integer(verified));
	json_object_set_new(out, "max_err", json_real(max_err));
	json_object_set_new(out, "tolerance", json_real(tol));
	json_object_set_new(out, "reps", json_integer(reps));
	if (reps > 0) {
		for (i = 0; i < (size_t)reps; i++) {
			sum += times[i];
			sq += times[i] * times[i];
		}
		mean = sum / reps;
		sd = reps > 1 ? sqrt(fmax(0, (sq - sum * mean) / (reps - 1))) : 0;
		qsort(times, (size_t)reps, sizeof *times, cmp_double);
		json_object_set_new(out, "median_ms", json_real(reps % 2 ?
		    times[reps / 2] : (times[reps / 2 - 1] + times[reps / 2]) / 2));
		json_object_set_new(out, "min_ms", json_real(times[0]));
		json_object_set_new(out, "max_ms", json_real(times[reps - 1]));
		json_object_set_new(out, "cv", json_real(mean > 0 ? sd / mean : 0));
	}
	line = json_dumps(out, JSON_COMPACT);
	puts(line);
	free(line);
	json_decref(out);
	free(times);
	free(lhs);
	free(rhs);
	free(acc0);
	free(acc);
	if (dl != NULL)
		dlclose(dl);
	return 0;
}
