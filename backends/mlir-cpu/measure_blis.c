/*
 * The BLIS peer of autosched-measure (--ref blis): bli_sgemm / bli_dgemm
 * from Debian's libblis, loaded with dlopen so that its cblas symbols never
 * meet OpenBLAS's in this process, and its OpenMP runtime never meets the
 * kernels'. Layouts are given as strides, so transposed operands need no
 * transpose flag.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/mlir-cpu/measure_int.h"

#define BLIS_SONAME	"libblis.so.4"

/*
 * BLIS's typed API (bli_?gemm) on elements T with 64-bit or 32-bit
 * dim_t/inc_t I (its build decides).
 */
#define BLIS_GEMM_FN(name, T, I)					\
	typedef void (*name)(int, int, I, I, I, const T *, const T *, I, I,	\
	    const T *, I, I, const T *, T *, I, I)
BLIS_GEMM_FN(sgemm64_fn, float, int64_t);
BLIS_GEMM_FN(dgemm64_fn, double, int64_t);
BLIS_GEMM_FN(sgemm32_fn, float, int32_t);
BLIS_GEMM_FN(dgemm32_fn, double, int32_t);

struct blis {
	void		*dl;
	void		*gemm;		/* bli_sgemm or bli_dgemm */
	int		 dbl, int64;
	const struct job *j;
	const void	*a, *b;
	void		*c;
};

struct blis *
blis_open(const struct job *j, const void *lhs, const void *rhs, void *acc,
    char *name, size_t namelen, const char **why)
{
	struct blis *bl;
	int64_t (*int_size)(void);
	const char *(*version)(void);

	*why = NULL;
	if (!((j->lt == T_F32 && j->rt == T_F32 && j->at == T_F32) ||
	    (j->lt == T_F64 && j->rt == T_F64 && j->at == T_F64))) {
		*why = "BLIS has sgemm and dgemm only";
		return NULL;
	}
	if (j->threads > 1) {
		/*
		 * Debian's libblis4-openmp crashes in its OpenMP worker threads
		 * inside this child (it runs standalone): one thread only, until
		 * that is understood (bench/README.md).
		 */
		*why = "BLIS is measured at 1 thread only here";
		return NULL;
	}
	bl = calloc(1, sizeof *bl);
	if (bl == NULL)
		die("out of memory");
	bl->dl = dlopen(BLIS_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (bl->dl == NULL) {
		*why = "libblis.so.4 not found (Debian libblis4)";
		free(bl);
		return NULL;
	}
	bl->dbl = j->at == T_F64;
	bl->gemm = dlsym(bl->dl, bl->dbl ? "bli_dgemm" : "bli_sgemm");
	int_size = (int64_t (*)(void))dlsym(bl->dl, "bli_info_get_int_type_size");
	version = (const char *(*)(void))dlsym(bl->dl, "bli_info_get_version_str");
	if (bl->gemm == NULL || int_size == NULL) {
		*why = "libblis lacks bli_?gemm";
		dlclose(bl->dl);
		free(bl);
		return NULL;
	}
	bl->int64 = int_size() == 64;
	bl->j = j;
	bl->a = lhs;
	bl->b = rhs;
	bl->c = acc;
	snprintf(name, namelen, "blis:%s %s", bl->dbl ? "dgemm" : "sgemm",
	    version != NULL ? version() : "");
	return bl;
}

void
blis_run(struct blis *bl)
{
	const struct job *j = bl->j;
	int64_t m = j->m, n = j->n, k = j->k, b;
	/* Row-major, or the stored transpose, as strides. */
	int64_t rsa = j->ta ? 1 : k, csa = j->ta ? m : 1;
	int64_t rsb = j->tb ? 1 : n, csb = j->tb ? k : 1;
	size_t sa = (size_t)(m * k), sb = (size_t)(k * n), sc = (size_t)(m * n);
	size_t es = bl->dbl ? 8 : 4;
	const float one = 1.0f;
	const double oned = 1.0;

	for (b = 0; b < j->batch; b++) {
		const char *a = (const char *)bl->a + (size_t)b * sa * es;
		const char *bb = (const char *)bl->b + (size_t)b * sb * es;
		char *c = (char *)bl->c + (size_t)b * sc * es;

		if (bl->dbl && bl->int64)
			((dgemm64_fn)bl->gemm)(0, 0, m, n, k, &oned,
			    (const double *)a, rsa, csa, (const double *)bb,
			    rsb, csb, &oned, (double *)c, n, 1);
		else if (bl->dbl)
			((dgemm32_fn)bl->gemm)(0, 0, (int32_t)m, (int32_t)n,
			    (int32_t)k, &oned, (const double *)a, (int32_t)rsa,
			    (int32_t)csa, (const double *)bb, (int32_t)rsb,
			    (int32_t)csb, &oned, (double *)c, (int32_t)n, 1);
		else if (bl->int64)
			((sgemm64_fn)bl->gemm)(0, 0, m, n, k, &one,
			    (const float *)a, rsa, csa, (const float *)bb, rsb,
			    csb, &one, (float *)c, n, 1);
		else
			((sgemm32_fn)bl->gemm)(0, 0, (int32_t)m, (int32_t)n,
			    (int32_t)k, &one, (const float *)a, (int32_t)rsa,
			    (int32_t)csa, (const float *)bb, (int32_t)rsb,
			    (int32_t)csb, &one, (float *)c, (int32_t)n, 1);
	}
}

void
blis_close(struct blis *bl)
{
	if (bl == NULL)
		return;
	dlclose(bl->dl);
	free(bl);
}
