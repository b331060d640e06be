/*
 * The physical limits autosched-measure reports. --peak: a loop of
 * independent FMAs on registers only (no memory traffic), in the widest
 * vectors this CPU has; GFLOP/s = 2 · lanes · FMAs / time. --bandwidth: a
 * STREAM triad (a = b + s·c over arrays 4x the last-level cache); GB/s =
 * 24 bytes per element / time (STREAM's count: write-allocate traffic is
 * not counted). Both on as many threads as asked, each pinned to its own
 * CPU of the process's set.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backends/mlir-cpu/measure_int.h"

#define PEAK_ITERS	2000000L	/* 12 FMAs each: ~24M FMAs a call */

/* One probe thread: fn(arg, i, n) run on its own CPU once all are ready. */
struct probe_thread {
	pthread_t	 tid;
	int		 cpu, i, n;
	void		(*fn)(void *, int, int);
	void		*arg;
	pthread_barrier_t *go;
};

/*
 * Twelve independent accumulators hide the FMA latency (4-5 cycles, 2 ports):
 * the loop in registers of kind R ("zmm" or "ymm"), n times.
 */
#define PEAK_FMA(R, i)	"vfmadd231ps %%" R "14, %%" R "15, %%" R #i "\n\t"
#define PEAK_LOOP(R, n)							\
	__asm__ volatile(						\
	    "vxorps %%xmm0, %%xmm0, %%xmm0\n\t"				\
	    "1:\n\t"							\
	    PEAK_FMA(R, 0) PEAK_FMA(R, 1) PEAK_FMA(R, 2) PEAK_FMA(R, 3)	\
	    PEAK_FMA(R, 4) PEAK_FMA(R, 5) PEAK_FMA(R, 6) PEAK_FMA(R, 7)	\
	    PEAK_FMA(R, 8) PEAK_FMA(R, 9) PEAK_FMA(R, 10) PEAK_FMA(R, 11)	\
	    "dec %0\n\t"							\
	    "jnz 1b\n\t"							\
	    "vzeroupper\n\t"						\
	    : "+r"(n) : : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",	\
	    "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "cc")

static void
peak_zmm(long n)
{
	PEAK_LOOP("zmm", n);
}

static void
peak_ymm(long n)
{
	PEAK_LOOP("ymm", n);
}

static void *
probe_thread_main(void *arg)
{
	struct probe_thread *t = arg;
	cpu_set_t set;

	if (t->cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(t->cpu, &set);
		(void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	}
	pthread_barrier_wait(t->go);
	t->fn(t->arg, t->i, t->n);
	return NULL;
}

/*
 * Run fn(arg, i, threads) on threads threads at once (i = 0 on this one),
 * each pinned to its own CPU of the process's set (read once, before this
 * thread pins itself), and wait for all.
 */
static void
probe_run(const char *what, int threads, void (*fn)(void *, int, int),
    void *arg)
{
	static cpu_set_t set;
	static int have_set;
	struct probe_thread t[64];
	pthread_barrier_t go;
	int i, c;

	if (threads < 1 || threads > 64)
		die("%s: 1 to 64 threads", what);
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
		t[i].i = i;
		t[i].n = threads;
		t[i].fn = fn;
		t[i].arg = arg;
		t[i].go = &go;
		if (i > 0 && pthread_create(&t[i].tid, NULL, probe_thread_main,
		    &t[i]) != 0)
			die("%s: pthread_create failed", what);
	}
	probe_thread_main(&t[0]);
	for (i = 1; i < threads; i++)
		pthread_join(t[i].tid, NULL);
	pthread_barrier_destroy(&go);
}

static void
peak_part(void *arg, int i, int n)
{
	(void)i;
	(void)n;
	if (*(int *)arg == 16)
		peak_zmm(PEAK_ITERS);
	else
		peak_ymm(PEAK_ITERS);
}

