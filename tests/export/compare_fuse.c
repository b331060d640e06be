/*
 * Calls one function of two programs built by `autosched build` (fusion off,
 * the reference, and on) on the same pseudo-random inputs and compares
 * their results.
 *   compare_fuse A.so B.so FUNC TOL NRES TYPE...
 * TYPE is a tensor type's shape and element (64x128xf32, 1x384xi32); the
 * first NRES are the results'. f32 inputs are in [-1, 1), integer inputs 0
 * or 1 (valid token, segment and mask ids of a language model). TOL 0: the
 * results must be equal bit for bit and no f32 a NaN; else every f32
 * within TOL x max(1, |A's|) of A's. Prints the largest difference; exit 0
 * when all agree.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS	8
#define MAX_RANK	8

typedef void (*fn_t)(void *, ...);

struct tensor {
	int	 rank, is_f32;
	int64_t	 dims[MAX_RANK], n;
	size_t	 esz;
};

/* The shape and element of t ("64x128xf32"); 0, or -1 if unreadable. */
static int
parse(const char *t, struct tensor *x)
{
	const char *p = t;
	char *end;

	memset(x, 0, sizeof *x);
	x->n = 1;
	while (x->rank < MAX_RANK) {
		long long v = strtoll(p, &end, 10);

		if (end == p || *end != 'x')
			break;
		x->dims[x->rank++] = v;
		x->n *= v;
		p = end + 1;
	}
	x->is_f32 = strcmp(p, "f32") == 0;
	x->esz = strstr(p, "64") ? 8 : strstr(p, "16") ? 2 : strstr(p, "8") ? 1 : 4;
	return *p == '\0' ? -1 : 0;
}

/* A descriptor {alloc, aligned, offset, sizes, strides} of data (owned by the caller). */
static int64_t *
descriptor(const struct tensor *x, void *data)
{
	int64_t *d = calloc(3 + 2 * (size_t)x->rank, sizeof *d), s = 1;
	int i;

	d[0] = d[1] = (int64_t)(intptr_t)data;
	for (i = x->rank - 1; i >= 0; i--) {
		d[3 + i] = x->dims[i];
		d[3 + x->rank + i] = s;
		s *= x->dims[i];
	}
	return d;
}

/* The same pseudo-random values for both libraries (seeded by argument i). */
static void *
fill(const struct tensor *x, int i)
{
	unsigned s = 12345u + 7919u * (unsigned)i;
	void *buf = aligned_alloc(64, ((size_t)x->n * x->esz + 63) / 64 * 64);
	int64_t j;

	for (j = 0; j < x->n; j++) {
		s = s * 1103515245u + 12345u;
		if (x->is_f32)
			((float *)buf)[j] = (float)((s >> 8) % 2000) / 1000.0f - 1.0f;
		else if (x->esz == 4)
			((int32_t *)buf)[j] = (int32_t)((s >> 16) & 1);
		else
			memset((char *)buf + j * x->esz, (int)((s >> 16) & 1), x->esz);
	}
	return buf;
}

/* Call FUNC of lib on the inputs; *res gets the result descriptors. */
static int
call(const char *lib, const char *func, void **a, int nargs, int64_t *res)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	char name[256];
	fn_t f;

	if (h == NULL) {
		fprintf(stderr, "compare_fuse: %s\n", dlerror());
		return -1;
	}
	snprintf(name, sizeof name, "_mlir_ciface_%s", func);
	if ((f = (fn_t)dlsym(h, name)) == NULL) {
		fprintf(stderr, "compare_fuse: %s: %s not exported\n", lib, name);
		return -1;
	}
	switch (nargs) {
	case 1: f(res, a[0]); break;
	case 2: f(res, a[0], a[1]); break;
	case 3: f(res, a[0], a[1], a[2]); break;
	case 4: f(res, a[0], a[1], a[2], a[3]); break;
	case 5: f(res, a[0], a[1], a[2], a[3], a[4]); break;
	case 6: f(res, a[0], a[1], a[2], a[3], a[4], a[5]); break;
	default: return -1;
	}
	return 0;
}

