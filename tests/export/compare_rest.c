/*
 * Calls every function of tests/export/fixtures/rest.mlir in two libraries
 * built by `autosched build` (--rest loops, the reference, and --rest
 * vector) on the same random inputs and compares their results.
 *   compare_rest LOOPS.so OTHER.so
 * Copies, transposes, fills, broadcasts and the row reductions of "rows"
 * (their order kept) must be equal bit for bit; other float
 * math within a relative error of REL_TOL (see below). Exit 0 when all agree.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXARGS		3
#define MAXRANK		3
/*
 * The vector code keeps the loops' order of additions and calls the same
 * libm, so the results are expected to be equal; 1e-5 relative (about 80
 * ulp of f32) leaves room for LLVM contracting a multiply and add
 * differently in the two, and is still far below any real error (a lane
 * or a tile dropped, a wrong broadcast: errors of order 1).
 */
#define REL_TOL		1e-5

struct shape {
	int	 rank;
	int64_t	 dim[MAXRANK];
};

struct fn {
	const char	*name;
	int		 exact;		/* data movement only: bit for bit */
	int		 nin, nout;
	struct shape	 in[MAXARGS], out[MAXARGS];
};

static const struct fn fns[] = {
	{ "ew", 0, 2, 1, { { 2, { 7, 13 } }, { 2, { 7, 13 } } },
	    { { 2, { 7, 13 } } } },
	{ "softmax", 0, 1, 1, { { 3, { 5, 3, 17 } } }, { { 3, { 5, 3, 17 } } } },
	{ "layernorm", 0, 1, 1, { { 2, { 7, 13 } } }, { { 2, { 7, 13 } } } },
	{ "transpose", 1, 1, 1, { { 3, { 5, 3, 17 } } }, { { 3, { 17, 5, 3 } } } },
	{ "transpose8", 1, 1, 1, { { 3, { 3, 16, 24 } } },
	    { { 3, { 3, 24, 16 } } } },
	{ "fillbcast", 1, 1, 2, { { 1, { 13 } } },
	    { { 2, { 7, 13 } }, { 2, { 7, 13 } } } },
	{ "mm", 0, 2, 1, { { 2, { 7, 13 } }, { 2, { 13, 5 } } },
	    { { 2, { 7, 5 } } } },
	/* Row reductions keep each row's order: bit for bit. */
	{ "rows", 1, 1, 2, { { 3, { 8, 64, 128 } } },
	    { { 2, { 8, 64 } }, { 2, { 8, 64 } } } },
	{ "big", 0, 2, 3, { { 2, { 263, 300 } }, { 2, { 263, 300 } } },
	    { { 2, { 263, 300 } }, { 1, { 263 } }, { 1, { 300 } } } },
};
#define NFNS	(sizeof fns / sizeof fns[0])

/* A memref descriptor of any rank up to MAXRANK, as MLIR lays it out. */
struct desc {
	float	*alloc, *data;
	int64_t	 off;
	int64_t	 v[2 * MAXRANK];	/* sizes, then strides */
};

static size_t
count(const struct shape *s)
{
	size_t n = 1;
	int i;

	for (i = 0; i < s->rank; i++)
		n *= (size_t)s->dim[i];
	return n;
}

/* A row-major descriptor of s over p, packed as the callee reads it. */
static void
pack(int64_t *w, float *p, const struct shape *s)
{
	int64_t st = 1;
	int i;

	w[0] = (int64_t)(intptr_t)p;
	w[1] = (int64_t)(intptr_t)p;
	w[2] = 0;
	for (i = s->rank - 1; i >= 0; i--) {
		w[3 + i] = s->dim[i];
		w[3 + s->rank + i] = st;
		st *= s->dim[i];
	}
}

typedef void (*fn1)(void *, void *);
typedef void (*fn2)(void *, void *, void *);

/*
 * Call f of library h on copies of ins (a built function may write its
 * arguments: they are its buffers); outs[k] receives a copy of result k
 * in row order (caller frees). 0, or -1 when f is missing or a result has
 * an unexpected shape.
 */
