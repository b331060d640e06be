/*
 * A hand-written kernel with the mlir-cpu ABI (see backends/mlir-cpu/mlircpu.c):
 *	void dispatch(const void *lhs, const void *rhs, void *acc);
 * computing acc += lhs·rhs in place, rounding to the accumulator type after
 * every product as a kernel accumulating in that type would. Shapes, types
 * and layouts are baked in: -DB= -DM= -DN= -DK= -DTA= -DTB= and
 * -DLT= -DRT= -DAT= (0 f32, 1 f64, 2 f16, 3 bf16, 4 i8, 5 u8, 6 i32).
 * AUTOSCHED_MUTANT picks a wrong variant: nothing, ktile (skips the middle
 * K tile of 8), rows (skips rows 4..7), cols (skips columns 8..15), batch
 * (skips batch 1), the remainders a schedule splits off: rowtail (skips the
 * last row), coltail (the last column), ktail (the last K step); or sleep (right, but sleeps on calls 3 to 5, so that the
 * process is switched out during timed repetitions).
 * Narrowed accumulation, in a type narrower than AT: acc_T keeps the whole
 * sum in T (acc read into T, every product added and rounded there, to
 * nearest even or wrapping); tile_T sums each K tile of 8 from zero in T and
 * adds the tile's sum to the accumulator in AT, as a kernel with a narrow
 * inner loop would. T is f32, f16, bf16, i16 (wrapping) or i16sat.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * -DZP=1: a quantized op's kernel, acc += (lhs - za)(rhs - zb), its zero
 * points two int32 arguments after acc; mutants noza, nozb (one zero point
 * ignored) and nozp (both).
 */
#ifndef ZP
#define ZP 0
#endif
#if ZP
void	dispatch(const void *, const void *, void *, int32_t, int32_t);
#else
void	dispatch(const void *, const void *, void *);
#endif
static int32_t zpa, zpb;	/* the zero points of this call */

static float
f16_get(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	float v;

	if (e == 0)
		v = (float)m / 16777216.0f;
	else {
		v = (float)(m | 0x400);
		for (; e > 25; e--)
			v *= 2;
		for (; e < 25; e++)
			v /= 2;
	}
	return (h & 0x8000) ? -v : v;
}

static uint16_t
f16_put(float f)
{
	uint32_t x, sign;
	int e;

	memcpy(&x, &f, 4);
	sign = (x >> 16) & 0x8000;
	if (f == 0)
		return (uint16_t)sign;
	e = (int)((x >> 23) & 0xff) - 127 + 15;
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (e <= 0)
		return (uint16_t)sign;
	return (uint16_t)(sign | ((uint32_t)e << 10) | ((x >> 13) & 0x3ff));
}

static double
get(int t, const void *p, size_t i)
{
	uint32_t x;
	float f;

	switch (t) {
	case 0: return ((const float *)p)[i];
	case 1: return ((const double *)p)[i];
	case 2: return f16_get(((const uint16_t *)p)[i]);
	case 3:
		x = (uint32_t)((const uint16_t *)p)[i] << 16;
		memcpy(&f, &x, 4);
		return f;
	case 4: return ((const int8_t *)p)[i];
	case 5: return ((const uint8_t *)p)[i];
	default: return ((const int32_t *)p)[i];
	}
}

/* Round v to type t as storing it there would (truncating: values are exact). */
static double
round_to(int t, double v)
{
	float f = (float)v;
	uint32_t x;

	switch (t) {
	case 0: return f;
	case 1: return v;
	case 2: return f16_get(f16_put(f));
	case 3:
		memcpy(&x, &f, 4);
		x &= 0xffff0000u;
		memcpy(&f, &x, 4);
		return f;
	default: return (double)(int32_t)(uint32_t)(int64_t)v;
	}
}

/*
 * Round the integer v to the nearest value with digits significant bits,
 * ties to even, as a float type of that precision would (no libm).
 */
static double
round_sig(double v, int digits)
{
	double a = v < 0 ? -v : v, top = (double)(1L << digits), ulp = 1, q, f;

	while (a >= top * ulp)
		ulp *= 2;
	q = a / ulp;
	f = (double)(int64_t)q;
	if (q - f > 0.5 || (q - f == 0.5 && ((int64_t)f & 1)))
		f += 1;
	return v < 0 ? -f * ulp : f * ulp;
}

/* The narrow accumulator types of the acc_ and tile_ mutants. */
enum narrow { N_NONE, N_F32, N_F16, N_BF16, N_I16, N_I16SAT };

