/*
 * The data of a GPU measurement: small integers, exact in every type the
 * kernels read and write, so that each element of a result is checked for
 * equality (against cuBLAS and against exact dot products on the host).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "measure/gpu_int.h"
#include "measure/gpu_data.h"

size_t
gpu_in_size(enum gpu_type t)
{
	return t == GPU_F32 ? 4 : 2;
}

size_t
gpu_out_size(enum gpu_type t)
{
	return t == GPU_F16 ? 2 : 4;
}

/* An f32 holding a small integer, as f16 (exact for |v| <= 2048). */
static uint16_t
f32_to_f16(float f)
{
	uint32_t x, s, e, m;

	memcpy(&x, &f, 4);
	s = (x >> 16) & 0x8000;
	if ((x & 0x7fffffff) == 0)
		return (uint16_t)s;
	e = ((x >> 23) & 0xff) - 127 + 15;
	m = (x >> 13) & 0x3ff;
	return (uint16_t)(s | e << 10 | m);
}

/* Any f16, subnormals, infinities and NaNs included, as f32. */
static float
f16_to_f32(uint16_t h)
{
	uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f;
	uint32_t m = h & 0x3ff, x;
	float f;

	if (e == 0x1f)
		x = s | 0x7f800000 | m << 13;
	else if (e != 0)
		x = s | (e - 15 + 127) << 23 | m << 13;
	else if (m == 0)
		x = s;
	else {
		f = ldexpf((float)m, -24);
		return s ? -f : f;
	}
	memcpy(&f, &x, 4);
	return f;
}

void
gpu_encode(enum gpu_type t, const float *src, size_t n, void *dst)
{
	size_t i;
	uint32_t x;

	for (i = 0; i < n; i++) {
		if (t == GPU_F32)
			((float *)dst)[i] = src[i];
		else if (t == GPU_BF16F32) {
			memcpy(&x, &src[i], 4);
			((uint16_t *)dst)[i] = (uint16_t)(x >> 16);
		} else
			((uint16_t *)dst)[i] = f32_to_f16(src[i]);
	}
}

float
gpu_out_at(enum gpu_type t, const void *c, size_t i)
{
	if (t == GPU_F16)
		return f16_to_f32(((const uint16_t *)c)[i]);
	return ((const float *)c)[i];
}

/* xorshift64*: the same data for the same seed on every host. */
static uint64_t
next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

void
gpu_fill(float *x, size_t n, int range, uint64_t *seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = (float)((int)(next(seed) >> 33) % (2 * range + 1) - range);
}

void
gpu_samples(long m, long n, uint64_t *seed, long *ij, int count)
{
	int i;

	/* The corners first: a partial last tile shows there. */
	ij[0] = 0, ij[1] = 0, ij[2] = m - 1, ij[3] = n - 1;
	ij[4] = 0, ij[5] = n - 1, ij[6] = m - 1, ij[7] = 0;
	for (i = 4; i < count; i++) {
		ij[2 * i] = (long)(next(seed) % (uint64_t)m);
		ij[2 * i + 1] = (long)(next(seed) % (uint64_t)n);
	}
}

size_t
gpu_elems_a(const struct gpu_opts *o)
{
	return (size_t)o->batch * (size_t)o->m * (size_t)o->k;
}

size_t
gpu_elems_b(const struct gpu_opts *o)
{
	return (size_t)o->batch * (size_t)o->k * (size_t)o->n;
}

size_t
gpu_elems_c(const struct gpu_opts *o)
{
	return (size_t)o->batch * (size_t)o->m * (size_t)o->n;
}

double
gpu_dot(const struct gpu_opts *o, const float *a, const float *b, long i,
    long j)
{
	long m = o->m, n = o->n, k = o->k, r = i % m, p;
	/* A's element (r, p) and B's (p, j) as each is stored. */
	long as = o->ta ? m : 1, ap = o->ta ? 1 : k;
	long bs = o->tb ? 1 : n, bp = o->tb ? k : 1;
	double s = 0;

	a += (size_t)(i / m) * (size_t)m * (size_t)k;
	b += (size_t)(i / m) * (size_t)k * (size_t)n;
	for (p = 0; p < k; p++)
		s += (double)a[r * ap + p * as] * (double)b[p * bs + j * bp];
	return s;
}