int
peak_lanes(void)
{
	const char *cap = getenv("AUTOSCHED_ISA");

	__builtin_cpu_init();
	/* Capped (the backend's [Env] isa, bench/gemm.sh ISA=): its vectors. */
	if (cap != NULL && strcmp(cap, "sse2") == 0)
		return 0;
	if (__builtin_cpu_supports("avx512f") &&
	    (cap == NULL || strcmp(cap, "avx2") != 0))
		return 16;
	if (__builtin_cpu_supports("fma"))
		return 8;
	return 0;
}

double
peak_call(int threads, double *flops)
{
	int lanes = peak_lanes();

	if (lanes == 0)
		die("--peak: this CPU has no FMA");
	probe_run("--peak", threads, peak_part, &lanes);
	*flops = (double)threads * PEAK_ITERS * 12.0 * lanes * 2.0;
	return 0;
}

/* The triad's arrays, made once: each 4x the last-level cache (64 MiB at least). */
static struct {
	double	*a, *b, *c;
	size_t	 n;
	int	 threads;
} stream;

/* The last-level cache in bytes (sysfs), or 0 when it cannot be told. */
static size_t
stream_llc(void)
{
	char path[96], buf[32];
	size_t best = 0, v;
	int i;
	FILE *f;

	for (i = 0; i < 8; i++) {
		snprintf(path, sizeof path,
		    "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(buf, sizeof buf, f) != NULL) {
			v = strtoul(buf, NULL, 10);
			if (strchr(buf, 'K') != NULL)
				v <<= 10;
			else if (strchr(buf, 'M') != NULL)
				v <<= 20;
			if (v > best)
				best = v;
		}
		fclose(f);
	}
	return best;
}

/* Thread i of n: its slice of the arrays, [lo, hi). */
static void
stream_slice(int i, int n, size_t *lo, size_t *hi)
{
	*lo = stream.n * (size_t)i / (size_t)n;
	*hi = stream.n * (size_t)(i + 1) / (size_t)n;
}

/* Each thread first touches its own slice (its pages then sit near it). */
static void
stream_init_part(void *arg, int i, int n)
{
	size_t lo, hi, k;

	(void)arg;
	stream_slice(i, n, &lo, &hi);
	for (k = lo; k < hi; k++) {
		stream.a[k] = 0;
		stream.b[k] = 1;
		stream.c[k] = 2;
	}
}

static void
stream_triad_part(void *arg, int i, int n)
{
	double *restrict a = stream.a;
	const double *restrict b = stream.b, *restrict c = stream.c;
	double s = *(double *)arg;
	size_t lo, hi, k;

	(void)n;
	stream_slice(i, n, &lo, &hi);
	for (k = lo; k < hi; k++)
		a[k] = b[k] + s * c[k];
}

size_t
stream_bytes_per_array(void)
{
	size_t llc = stream_llc(), want = 4 * llc;

	if (want < ((size_t)64 << 20))
		want = (size_t)64 << 20;
	if (want > ((size_t)1 << 30))
		want = (size_t)1 << 30;
	return want;
}

void
stream_setup(int threads)
{
	if (stream.a == NULL || stream.threads != threads) {
		free(stream.a);
		free(stream.b);
		free(stream.c);
		stream.n = stream_bytes_per_array() / sizeof(double);
		if ((stream.a = malloc(stream.n * sizeof(double))) == NULL ||
		    (stream.b = malloc(stream.n * sizeof(double))) == NULL ||
		    (stream.c = malloc(stream.n * sizeof(double))) == NULL)
			die("--bandwidth: out of memory for 3 x %zu MiB",
			    stream.n * sizeof(double) >> 20);
		stream.threads = threads;
		probe_run("--bandwidth", threads, stream_init_part, NULL);
	}
}

double
stream_call(int threads, double *bytes)
{
	double s = 3.0;

	stream_setup(threads);
	probe_run("--bandwidth", threads, stream_triad_part, &s);
	/* The result is read, so the loop cannot be dropped. */
	if (stream.a[stream.n - 1] != 7.0)
		die("--bandwidth: the triad computed %g, not 7",
		    stream.a[stream.n - 1]);
	*bytes = 3.0 * sizeof(double) * (double)stream.n;
	return 0;
}
