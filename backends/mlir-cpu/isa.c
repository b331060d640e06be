/*
 * The vector ISA of the CPU we run on, detected at run time (CPUID and the
 * OS's enabled register state, through the compiler's cpu_supports): the
 * register-tile rules, the default space and the compile flags follow it.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backends/mlir-cpu/mlircpu_int.h"

/* The size of this CPU's cache at level (data or unified), from sysfs. */
static int64_t
cache_size(int level, int64_t fallback)
{
	char path[96], buf[32];
	FILE *f;
	int i, l;
	long v;

	for (i = 0; i < 8; i++) {
		snprintf(path, sizeof path,
		    "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		if ((f = fopen(path, "r")) == NULL)
			break;
		l = fscanf(f, "%d", &l) == 1 ? l : -1;
		fclose(f);
		snprintf(path, sizeof path,
		    "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		buf[0] = '\0';
		if (fgets(buf, sizeof buf, f) == NULL)
			buf[0] = '\0';
		fclose(f);
		if (l != level || strncmp(buf, "Instruction", 11) == 0)
			continue;
		snprintf(path, sizeof path,
		    "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		v = 0;
		if (fscanf(f, "%ld", &v) != 1)
			v = 0;
		buf[0] = '\0';
		if (fgets(buf, sizeof buf, f) == NULL)
			buf[0] = '\0';
		fclose(f);
		if (v > 0)
			return buf[0] == 'M' ? (int64_t)v << 20 :
			    buf[0] == 'K' ? (int64_t)v << 10 : (int64_t)v;
	}
	return fallback;
}

void
mlircpu_isa_detect(struct mlircpu_isa *isa)
{
	memset(isa, 0, sizeof *isa);
	__builtin_cpu_init();
	isa->fma = __builtin_cpu_supports("fma") != 0;
	isa->f16c = __builtin_cpu_supports("f16c") != 0;
	isa->avx2 = __builtin_cpu_supports("avx2") != 0;
	isa->avx512f = __builtin_cpu_supports("avx512f") != 0;
	isa->avx512bw = __builtin_cpu_supports("avx512bw") != 0;
	isa->avx512vl = __builtin_cpu_supports("avx512vl") != 0;
	isa->avx512_vnni = __builtin_cpu_supports("avx512vnni") != 0;
	isa->avx512_bf16 = __builtin_cpu_supports("avx512bf16") != 0;
	isa->avx_vnni = __builtin_cpu_supports("avxvnni") != 0;
	/*
	 * AVX-512 (F+BW+VL: what the compiler needs to keep every element type
	 * in zmm registers) gives 32 registers of 64 bytes; AVX2 16 of 32;
	 * anything older 16 of 16 (SSE2, the x86-64 baseline).
	 */
	if (isa->avx512f && isa->avx512bw && isa->avx512vl) {
		isa->name = "avx512";
		isa->vec_bytes = 64;
		isa->vec_regs = 32;
	} else if (isa->avx2) {
		isa->name = "avx2";
		isa->vec_bytes = 32;
		isa->vec_regs = 16;
	} else {
		isa->name = "sse2";
		isa->vec_bytes = 16;
		isa->vec_regs = 16;
	}
	isa->l1d = cache_size(1, 32 << 10);
	isa->l2 = cache_size(2, 512 << 10);
}

/* This CPU's, found once: compile-pool threads ask too. */
static struct mlircpu_isa isa_found;
static pthread_once_t isa_once = PTHREAD_ONCE_INIT;

static void
isa_find(void)
{
	mlircpu_isa_detect(&isa_found);
}

const struct mlircpu_isa *
mlircpu_isa(void)
{
	(void)pthread_once(&isa_once, isa_find);
	return &isa_found;
}

void
mlircpu_isa_describe(const struct mlircpu_isa *isa, char *buf, size_t len)
{
	snprintf(buf, len, "%s: %d-byte vectors, %d registers%s%s%s%s%s",
	    isa->name, isa->vec_bytes, isa->vec_regs, isa->fma ? ", fma" : "",
	    isa->f16c ? ", f16c" : "", isa->avx512_vnni ? ", avx512_vnni" :
	    isa->avx_vnni ? ", avx_vnni" : "",
	    isa->avx512_bf16 ? ", avx512_bf16" : "", "");
}
