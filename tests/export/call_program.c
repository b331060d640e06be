/*
 * Calls every function of a program built by `autosched build` through its
 * C interface and checks the results against OpenBLAS (and libm).
 *   call_program example|layers|math|tosa LIB.so
 *   call_program chain LIB.so N      (@chain(x) = x + N)
 *   call_program load LIB.so...
 *   call_program find LIB.so FUNCTION
 * Inputs are small integers, so the f32 results of matmuls are exact. load
 * only opens each library with RTLD_NOW: every symbol it uses must resolve.
 * find opens one so and finds FUNCTION's C interface: the real TOSA
 * block's timing hooks are defined here.
 */
#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib_sym.h"

struct m1 { float *alloc, *data; int64_t off, size[1], stride[1]; };
struct m2 { float *alloc, *data; int64_t off, size[2], stride[2]; };
struct m3 { float *alloc, *data; int64_t off, size[3], stride[3]; };

static int failures;
static double tolerance = 1e-3;	/* largest difference accepted */

static float *
randv(size_t n)
{
	float *p = malloc(n * sizeof *p);
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (float)(rand() % 7 - 3);
	return p;
}

static struct m2
d2(float *p, int64_t r, int64_t c)
{
	struct m2 m = { p, p, 0, { r, c }, { c, 1 } };
	return m;
}

static struct m3
d3(float *p, int64_t b, int64_t r, int64_t c)
{
	struct m3 m = { p, p, 0, { b, r, c }, { r * c, c, 1 } };
	return m;
}

static void
compare(const char *what, const float *got, const float *want, size_t n)
{
	double e = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (fabs((double)got[i] - want[i]) > e)
			e = fabs((double)got[i] - want[i]);
	printf("%s: max error %g over %zu values\n", what, e, n);
	if (e > tolerance) {
		printf("FAIL: %s differs from OpenBLAS\n", what);
		failures++;
	}
}

static void
example(void *h)
{
	void (*projection)(struct m2 *, struct m2 *, struct m2 *) =
	    (void (*)(struct m2 *, struct m2 *, struct m2 *))sym(h, "_mlir_ciface_projection");
	void (*scores)(struct m3 *, struct m3 *, struct m3 *) =
	    (void (*)(struct m3 *, struct m3 *, struct m3 *))sym(h, "_mlir_ciface_scores");
	float *a = randv(1024 * 256), *b = randv(256 * 512);
	float *want = calloc(1024 * 512, sizeof *want);
	float *q = randv(8 * 256 * 64), *k = randv(8 * 256 * 64);
	float *ws = calloc(8 * 256 * 256, sizeof *ws);
	struct m2 ma = d2(a, 1024, 256), mb = d2(b, 256, 512), r2;
	struct m3 mq = d3(q, 8, 256, 64), mk = d3(k, 8, 256, 64), r3;
	int i;

	projection(&r2, &ma, &mb);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1024, 512, 256,
	    1, a, 256, b, 512, 0, want, 512);
	compare("projection", r2.data + r2.off, want, 1024 * 512);
	scores(&r3, &mq, &mk);
	for (i = 0; i < 8; i++)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, 256, 256, 64,
		    1, q + i * 256 * 64, 64, k + i * 256 * 64, 64, 0,
		    ws + i * 256 * 256, 256);
	compare("scores", r3.data + r3.off, ws, 8 * 256 * 256);
	free(r2.alloc);
	free(r3.alloc);
	free(a); free(b); free(want); free(q); free(k); free(ws);
}

