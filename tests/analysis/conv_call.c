/*
 * Calls the functions of tests/analysis/fixtures/cnn.mlir, built by
 * `autosched build`, through their C interface and checks each result
 * against a direct convolution loop in double precision.
 *   conv_call LIB.so
 * Inputs and weights are -1, 0 or 1, and every output's sum of absolute
 * terms (checked here) stays below 2^24, so every partial sum of the f32
 * result is an exact integer whatever the order: the results must be
 * equal, not close, tuned or not.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib_sym.h"

struct m3 { float *alloc, *data; int64_t off, size[3], stride[3]; };
struct m4 { float *alloc, *data; int64_t off, size[4], stride[4]; };

/*
 * A convolution: sizes in NHWC terms, layout NHWC/HWCF or NCHW/FCHW (or
 * depthwise NHWC/HWC: f = c, each channel its own filter).
 */
struct conv {
	int	nchw;
	int	n, h, w, c, f, kh, kw, oh, ow, stride, pad_top, pad_left;
	int	dil, dw;
};

static int failures;
static unsigned long long seed = 42;

/* -1, 0 or 1, the same sequence on every run. */
static float
tern(void)
{
	seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return (float)((int)(seed >> 33) % 3 - 1);
}

static float *
tensor(size_t n, int zero)
{
	float *p = calloc(n, sizeof *p);
	size_t i;

	if (p == NULL)
		abort();
	for (i = 0; i < n && !zero; i++)
		p[i] = tern();
	return p;
}

static struct m4
d4(float *p, int64_t a, int64_t b, int64_t c, int64_t d)
{
	struct m4 m = { p, p, 0, { a, b, c, d }, { b * c * d, c * d, d, 1 } };
	return m;
}

/* Element (i0, i1, i2, i3) of a dense tensor of dims d[4]. */
static size_t
at(const int d[4], int i0, int i1, int i2, int i3)
{
	return (((size_t)i0 * d[1] + i1) * d[2] + i2) * d[3] + i3;
}

/*
 * out = init + conv(in, w) computed in double; *bound = the largest sum of
 * absolute terms of one output.
 */
static void
reference(const struct conv *k, const float *in, const float *w,
    const float *init, double *out, double *bound)
{
	int din[4], dw[4], dout[4], n, y, x, f, i, j, c;

	if (k->nchw) {
		memcpy(din, (int[4]){ k->n, k->c, k->h, k->w }, sizeof din);
		memcpy(dw, (int[4]){ k->f, k->c, k->kh, k->kw }, sizeof dw);
		memcpy(dout, (int[4]){ k->n, k->f, k->oh, k->ow }, sizeof dout);
	} else {
		memcpy(din, (int[4]){ k->n, k->h, k->w, k->c }, sizeof din);
		memcpy(dw, (int[4]){ k->kh, k->kw, k->c, k->f }, sizeof dw);
		memcpy(dout, (int[4]){ k->n, k->oh, k->ow, k->f }, sizeof dout);
	}
	for (n = 0; n < k->n; n++)
	for (y = 0; y < k->oh; y++)
	for (x = 0; x < k->ow; x++)
	for (f = 0; f < k->f; f++) {
		size_t o = k->nchw ? at(dout, n, f, y, x) : at(dout, n, y, x, f);
		double s = init != NULL ? init[o] : 0, b = fabs(s);

		for (i = 0; i < k->kh; i++)
		for (j = 0; j < k->kw; j++)
		for (c = 0; c < k->c; c++) {
			int d = k->dil ? k->dil : 1;
			int iy = y * k->stride + i * d - k->pad_top;
			int ix = x * k->stride + j * d - k->pad_left;
			double t;

			if (iy < 0 || ix < 0 || iy >= k->h || ix >= k->w ||
			    (k->dw && c != f))
				continue;
			if (k->dw)	/* the filter KH x KW x C */
				t = (double)in[at(din, n, iy, ix, c)] *
				    w[(i * k->kw + j) * k->c + c];
			else if (k->nchw)
				t = (double)in[at(din, n, c, iy, ix)] *
				    w[at(dw, f, c, i, j)];
			else
				t = (double)in[at(din, n, iy, ix, c)] *
				    w[at(dw, i, j, c, f)];
			s += t;
			b += fabs(t);
		}
		out[o] = s;
		if (b > *bound)
			*bound = b;
	}
}

static void
relu(double *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = v[i] > 0 ? v[i] : 0;
}

static float *
to_float(const double *v, size_t n)
{
	float *p = tensor(n, 1);
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (float)v[i];
	return p;
}

