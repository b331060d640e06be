/*
 * The buffer pool of a library `autosched build` makes (compiled into it,
 * not into autosched). The lowered code allocates and frees every
 * intermediate through these three functions (finalize-memref-to-llvm's
 * use-generic-functions); each thread keeps the blocks it frees in a cache
 * of its own, by size class, and hands them out again on the next call,
 * so that a caller calling the same function again pays no page faults.
 *
 * Every block is a plain malloc'd one (a buffer a function returns is the
 * caller's to free(), as without the pool). A block's class is known from
 * malloc_usable_size, so nothing is kept for blocks out of the cache.
 * A caller may give such a buffer back with autosched_pool_free() instead,
 * so that the next call's result reuses it. Released: a thread's cache when
 * it exits, or by autosched_pool_release() (the calling thread's); all at
 * dlclose.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define POOL_MAX_BLOCKS	65536	/* a thread caches at most this many */
#define POOL_SPLIT	8	/* size classes between powers of two */

struct pool_block {
	void		*p;
	size_t		 cls;	/* its size class, in bytes */
};

/* One thread's cache; on the list of all of them (pool_all). */
struct pool_cache {
	struct pool_block	*b;
	size_t			 n, cap;
	struct pool_cache	*prev, *next;
};

static pthread_key_t pool_key;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static int pool_key_ok;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pool_cache *pool_all;
/*
 * Set when malloc gave a block whose class its usable size does not give
 * back (a malloc other than glibc's, with coarser size classes, put in by
 * the process): the pool then stands aside, every block malloc'd and freed.
 */
static int pool_off;

void	*_mlir_memref_to_llvm_alloc(size_t);
void	*_mlir_memref_to_llvm_aligned_alloc(size_t, size_t);
void	 _mlir_memref_to_llvm_free(void *);
void	 autosched_pool_release(void);
void	 autosched_pool_free(void *);

/* The distance between size classes near n (a power of two). */
static size_t
pool_step(size_t n)
{
	size_t top = 1, step;

	while (top <= n / 2)
		top *= 2;
	step = top / POOL_SPLIT;
	/*
	 * Wider than malloc's slack (what a block holds beyond its request):
	 * under 64 bytes on its heap; a page, plus the alignment, when mmap'd.
	 */
	return n >= 4096 ? (step > 8192 ? step : 8192) : (step > 64 ? step : 64);
}

/*
 * The class a request of n bytes is rounded up to. A class where the step
 * widens (4096: past it a block's slack takes pool_class_down to the wider
 * step) is rounded to the wider step, so that pool_class_down gives every
 * class back (else 4000 bytes, a 1000-float result, made a 4096 class
 * whose blocks hold 4104, and the pool stood aside for the whole process).
 */
static size_t
pool_class_up(size_t n)
{
	size_t s = pool_step(n ? n : 1), c = (n + s - 1) / s * s;
	size_t w = pool_step(c);

	return w > s ? (n + w - 1) / w * w : c;
}

/* The class of a block malloc says holds u bytes (u - class < its step). */
static size_t
pool_class_down(size_t u)
{
	size_t s = pool_step(u);

	return u / s * s;
}

static void
pool_cache_free(struct pool_cache *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->b[i].p);
	free(c->b);
	c->b = NULL;
	c->n = c->cap = 0;
}

/* A thread's end: its cache goes. */
static void
pool_thread_exit(void *arg)
{
	struct pool_cache *c = arg;

	pthread_mutex_lock(&pool_lock);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		pool_all = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&pool_lock);
	pool_cache_free(c);
	free(c);
}

static void
pool_init(void)
{
	pool_key_ok = pthread_key_create(&pool_key, pool_thread_exit) == 0;
}