/* Compare result r of A and B; 0 when they agree (prints the largest difference). */
static int
compare(const struct tensor *x, int r, const void *pa, const void *pb,
    double tol)
{
	const float *fa = pa, *fb = pb;
	double worst = 0;
	int64_t j, bad = 0;

	if (tol == 0 || !x->is_f32) {
		int64_t nan = 0;

		for (j = 0; j < x->n; j++) {
			if (memcmp((const char *)pa + j * x->esz,
			    (const char *)pb + j * x->esz, x->esz) != 0)
				bad++;
			if (x->is_f32 && isnan(fa[j]))
				nan++;
		}
		printf("result %d: %lld of %lld elements differ (bit for bit), "
		    "%lld NaN%s\n", r, (long long)bad, (long long)x->n,
		    (long long)nan, x->is_f32 ? "" : " (not f32)");
		if (x->is_f32 && x->n > 1)
			printf("result %d: first values %g, %g\n", r, fa[0], fa[1]);
		return bad != 0 || nan != 0;
	}
	for (j = 0; j < x->n; j++) {
		double d = fabs((double)fa[j] - fb[j]);
		double lim = tol * fmax(1.0, fabs((double)fa[j]));

		if (!(d <= lim))
			bad++;
		if (d > worst || isnan(d))
			worst = isnan(d) ? INFINITY : d;
	}
	printf("result %d: largest difference %g, %lld of %lld beyond %g "
	    "relative\n", r, worst, (long long)bad, (long long)x->n, tol);
	return bad != 0;
}

int
main(int argc, char **argv)
{
	struct tensor t[2 * MAX_ARGS];
	int64_t resa[MAX_ARGS * (3 + 2 * MAX_RANK)];
	int64_t resb[MAX_ARGS * (3 + 2 * MAX_RANK)];
	void *ina[MAX_ARGS], *inb[MAX_ARGS], *da[MAX_ARGS], *db[MAX_ARGS];
	int nres, nargs, i, fails = 0;
	double tol;
	int64_t *pa = resa, *pb = resb;

	if (argc < 7) {
		fprintf(stderr, "usage: compare_fuse A.so B.so FUNC TOL NRES TYPE...\n");
		return 2;
	}
	tol = atof(argv[4]);
	nres = atoi(argv[5]);
	nargs = argc - 6 - nres;
	if (nres < 1 || nargs < 1 || nargs > 6 || nres > MAX_ARGS)
		return 2;
	for (i = 0; i < nres + nargs; i++) {
		if (parse(argv[6 + i], &t[i]) != 0) {
			fprintf(stderr, "compare_fuse: %s: expected e.g. 64x128xf32\n",
			    argv[6 + i]);
			return 2;
		}
	}
	/* Each library gets its own copy: a call may not write its inputs. */
	for (i = 0; i < nargs; i++) {
		ina[i] = fill(&t[nres + i], i);
		inb[i] = fill(&t[nres + i], i);
		da[i] = descriptor(&t[nres + i], ina[i]);
		db[i] = descriptor(&t[nres + i], inb[i]);
	}
	if (call(argv[1], argv[3], da, nargs, resa) != 0 ||
	    call(argv[2], argv[3], db, nargs, resb) != 0)
		return 1;
	for (i = 0; i < nres; i++) {
		fails += compare(&t[i], i, (void *)(intptr_t)pa[1],
		    (void *)(intptr_t)pb[1], tol);
		pa += 3 + 2 * t[i].rank;
		pb += 3 + 2 * t[i].rank;
	}
	for (i = 0; i < nargs; i++) {
		if (memcmp(ina[i], inb[i], (size_t)t[nres + i].n *
		    t[nres + i].esz) != 0) {
			printf("argument %d: written differently by the two\n", i);
			fails++;
		}
	}
	return fails != 0;
}