static int
call(void *h, const struct fn *f, float **ins, float **outs)
{
	int64_t inw[MAXARGS][3 + 2 * MAXRANK], res[MAXARGS * (3 + 2 * MAXRANK)];
	float *copy[MAXARGS] = { 0 };
	char sym[128];
	void *p;
	size_t at = 0;
	int k, i, rc = -1;

	snprintf(sym, sizeof sym, "_mlir_ciface_%s", f->name);
	if ((p = dlsym(h, sym)) == NULL) {
		printf("FAIL: %s not exported\n", sym);
		return -1;
	}
	for (k = 0; k < f->nin; k++) {
		size_t n = count(&f->in[k]) * sizeof(float);

		copy[k] = malloc(n);
		memcpy(copy[k], ins[k], n);
		pack(inw[k], copy[k], &f->in[k]);
	}
	memset(res, 0, sizeof res);
	if (f->nin == 1)
		((fn1)p)(res, inw[0]);
	else
		((fn2)p)(res, inw[0], inw[1]);
	for (k = 0; k < f->nout; k++) {
		const struct shape *s = &f->out[k];
		float *alloc = (float *)(intptr_t)res[at];
		float *data = (float *)(intptr_t)res[at + 1];
		int64_t off = res[at + 2], want = 1;
		size_t n = count(s);

		for (i = s->rank - 1; i >= 0; i--) {
			if (res[at + 3 + i] != s->dim[i] ||
			    res[at + 3 + s->rank + i] != want) {
				printf("FAIL: %s: result %d: not a %d-d "
				    "row-major result of the expected shape\n",
				    f->name, k, s->rank);
				goto out;
			}
			want *= s->dim[i];
		}
		outs[k] = malloc(n * sizeof(float));
		memcpy(outs[k], data + off, n * sizeof(float));
		free(alloc);
		at += 3 + 2 * (size_t)s->rank;
	}
	rc = 0;
out:
	for (k = 0; k < f->nin; k++)
		free(copy[k]);
	return rc;
}

/* Compare result k of f; 0 when within its tolerance. */
static int
compare(const struct fn *f, int k, const float *ref, const float *got)
{
	size_t i, n = count(&f->out[k]), bad = 0;
	double worst = 0;

	for (i = 0; i < n; i++) {
		double d = fabs((double)ref[i] - got[i]);
		double r = d / fmax(fabs((double)ref[i]), 1e-30);

		if (f->exact ? memcmp(&ref[i], &got[i], sizeof(float)) != 0 :
		    !(r <= REL_TOL || d == 0)) {
			if (bad++ < 3)
				printf("  %s[%d][%zu]: loops %.9g, other %.9g\n",
				    f->name, k, i, ref[i], got[i]);
		}
		if (r > worst && d != 0)
			worst = r;
	}
	printf("%s: result %d: %zu values, %zu differ beyond %s, worst "
	    "relative error %g\n", f->name, k, n, bad,
	    f->exact ? "0 (bit for bit)" : "the tolerance", worst);
	return bad ? -1 : 0;
}

int
main(int argc, char **argv)
{
	void *h[2];
	int failures = 0, l;
	size_t i, j;
	int k;

	if (argc != 3) {
		fprintf(stderr, "usage: compare_rest LOOPS.so OTHER.so\n");
		return 2;
	}
	for (l = 0; l < 2; l++) {
		if ((h[l] = dlopen(argv[1 + l], RTLD_NOW | RTLD_LOCAL)) == NULL) {
			printf("FAIL: %s\n", dlerror());
			return 1;
		}
	}
	srand(12345);
	for (i = 0; i < NFNS; i++) {
		const struct fn *f = &fns[i];
		float *ins[MAXARGS] = { 0 }, *outs[2][MAXARGS] = { { 0 } };

		for (k = 0; k < f->nin; k++) {
			size_t n = count(&f->in[k]);

			ins[k] = malloc(n * sizeof(float));
			for (j = 0; j < n; j++)	/* in [-2, 2) */
				ins[k][j] = (float)rand() / RAND_MAX * 4 - 2;
		}
		if (call(h[0], f, ins, outs[0]) != 0 ||
		    call(h[1], f, ins, outs[1]) != 0)
			failures++;
		else
			for (k = 0; k < f->nout; k++)
				failures += compare(f, k, outs[0][k],
				    outs[1][k]) != 0;
		for (k = 0; k < MAXARGS; k++) {
			free(ins[k]);
			free(outs[0][k]);
			free(outs[1][k]);
		}
	}
	printf("compare_rest: %s\n", failures ? "FAIL" : "all agree");
	return failures ? 1 : 0;
}
