/*
 * The buffer pool's size classes (export/runtime/pool.c, included whole):
 * for requests of every size up to 64 KiB and around every power of two
 * up to 64 MiB, plain and 64-byte aligned, a block freed is handed out
 * again for the same request, and no block makes the pool stand aside
 * (pool_off: a block whose usable size gives another class back). Exit 0
 * when all hold. Also run under ASan (glibc's classes then differ: the pool
 * may stand aside, and only reuse of what it does cache is checked).
 */
#include "export/runtime/pool.c"

#include <stdio.h>

static int fails;

/* 1 under AddressSanitizer, whose malloc_usable_size is the request. */
static int
asan(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	return 1;
#endif
#endif
	return 0;
}

static void
one(size_t n, size_t align)
{
	void *p, *q;

	p = align ? _mlir_memref_to_llvm_aligned_alloc(align, n) :
	    _mlir_memref_to_llvm_alloc(n);
	_mlir_memref_to_llvm_free(p);
	q = align ? _mlir_memref_to_llvm_aligned_alloc(align, n) :
	    _mlir_memref_to_llvm_alloc(n);
	if (!pool_off && p != q) {
		fprintf(stderr, "FAIL: %zu bytes (align %zu): not reused\n",
		    n, align);
		fails++;
	}
	if (pool_off && !asan()) {
		fprintf(stderr, "FAIL: %zu bytes (align %zu): the pool stood "
		    "aside (class %zu, usable %zu)\n", n, align,
		    pool_class_up(n), malloc_usable_size(q));
		fails++;
		pool_off = 0;
	}
	_mlir_memref_to_llvm_free(q);
}

int
main(void)
{
	size_t n, p, d;

	for (n = 1; n <= 65536 && fails < 10; n += (n < 8192 ? 8 : 40))
		one(n, n % 16 == 0 ? 64 : 0);
	for (p = 4; p <= 26 && fails < 10; p++) {
		for (d = 0; d <= 64; d += 8) {
			one(((size_t)1 << p) - d, 0);
			one(((size_t)1 << p) - d, 64);
			one(((size_t)1 << p) + d, 64);
		}
	}
	/* The size that turned it off: a 1x1000xf32 result. */
	one(4000, 64);
	one(4000, 0);
	autosched_pool_release();
	printf("pool_classes: %s\n", fails ? "FAIL" : "ok");
	return fails != 0;
}
