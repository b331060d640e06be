/*
 * The vector ISA of the CPU we run on, detected at run time (CPUID and the
 * OS's enabled register state, through the compiler's cpu_supports), or
 * the narrower one a cfg's [Env] isa or AUTOSCHED_ISA caps it to: the
 * register-tile rules, the default space and the compile flags follow it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/mlir-cpu/mlircpu_int.h"
#include "util/util.h"

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

/* The ISAs a cap may name, narrowest first: the rank of each. */
static const char *const isa_names[] = { "sse2", "avx2", "avx512", NULL };

/* The rank of name in isa_names, -1 if none. */
static int
isa_rank(const char *name)
{
	return util_name_index(isa_names, sizeof isa_names / sizeof isa_names[0],
	    name);
}

/* Give isa the registers of the ISA of rank r. */
static void
isa_shape(struct mlircpu_isa *isa, int r)
{
	isa->name = isa_names[r];
	isa->vec_bytes = r == 2 ? 64 : r == 1 ? 32 : 16;
	isa->vec_regs = r == 2 ? 32 : 16;
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
	isa_shape(isa, isa->avx512f && isa->avx512bw && isa->avx512vl ? 2 :
	    isa->avx2 ? 1 : 0);
	isa->l1d = cache_size(1, 32 << 10);
	isa->l2 = cache_size(2, 512 << 10);
}

/*
 * Lower isa to the ISA of rank r (at most its own): the features above it
 * are gone, as they are on a CPU that has only that ISA (an AVX2 CPU of the
 * x86-64-v3 level: FMA and F16C, no VNNI of either kind).
 */
static void
isa_lower(struct mlircpu_isa *isa, int r)
{
	if (r >= isa_rank(isa->name))
		return;
	isa_shape(isa, r);
	isa->avx512f = isa->avx512bw = isa->avx512vl = 0;
	isa->avx512_vnni = isa->avx512_bf16 = isa->avx_vnni = 0;
	if (r == 0)
		isa->fma = isa->f16c = isa->avx2 = 0;
}

/*
 * What this CPU has, detected once; borrowed. The tests' stand-in for a
 * narrower CPU, AUTOSCHED_TEST_CPU_ISA (an ISA's name), lowers it.
 */
static struct mlircpu_isa isa_cpu;
static pthread_once_t isa_cpu_once = PTHREAD_ONCE_INIT;

static void
isa_cpu_find(void)
{
	const char *fake;

	mlircpu_isa_detect(&isa_cpu);
	if ((fake = getenv("AUTOSCHED_TEST_CPU_ISA")) != NULL &&
	    isa_rank(fake) >= 0)
		isa_lower(&isa_cpu, isa_rank(fake));
}

/* (Found once: compile-pool threads ask too.) */
static const struct mlircpu_isa *
isa_detected(void)
{
	(void)pthread_once(&isa_cpu_once, isa_cpu_find);
	return &isa_cpu;
}

int
backend_cpu_isa_check(const char *value, char *why, size_t len)
{
	const struct mlircpu_isa *cpu = isa_detected();
	int r = isa_rank(value), top = isa_rank(cpu->name), i;
	char list[64] = "auto";

	for (i = 0; i <= top; i++) {
		strcat(list, i < top ? ", " : " or ");
		strcat(list, isa_names[i]);
	}
	if (strcmp(value, "auto") == 0 || (r >= 0 && r <= top))
		return 0;
	if (r < 0)
		snprintf(why, len, "'%.32s': not an ISA; expected %s", value,
		    list);
	else
		snprintf(why, len, "'%s' is above this CPU's widest ISA (%s); "
		    "expected %s", value, cpu->name, list);
	return -1;
}

/* The cap: set by backend_cpu_isa_set, else AUTOSCHED_ISA, else none. */
static struct mlircpu_isa isa_now;
static int isa_now_done;

void
backend_cpu_isa_set(const char *value)
{
	const char *env = getenv("AUTOSCHED_ISA");
	char why[160];

	isa_now = *isa_detected();
	if (value == NULL || *value == '\0')
		value = env != NULL && *env ? env : "auto";
	/* A value the check refuses (an unchecked AUTOSCHED_ISA) caps nothing. */
	if (strcmp(value, "auto") != 0 &&
	    backend_cpu_isa_check(value, why, sizeof why) == 0)
		isa_lower(&isa_now, isa_rank(value));
	isa_now_done = 1;
}

/* The cap of AUTOSCHED_ISA, unless backend_cpu_isa_set came first. */
static pthread_once_t isa_now_once = PTHREAD_ONCE_INIT;

static void
isa_now_default(void)
{
	if (!isa_now_done)
		backend_cpu_isa_set(NULL);
}

/*
 * The ISA kernels are built for. backend_cpu_isa_set runs on the job's
 * thread before any compile-pool thread starts; a first call from a
 * thread without it takes the default once.
 */
const struct mlircpu_isa *
mlircpu_isa(void)
{
	(void)pthread_once(&isa_now_once, isa_now_default);
	return &isa_now;
}

const char *
mlircpu_isa_march(void)
{
	const struct mlircpu_isa *isa = mlircpu_isa();

	if (strcmp(isa->name, isa_detected()->name) == 0)
		return "-march=native";
	return strcmp(isa->name, "avx2") == 0 ? "-march=x86-64-v3" :
	    "-march=x86-64";
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

const char *const *
mlircpu_isa_env(void)
{
	static const char *const avx2[] = { "AUTOSCHED_ISA=avx2",
	    "OPENBLAS_CORETYPE=Haswell", "ONEDNN_MAX_CPU_ISA=AVX2",
	    "BLIS_ARCH_TYPE=3", NULL };
	static const char *const sse2[] = { "AUTOSCHED_ISA=sse2",
	    "OPENBLAS_CORETYPE=Prescott", "ONEDNN_MAX_CPU_ISA=SSE41",
	    "BLIS_ARCH_TYPE=5", NULL };
	static const char *const none[] = { NULL };
	const char *name = mlircpu_isa()->name;

	if (strcmp(name, isa_detected()->name) == 0)
		return none;
	return strcmp(name, "avx2") == 0 ? avx2 : sse2;
}
