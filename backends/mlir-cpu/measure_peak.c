/*
 * The physical limit autosched-measure reports with --peak: a loop of
 * independent FMAs on registers only (no memory traffic), in the widest
 * vectors this CPU has, on as many threads as asked, each pinned to its own
 * CPU of the process's set. GFLOP/s = 2 · lanes · FMAs / time.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backends/mlir-cpu/measure_int.h"

#define PEAK_ITERS	2000000L	/* 12 FMAs each: ~24M FMAs a call */

struct peak_thread {
	pthread_t	 tid;
	int		 cpu, wide;
	long		 iters;
	pthread_barrier_t *go;
};

/* Twelve independent accumulators hide the FMA latency (4–5 cycles, 2 ports). */
static void
peak_zmm(long n)
{
	__asm__ volatile(
	    "vxorps %%xmm0, %%xmm0, %%xmm0\n\t"
	    "1:\n\t"
	    "vfmadd231ps %%zmm14, %%zmm15, %%zmm0\n\t"
	    "vfmadd231ps %%zmm14, %%zmm15, %%zmm1\n\t"
	    "vfmadd231ps %%zmm14, %%zmm15, %%zmm2\n\t"
	    "vfmadd231ps %%zmm14, %%zmm15, %%zmm3\n\t"
	    "vfmadd231ps %%zmm14, %%zmm15, %%zmm4\n\t"
	    "vfmadd231ps %%zmm14, %%zmm15, %%zmm5\n\t"
	    "vfmadd231ps %%zmm14, %%zmm15, %%zmm6\n\t"
	    "vfmadd231ps %%zmm14, %%zmm15, %%zmm7\n\t"
	    "vfmadd231ps %%zmm14, %%zmm15, %%zmm8\n\t"
	    "vfmadd231ps %%zmm14, %%zmm15, %%zmm9\n\t"
	    "vfmadd231ps %%zmm14, %%zmm15, %%zmm10\n\t"
	    "vfmadd231ps %%zmm14, %%zmm15, %%zmm11\n\t"
	    "dec %0\n\t"
	    "jnz 1b\n\t"
	    "vzeroupper\n\t"
	    : "+r"(n) : : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
	    "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "cc");
}

static void
peak_ymm(long n)
{
	__asm__ volatile(
	    "vxorps %%xmm0, %%xmm0, %%xmm0\n\t"
	    "1:\n\t"
	    "vfmadd231ps %%ymm14, %%ymm15, %%ymm0\n\t"
	    "vfmadd231ps %%ymm14, %%ymm15, %%ymm1\n\t"
	    "vfmadd231ps %%ymm14, %%ymm15, %%ymm2\n\t"
	    "vfmadd231ps %%ymm14, %%ymm15, %%ymm3\n\t"
	    "vfmadd231ps %%ymm14, %%ymm15, %%ymm4\n\t"
	    "vfmadd231ps %%ymm14, %%ymm15, %%ymm5\n\t"
	    "vfmadd231ps %%ymm14, %%ymm15, %%ymm6\n\t"
	    "vfmadd231ps %%ymm14, %%ymm15, %%ymm7\n\t"
	    "vfmadd231ps %%ymm14, %%ymm15, %%ymm8\n\t"
	    "vfmadd231ps %%ymm14, %%ymm15, %%ymm9\n\t"
	    "vfmadd231ps %%ymm14, %%ymm15, %%ymm10\n\t"
	    "vfmadd231ps %%ymm14, %%ymm15, %%ymm11\n\t"
	    "dec %0\n\t"
	    "jnz 1b\n\t"
	    "vzeroupper\n\t"
	    : "+r"(n) : : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
	    "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "cc");
}

static void *
peak_thread_main(void *arg)
{
	struct peak_thread *t = arg;
	cpu_set_t set;

	if (t->cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(t->cpu, &set);
		(void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	}
	pthread_barrier_wait(t->go);
	if (t->wide)
		peak_zmm(t->iters);
	else
		peak_ymm(t->iters);
	return NULL;
}

int
peak_lanes(void)
{
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		return 16;
	if (__builtin_cpu_supports("fma"))
		return 8;
	return 0;
}

double
peak_call(int threads, double *flops)
{
	static cpu_set_t set;
	static int have_set;
	struct peak_thread t[64];
	pthread_barrier_t go;
	int i, c, lanes = peak_lanes();

	if (lanes == 0)
		die("--peak: this CPU has no FMA");
	if (threads < 1 || threads > 64)
		die("--peak: 1 to 64 threads");
	/* The process's CPUs, read before this thread pins itself to one. */
	if (!have_set) {
		CPU_ZERO(&set);
		(void)sched_getaffinity(0, sizeof set, &set);
		have_set = 1;
	}
	pthread_barrier_init(&go, NULL, (unsigned)threads);
	for (i = 0, c = 0; i < threads; i++) {
		while (c < CPU_SETSIZE && !CPU_ISSET(c, &set))
			c++;
		t[i].cpu = c < CPU_SETSIZE ? c++ : -1;
		t[i].wide = lanes == 16;
		t[i].iters = PEAK_ITERS;
		t[i].go = &go;
		if (i > 0 && pthread_create(&t[i].tid, NULL, peak_thread_main,
		    &t[i]) != 0)
			die("--peak: pthread_create failed");
	}
	peak_thread_main(&t[0]);
	for (i = 1; i < threads; i++)
		pthread_join(t[i].tid, NULL);
	pthread_barrier_destroy(&go);
	*flops = (double)threads * PEAK_ITERS * 12.0 * lanes * 2.0;
	return 0;
}
