/*
 * Checks the math functions of a library built from fixtures/math_sweep.mlir
 * (`autosched build --math fast|exact`) against libm's double functions,
 * over the whole float range: every STRIDE-th bit pattern of the 2^32
 * (STRIDE 1: all of them), then special values (±0, denormals, ±inf, NaN,
 * the overflow and underflow edges).
 *   math_bound fast|exact LIB.so STRIDE [THREADS]
 * A result whose reference r (libm's double, exact to well under an f32
 * ulp) is a normal float must be within BOUND ulp of r (an ulp: of r's
 * binade); one below FLT_MIN within FLT_MIN of r (it may be flushed to 0 or
 * to ±FLT_MIN); a NaN reference wants a NaN, an infinite one (after
 * rounding to float) the same infinity, and an infinite result a reference
 * at or past FLT_MAX's rounding edge. Prints each function's largest error
 * and where; exit 0 when every bound holds. exact: every result must be
 * libm's float function's (expf, logf, erff, tanhf) bit for bit, as the
 * library calls them (--math exact, the build as it was).
 */
#include <float.h>
#include <math.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK	65536	/* the fixture's vector length */

/*
 * The bounds README states for --math fast, in ulp. The largest errors over
 * all 2^32 inputs (STRIDE 1, LLVM 22, AVX-512): exp 5.511, log 0.900, erf
 * 4.790, tanh 4.896.
 */
#define EXP_BOUND	6.0
#define LOG_BOUND	1.0
#define ERF_BOUND	5.0
#define TANH_BOUND	5.0

struct fnspec {
	const char	*name;
	double		(*ref)(double);
	float		(*reff)(float);
	double		 bound;
};

static const struct fnspec fns[] = {
	{ "f_exp", exp, expf, EXP_BOUND },
	{ "f_log", log, logf, LOG_BOUND },
	{ "f_erf", erf, erff, ERF_BOUND },
	{ "f_tanh", tanh, tanhf, TANH_BOUND },
};
static int exact;	/* libm's float functions, bit for bit */
#define NFNS	(sizeof fns / sizeof fns[0])

struct desc1 {
	float	*alloc, *data;
	int64_t	 off, size, stride;
};

typedef void (*fn1)(struct desc1 *, struct desc1 *);

/* What one thread found for one function. */
struct worst {
	double	 ulp;		/* largest error in ulp (normal references) */
	float	 at;
	long	 bad;		/* results breaking a rule */
	float	 bad_at;
	float	 bad_got;
};

struct job {
	fn1			 f;
	const struct fnspec	*spec;
	uint64_t		 stride, first, last;	/* chunks [first, last) */
	struct worst		 w;
};

static const float specials[] = { 0.0f, -0.0f, 1e-45f, -1e-45f, 1e-40f,
    -1e-40f, FLT_MIN, -FLT_MIN, 1.0f, -1.0f, FLT_MAX, -FLT_MAX, INFINITY,
    -INFINITY, NAN, -NAN, 88.72283f, 88.722839f, 88.7228317f, 89.0f,
    -87.33654f, -87.336548f, -103.27893f, -103.972076f, -104.0f, -150.0f,
    3.9f, 4.0f, 7.90531110763549805f, 7.99f, 9.0f, 10.0f, 0.0004f,
    -0.0004f, 1e-20f, 1e-7f, 0.5f, 2.0f };
#define NSPECIALS	(sizeof specials / sizeof specials[0])

/* Judge y = f(x) against r = ref(x); update w. */
static void
judge(struct worst *w, float x, float y, double r)
{
	float rf = (float)r;
	double ar = fabs(r), e, ulp;
	int ok;

	if (isnan(r))
		ok = isnan(y);
	else if (isinf(rf) || isinf(y))
		/* Infinite either way: both, and r past FLT_MAX's half ulp. */
		ok = y == rf || (isinf(y) && ar >= FLT_MAX &&
		    copysign(1.0, y) == copysign(1.0, r));
	else if (isnan(y))
		ok = 0;
	else if (ar < FLT_MIN)
		ok = fabs((double)y - r) <= FLT_MIN;
	else {
		ulp = ldexp(1.0, ilogb(ar) - 23);
		e = fabs((double)y - r) / ulp;
		if (e > w->ulp) {
			w->ulp = e;
			w->at = x;
		}
		return;
	}
	if (!ok) {
		if (w->bad++ == 0) {
			w->bad_at = x;
			w->bad_got = y;
		}
	}
}

/* Judge y = f(x) against libm's float function's r: the same bits. */
static void
judge_exact(struct worst *w, float x, float y, float r)
{
	if ((isnan(y) && isnan(r)) || memcmp(&y, &r, sizeof y) == 0)
		return;
	if (w->bad++ == 0) {
		w->bad_at = x;
		w->bad_got = y;
	}
}