/* got must equal want exactly. */
static void
compare(const char *what, const struct m4 *r, const double *want, size_t n,
    double bound)
{
	const float *got = r->data + r->off;
	size_t i, bad = 0;

	if (bound >= 16777216.0) {
		printf("FAIL: %s: sums of %g are not exact in f32: the test's "
		    "data is wrong\n", what, bound);
		failures++;
	}
	for (i = 0; i < n; i++)
		if ((double)got[i] != want[i] && bad++ == 0)
			printf("FAIL: %s[%zu] = %.9g, want %.9g\n", what, i,
			    (double)got[i], want[i]);
	printf("%s: %zu of %zu values differ (sums up to %g)\n", what, bad, n,
	    bound);
	failures += bad != 0;
}

typedef void (*fn2)(struct m4 *, struct m4 *, struct m4 *);
typedef void (*fn3)(struct m4 *, struct m4 *, struct m4 *, struct m4 *);
typedef void (*fn6)(struct m4 *, struct m4 *, struct m4 *, struct m4 *,
    struct m4 *, struct m4 *, struct m4 *);

/* The 7x7 stride-2 stem, padding 3 (top, left) and 2 (bottom, right). */
static void
stem(void *h)
{
	struct conv k = { 0, 1, 16, 16, 3, 64, 7, 7, 8, 8, 2, 3, 3, 1, 0 };
	float *img = tensor(16 * 16 * 3, 0), *w = tensor(7 * 7 * 3 * 64, 0);
	double *want = calloc(8 * 8 * 64, sizeof *want), b = 0;
	struct m4 mi = d4(img, 1, 16, 16, 3), mw = d4(w, 7, 7, 3, 64), r;

	((fn2)sym(h, "_mlir_ciface_stem"))(&r, &mi, &mw);
	reference(&k, img, w, NULL, want, &b);
	compare("stem", &r, want, 8 * 8 * 64, b);
	free(img), free(w), free(want);
}

/* Two bottlenecks of layer 1, the 3x3 conv padded by 1, ReLUs, a residual. */
static void
block(void *h)
{
	struct conv k1 = { 0, 1, 8, 8, 64, 64, 1, 1, 8, 8, 1, 0, 0, 1, 0 };
	struct conv k2 = { 0, 1, 8, 8, 64, 64, 3, 3, 8, 8, 1, 1, 1, 1, 0 };
	struct conv k3 = { 0, 1, 8, 8, 64, 256, 1, 1, 8, 8, 1, 0, 0, 1, 0 };
	struct conv k4 = { 0, 1, 8, 8, 256, 64, 1, 1, 8, 8, 1, 0, 0, 1, 0 };
	size_t n64 = 8 * 8 * 64, n256 = 8 * 8 * 256, i;
	float *x = tensor(n64, 0), *w1 = tensor(64 * 64, 0);
	float *w2 = tensor(9 * 64 * 64, 0), *w3 = tensor(64 * 256, 0);
	float *wp = tensor(64 * 256, 0), *w4 = tensor(256 * 64, 0), *f1, *f2, *f3;
	double *a = calloc(n64, sizeof *a), *c2 = calloc(n64, sizeof *c2);
	double *c3 = calloc(n256, sizeof *c3), *cp = calloc(n256, sizeof *cp);
	double *want = calloc(n64, sizeof *want), b = 0;
	struct m4 mx = d4(x, 1, 8, 8, 64), m1 = d4(w1, 1, 1, 64, 64);
	struct m4 m2 = d4(w2, 3, 3, 64, 64), m3 = d4(w3, 1, 1, 64, 256);
	struct m4 mp = d4(wp, 1, 1, 64, 256), m4_ = d4(w4, 1, 1, 256, 64), r;

	((fn6)sym(h, "_mlir_ciface_block"))(&r, &mx, &m1, &m2, &m3, &mp, &m4_);
	reference(&k1, x, w1, NULL, a, &b);
	relu(a, n64);
	f1 = to_float(a, n64);
	reference(&k2, f1, w2, NULL, c2, &b);
	relu(c2, n64);
	f2 = to_float(c2, n64);
	reference(&k3, f2, w3, NULL, c3, &b);
	reference(&k3, x, wp, NULL, cp, &b);
	for (i = 0; i < n256; i++)
		c3[i] += cp[i];
	relu(c3, n256);
	f3 = to_float(c3, n256);
	reference(&k4, f3, w4, NULL, want, &b);
	compare("block", &r, want, n64, b);
	free(x), free(w1), free(w2), free(w3), free(wp), free(w4);
	free(f1), free(f2), free(f3), free(a), free(c2), free(c3), free(cp);
	free(want);
}