static void
layers(void *h)
{
	void (*mlp)(struct m2 *, struct m2 *, struct m2 *, struct m1 *, struct m2 *) =
	    (void (*)(struct m2 *, struct m2 *, struct m2 *, struct m1 *, struct m2 *))
	    sym(h, "_mlir_ciface_mlp");
	void (*attn)(struct m3 *, struct m3 *, struct m3 *) =
	    (void (*)(struct m3 *, struct m3 *, struct m3 *))sym(h, "_mlir_ciface_attn");
	float *x = randv(64 * 32), *w1 = randv(32 * 48), *bias = randv(48);
	float *w2t = randv(24 * 48), *hid = calloc(64 * 48, sizeof *hid);
	float *want = calloc(64 * 24, sizeof *want);
	float *q = randv(4 * 32 * 16), *k = randv(4 * 16 * 32);
	float *ws = calloc(4 * 32 * 32, sizeof *ws);
	struct m2 mx = d2(x, 64, 32), mw1 = d2(w1, 32, 48), mw2 = d2(w2t, 24, 48), r2;
	struct m1 mbias = { bias, bias, 0, { 48 }, { 1 } };
	struct m3 mq = d3(q, 4, 32, 16), mk = d3(k, 4, 16, 32), r3;
	int i, j;

	mlp(&r2, &mx, &mw1, &mbias, &mw2);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 64, 48, 32,
	    1, x, 32, w1, 48, 0, hid, 48);
	for (i = 0; i < 64; i++)
		for (j = 0; j < 48; j++) {
			float v = hid[i * 48 + j] + bias[j];
			hid[i * 48 + j] = v > 0 ? v : 0;
		}
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, 64, 24, 48,
	    1, hid, 48, w2t, 48, 0, want, 24);
	compare("mlp", r2.data + r2.off, want, 64 * 24);
	attn(&r3, &mq, &mk);
	for (i = 0; i < 4; i++)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 32, 32, 16,
		    1, q + i * 32 * 16, 16, k + i * 16 * 32, 32, 0,
		    ws + i * 32 * 32, 32);
	compare("attn", r3.data + r3.off, ws, 4 * 32 * 32);
	free(r2.alloc);
	free(r3.alloc);
	free(x); free(w1); free(bias); free(w2t); free(hid); free(want);
	free(q); free(k); free(ws);
}

/*
 * tests/export/fixtures/tosa.mlir, lowered from TOSA by the build:
 * relu(q·kᵀ) per batch (tosa.transpose, tosa.matmul, tosa.clamp) and a
 * linalg.matmul.
 */
static void
tosa(void *h)
{
	void (*scores)(struct m3 *, struct m3 *, struct m3 *) =
	    (void (*)(struct m3 *, struct m3 *, struct m3 *))sym(h, "_mlir_ciface_scores");
	void (*proj)(struct m2 *, struct m2 *, struct m2 *) =
	    (void (*)(struct m2 *, struct m2 *, struct m2 *))sym(h, "_mlir_ciface_proj");
	float *q = randv(4 * 32 * 16), *k = randv(4 * 32 * 16);
	float *ws = calloc(4 * 32 * 32, sizeof *ws);
	float *x = randv(64 * 32), *w = randv(32 * 48);
	float *want = calloc(64 * 48, sizeof *want);
	struct m3 mq = d3(q, 4, 32, 16), mk = d3(k, 4, 32, 16), r3;
	struct m2 mx = d2(x, 64, 32), mw = d2(w, 32, 48), r2;
	int i;

	scores(&r3, &mq, &mk);
	for (i = 0; i < 4; i++)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, 32, 32, 16,
		    1, q + i * 32 * 16, 16, k + i * 32 * 16, 16, 0,
		    ws + i * 32 * 32, 32);
	for (i = 0; i < 4 * 32 * 32; i++)
		ws[i] = ws[i] > 0 ? ws[i] : 0;
	compare("tosa scores (relu(q·kᵀ))", r3.data + r3.off, ws, 4 * 32 * 32);
	proj(&r2, &mx, &mw);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 64, 48, 32,
	    1, x, 32, w, 48, 0, want, 48);
	compare("tosa proj", r2.data + r2.off, want, 64 * 48);
	free(r2.alloc);
	free(r3.alloc);
	free(q); free(k); free(ws); free(x); free(w); free(want);
}

/* The timing hooks the real TOSA block calls (declared, not defined, there). */
double	_mlir_ciface_rtclock(void);
void	_mlir_ciface_record_timing(void *, double);

double
_mlir_ciface_rtclock(void)
{
	return 0;
}

void
_mlir_ciface_record_timing(void *name, double seconds)
{
	(void)name;
	(void)seconds;
}

/* Small values, where exp, tanh and erf are all far from 0 and overflow. */
static float *
smallv(size_t n)
{
	float *p = malloc(n * sizeof *p);
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (float)(rand() % 41 - 20) / 8;
	return p;
}