/* Call f on n inputs (n <= CHUNK, the rest padded) and judge each. */
static void
run(struct job *j, float *in, size_t n)
{
	float *arg = malloc(CHUNK * sizeof *arg);
	struct desc1 a = { arg, arg, 0, CHUNK, 1 }, out;
	size_t i;

	/* A copy: the library may write its result over its argument. */
	for (i = n; i < CHUNK; i++)
		in[i] = 0.0f;
	memcpy(arg, in, CHUNK * sizeof *arg);
	memset(&out, 0, sizeof out);
	j->f(&out, &a);
	for (i = 0; i < n; i++) {
		float y = out.data[out.off + (int64_t)i];

		if (exact)
			judge_exact(&j->w, in[i], y, j->spec->reff(in[i]));
		else
			judge(&j->w, in[i], y, j->spec->ref((double)in[i]));
	}
	if (out.alloc != arg)
		free(out.alloc);	/* a result is the caller's, pool or not */
	free(arg);
}

static void *
sweep(void *arg)
{
	struct job *j = arg;
	float *in = malloc(CHUNK * sizeof *in);
	uint64_t c, k, bits;
	size_t n;

	for (c = j->first; c < j->last; c++) {
		for (n = 0, k = 0; k < CHUNK; k++) {
			uint32_t u;

			bits = (c * CHUNK + k) * j->stride;
			if (bits >> 32)
				break;
			u = (uint32_t)bits;
			memcpy(&in[n++], &u, sizeof u);
		}
		if (n > 0)
			run(j, in, n);
	}
	free(in);
	return NULL;
}

int
main(int argc, char **argv)
{
	void *h;
	uint64_t stride, nchunks;
	int nth, t, fail = 0;
	size_t i;

	if (argc < 4 || argc > 5 || (strcmp(argv[1], "fast") != 0 &&
	    strcmp(argv[1], "exact") != 0)) {
		fprintf(stderr, "usage: math_bound fast|exact LIB.so STRIDE "
		    "[THREADS]\n");
		return 2;
	}
	exact = strcmp(argv[1], "exact") == 0;
	argv++;
	stride = strtoull(argv[2], NULL, 10);
	nth = argc == 5 ? atoi(argv[3]) : 2;
	if (stride < 1 || nth < 1 || nth > 64 ||
	    (h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL)) == NULL) {
		fprintf(stderr, "math_bound: %s\n", stride < 1 || nth < 1 ||
		    nth > 64 ? "bad STRIDE or THREADS" : dlerror());
		return 2;
	}
	nchunks = ((1ull << 32) / stride + CHUNK) / CHUNK;
	for (i = 0; i < NFNS; i++) {
		struct job jobs[64];
		struct worst w;
		pthread_t th[64];
		char sym[64];
		float *in;
		fn1 f;

		snprintf(sym, sizeof sym, "_mlir_ciface_%s", fns[i].name);
		if ((f = (fn1)(uintptr_t)dlsym(h, sym)) == NULL) {
			fprintf(stderr, "math_bound: %s: no %s\n", argv[1], sym);
			return 2;
		}
		/* Several threads call the library at once (its pool's case). */
		for (t = 0; t < nth; t++) {
			memset(&jobs[t], 0, sizeof jobs[t]);
			jobs[t].f = f;
			jobs[t].spec = &fns[i];
			jobs[t].stride = stride;
			jobs[t].first = nchunks * (uint64_t)t / (uint64_t)nth;
			jobs[t].last = nchunks * (uint64_t)(t + 1) / (uint64_t)nth;
			pthread_create(&th[t], NULL, sweep, &jobs[t]);
		}
		for (t = 0; t < nth; t++)
			pthread_join(th[t], NULL);
		/* The special values, then the threads' findings merged. */
		in = malloc(CHUNK * sizeof *in);
		memcpy(in, specials, sizeof specials);
		run(&jobs[0], in, NSPECIALS);
		free(in);
		memset(&w, 0, sizeof w);
		for (t = 0; t < nth; t++) {
			if (jobs[t].w.ulp > w.ulp) {
				w.ulp = jobs[t].w.ulp;
				w.at = jobs[t].w.at;
			}
			if (jobs[t].w.bad > 0 && w.bad == 0) {
				w.bad_at = jobs[t].w.bad_at;
				w.bad_got = jobs[t].w.bad_got;
			}
			w.bad += jobs[t].w.bad;
		}
		if (exact)
			printf("%s: %ld results unlike libm's", fns[i].name + 2,
			    w.bad);
		else
			printf("%s: max %.3f ulp (bound %.1f) at %a; %ld special "
			    "or tiny results wrong", fns[i].name + 2, w.ulp,
			    fns[i].bound, (double)w.at, w.bad);
		if (w.bad > 0)
			printf(" (first: f(%a) = %a, libm %a)", (double)w.bad_at,
			    (double)w.bad_got, exact ? (double)fns[i].reff(
			    w.bad_at) : fns[i].ref((double)w.bad_at));
		printf("\n");
		if (w.ulp > fns[i].bound || w.bad > 0)
			fail = 1;
	}
	return fail;
}