/* The calling thread's cache (made on first use), or NULL: no pool. */
static struct pool_cache *
pool_cache(void)
{
	struct pool_cache *c;

	pthread_once(&pool_once, pool_init);
	if (!pool_key_ok)
		return NULL;
	if ((c = pthread_getspecific(pool_key)) != NULL)
		return c;
	if ((c = calloc(1, sizeof *c)) == NULL)
		return NULL;
	if (pthread_setspecific(pool_key, c) != 0) {
		free(c);
		return NULL;
	}
	pthread_mutex_lock(&pool_lock);
	c->next = pool_all;
	if (pool_all != NULL)
		pool_all->prev = c;
	pool_all = c;
	pthread_mutex_unlock(&pool_lock);
	return c;
}

/* A block of class cls aligned to align (a power of two), or NULL. */
static void *
pool_take(size_t cls, size_t align)
{
	struct pool_cache *c;
	size_t i;

	if (__atomic_load_n(&pool_off, __ATOMIC_RELAXED) ||
	    (c = pool_cache()) == NULL)
		return NULL;
	/* The last freed first: what a call frees, its next call asks for. */
	for (i = c->n; i-- > 0;) {
		void *p = c->b[i].p;

		if (c->b[i].cls != cls || ((uintptr_t)p & (align - 1)) != 0)
			continue;
		c->b[i] = c->b[--c->n];
		return p;
	}
	return NULL;
}

/* p, a new block of class cls: the pool stands aside if malloc's classes are not its. */
static void *
pool_new(void *p, size_t cls)
{
	if (p != NULL && pool_class_down(malloc_usable_size(p)) != cls)
		__atomic_store_n(&pool_off, 1, __ATOMIC_RELAXED);
	return p;
}

void *
_mlir_memref_to_llvm_aligned_alloc(size_t align, size_t n)
{
	size_t cls = pool_class_up(n);
	void *p;

	if (align < sizeof(void *))
		align = sizeof(void *);
	if ((p = pool_take(cls, align)) != NULL)
		return p;
	if (align > 2048)	/* its slack would outgrow the class's step */
		return aligned_alloc(align, n);
	return posix_memalign(&p, align, cls) == 0 ? pool_new(p, cls) : NULL;
}

void *
_mlir_memref_to_llvm_alloc(size_t n)
{
	size_t cls = pool_class_up(n);
	void *p;

	if ((p = pool_take(cls, 1)) != NULL)
		return p;
	return pool_new(malloc(cls), cls);
}

void
_mlir_memref_to_llvm_free(void *p)
{
	struct pool_cache *c;
	struct pool_block *nb;

	if (p == NULL)
		return;
	if (__atomic_load_n(&pool_off, __ATOMIC_RELAXED) ||
	    (c = pool_cache()) == NULL || c->n == POOL_MAX_BLOCKS) {
		free(p);
		return;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;

		if ((nb = realloc(c->b, cap * sizeof *nb)) == NULL) {
			free(p);
			return;
		}
		c->b = nb;
		c->cap = cap;
	}
	c->b[c->n].p = p;
	c->b[c->n].cls = pool_class_down(malloc_usable_size(p));
	c->n++;
}

/* A result the library returned, given back to the calling thread's cache. */
__attribute__((visibility("default"))) void
autosched_pool_free(void *p)
{
	_mlir_memref_to_llvm_free(p);
}

/* Free the blocks the calling thread's cache holds. */
__attribute__((visibility("default"))) void
autosched_pool_release(void)
{
	struct pool_cache *c;

	pthread_once(&pool_once, pool_init);
	if (pool_key_ok && (c = pthread_getspecific(pool_key)) != NULL)
		pool_cache_free(c);
}

/* dlclose (or exit): every thread's cache goes, and the key. */
__attribute__((destructor)) static void
pool_fini(void)
{
	struct pool_cache *c, *next;

	if (!pool_key_ok)
		return;
	pthread_mutex_lock(&pool_lock);
	for (c = pool_all; c != NULL; c = next) {
		next = c->next;
		pool_cache_free(c);
		free(c);
	}
	pool_all = NULL;
	pthread_mutex_unlock(&pool_lock);
	pthread_key_delete(pool_key);
	pool_key_ok = 0;
}