static void
math(void *h)
{
	struct acts { struct m2 exp, tanh, gelu; } r;
	void (*act)(struct acts *, struct m2 *) =
	    (void (*)(struct acts *, struct m2 *))sym(h, "_mlir_ciface_act");
	void (*scores)(struct m2 *, struct m2 *, struct m2 *) =
	    (void (*)(struct m2 *, struct m2 *, struct m2 *))sym(h, "_mlir_ciface_scores");
	float *x = smallv(16 * 32), *w[3], *q = smallv(32 * 16), *k = smallv(16 * 24);
	float *want = calloc(32 * 24, sizeof *want);
	struct m2 mx = d2(x, 16, 32), mq = d2(q, 32, 16), mk = d2(k, 16, 24), r2;
	int i;

	tolerance = 1e-5;
	for (i = 0; i < 3; i++)
		w[i] = malloc(16 * 32 * sizeof *w[i]);
	for (i = 0; i < 16 * 32; i++) {
		w[0][i] = expf(x[i]);
		w[1][i] = tanhf(x[i]);
		w[2][i] = 0.5f * x[i] * (1 + erff(x[i] * 0.707106781f));
	}
	act(&r, &mx);
	compare("exp (math.exp on a tensor)", r.exp.data + r.exp.off, w[0], 16 * 32);
	compare("tanh (linalg.generic)", r.tanh.data + r.tanh.off, w[1], 16 * 32);
	compare("gelu (erf)", r.gelu.data + r.gelu.off, w[2], 16 * 32);
	scores(&r2, &mq, &mk);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 32, 24, 16,
	    1, q, 16, k, 24, 0, want, 24);
	for (i = 0; i < 32 * 24; i++)
		want[i] = expf(want[i]);
	/* Relative: exp of a sum of products runs into the thousands. */
	for (i = 0; i < 32 * 24; i++)
		r2.data[r2.off + i] /= want[i], want[i] = 1;
	compare("scores (matmul, then exp)", r2.data + r2.off, want, 32 * 24);
	free(r.exp.alloc);
	free(r.tanh.alloc);
	free(r.gelu.alloc);
	free(r2.alloc);
	for (i = 0; i < 3; i++)
		free(w[i]);
	free(x); free(q); free(k); free(want);
}

static void
chain(void *h, long n)
{
	void (*f)(struct m1 *, struct m1 *) =
	    (void (*)(struct m1 *, struct m1 *))sym(h, "_mlir_ciface_chain");
	float *x = randv(64), *want = malloc(64 * sizeof *want);
	struct m1 mx = { x, x, 0, { 64 }, { 1 } }, r;
	int i;

	for (i = 0; i < 64; i++)
		want[i] = x[i] + (float)n;
	f(&r, &mx);
	compare("chain", r.data + r.off, want, 64);
	free(r.alloc);
	free(x);
	free(want);
}

int
main(int argc, char **argv)
{
	void *h;
	int i;

	if (argc >= 3 && strcmp(argv[1], "load") == 0) {
		for (i = 2; i < argc; i++) {
			if ((h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL)) == NULL) {
				printf("FAIL: %s\n", dlerror());
				failures++;
			} else
				dlclose(h);
		}
		return failures ? 1 : 0;
	}
	if (argc != 3 && !(argc == 4 && (strcmp(argv[1], "chain") == 0 ||
	    strcmp(argv[1], "find") == 0))) {
		fprintf(stderr, "usage: call_program example|layers|math|tosa LIB.so\n"
		    "       call_program chain LIB.so N\n"
		    "       call_program load LIB.so...\n"
		    "       call_program find LIB.so FUNCTION\n");
		return 2;
	}
	srand(42);
	if ((h = dlopen(argv[2], RTLD_NOW)) == NULL) {
		printf("FAIL: %s\n", dlerror());
		return 1;
	}
	if (strcmp(argv[1], "find") == 0) {
		char *name = malloc(strlen(argv[3]) + 14);

		sprintf(name, "_mlir_ciface_%s", argv[3]);
		sym(h, name);
		printf("%s: loaded, %s found\n", argv[2], name);
		free(name);
	} else if (strcmp(argv[1], "example") == 0)
		example(h);
	else if (strcmp(argv[1], "tosa") == 0)
		tosa(h);
	else if (strcmp(argv[1], "math") == 0)
		math(h);
	else if (strcmp(argv[1], "chain") == 0)
		chain(h, atol(argv[3]));
	else
		layers(h);
	return failures ? 1 : 0;
}
