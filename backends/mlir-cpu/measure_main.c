/*
 * autosched-measure: the child the mlir-cpu backend runs to check one kernel
 * exactly on verification data, then time it (or a reference library
 * routine) on deterministic dense data with per-process counters, dropping
 * repetitions during which the process was switched out, and print one
 * JSON line with the result.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <cblas.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backends/mlir-cpu/measure_int.h"
#include "measure/batch.h"
#include "search/space.h"
#include "trial/trial.h"

/* OpenBLAS extension, not in every cblas.h. */
void	openblas_set_num_threads(int);
char	*openblas_get_corename(void);
char	*openblas_get_config(void);

static const char *const mtype_names[] = { "f32", "f64", "f16", "bf16", "i8",
    "u8", "i32" };

/* The kernel ABI: see mlircpu.c. */
typedef void (*kernel_fn)(const void *, const void *, void *);
/* A quantized op's kernel: its zero points after acc. */
typedef void (*kernel_zp_fn)(const void *, const void *, void *, int32_t,
    int32_t);

/* Run the kernel once, with zero points za and zb for a quantized op. */
static void
kernel_run(const struct job *j, kernel_fn fn, const void *lhs,
    const void *rhs, void *acc, int32_t za, int32_t zb)
{
	if (j->zp)
		((kernel_zp_fn)(void (*)(void))fn)(lhs, rhs, acc, za, zb);
	else
		fn(lhs, rhs, acc);
}

