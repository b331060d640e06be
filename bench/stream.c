/*
 * The memory's read bandwidth, the physical limit of an op that reads its
 * operand once (a decode step's matvecs, a prefill's projections at small
 * M): the median over REPS passes of a sum over a buffer of MIB MiB (far
 * beyond the caches), split over OMP_NUM_THREADS threads, each reading its
 * part as 8 runs at once (one run a thread leaves a fifth of the bandwidth
 * unused here: 12.4 against 15.6 GB/s on one CPU of the Xeon), in GB/s
 * (10^9 bytes a second). The sum is of 32-bit integers (wrapping), which the
 * compiler vectorizes (a float sum in order would be bound by the adds'
 * latency, not by memory).
 *
 *   cc -O3 -march=native -fopenmp bench/stream.c -o stream
 *   OMP_NUM_THREADS=2 taskset -c 0,1 ./stream [MIB] [REPS]    # 1024 15
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Runs read at once: n / STREAMS words apart. */
#define STREAMS	8

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
	int reps = argc > 2 ? atoi(argv[2]) : 15, r;
	size_t n = mib << 18, i;	/* 32-bit words */
	uint32_t *a, sink = 0;
	double *gbs;

	if (mib < 64 || reps < 1 || reps > 1000) {
		fprintf(stderr, "usage: stream [MIB >= 64] [REPS 1..1000]\n");
		return 2;
	}
	a = aligned_alloc(64, n * sizeof *a);
	gbs = calloc((size_t)reps, sizeof *gbs);
	if (a == NULL || gbs == NULL)
		return 1;
	/* Touched by the threads that read it (first touch). */
#pragma omp parallel for schedule(static)
	for (i = 0; i < n; i++)
		a[i] = (uint32_t)(i & 7);
	for (r = 0; r < reps; r++) {
		double t = now();
		uint32_t s = 0;

		/*
		 * Each thread reads its part as STREAMS runs at once (as a
		 * kernel reads the rows of a weight panel): one run a thread
		 * leaves most of the bandwidth unused.
		 */
#pragma omp parallel for schedule(static) reduction(+:s)
		for (i = 0; i < n / STREAMS; i++) {
			size_t k;

			for (k = 0; k < STREAMS; k++)
				s += a[k * (n / STREAMS) + i];
		}
		t = now() - t;
		sink += s;
		gbs[r] = (double)(n * sizeof *a) / t * 1e-9;
	}
	qsort(gbs, (size_t)reps, sizeof *gbs, cmp);
	printf("read %zu MiB: %.2f GB/s (median of %d; min %.2f, max %.2f)%s\n",
	    mib, gbs[reps / 2], reps, gbs[0], gbs[reps - 1],
	    sink == 1 ? " " : "");
	free(a);
	free(gbs);
	return 0;
}