/* Round v to narrow type t, as adding in that type would. */
static double
round_narrow(enum narrow t, double v)
{
	int64_t x;

	switch (t) {
	case N_F32:
		return (float)v;
	case N_F16:
		v = round_sig(v, 11);
		return v > 65504 ? HUGE_VAL : v < -65504 ? -HUGE_VAL : v;
	case N_BF16:
		return round_sig(v, 8);
	case N_I16:
		x = (int64_t)v & 0xffff;
		return (double)(x >= 32768 ? x - 65536 : x);
	case N_I16SAT:
		return v > 32767 ? 32767 : v < -32768 ? -32768 : v;
	default:
		return v;
	}
}

static enum narrow
narrow_parse(const char *s)
{
	static const char *const names[] = { "", "f32", "f16", "bf16", "i16",
	    "i16sat" };
	size_t i;

	for (i = 1; i < sizeof names / sizeof names[0]; i++) {
		if (strcmp(s, names[i]) == 0)
			return (enum narrow)i;
	}
	return N_NONE;
}

static void
put(int t, void *p, size_t i, double v)
{
	float f = (float)v;
	uint32_t x;

	switch (t) {
	case 0: ((float *)p)[i] = f; break;
	case 1: ((double *)p)[i] = v; break;
	case 2: ((uint16_t *)p)[i] = f16_put(f); break;
	case 3:
		memcpy(&x, &f, 4);
		((uint16_t *)p)[i] = (uint16_t)(x >> 16);
		break;
	default: ((int32_t *)p)[i] = (int32_t)(uint32_t)(int64_t)v; break;
	}
}

static void
run(const void *lhs, const void *rhs, void *acc)
{
	static int calls;
	const char *mut = getenv("AUTOSCHED_MUTANT");
	long b, i, j, k, skip_k = K >= 16 ? (K / 8 / 2) : -1;
	int mk, mr, mc, mb, mrt, mct, mkt, mtile = 0;
	enum narrow nt = N_NONE;
	double c, s, p;

	if (mut == NULL)
		mut = "";
	mk = strcmp(mut, "ktile") == 0;
	mr = strcmp(mut, "rows") == 0;
	mc = strcmp(mut, "cols") == 0;
	mb = strcmp(mut, "batch") == 0;
	mrt = strcmp(mut, "rowtail") == 0;
	mct = strcmp(mut, "coltail") == 0;
	mkt = strcmp(mut, "ktail") == 0;
	if (strncmp(mut, "acc_", 4) == 0)
		nt = narrow_parse(mut + 4);
	else if (strncmp(mut, "tile_", 5) == 0) {
		nt = narrow_parse(mut + 5);
		mtile = 1;
	}
	calls++;
	if (strcmp(mut, "nothing") == 0)
		return;
	if (strcmp(mut, "sleep") == 0 && calls >= 3 && calls <= 5) {
		struct timespec ts = { 0, 2000000 };

		nanosleep(&ts, NULL);
	}
	for (b = 0; b < B; b++) {
		if (mb && b == 1)
			continue;
		for (i = 0; i < M; i++) {
			if ((mr && i / 4 == 1) || (mrt && i == M - 1))
				continue;
			for (j = 0; j < N; j++) {
				if ((mc && j / 8 == 1) || (mct && j == N - 1))
					continue;
				c = get(AT, acc, (size_t)(b * M * N + i * N + j));
				if (nt != N_NONE && !mtile)
					c = round_narrow(nt, c);
				s = 0;
				for (k = 0; k < K; k++) {
					size_t ia = TA ? (size_t)(k * M + i) :
					    (size_t)(i * K + k);
					size_t ib = TB ? (size_t)(j * K + k) :
					    (size_t)(k * N + j);

					if ((mk && k / 8 == skip_k) ||
					    (mkt && k == K - 1))
						continue;
					p = (get(LT, lhs, (size_t)(b * M * K) + ia) -
					    zpa) * (get(RT, rhs, (size_t)(b * K * N) +
					    ib) - zpb);
					if (nt == N_NONE)
						c = round_to(AT, c + p);
					else if (!mtile)
						c = round_narrow(nt, c + p);
					else {
						s = round_narrow(nt, s + p);
						if (k % 8 == 7 || k == K - 1) {
							c = round_to(AT, c + s);
							s = 0;
						}
					}
				}
				put(AT, acc, (size_t)(b * M * N + i * N + j), c);
			}
		}
	}
}

#if ZP
void
dispatch(const void *lhs, const void *rhs, void *acc, int32_t za, int32_t zb)
{
	const char *mut = getenv("AUTOSCHED_MUTANT");

	mut = mut != NULL ? mut : "";
	zpa = strcmp(mut, "noza") == 0 || strcmp(mut, "nozp") == 0 ? 0 : za;
	zpb = strcmp(mut, "nozb") == 0 || strcmp(mut, "nozp") == 0 ? 0 : zb;
	run(lhs, rhs, acc);
}
#else
void
dispatch(const void *lhs, const void *rhs, void *acc)
{
	run(lhs, rhs, acc);
}
#endif