/* 1x1 convs accumulating into the caller's init: NHWC 14x14, NCHW 7x7. */
static void
pointwise(void *h)
{
	struct conv k = { 0, 1, 14, 14, 256, 64, 1, 1, 14, 14, 1, 0, 0, 1, 0 };
	struct conv kn = { 1, 1, 7, 7, 64, 32, 1, 1, 7, 7, 1, 0, 0, 1, 0 };
	float *x = tensor(14 * 14 * 256, 0), *w = tensor(256 * 64, 0);
	float *y = tensor(14 * 14 * 64, 0);
	float *xn = tensor(64 * 49, 0), *wn = tensor(32 * 64, 0);
	float *yn = tensor(32 * 49, 0);
	double *want = calloc(14 * 14 * 64, sizeof *want), b = 0;
	double *wantn = calloc(32 * 49, sizeof *wantn), bn = 0;
	struct m4 mx = d4(x, 1, 14, 14, 256), mw = d4(w, 1, 1, 256, 64);
	struct m4 my = d4(y, 1, 14, 14, 64), mxn = d4(xn, 1, 64, 7, 7);
	struct m4 mwn = d4(wn, 32, 64, 1, 1), myn = d4(yn, 1, 32, 7, 7), r, rn;

	/* The references first: a result may be written into the init. */
	reference(&k, x, w, y, want, &b);
	reference(&kn, xn, wn, yn, wantn, &bn);
	((fn3)sym(h, "_mlir_ciface_pointwise"))(&r, &mx, &mw, &my);
	compare("pointwise", &r, want, 14 * 14 * 64, b);
	((fn3)sym(h, "_mlir_ciface_pointwise_nchw"))(&rn, &mxn, &mwn, &myn);
	compare("pointwise_nchw", &rn, wantn, 32 * 49, bn);
	free(x), free(w), free(y), free(xn), free(wn), free(yn);
	free(want), free(wantn);
}

/* One conv of fn(result, input, filter), inputs of the given sizes. */
static void
one(void *h, const char *name, const struct conv *k, const int64_t din[4],
    const int64_t dflt[4])
{
	size_t nin = (size_t)(din[0] * din[1] * din[2] * din[3]);
	size_t nf = (size_t)(dflt[0] * dflt[1] * dflt[2] * dflt[3]);
	size_t nout = (size_t)k->n * k->oh * k->ow * k->f;
	float *x = tensor(nin, 0), *w = tensor(nf, 0);
	double *want = calloc(nout, sizeof *want), b = 0;
	struct m4 mx = d4(x, din[0], din[1], din[2], din[3]);
	struct m4 mw = d4(w, dflt[0], dflt[1], dflt[2], dflt[3]), r;
	char fn[128];

	snprintf(fn, sizeof fn, "_mlir_ciface_%s", name);
	((fn2)sym(h, fn))(&r, &mx, &mw);
	reference(k, x, w, NULL, want, &b);
	compare(name, &r, want, nout, b);
	free(x), free(w), free(want);
}

/* The depthwise conv: its filter is 3x3x32, a rank-3 memref. */
static void
depthwise(void *h, const struct conv *k)
{
	size_t nout = 8 * 8 * 32;
	float *x = tensor(10 * 10 * 32, 0), *w = tensor(3 * 3 * 32, 0);
	double *want = calloc(nout, sizeof *want), b = 0;
	struct m4 mx = d4(x, 1, 10, 10, 32), r;
	struct m3 mw = { w, w, 0, { 3, 3, 32 }, { 96, 32, 1 } };

	((void (*)(struct m4 *, struct m4 *, struct m3 *))sym(h,
	    "_mlir_ciface_depthwise"))(&r, &mx, &mw);
	reference(k, x, w, NULL, want, &b);
	compare("depthwise", &r, want, nout, b);
	free(x), free(w), free(want);
}

/* Strided, NCHW padded and strided, dilated, depthwise. */
static void
others(void *h)
{
	struct conv pr = { 0, 1, 8, 8, 32, 64, 1, 1, 4, 4, 2, 0, 0, 1, 0 };
	struct conv nc = { 1, 1, 8, 8, 16, 8, 3, 3, 4, 4, 2, 1, 1, 1, 0 };
	struct conv di = { 0, 1, 9, 9, 8, 16, 3, 3, 5, 5, 1, 0, 0, 2, 0 };
	struct conv dw = { 0, 1, 10, 10, 32, 32, 3, 3, 8, 8, 1, 0, 0, 1, 1 };

	one(h, "project", &pr, (const int64_t[4]){ 1, 8, 8, 32 },
	    (const int64_t[4]){ 1, 1, 32, 64 });
	one(h, "nchw3x3", &nc, (const int64_t[4]){ 1, 16, 8, 8 },
	    (const int64_t[4]){ 8, 16, 3, 3 });
	one(h, "dilated", &di, (const int64_t[4]){ 1, 9, 9, 8 },
	    (const int64_t[4]){ 3, 3, 8, 16 });
	depthwise(h, &dw);
}

int
main(int argc, char **argv)
{
	void *h;

	if (argc != 2) {
		fprintf(stderr, "usage: conv_call LIB.so\n");
		return 2;
	}
	if ((h = dlopen(argv[1], RTLD_NOW)) == NULL) {
		printf("FAIL: %s\n", dlerror());
		return 1;
	}
	stem(h);
	block(h);
	pointwise(h);
	others(h);
	return failures != 0;
}