void
die(const char *fmt, ...)
{
	va_list ap;

	fputs("autosched-measure: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* "" if sb is this user's alone (owned by the euid, no group/other write). */
static const char *
kernel_untrusted(const struct stat *sb, char *buf, size_t len)
{
	if (sb->st_uid != geteuid())
		snprintf(buf, len, "owned by uid %ld, not by this user (uid %ld)",
		    (long)sb->st_uid, (long)geteuid());
	else if (sb->st_mode & (S_IWGRP | S_IWOTH))
		snprintf(buf, len, "writable by %s (mode %04o)",
		    (sb->st_mode & S_IWGRP) ? "its group" : "others",
		    (unsigned)(sb->st_mode & 07777));
	else
		buf[0] = '\0';
	return buf;
}

/*
 * dlopen the kernel at path only if this user made it: its folder and the
 * file itself owned by the euid, writable by no one else, neither a
 * symbolic link. This runs where the measurement runs (a Slurm node too),
 * right before the load; the file is checked through the descriptor that is
 * loaded (/proc/self/fd), so it cannot be swapped in between. Dies with
 * "untrusted kernel" (an environment failure for the backend) otherwise.
 */
static void *
kernel_open(const char *path)
{
	struct stat sb;
	char why[128], proc[64], *dir, *slash;
	void *dl;
	int fd;

	dir = strdup(path);
	if (dir == NULL)
		die("out of memory");
	if ((slash = strrchr(dir, '/')) != NULL)
		*slash = '\0';
	else
		strcpy(dir, ".");
	if (lstat(dir, &sb) != 0)
		die("%s: %s", dir, strerror(errno));
	if (!S_ISDIR(sb.st_mode))
		die("%s: untrusted kernel: its folder %s is not a folder", path, dir);
	if (*kernel_untrusted(&sb, why, sizeof why) != '\0')
		die("%s: untrusted kernel: its folder %s is %s", path, dir, why);
	free(dir);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		die("%s: %s%s", path, errno == ELOOP ? "untrusted kernel: " : "",
		    errno == ELOOP ? "a symbolic link" : strerror(errno));
	if (fstat(fd, &sb) != 0)
		die("%s: %s", path, strerror(errno));
	if (!S_ISREG(sb.st_mode))
		die("%s: untrusted kernel: not a regular file", path);
	if (*kernel_untrusted(&sb, why, sizeof why) != '\0')
		die("%s: untrusted kernel: %s", path, why);
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	if ((dl = dlopen(proc, RTLD_NOW | RTLD_LOCAL)) == NULL)
		die("dlopen %s: %s", path, dlerror());
	close(fd);
	return dl;
}

size_t
mtype_size(enum mtype t)
{
	switch (t) {
	case T_F64:
		return 8;
	case T_F16:
	case T_BF16:
		return 2;
	case T_I8:
	case T_U8:
		return 1;
	default:
		return 4;
	}
}

static enum mtype
mtype_parse(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof mtype_names / sizeof mtype_names[0]; i++) {
		if (strcmp(s, mtype_names[i]) == 0)
			return (enum mtype)i;
	}
	die("unknown element type %s", s);
}

/* IEEE half <-> float, done by hand so that no compiler extension is needed. */
static float
half_to_float(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	float v;

	if (e == 0)
		v = ldexpf((float)m, -24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexpf((float)(m | 0x400), e - 25);
	return (h & 0x8000) ? -v : v;
}

/* Exact for the small integers we generate. */
static uint16_t
float_to_half(float f)
{
	uint32_t x, sign, mant;
	int e;

	memcpy(&x, &f, 4);
	sign = (x >> 16) & 0x8000;
	if (f == 0)
		return (uint16_t)sign;
	e = (int)((x >> 23) & 0xff) - 127 + 15;
	mant = (x >> 13) & 0x3ff;
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (e <= 0)
		return (uint16_t)sign;
	return (uint16_t)(sign | ((uint32_t)e << 10) | mant);
}

static float
bf16_to_float(uint16_t h)
{
	uint32_t x = (uint32_t)h << 16;
	float f;

	memcpy(&f, &x, 4);
	return f;
}

static uint16_t
float_to_bf16(float f)
{
	uint32_t x;

	memcpy(&x, &f, 4);
	return (uint16_t)(x >> 16);
}

double
elem_get(enum mtype t, const void *p, size_t i)
{
	switch (t) {
	case T_F32:
		return ((const float *)p)[i];
	case T_F64:
		return ((const double *)p)[i];
	case T_F16:
		return half_to_float(((const uint16_t *)p)[i]);
	case T_BF16:
		return bf16_to_float(((const uint16_t *)p)[i]);
	case T_I8:
		return ((const int8_t *)p)[i];
	case T_U8:
		return ((const uint8_t *)p)[i];
	case T_I32:
		return ((const int32_t *)p)[i];
	default:
		return 0;
	}
}

static void
elem_set(enum mtype t, void *p, size_t i, double v)
{
	switch (t) {
	case T_F32:
		((float *)p)[i] = (float)v;
		break;
	case T_F64:
		((double *)p)[i] = v;
		break;
	case T_F16:
		((uint16_t *)p)[i] = float_to_half((float)v);
		break;
	case T_BF16:
		((uint16_t *)p)[i] = float_to_bf16((float)v);
		break;
	case T_I8:
		((int8_t *)p)[i] = (int8_t)v;
		break;
	case T_U8:
		((uint8_t *)p)[i] = (uint8_t)(int)v;
		break;
	case T_I32:
		((int32_t *)p)[i] = (int32_t)v;
		break;
	default:
		break;
	}
}

/* Integer-valued data so that every float result is exact (as the profiler). */
static int
elem_range(enum mtype t)
{
	switch (t) {
	case T_F16:
	case T_BF16:
		return 3;
	case T_I8:
	case T_U8:
	case T_I32:
		return 4;
	default:
		return 7;
	}
}

uint64_t
data_rng(uint64_t seed)
{
	return seed * 0x9e3779b97f4a7c15ULL + 1;
}

static uint64_t
rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}


/* A zeroed, 64-byte aligned buffer of n elements of type t. */
void *
buf_alloc(enum mtype t, size_t n)
{
	size_t bytes = (n * mtype_size(t) + 63) / 64 * 64;
	void *p;

	p = aligned_alloc(64, bytes ? bytes : 64);
	if (p == NULL)
		die("out of memory (%zu bytes)", bytes);
	memset(p, 0, bytes ? bytes : 64);
	return p;
}

/* The timing data: small integers of both signs, dense (as the profiler). */
void
fill_timing(enum mtype t, void *p, size_t n, uint64_t *rng)
{
	size_t i;
	int r = elem_range(t);

	for (i = 0; i < n; i++)
		elem_set(t, p, i, (double)((int)(rng_next(rng) %
		    (uint64_t)(2 * r + 1)) - r));
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * "host": where this ran. Under Slurm the node's name (SLURMD_NODENAME, set
 * in every job step: two simulated nodes share one hostname), else ours.
 */
static void
host_name(json_t *out)
{
	const char *node = getenv("SLURMD_NODENAME");
	char buf[64];

	if (node != NULL && *node != '\0' && strlen(node) < sizeof buf)
		snprintf(buf, sizeof buf, "%s", node);
	else if (gethostname(buf, sizeof buf) != 0)
		return;
	buf[sizeof buf - 1] = '\0';
	json_object_set_new(out, "host", json_string(buf));
}

/*
 * --target: what this machine is, as the coordinator compares it before
 * sending a node work (executor slurm): the CPU model and flags of
 * /proc/cpuinfo and the libraries the measurements use, one JSON line.
 * AUTOSCHED_TEST_TARGET_NODE=N1,N2 makes those nodes report another CPU
 * (tests).
 */
static void
print_target(void)
{
	const char *fake = getenv("AUTOSCHED_TEST_TARGET_NODE");
	const char *node = getenv("SLURMD_NODENAME"), *hit;
	char line[8192], model[256] = "unknown", flags[8192] = "";
	char tool[512], *p;
	json_t *out = json_object();
	FILE *f;

	if ((f = fopen("/proc/cpuinfo", "r")) != NULL) {
		while (fgets(line, sizeof line, f) != NULL) {
			if ((p = strchr(line, ':')) == NULL)
				continue;
			p += strspn(p + 1, " \t") + 1;
			p[strcspn(p, "\n")] = '\0';
			if (strncmp(line, "model name", 10) == 0 &&
			    strcmp(model, "unknown") == 0)
				snprintf(model, sizeof model, "%s", p);
			else if (strncmp(line, "flags", 5) == 0 && !*flags)
				snprintf(flags, sizeof flags, "%s", p);
		}
		fclose(f);
	}
	if (fake != NULL && node != NULL && *node != '\0' &&
	    (hit = strstr(fake, node)) != NULL && (hit == fake ||
	    hit[-1] == ',') && (hit[strlen(node)] == '\0' ||
	    hit[strlen(node)] == ','))
		snprintf(model, sizeof model, "Test CPU (AUTOSCHED_TEST_TARGET_NODE)");
	snprintf(tool, sizeof tool, "%s", openblas_get_config());
	host_name(out);
	json_object_set_new(out, "cpu", json_string(model));
	json_object_set_new(out, "flags", json_string(flags));
	json_object_set_new(out, "libraries", json_string(tool));
	p = json_dumps(out, JSON_COMPACT);
	if (p == NULL)
		die("cannot encode the target");
	puts(p);
	free(p);
	json_decref(out);
	exit(0);
}

static void
pin(const char *list)
{
	cpu_set_t set;
	char *copy, *tok, *save;

	CPU_ZERO(&set);
	copy = strdup(list);
	if (copy == NULL)
		die("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save))
		CPU_SET(atoi(tok), &set);
	free(copy);
	if (sched_setaffinity(0, sizeof set, &set) != 0)
		die("sched_setaffinity: %s", strerror(errno));
}

/*
 * The verification data. Every value is a small integer and every product
 * of an output has the same sign, so that (1) the exact result is
 * representable in the accumulator whatever the order of the additions and
 * (2) leaving out any product changes the output: a kernel that skips a K
 * tile, a row block, a column block, a batch, or everything, is wrong by at
 * least 1 somewhere, and the check demands equality.
 *
 * Integers (i32 accumulators, wrapping arithmetic): dense; a signed i8
 * operand holds -8..-1 (read with extui it would be 248..255), a u8 operand
 * 128..255 (read with extsi it would be negative).
 * Floats: values 1..3, acc0 1..3, so an output is at most 3 + 9·c for c
 * products; dense while 3 + 9·K fits the significand (2^24 for f32, 2^11
 * for f16, 2^8 for bf16). Else sparse: with S = ceil(K / cmax) split as
 * Sa·Sb (Sb <= N, Sa <= M), lhs[i][k] != 0 iff (k / Sb) % Sa == i % Sa and
 * rhs[k][j] != 0 iff k % Sb == j % Sb. Output (i, j) then sums the k with
 * k % (Sa·Sb) == (i % Sa)·Sb + j % Sb: at least one (Sa·Sb <= K), at most
 * cmax; every k, row, column and batch feeds some output. When K is so long
 * that even M·N outputs cannot spread it (Sa > M), the kernel is not checked.
 * This is the first pass; the wide-sum check (fill_wide) follows it.
 */

static int
acc_digits(enum mtype t)
{
	switch (t) {
	case T_F64:
		return 53;
	case T_F16:
		return 11;
	case T_BF16:
		return 8;
	default:
		return 24;
	}
}

void
check_plan(const struct job *j, struct check_plan *c)
{
	long cmax, s;

	memset(c, 0, sizeof *c);
	c->data = "dense";
	c->sa = c->sb = 1;
	if (j->at == T_I32)
		return;
	cmax = ((1L << acc_digits(j->at)) - 3) / 9;
	if (j->at == T_F64 || j->k <= cmax)
		return;
	s = (j->k + cmax - 1) / cmax;
	c->sb = s < j->n ? s : j->n;
	c->sa = (s + c->sb - 1) / c->sb;
	c->data = "sparse";
	if (c->sa > j->m || c->sa * c->sb > j->k)
		c->why_not = j->at == T_BF16 ? "K too long to check exactly in "
		    "bf16 with so few outputs" : j->at == T_F16 ? "K too long "
		    "to check exactly in f16 with so few outputs" : "K too "
		    "long to check exactly with so few outputs";
}

static double
check_value(enum mtype t, uint64_t *rng)
{
	switch (t) {
	case T_I8:
		return -(double)(1 + rng_next(rng) % 8);
	case T_U8:
		return (double)(128 + rng_next(rng) % 128);
	case T_I32:
		return (double)(1 + rng_next(rng) % 7);
	default:
		return (double)(1 + rng_next(rng) % 3);
	}
}

void
fill_check(const struct job *j, const struct check_plan *c, void *lhs,
    void *rhs, void *acc0, uint64_t *rng)
{
	size_t sa = (size_t)j->m * j->k, sb = (size_t)j->k * j->n;
	size_t sc = (size_t)j->m * j->n;
	long b, r, col, kk;

	for (b = 0; b < j->batch; b++) {
		for (r = 0; r < j->m; r++)
		for (kk = 0; kk < j->k; kk++) {
			size_t ia = j->ta ? kk * j->m + r : r * j->k + kk;
			int nz = (kk / c->sb) % c->sa == r % c->sa;

			elem_set(j->lt, lhs, b * sa + ia, nz ?
			    check_value(j->lt, rng) : 0);
		}
		for (kk = 0; kk < j->k; kk++)
		for (col = 0; col < j->n; col++) {
			size_t ib = j->tb ? col * j->k + kk : kk * j->n + col;
			int nz = kk % c->sb == col % c->sb;

			elem_set(j->rt, rhs, b * sb + ib, nz ?
			    check_value(j->rt, rng) : 0);
		}
		for (r = 0; r < (long)sc; r++)
			elem_set(j->at, acc0, b * sc + r, check_value(j->at ==
			    T_I32 ? T_I32 : T_F32, rng));
	}
}

/* Copy an operand to f32 (sgemm) or f64 (dgemm), exact for our integers. */
static void *
to_blas(enum mtype t, const void *p, size_t n, int dbl)
{
	void *out;
	size_t i;

	out = malloc((n ? n : 1) * (dbl ? 8 : 4));
	if (out == NULL)
		die("out of memory");
	for (i = 0; i < n; i++) {
		if (dbl)
			((double *)out)[i] = elem_get(t, p, i);
		else
			((float *)out)[i] = (float)elem_get(t, p, i);
	}
	return out;
}

/* The largest |value| check_value gives type t (acc: the accumulator). */
static double
check_max(enum mtype t)
{
	switch (t) {
	case T_I8:
		return 8;
	case T_U8:
		return 255;
	case T_I32:
		return 7;
	default:
		return 3;
	}
}

/* The reference routines the timed reference run can use. */
enum routine { R_KERNEL, R_SGEMM, R_DGEMM, R_ONEDNN, R_BLIS };

/* C += A B, batch by batch, with OpenBLAS's sgemm or (R_DGEMM) dgemm. */
static void
blas_call(const struct job *j, enum routine r, const void *a, const void *b,
    void *c)
{
	size_t sa = (size_t)j->m * j->k, sb = (size_t)j->k * j->n;
	size_t sc = (size_t)j->m * j->n;
	long i;

	/* cblas_?gemm fn on elements T: the same call for either. */
#define BLAS_GEMM(fn, T)						\
	fn(CblasRowMajor, j->ta ? CblasTrans : CblasNoTrans,		\
	    j->tb ? CblasTrans : CblasNoTrans, j->m, j->n, j->k, 1,	\
	    (const T *)a + i * sa, j->ta ? j->m : j->k,			\
	    (const T *)b + i * sb, j->tb ? j->k : j->n, 1,		\
	    (T *)c + i * sc, j->n)
	for (i = 0; i < j->batch; i++) {
		if (r == R_DGEMM)
			BLAS_GEMM(cblas_dgemm, double);
		else
			BLAS_GEMM(cblas_sgemm, float);
	}
#undef BLAS_GEMM
}

/*
 * The exact expected result acc0 + lhs·rhs (acc0 + (lhs - za)·(rhs - zb)
 * for a quantized op), in *want (caller frees), and
 * the routine that computed it. Every partial sum is an integer no larger
 * than K·max|lhs|·max|rhs| + max|acc0|: below 2^24 OpenBLAS sgemm computes
 * it exactly in any order, else dgemm on the operands widened to f64 (exact
 * below 2^53, far beyond any K we accept). One call per batch; an i32
 * result wraps as the kernel's arithmetic does.
 */
const char *
reference_result(const struct job *j, const void *lhs, const void *rhs,
    const void *acc0, double **want)
{
	size_t sa = (size_t)j->m * j->k, sb = (size_t)j->k * j->n;
	size_t sc = (size_t)j->m * j->n, total = sc * j->batch, i;
	double za = j->zp ? j->za : 0, zb = j->zp ? j->zb : 0;
	double bound = (double)j->k * (check_max(j->lt) + fabs(za)) *
	    (check_max(j->rt) + fabs(zb)) + check_max(j->at);
	int dbl = bound >= 16777216.0;
	void *a, *bm, *cm;
	double *w;

	a = to_blas(j->lt, lhs, sa * j->batch, dbl);
	bm = to_blas(j->rt, rhs, sb * j->batch, dbl);
	/* A quantized op: its zero points taken off, exactly (integers). */
	for (i = 0; j->zp && i < sa * (size_t)j->batch; i++) {
		if (dbl)
			((double *)a)[i] -= za;
		else
			((float *)a)[i] -= (float)za;
	}
	for (i = 0; j->zp && i < sb * (size_t)j->batch; i++) {
		if (dbl)
			((double *)bm)[i] -= zb;
		else
			((float *)bm)[i] -= (float)zb;
	}
	cm = to_blas(j->at, acc0, total, dbl);
	blas_call(j, dbl ? R_DGEMM : R_SGEMM, a, bm, cm);
	w = malloc((total ? total : 1) * sizeof *w);
	if (w == NULL)
		die("out of memory");
	for (i = 0; i < total; i++) {
		w[i] = dbl ? ((double *)cm)[i] : ((float *)cm)[i];
		if (j->at == T_I32)
			w[i] = (double)(int32_t)(uint32_t)(int64_t)w[i];
	}
	free(a);
	free(bm);
	free(cm);
	*want = w;
	return dbl ? "openblas-dgemm" : "openblas-sgemm";
}

/*
 * The wide-sum check: a second verification pass, which a kernel that
 * accumulates in a type narrower than the op's accumulator fails at any K
 * from 16 (floats: from 1), where the first pass's sums may all fit the
 * narrow type (floats: 3 + 9·K, 147 at K = 16). Every partial sum is an
 * integer that the op's own accumulator holds exactly, in any order of the
 * additions; every result leaves the narrow type.
 *
 * Floats: row i has one odd product, at k0(i), of two odd w-bit integers
 * (above 2^(2w-2)); every other product is even (lhs 2 or 4 against rhs
 * 1..3, or 0) and acc0 is even (2, 4, 6). Every output is then odd and
 * above 2^(2w-2), and a type of p significant bits holds no odd integer
 * above 2^p. A kernel that keeps the sum in it is wrong; so is one that
 * sums K tiles in it and adds them up in the accumulator's type: the tile
 * holding k0(i) ends at an even value (at least 2^p, as sums of one sign
 * only grow), the others at even values, so the result has acc0's parity,
 * not the answer's. Per accumulator:
 *	f64: w = 13, odd products in (2^24, 2^26): caught in f32;
 *	f32: w = 7, in (2^12, 2^14): caught in f16 and bf16;
 *	f16: w = 5, in (2^8, 2^10): caught in bf16, exact in f16 (< 2^11);
 *	bf16: no check. No float type is narrower (f16's significand is
 *	wider), so a bf16 accumulator has the first pass only.
 * An f16 or bf16 accumulator that rounds every step in its own type is
 * right here, as in the first pass: every partial sum is below 2^digits.
 * For that, small products (at most 12) sit only at every stride-th k:
 * acc0 + the odd product + the small ones stay below 2^digits(acc) (f16:
 * at most 84 of them). The k0(i) spread over K (one in each run of K/M
 * when M < K), so that a kernel narrowing only some K tiles is caught too;
 * lhs is 0 at another row's k0, whose rhs row holds odd w-bit values.
 *
 * Integers (i32 accumulators): operands 97..128 in magnitude (i8
 * -128..-97, u8 128..255), one value per lhs row, and |acc0| above 2^15
 * with the products' sign: four products leave i16 (wrapping or
 * saturating), acc0 alone does. The i32 result wraps, as in the first pass.
 *
 * The answer is closed-form, acc0 + lhs(i,k0)·rhs(k0,j) + a(i)·S(j) with
 * a(i) row i's small lhs value and S(j) column j's rhs summed over the small
 * k: integers below 2^53, exact in doubles, and no second library matmul.
 */
struct wide_plan {
	int		 bits;		/* floats: w above; 0: integers */
	long		 stride;	/* floats: small products at k % stride == 0 */
};

/* Significant bits of float type t, 0 for integers. */
static int
float_digits(enum mtype t)
{
	switch (t) {
	case T_F64:
		return 53;
	case T_F32:
		return 24;
	case T_F16:
		return 11;
	case T_BF16:
		return 8;
	default:
		return 0;
	}
}

/* Plan the wide-sum check of job j in *w; -1 if it has none. */
static int
wide_plan(const struct job *j, struct wide_plan *w)
{
	double small;

	memset(w, 0, sizeof *w);
	if (j->at == T_I32)
		return (j->lt == T_I8 || j->lt == T_U8) &&
		    (j->rt == T_I8 || j->rt == T_U8) ? 0 : -1;
	w->bits = j->at == T_F64 ? 13 : j->at == T_F32 ? 7 :
	    j->at == T_F16 ? 5 : 0;
	if (w->bits == 0 || float_digits(j->lt) < w->bits ||
	    float_digits(j->rt) < w->bits)
		return -1;
	/* Below 2^digits: acc0 <= 6, the odd product < 2^(2w), 12 each. */
	small = floor((ldexp(1, float_digits(j->at)) - 1 - 6 -
	    ldexp(1, 2 * w->bits)) / 12);
	w->stride = small >= (double)j->k ? 1 :
	    (long)((double)j->k / small) + 1;
	return 0;
}

/* An odd integer of exactly bits bits. */
static double
wide_odd(int bits, uint64_t *rng)
{
	return ldexp(1, bits - 1) + 1 +
	    2 * (double)(rng_next(rng) % (1ULL << (bits - 2)));
}

/* An integer operand of 97..128 in magnitude (u8: 128..255). */
static double
wide_int(enum mtype t, uint64_t *rng)
{
	return t == T_U8 ? (double)(128 + rng_next(rng) % 128) :
	    -(double)(97 + rng_next(rng) % 32);
}

/* The per-row choices of one batch of the wide-sum data (fill_wide's). */
struct wide_rows {
	double		*a;	/* each row's small value (bits 0: operand) */
	double		*big;	/* each row's odd big value at k0 */
	long		*k0;	/* each row's column of its big value */
	double		*s;	/* each column's sum of the rhs the a's meet */
	unsigned char	*isk0;	/* k is some row's k0 */
};

/* Choose the rows' values of one batch in rw, drawing from rng. */
static void
wide_choose(const struct job *j, const struct wide_plan *w,
    struct wide_rows *rw, uint64_t *rng)
{
	uint64_t off = rng_next(rng) % (uint64_t)j->k;
	long r, q = j->m < j->k ? j->k / j->m : 1;

	memset(rw->isk0, 0, (size_t)j->k);
	for (r = 0; r < j->m; r++) {
		if (w->bits == 0) {
			rw->a[r] = wide_int(j->lt, rng);
			continue;
		}
		rw->a[r] = 2 * (double)(1 + rng_next(rng) % 2);
		rw->big[r] = wide_odd(w->bits, rng);
		rw->k0[r] = j->m >= j->k ? (long)((r + off) % (uint64_t)j->k) :
		    r * j->k / j->m + (long)(rng_next(rng) % (uint64_t)q);
		rw->isk0[rw->k0[r]] = 1;
	}
}

/* Write batch b of lhs from the rows' choices. */
static void
wide_lhs(const struct job *j, const struct wide_plan *w,
    const struct wide_rows *rw, void *lhs, long b)
{
	size_t sa = (size_t)j->m * j->k;
	long r, kk;
	double v;

	for (r = 0; r < j->m; r++)
	for (kk = 0; kk < j->k; kk++) {
		size_t ia = j->ta ? kk * j->m + r : r * j->k + kk;

		if (w->bits == 0)
			v = rw->a[r];
		else if (kk == rw->k0[r])
			v = rw->big[r];
		else
			v = !rw->isk0[kk] && kk % w->stride == 0 ? rw->a[r] : 0;
		elem_set(j->lt, lhs, b * sa + ia, v);
	}
}

/* Write batch b of rhs, drawing from rng, and sum its columns in rw->s. */
static void
wide_rhs(const struct job *j, const struct wide_plan *w, struct wide_rows *rw,
    void *rhs, long b, uint64_t *rng)
{
	size_t sb = (size_t)j->k * j->n;
	long kk, col;
	double v;

	for (col = 0; col < j->n; col++)
		rw->s[col] = 0;
	for (kk = 0; kk < j->k; kk++)
	for (col = 0; col < j->n; col++) {
		size_t ib = j->tb ? col * j->k + kk : kk * j->n + col;

		if (w->bits == 0)
			v = wide_int(j->rt, rng);
		else if (rw->isk0[kk])
			v = wide_odd(w->bits, rng);
		else
			v = (double)(1 + rng_next(rng) % 3);
		elem_set(j->rt, rhs, b * sb + ib, v);
		if (w->bits == 0 || (!rw->isk0[kk] && kk % w->stride == 0))
			rw->s[col] += v;
	}
}

/* Write batch b of acc0, drawing from rng, and its answer in out. */
static void
wide_acc(const struct job *j, const struct wide_plan *w,
    const struct wide_rows *rw, const void *rhs, void *acc0, double *out,
    long b, uint64_t *rng)
{
	size_t sb = (size_t)j->k * j->n, sc = (size_t)j->m * j->n;
	int sign = (j->lt == T_I8 ? -1 : 1) * (j->rt == T_I8 ? -1 : 1);
	long r, col;
	double v;

	for (r = 0; r < j->m; r++)
	for (col = 0; col < j->n; col++) {
		size_t ic = b * sc + r * j->n + col, ib;

		v = w->bits == 0 ? sign * (double)(32769 +
		    rng_next(rng) % 7) : 2 * (double)(1 + rng_next(rng) % 3);
		elem_set(j->at, acc0, ic, v);
		v += rw->a[r] * rw->s[col];
		if (w->bits != 0) {
			ib = j->tb ? col * j->k + rw->k0[r] :
			    rw->k0[r] * j->n + col;
			v += rw->big[r] * elem_get(j->rt, rhs, b * sb + ib);
		} else
			v = (double)(int32_t)(uint32_t)(int64_t)v;
		out[ic] = v;
	}
}

/*
 * Fill lhs, rhs and acc0 with the wide-sum data of plan w, and put the
 * answer in *want (caller frees). Every value is exact in its type
 * (wide_plan checked the operands' digits).
 */
static void
fill_wide(const struct job *j, const struct wide_plan *w, void *lhs,
    void *rhs, void *acc0, uint64_t *rng, double **want)
{
	size_t total = (size_t)j->m * j->n * (size_t)j->batch;
	struct wide_rows rw;
	double *out;
	long b;

	rw.a = malloc((size_t)j->m * sizeof *rw.a);
	rw.big = malloc((size_t)j->m * sizeof *rw.big);
	rw.k0 = malloc((size_t)j->m * sizeof *rw.k0);
	rw.s = malloc((size_t)j->n * sizeof *rw.s);
	rw.isk0 = malloc((size_t)j->k);
	out = malloc((total ? total : 1) * sizeof *out);
	if (rw.a == NULL || rw.big == NULL || rw.k0 == NULL || rw.s == NULL ||
	    rw.isk0 == NULL || out == NULL)
		die("out of memory");
	for (b = 0; b < j->batch; b++) {
		wide_choose(j, w, &rw, rng);
		wide_lhs(j, w, &rw, lhs, b);
		wide_rhs(j, w, &rw, rhs, b, rng);
		wide_acc(j, w, &rw, rhs, acc0, out, b, rng);
	}
	free(rw.a);
	free(rw.big);
	free(rw.k0);
	free(rw.s);
	free(rw.isk0);
	*want = out;
}

/* The largest |got - want| over n outputs; NaN when one is NaN. */
static double
result_error(enum mtype t, const void *acc, const double *want, size_t n)
{
	double err = 0, d;
	size_t i;

	for (i = 0; i < n; i++) {
		d = fabs(elem_get(t, acc, i) - want[i]);
		if (!(d <= err))
			err = d;	/* also catches NaN */
	}
	return err;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sort the n > 0 times and return their median. */
static double
times_median(double *times, int n)
{
	qsort(times, (size_t)n, sizeof *times, cmp_double);
	return n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
}

static struct blis *blis_ref;	/* the BLIS peer, when --ref blis */
/* A kernel's conv input (--kernel, --conv), copied by im2col per call. */
static float *conv_src;

static void
usage(void)
{
	fprintf(stderr, "usage: autosched-measure [--kernel SO | --ref "
	    "auto|openblas|onednn|blis | --blas] --shape BxMxNxK --types L,R,A "
	    "[--trans TA,TB] [--threads N] [--warmup N] [--min-time S] "
	    "[--reps MIN,MAX] [--seed N] [--verify 0|1] [--cpus LIST] "
	    "[--zero-points ZA,ZB]\n"
	    "           [--fault crash|hang|wrong|nothing|sleep|im2col]\n"
	    "       autosched-measure --ref auto|onednn | --kernel SO  --conv nhwc|nchw:N,H,W,C,F,KH,KW,SH,SW,DH,DW,PT,PB,PL,PR\n"
	    "           --shape BxMxNxK --types f32,f32,f32 [timing options as above]\n"
	    "       autosched-measure --peak|--bandwidth [--threads N] [--min-time S] [--cpus LIST]\n"
	    "       autosched-measure --npy-inputs DIR | --npy-check OUT.npy --shape BxMxNxK\n"
	    "           --types L,R,A [--trans TA,TB] [--batched 0|1] [--seed N] [--verify 0|1]\n"
	    "       autosched-measure --target\n"
	    "       autosched-measure --batch DIR\n"
	    "       autosched-measure --hang\n");
	exit(2);
}

/*
 * The integer value v of option opt, in [min, max] (the cfg's bounds), or
 * exit 2 saying what was expected.
 */
static int64_t
arg_int(const char *opt, const char *v, int64_t min, int64_t max)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(v, &end, 10);
	if (*v == '\0' || *end != '\0' || (errno != 0 && errno != ERANGE))
		die("%s: '%.40s' is not an integer; expected %" PRId64 "..%"
		    PRId64, opt, v, min, max);
	if (errno == ERANGE || x < min || x > max)
		die("%s: %.40s is out of range; expected %" PRId64 "..%" PRId64,
		    opt, v, min, max);
	return (int64_t)x;
}

/* The seconds of option opt, finite and in [min, max], or exit 2. */
static double
arg_seconds(const char *opt, const char *v, double min, double max)
{
	char *end;
	double x;

	x = strtod(v, &end);
	if (*v == '\0' || *end != '\0' || !isfinite(x))
		die("%s: '%.40s' is not a number; expected %g..%g seconds", opt,
		    v, min, max);
	if (x < min || x > max)
		die("%s: %.40s is out of range; expected %g..%g seconds", opt, v,
		    min, max);
	return x;
}

/* "A,B": two integers of [min, max], or exit 2. */
static void
arg_pair(const char *opt, const char *v, int64_t min, int64_t max,
    int64_t *a, int64_t *b)
{
	const char *comma = strchr(v, ',');
	char first[64];

	if (comma == NULL || (size_t)(comma - v) >= sizeof first)
		die("%s: '%.40s' is not two integers A,B; expected each %" PRId64
		    "..%" PRId64, opt, v, min, max);
	memcpy(first, v, (size_t)(comma - v));
	first[comma - v] = '\0';
	*a = arg_int(opt, first, min, max);
	*b = arg_int(opt, comma + 1, min, max);
}

/* The job's defaults, before any option. */
static void
job_defaults(struct job *j)
{
	memset(j, 0, sizeof *j);
	j->lt = j->rt = j->at = T_F32;
	j->threads = 1;
	j->warmup = 1;
	j->min_reps = 3;
	j->max_reps = 1000;
	j->min_time = 0.2;
	j->seed = 42;
	j->verify = 1;
}

/*
 * Option o if it takes no value: act on it and return 1 (setting *ref for
 * a reference run), or 0 if o is not one of them.
 */
static int
arg_flag(const char *o, struct job *j, int *ref)
{
	if (strcmp(o, "--hang") == 0) {
		/* Stands in for a compiler that never returns. */
		for (;;)
			pause();
	}
	if (strcmp(o, "--target") == 0)
		print_target();
	if (strcmp(o, "--peak") == 0 || strcmp(o, "--bandwidth") == 0) {
		/* The probes: "references" that need no shape. */
		if (o[2] == 'p')
			j->peak = 1;
		else
			j->bandwidth = 1;
		*ref = 1;
		j->batch = j->m = j->n = j->k = 1;
		return 1;
	}
	if (strcmp(o, "--blas") == 0) {
		/* The old spelling of --ref openblas. */
		*ref = 1;
		j->ref = REF_OPENBLAS;
		return 1;
	}
	return 0;
}

/* Option o with its value v into *j (*ref: a reference run), or exit 2. */
static void
arg_value(const char *o, const char *v, struct job *j, int *ref)
{
	int64_t x, y;
	char l[16], r[16], a[16];

	if (strcmp(o, "--kernel") == 0)
		j->kernel = v;
	else if (strcmp(o, "--ref") == 0) {
		*ref = 1;
		if (strcmp(v, "auto") == 0)
			j->ref = REF_AUTO;
		else if (strcmp(v, "openblas") == 0)
			j->ref = REF_OPENBLAS;
		else if (strcmp(v, "onednn") == 0)
			j->ref = REF_ONEDNN;
		else if (strcmp(v, "blis") == 0)
			j->ref = REF_BLIS;
		else
			usage();
	} else if (strcmp(o, "--shape") == 0) {
		if (sscanf(v, "%ldx%ldx%ldx%ld", &j->batch, &j->m,
		    &j->n, &j->k) != 4)
			usage();
	} else if (strcmp(o, "--types") == 0) {
		if (sscanf(v, "%15[^,],%15[^,],%15s", l, r, a) != 3)
			usage();
		j->lt = mtype_parse(l);
		j->rt = mtype_parse(r);
		j->at = mtype_parse(a);
	} else if (strcmp(o, "--trans") == 0) {
		arg_pair(o, v, 0, 1, &x, &y);
		j->ta = (int)x;
		j->tb = (int)y;
	} else if (strcmp(o, "--threads") == 0)
		j->threads = (int)arg_int(o, v, 1,
		    SPACE_VALUE_MAX < INT_MAX ? SPACE_VALUE_MAX : INT_MAX);
	else if (strcmp(o, "--warmup") == 0)
		j->warmup = (int)arg_int(o, v, 0, TRIAL_WARMUP_MAX);
	else if (strcmp(o, "--min-time") == 0)
		j->min_time = arg_seconds(o, v, 0, TRIAL_MIN_TIME_MAX);
	else if (strcmp(o, "--reps") == 0) {
		arg_pair(o, v, 1, TRIAL_REPS_MAX, &x, &y);
		if (y < x)
			die("--reps: %s: MAX is below MIN; expected "
			    "MIN,MAX with 1 <= MIN <= MAX <= %d", v,
			    TRIAL_REPS_MAX);
		j->min_reps = (int)x;
		j->max_reps = (int)y;
	} else if (strcmp(o, "--seed") == 0)
		j->seed = (uint64_t)arg_int(o, v, 0, TRIAL_SEED_MAX);
	else if (strcmp(o, "--verify") == 0)
		j->verify = (int)arg_int(o, v, 0, 1);
	else if (strcmp(o, "--cpus") == 0)
		j->cpus = v;
	else if (strcmp(o, "--npy-inputs") == 0) {
		j->npy_inputs = v;
		*ref = 1;
	} else if (strcmp(o, "--npy-check") == 0) {
		j->npy_check = v;
		*ref = 1;
	} else if (strcmp(o, "--batched") == 0)
		j->batched = (int)arg_int(o, v, 0, 1);
	else if (strcmp(o, "--conv") == 0) {
		if (conv_parse(v, &j->conv) != 0)
			die("--conv: %s: expected nhwc|nchw: then N,H,W,C,F,KH,"
			    "KW,SH,SW,DH,DW (each 1 to 2^20) and the padding "
			    "PT,PB,PL,PR (0 to 2^16), a window that fits", v);
	} else if (strcmp(o, "--fault") == 0)
		j->fault = v;
	else if (strcmp(o, "--zero-points") == 0) {
		arg_pair(o, v, -128, 255, &x, &y);
		j->zp = 1;
		j->za = (int32_t)x;
		j->zb = (int32_t)y;
	} else
		usage();
}

/* The job of the command line, or exit 2 saying what was wrong. */
static void
parse_args(int argc, char **argv, struct job *j)
{
	int i, ref = 0;

	job_defaults(j);
	for (i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (arg_flag(o, j, &ref))
			continue;
		if (v == NULL)
			usage();
		i++;
		arg_value(o, v, j, &ref);
	}
	if ((j->kernel == NULL) == (ref == 0))
		usage();
	if (j->conv.set && j->kernel == NULL && j->ref != REF_AUTO &&
	    j->ref != REF_ONEDNN)
		die("--conv: a reference run times a convolution with --ref "
		    "auto or onednn only");
	if (j->conv.set && j->kernel != NULL && (j->lt != T_F32 ||
	    j->rt != T_F32 || j->at != T_F32 || j->ta || j->tb ||
	    !conv_gemm_matches(&j->conv, j->batch, j->m, j->n, j->k)))
		die("--conv with --kernel: the kernel must be the conv's f32 "
		    "GEMM, untransposed: --shape 1x(N*OH*OW)xFx(KH*KW*C) "
		    "(NCHW: 1xFx(OH*OW)x(C*KH*KW))");
	if (j->batch < 1 || j->m < 1 || j->n < 1 || j->k < 1 ||
	    j->batch > (1L << 20) || j->m > (1L << 24) || j->n > (1L << 24) ||
	    j->k > (1L << 24))
		die("bad shape");
}

/*
 * The element counts of job j's lhs, rhs and acc: its matmul's, or for a
 * convolution (--conv) its input's, filter's and output's.
 */
static void
bufs_count(const struct job *j, size_t n[3])
{
	if (j->conv.set && j->kernel == NULL) {
		conv_sizes(&j->conv, n);
		return;
	}
	n[0] = (size_t)j->batch * j->m * j->k;
	n[1] = (size_t)j->batch * j->k * j->n;
	n[2] = (size_t)j->batch * j->m * j->n;
}

/* lhs, rhs and acc of job j's shape and types in bufs (caller frees). */
static void
bufs_alloc(const struct job *j, void **bufs)
{
	size_t n[3];

	bufs_count(j, n);
	bufs[0] = buf_alloc(j->lt, n[0]);
	bufs[1] = buf_alloc(j->rt, n[1]);
	bufs[2] = buf_alloc(j->at, n[2]);
}

/*
 * The convolution reference (--conv): oneDNN's convolution in bufs, else
 * -1 with *why and j->conv unset, so that the matmul of its im2col is
 * what is timed.
 */
static int
ref_conv(struct job *j, struct onednn **dn, void **bufs, char *name,
    size_t namelen, const char **why)
{
	bufs_alloc(j, bufs);
	*dn = onednn_conv_open(j, bufs[0], bufs[1], bufs[2], name, namelen,
	    why);
	if (*dn != NULL)
		return 0;
	if (j->ref == REF_ONEDNN)
		die("--ref onednn --conv: %s", *why);
	free(bufs[0]);
	free(bufs[1]);
	free(bufs[2]);
	j->conv.set = 0;
	return -1;
}

/*
 * The reference run: which routine times the op, named in *name, and
 * whether it computes in the op's own precision. auto: sgemm for f32,
 * dgemm for f64, oneDNN in the op's types where it has an optimised
 * implementation (int8, bf16, …); else the closest: oneDNN with a u8 rhs
 * read as s8 for u8·u8, or sgemm. The types of *j become those the routine
 * reads.
 */
static enum routine
ref_choose(struct job *j, struct onednn **dn, void **bufs, char *name,
    size_t namelen, int *same, const char **note)
{
	int f32 = j->lt == T_F32 && j->rt == T_F32 && j->at == T_F32;
	int f64 = j->lt == T_F64 && j->rt == T_F64 && j->at == T_F64;
	const char *why = NULL;
	enum mtype rt = j->rt;

	*note = NULL;
	if (j->conv.set) {
		if (ref_conv(j, dn, bufs, name, namelen, note) == 0) {
			*same = 1;
			return R_ONEDNN;
		}
	}
	if (j->ref == REF_BLIS) {
		bufs_alloc(j, bufs);
		if ((blis_ref = blis_open(j, bufs[0], bufs[1], bufs[2], name,
		    namelen, &why)) == NULL)
			die("--ref blis: %s", why);
		*same = 1;
		return R_BLIS;
	}
	if (j->ref == REF_ONEDNN || (j->ref == REF_AUTO && !f32 && !f64)) {
		bufs_alloc(j, bufs);
		*dn = onednn_open(j, bufs[0], bufs[1], bufs[2], name, namelen,
		    &why);
		*same = *dn != NULL;
		if (*dn == NULL && j->ref == REF_AUTO && j->rt == T_U8) {
			j->rt = T_I8;
			*dn = onednn_open(j, bufs[0], bufs[1], bufs[2], name,
			    namelen, &why);
			if (*dn != NULL)
				strncat(name, " rhs u8 read as s8",
				    namelen - strlen(name) - 1);
			else
				j->rt = rt;
		}
		if (*dn != NULL)
			return R_ONEDNN;
		if (j->ref == REF_ONEDNN)
			die("--ref onednn: %s", why);
		if (*note == NULL)
			*note = why;
		free(bufs[0]);
		free(bufs[1]);
		free(bufs[2]);
	}
	if (f64) {
		/* Its kernels by name: OPENBLAS_CORETYPE may have chosen older ones. */
		snprintf(name, namelen, "openblas:dgemm[%s]", openblas_get_corename());
		*same = 1;
	} else {
		snprintf(name, namelen, "openblas:sgemm[%s]", openblas_get_corename());
		*same = f32;
		j->lt = j->rt = j->at = T_F32;
	}
	bufs_alloc(j, bufs);
	return f64 ? R_DGEMM : R_SGEMM;
}

static void
call(const struct job *j, enum routine r, kernel_fn fn, struct onednn *dn,
    void *lhs, void *rhs, void *acc)
{
	if (r == R_KERNEL && conv_src != NULL)
		conv_im2col(&j->conv, conv_src, j->conv.nchw ? rhs : lhs,
		    j->threads);
	if (r == R_KERNEL)
		kernel_run(j, fn, lhs, rhs, acc, j->za, j->zb);
	else if (r == R_ONEDNN)
		onednn_run(dn);
	else if (r == R_BLIS)
		blis_run(blis_ref);
	else
		blas_call(j, r, lhs, rhs, acc);
}

/*
 * --peak and --bandwidth: the FMA probe or the STREAM triad timed like
 * everything else (warm-up, repetitions until min_time, median), printed
 * as one JSON line with its GFLOP/s or GB/s.
 */
static int
probe_main(const struct job *j)
{
	double times[4096], t0, total = 0, work = 0, med, g;
	double (*probe)(int, double *) = j->peak ? peak_call : stream_call;
	const char *routine = !j->peak ? "stream:triad" :
	    peak_lanes() == 16 ? "peak:fma-zmm" : "peak:fma-ymm";
	json_t *out;
	char *line;
	int reps = 0, i;

	if (j->peak && peak_lanes() == 0)
		die("--peak: this CPU has no FMA");
	if (!j->peak)
		stream_setup(j->threads);	/* never timed */
	for (i = 0; i < j->warmup; i++)
		probe(j->threads, &work);
	while (reps < 4096 && reps < j->max_reps &&
	    (reps < j->min_reps || total < j->min_time)) {
		t0 = now();
		probe(j->threads, &work);
		times[reps] = now() - t0;
		total += times[reps++];
	}
	med = times_median(times, reps);
	g = work / med / 1e9;
	out = json_pack("{s:s, s:s, s:i, s:i, s:f, s:f}", "status", "ok",
	    "routine", routine, "threads", j->threads, "reps", reps,
	    j->peak ? "gflops" : "gbytes_s", g, "median_ms", med * 1e3);
	if (!j->peak)
		json_object_set_new(out, "array_mib",
		    json_integer((json_int_t)(stream_bytes_per_array() >> 20)));
	line = json_dumps(out, JSON_COMPACT);
	puts(line);
	free(line);
	json_decref(out);
	return 0;
}

/*
 * What one measurement found: the reference routine (a reference run), the
 * check's verdict, then the timed repetitions and their counters.
 */
struct outcome {
	char		 ref_name[128];
	int		 same;		/* the reference's own precision */
	const char	*ref_note;
	int		 verified, wrong;
	int		 with_im2col;	/* a kernel's time includes it */
	double		 max_err;
	char		 checked_by[96];
	const char	*not_verified;	/* why it could not be checked */
	double		*times;		/* ms; room for max_reps, owned */
	int		 reps, dropped, disturbed_kept;
	uint64_t	 csum[CTR_COUNT];
	uint32_t	 chave;		/* counters read in every kept rep */
};

/* Load the kernel at path: its dispatch, and its handle in *dl. */
static kernel_fn
kernel_load(const char *path, void **dl)
{
	kernel_fn fn;

	*dl = kernel_open(path);
	fn = (kernel_fn)dlsym(*dl, "dispatch");
	if (fn == NULL)
		die("dlsym dispatch: %s", dlerror());
	return fn;
}

/* The test-only faults that strike before any data: crash and hang. */
static void
fault_early(const struct job *j)
{
	if (j->fault != NULL && strcmp(j->fault, "crash") == 0) {
		/* Die by the signal even where a sanitizer would catch it. */
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
	}
	if (j->fault != NULL && strcmp(j->fault, "hang") == 0) {
		for (;;)
			pause();
	}
}

/*
 * The wide-sum check of kernel fn, where job j has one, in lhs, rhs and
 * acc (acc0 is scratch); the verdict into *o.
 */
static void
verify_wide(const struct job *j, kernel_fn fn, void *lhs, void *rhs,
    void *acc, void *acc0, uint64_t *rng, struct outcome *o)
{
	size_t nc = (size_t)j->batch * j->m * j->n;
	struct wide_plan wide;
	double *want;

	if (wide_plan(j, &wide) != 0)
		return;
	fill_wide(j, &wide, lhs, rhs, acc0, rng, &want);
	memcpy(acc, acc0, nc * mtype_size(j->at));
	/* (A quantized op without its zero points.) */
	kernel_run(j, fn, lhs, rhs, acc, 0, 0);
	o->max_err = result_error(j->at, acc, want, nc);
	free(want);
	o->wrong = !(o->max_err == 0);
	strncat(o->checked_by, "+closed-form(wide-sum data)",
	    sizeof o->checked_by - strlen(o->checked_by) - 1);
}

/*
 * Kernel fn, the GEMM of job j's conv (--conv), checked as that conv: the
 * harness's im2col of a small-integer input into its operand, the filter
 * as the other, against the direct loop; the verdict into *o.
 */
static void
verify_conv_kernel(const struct job *j, kernel_fn fn, void *lhs, void *rhs,
    void *acc, uint64_t *rng, struct outcome *o)
{
	float *src, *acc0, *wei = j->conv.nchw ? lhs : rhs;
	struct conv_geom copy = j->conv;
	size_t n[3], i;
	double *want, err;

	conv_sizes(&j->conv, n);
	if (j->conv.kh * j->conv.kw * j->conv.c > ((1L << 24) - 3) / 9)
		return;		/* the GEMM's checks said so already */
	/* Test-only "im2col": a copy that reads each window a row too low. */
	if (j->fault != NULL && strcmp(j->fault, "im2col") == 0)
		copy.pad[0]--;
	src = buf_alloc(T_F32, n[0]);
	acc0 = buf_alloc(T_F32, n[2]);
	for (i = 0; i < n[0]; i++)
		src[i] = (float)check_value(T_F32, rng);
	for (i = 0; i < n[1]; i++)
		wei[i] = (float)check_value(T_F32, rng);
	for (i = 0; i < n[2]; i++)
		acc0[i] = (float)check_value(T_F32, rng);
	conv_im2col(&copy, src, j->conv.nchw ? rhs : lhs, j->threads);
	memcpy(acc, acc0, n[2] * sizeof *acc0);
	kernel_run(j, fn, lhs, rhs, acc, 0, 0);
	conv_direct(&j->conv, src, wei, acc0, &want);
	err = result_error(T_F32, acc, want, n[2]);
	if (!(err <= o->max_err))
		o->max_err = err;
	o->wrong = !(o->max_err == 0);
	strncat(o->checked_by, "+direct conv loop(im2col)",
	    sizeof o->checked_by - strlen(o->checked_by) - 1);
	free(want);
	free(src);
	free(acc0);
}

/*
 * Check kernel fn exactly on the verification data of job j, then on the
 * wide-sum data where the op has it, then as its conv (--conv), in lhs,
 * rhs and acc; the verdict into *o.
 */
static void
verify(const struct job *j, kernel_fn fn, void *lhs, void *rhs, void *acc,
    uint64_t *rng, struct outcome *o)
{
	size_t nc = (size_t)j->batch * j->m * j->n;
	struct check_plan plan = { 0 };
	const char *routine_name;
	double *want;
	void *acc0;

	check_plan(j, &plan);
	if (plan.why_not != NULL) {
		snprintf(o->checked_by, sizeof o->checked_by, "none");
		o->not_verified = plan.why_not;
		return;
	}
	acc0 = buf_alloc(j->at, nc);
	fill_check(j, &plan, lhs, rhs, acc0, rng);
	memcpy(acc, acc0, nc * mtype_size(j->at));
	/* Test-only "nothing": a kernel that leaves acc alone. */
	if (j->fault == NULL || strcmp(j->fault, "nothing") != 0)
		kernel_run(j, fn, lhs, rhs, acc, j->za, j->zb);
	if (j->fault != NULL && strcmp(j->fault, "wrong") == 0) {
		/* Test-only: one output off (-(|v|+1) != v). */
		double v = elem_get(j->at, acc, nc / 2);

		elem_set(j->at, acc, nc / 2, -(fabs(v) + 1));
	}
	routine_name = reference_result(j, lhs, rhs, acc0, &want);
	o->max_err = result_error(j->at, acc, want, nc);
	free(want);
	o->verified = 1;
	o->wrong = !(o->max_err == 0);
	snprintf(o->checked_by, sizeof o->checked_by,
	    "exact:%s(%s data)", routine_name, plan.data);
	/* Then the wide-sum check, where the op has one. */
	if (!o->wrong)
		verify_wide(j, fn, lhs, rhs, acc, acc0, rng, o);
	if (!o->wrong && j->conv.set)
		verify_conv_kernel(j, fn, lhs, rhs, acc, rng, o);
	free(acc0);
}

/*
 * A kernel run with --conv: the conv's input, on timing data, which each
 * call copies into the kernel's operand as its im2col first.
 */
static void
conv_src_make(const struct job *j, uint64_t *rng, struct outcome *o)
{
	size_t n[3];

	conv_sizes(&j->conv, n);
	conv_src = buf_alloc(T_F32, n[0]);
	fill_timing(T_F32, conv_src, n[0], rng);
	o->with_im2col = 1;
}

/*
 * Check oneDNN's convolution dn (job j's --conv) exactly against the direct
 * loop on small-integer data in bufs; the verdict into *o.
 */
static void
verify_conv(const struct job *j, struct onednn *dn, void **bufs,
    uint64_t *rng, struct outcome *o)
{
	size_t n[3], i;
	double *want;
	float *dst0;
	int b;

	bufs_count(j, n);
	snprintf(o->checked_by, sizeof o->checked_by, "none");
	if (j->conv.kh * j->conv.kw * j->conv.c > ((1L << 24) - 3) / 9) {
		o->not_verified = "window too long to check exactly in f32";
		return;
	}
	for (b = 0; b < 3; b++)
		for (i = 0; i < n[b]; i++)
			((float *)bufs[b])[i] = (float)check_value(T_F32, rng);
	dst0 = malloc(n[2] * sizeof *dst0);
	if (dst0 == NULL)
		die("out of memory");
	memcpy(dst0, bufs[2], n[2] * sizeof *dst0);
	onednn_conv_weights(dn);
	onednn_run(dn);
	if (j->fault != NULL && strcmp(j->fault, "wrong") == 0)
		((float *)bufs[2])[n[2] / 2] += 1;	/* test-only */
	conv_direct(&j->conv, bufs[0], bufs[1], dst0, &want);
	o->max_err = result_error(T_F32, bufs[2], want, n[2]);
	o->verified = 1;
	o->wrong = !(o->max_err == 0);
	snprintf(o->checked_by, sizeof o->checked_by,
	    "exact:direct conv loop(dense data)");
	free(want);
	free(dst0);
}

/*
 * Warm up, then time routine r until min_reps and min_time (or max_reps):
 * the kept repetitions' times and their counters' sums into *o.
 */
static void
time_reps(const struct job *j, struct counters *ctr, enum routine r,
    kernel_fn fn, struct onednn *dn, void *lhs, void *rhs, void *acc,
    struct outcome *o)
{
	uint64_t v0[CTR_COUNT], v1[CTR_COUNT];
	uint32_t h0, h1;
	double t0, t, total = 0, dropped_s = 0;
	int i, c, attempts = 0;

	for (i = 0; i < j->warmup; i++)
		call(j, r, fn, dn, lhs, rhs, acc);
	/*
	 * A repetition during which the process was switched out
	 * (a context switch or a CPU migration was counted, on any of
	 * its threads) is dropped and run again, while fewer than
	 * max_reps were dropped and the dropped ones took less than
	 * min_time; after that, disturbed repetitions are kept and
	 * counted as such.
	 */
	while (o->reps < j->max_reps &&
	    (o->reps < j->min_reps || total < j->min_time)) {
		int disturbed;

		counters_sample(ctr, v0, &h0);
		t0 = now();
		call(j, r, fn, dn, lhs, rhs, acc);
		if (j->fault != NULL && strcmp(j->fault, "sleep") == 0 &&
		    attempts < 3)
			usleep(2000);	/* test-only: switched out */
		t = now() - t0;
		counters_sample(ctr, v1, &h1);
		attempts++;
		disturbed = ((h0 & h1 & (1u << CTR_CONTEXT_SWITCHES)) &&
		    v1[CTR_CONTEXT_SWITCHES] != v0[CTR_CONTEXT_SWITCHES]) ||
		    ((h0 & h1 & (1u << CTR_CPU_MIGRATIONS)) &&
		    v1[CTR_CPU_MIGRATIONS] != v0[CTR_CPU_MIGRATIONS]);
		if (disturbed && o->dropped < j->max_reps &&
		    dropped_s < j->min_time) {
			o->dropped++;
			dropped_s += t;
			continue;
		}
		o->disturbed_kept += disturbed;
		o->times[o->reps++] = t * 1e3;
		total += t;
		o->chave &= h0 & h1;
		for (c = 0; c < CTR_COUNT; c++)
			o->csum[c] += v1[c] - v0[c];
	}
}

/* The kept times' statistics into out (reps > 0; sorts the times). */
static void
times_json(json_t *out, double *times, int reps)
{
	double sum = 0, sq = 0, mean, sd;
	int i;

	for (i = 0; i < reps; i++) {
		sum += times[i];
		sq += times[i] * times[i];
	}
	mean = sum / reps;
	sd = reps > 1 ? sqrt(fmax(0, (sq - sum * mean) / (reps - 1))) : 0;
	json_object_set_new(out, "median_ms",
	    json_real(times_median(times, reps)));
	json_object_set_new(out, "min_ms", json_real(times[0]));
	json_object_set_new(out, "max_ms", json_real(times[reps - 1]));
	json_object_set_new(out, "cv", json_real(mean > 0 ? sd / mean : 0));
}

/* Print the outcome as one JSON line; ref: of a reference run. */
static void
result_print(int ref, struct outcome *o)
{
	json_t *out, *cj;
	char *line;
	int c;

	out = json_object();
	json_object_set_new(out, "status",
	    json_string(o->wrong ? "wrong" : "ok"));
	host_name(out);
	json_object_set_new(out, "verified", json_integer(o->verified));
	json_object_set_new(out, "max_err", json_real(o->max_err));
	json_object_set_new(out, "tolerance", json_real(0));
	if (*o->checked_by)
		json_object_set_new(out, "checked_by",
		    json_string(o->checked_by));
	if (o->not_verified != NULL)
		json_object_set_new(out, "not_verified",
		    json_string(o->not_verified));
	if (ref) {
		json_object_set_new(out, "ref_routine",
		    json_string(o->ref_name));
		json_object_set_new(out, "ref_same_precision",
		    json_integer(o->same));
		if (o->ref_note != NULL)
			json_object_set_new(out, "ref_note",
			    json_string(o->ref_note));
	}
	if (o->with_im2col)
		json_object_set_new(out, "with_im2col", json_true());
	json_object_set_new(out, "reps", json_integer(o->reps));
	json_object_set_new(out, "reps_dropped", json_integer(o->dropped));
	json_object_set_new(out, "reps_disturbed_kept",
	    json_integer(o->disturbed_kept));
	cj = json_object();
	for (c = 0; c < CTR_COUNT; c++)
		json_object_set_new(cj, counter_names[c], o->reps > 0 &&
		    (o->chave & (1u << c)) ?
		    json_integer((json_int_t)o->csum[c]) : json_null());
	json_object_set_new(out, "counters", cj);
	if (o->reps > 0)
		times_json(out, o->times, o->reps);
	line = json_dumps(out, JSON_COMPACT);
	puts(line);
	free(line);
	json_decref(out);
}

int
main(int argc, char **argv)
{
	struct job j;
	struct outcome o;
	struct counters *ctr;
	struct onednn *dn = NULL;
	enum routine routine = R_KERNEL;
	kernel_fn fn = NULL;
	void *dl = NULL, *lhs, *rhs, *acc, *bufs[3];
	size_t nb[3];
	uint64_t rng;

	if (argc == 3 && strcmp(argv[1], "--batch") == 0)
		return measure_batch_main("autosched-measure", argv[2]);
	parse_args(argc, argv, &j);
	if (j.cpus != NULL)
		pin(j.cpus);
	if (j.peak || j.bandwidth)
		return probe_main(&j);
	if (j.npy_inputs != NULL)
		return npy_inputs_main(&j);
	if (j.npy_check != NULL)
		return npy_check_main(&j);
	/* Keep OpenBLAS' own threads off the CPUs while a kernel is timed. */
	openblas_set_num_threads(j.kernel != NULL || j.ref == REF_BLIS ? 1 :
	    j.threads);
	/* Before any kernel runs, so that its OpenMP team inherits them. */
	ctr = counters_open();

	if (j.kernel != NULL)
		fn = kernel_load(j.kernel, &dl);
	fault_early(&j);

	memset(&o, 0, sizeof o);
	o.chave = ~0u;
	if (fn == NULL)
		routine = ref_choose(&j, &dn, bufs, o.ref_name,
		    sizeof o.ref_name, &o.same, &o.ref_note);
	else
		bufs_alloc(&j, bufs);
	lhs = bufs[0];
	rhs = bufs[1];
	acc = bufs[2];
	rng = data_rng(j.seed);
	if (j.verify && fn != NULL)
		verify(&j, fn, lhs, rhs, acc, &rng, &o);
	else if (j.verify && j.conv.set)
		verify_conv(&j, dn, bufs, &rng, &o);

	/* Time on ordinary dense data, in the same buffers. */
	bufs_count(&j, nb);
	fill_timing(j.lt, lhs, nb[0], &rng);
	fill_timing(j.rt, rhs, nb[1], &rng);
	fill_timing(j.at, acc, nb[2], &rng);
	if (j.conv.set && fn == NULL)
		onednn_conv_weights(dn);
	else if (j.conv.set)
		conv_src_make(&j, &rng, &o);
	o.times = malloc((size_t)j.max_reps * sizeof *o.times);
	if (o.times == NULL)
		die("out of memory");
	if (!o.wrong)
		time_reps(&j, ctr, routine, fn, dn, lhs, rhs, acc, &o);
	result_print(fn == NULL, &o);

	free(o.times);
	onednn_close(dn);
	blis_close(blis_ref);
	free(conv_src);
	counters_close(ctr);
	free(lhs);
	free(rhs);
	free(acc);
	if (dl != NULL)
		dlclose(dl);
	return 0;
}
