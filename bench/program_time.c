/*
 * Times one function of a program built by `autosched build`, called
 * through MLIR's C interface with memref descriptors built from its types.
 *   program_time LIB.so FUNC MIN_TIME NRES TYPE...
 * TYPE is a tensor type's shape and element, e.g. 1024x256xf32; the first
 * NRES are the results. Prints the median milliseconds of one call.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ARGS	12
#define MAX_RANK	8

typedef void (*fn_t)(void *, ...);

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A descriptor {alloc, aligned, offset, sizes[r], strides[r]} for type t. */
static int64_t *
descriptor(const char *t, int alloc, int *rank)
{
	int64_t dims[MAX_RANK], n = 1, s = 1, esz = 4;
	int64_t *d;
	const char *p = t;
	char *end;
	int r = 0, i;

	while (r < MAX_RANK) {
		long long v = strtoll(p, &end, 10);

		if (end == p || *end != 'x')
			break;
		dims[r++] = v;
		n *= v;
		p = end + 1;
	}
	if (strstr(p, "64"))
		esz = 8;
	else if (strstr(p, "16"))
		esz = 2;
	else if (strstr(p, "8"))
		esz = 1;
	d = calloc(3 + 2 * (size_t)r, sizeof *d);
	if (alloc) {
		void *buf = aligned_alloc(64, ((size_t)(n * esz) + 63) / 64 * 64);

		memset(buf, 0, (size_t)(n * esz));
		d[0] = d[1] = (int64_t)(intptr_t)buf;
	}
	for (i = r - 1; i >= 0; i--) {
		d[3 + i] = dims[i];
		d[3 + r + i] = s;
		s *= dims[i];
	}
	*rank = r;
	return d;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	void *h, *a[MAX_ARGS + 1] = { 0 }, *res;
	int64_t resbuf[MAX_ARGS * (3 + 2 * MAX_RANK)];
	int nres, nargs, i, rank, rr[MAX_ARGS], nt = 0;
	double min_time, t0, times[100000];
	fn_t f;
	char name[256];

	if (argc < 6) {
		fprintf(stderr, "usage: program_time LIB.so FUNC MIN_TIME NRES TYPE...\n");
		return 2;
	}
	min_time = atof(argv[3]);
	nres = atoi(argv[4]);
	nargs = argc - 5 - nres;
	if (nres < 1 || nargs < 0 || nargs > MAX_ARGS || nres > MAX_ARGS) {
		fprintf(stderr, "program_time: bad counts\n");
		return 2;
	}
	if ((h = dlopen(argv[1], RTLD_NOW)) == NULL) {
		fprintf(stderr, "program_time: %s\n", dlerror());
		return 1;
	}
	snprintf(name, sizeof name, "_mlir_ciface_%s", argv[2]);
	if ((f = (fn_t)dlsym(h, name)) == NULL) {
		fprintf(stderr, "program_time: %s not exported\n", name);
		return 1;
	}
	for (i = 0; i < nres; i++) {
		free(descriptor(argv[5 + i], 0, &rank));
		rr[i] = rank;
	}
	for (i = 0; i < nargs; i++)
		a[i] = descriptor(argv[5 + nres + i], 1, &rank);
	res = resbuf;
	/* One warm-up call, then calls until min_time has passed. */
	t0 = now();
	do {
		double s = now();
		int64_t *p = resbuf;

		switch (nargs) {
		case 0: f(res); break;
		case 1: f(res, a[0]); break;
		case 2: f(res, a[0], a[1]); break;
		case 3: f(res, a[0], a[1], a[2]); break;
		case 4: f(res, a[0], a[1], a[2], a[3]); break;
		case 5: f(res, a[0], a[1], a[2], a[3], a[4]); break;
		case 6: f(res, a[0], a[1], a[2], a[3], a[4], a[5]); break;
		case 7: f(res, a[0], a[1], a[2], a[3], a[4], a[5], a[6]); break;
		case 8: f(res, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]); break;
		default:
			fprintf(stderr, "program_time: at most 8 arguments\n");
			return 2;
		}
		if (nt < 100000 && now() - t0 > 0)
			times[nt++] = now() - s;
		/* The results are the caller's: freed. */
		for (i = 0; i < nres; i++) {
			free((void *)(intptr_t)p[0]);
			p += 3 + 2 * rr[i];
		}
	} while (now() - t0 < min_time || nt < 3);
	qsort(times + 1, (size_t)nt - 1, sizeof *times, cmp);
	printf("%.6f\n", times[1 + (nt - 1) / 2] * 1e3);
	return 0;
}
