/*
 * Calls fixtures/pool.mlir's @net in a library built with the buffer pool
 * (`autosched build --buffers pool`) N times from this thread, then from
 * two threads at once, against a library built with --buffers malloc.
 *   pool_calls POOL.so MALLOC.so N free|give
 * Each result must equal the malloc library's bit for bit. The minor page
 * faults of calls 2..N (getrusage) are printed as "faults after the first
 * call: F" (results freed with free(), or given back with
 * autosched_pool_free() for "give"). Exit 0 when every result is equal.
 */
#include <sys/resource.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define M	512
#define K	256
#define NTHREADS	2
#define THREAD_CALLS	8

struct desc2 {
	float	*alloc, *data;
	int64_t	 off, size[2], stride[2];
};

struct desc1 {
	float	*alloc, *data;
	int64_t	 off, size, stride;
};

typedef void (*net_fn)(struct desc2 *, struct desc2 *, struct desc2 *,
    struct desc1 *);

static float x[M * K], w[K * K], b[K];
static float *want;		/* the malloc library's result */
static net_fn pool_net;
static void (*give)(void *);	/* autosched_pool_free, or free */

static void
call(net_fn f, float *out)
{
	struct desc2 dx = { x, x, 0, { M, K }, { K, 1 } };
	struct desc2 dw = { w, w, 0, { K, K }, { K, 1 } };
	struct desc1 db = { b, b, 0, K, 1 };
	struct desc2 r;

	memset(&r, 0, sizeof r);
	f(&r, &dx, &dw, &db);
	if (out != NULL)
		memcpy(out, r.data + r.off, sizeof(float) * M * K);
	give(r.alloc);
}

static long
minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* THREAD_CALLS calls; the number of results unlike want. */
static void *
calls(void *arg)
{
	float *got = malloc(sizeof(float) * M * K);
	long bad = 0;
	int i;

	(void)arg;
	for (i = 0; i < THREAD_CALLS; i++) {
		call(pool_net, got);
		bad += memcmp(got, want, sizeof(float) * M * K) != 0;
	}
	free(got);
	return (void *)(intptr_t)bad;
}

static void *
open_net(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL), *f;

	if (h == NULL || (f = dlsym(h, "_mlir_ciface_net")) == NULL) {
		fprintf(stderr, "pool_calls: %s: %s\n", path, dlerror());
		exit(2);
	}
	return f;
}

int
main(int argc, char **argv)
{
	pthread_t th[NTHREADS];
	float *got;
	long f0, bad = 0;
	int i, n;

	if (argc != 5 || (n = atoi(argv[3])) < 2) {
		fprintf(stderr, "usage: pool_calls POOL.so MALLOC.so N free|give\n");
		return 2;
	}
	for (i = 0; i < M * K; i++)
		x[i] = (float)(((long)i * 7919) % 1000) / 1000.0f - 0.5f;
	for (i = 0; i < K * K; i++)
		w[i] = (float)(((long)i * 104729) % 1000) / 8000.0f - 0.0625f;
	for (i = 0; i < K; i++)
		b[i] = (float)(i % 17) / 17.0f - 0.5f;
	want = malloc(sizeof(float) * M * K);
	got = malloc(sizeof(float) * M * K);
	give = free;
	call((net_fn)(uintptr_t)open_net(argv[2]), want);
	pool_net = (net_fn)(uintptr_t)open_net(argv[1]);
	if (strcmp(argv[4], "give") == 0 && (give = (void (*)(void *))
	    (uintptr_t)dlsym(dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD),
	    "autosched_pool_free")) == NULL) {
		fprintf(stderr, "pool_calls: %s: no autosched_pool_free\n",
		    argv[1]);
		return 2;
	}
	call(pool_net, got);
	bad += memcmp(got, want, sizeof(float) * M * K) != 0;
	f0 = minflt();
	for (i = 1; i < n; i++) {
		call(pool_net, NULL);
	}
	printf("faults after the first call: %ld in %d calls\n", minflt() - f0,
	    n - 1);
	call(pool_net, got);
	bad += memcmp(got, want, sizeof(float) * M * K) != 0;
	for (i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, calls, NULL);
	for (i = 0; i < NTHREADS; i++) {
		void *r;

		pthread_join(th[i], &r);
		bad += (long)(intptr_t)r;
	}
	printf("results unlike malloc's: %ld\n", bad);
	free(want);
	free(got);
	return bad != 0;
}
