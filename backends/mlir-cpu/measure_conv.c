/*
 * The convolution of a run given --conv: its geometry read from the
 * command line, its buffers' sizes, the direct loop that checks oneDNN's
 * convolution exactly on small-integer data, and the im2col copy timed
 * before a kernel that is the conv's GEMM.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/mlir-cpu/measure_int.h"

#define CONV_SIZE_MAX	(1L << 20)
#define CONV_PAD_MAX	(1L << 16)

int
conv_parse(const char *s, struct conv_geom *g)
{
	long v[15];
	int i, used = 0;
	const char *p;

	memset(g, 0, sizeof *g);
	if (strncmp(s, "nhwc:", 5) == 0)
		g->nchw = 0;
	else if (strncmp(s, "nchw:", 5) == 0)
		g->nchw = 1;
	else
		return -1;
	p = s + 5;
	for (i = 0; i < 15; i++) {
		if (sscanf(p, i ? ",%ld%n" : "%ld%n", &v[i], &used) != 1)
			return -1;
		p += used;
		if (v[i] < (i >= 11 ? 0 : 1) ||
		    v[i] > (i >= 11 ? CONV_PAD_MAX : CONV_SIZE_MAX))
			return -1;
	}
	if (*p != '\0')
		return -1;
	g->n = v[0], g->h = v[1], g->w = v[2], g->c = v[3], g->f = v[4];
	g->kh = v[5], g->kw = v[6];
	g->stride[0] = v[7], g->stride[1] = v[8];
	g->dilation[0] = v[9], g->dilation[1] = v[10];
	for (i = 0; i < 4; i++)
		g->pad[i] = v[11 + i];
	g->oh = (g->h + g->pad[0] + g->pad[1] - g->dilation[0] * (g->kh - 1) -
	    1) / g->stride[0] + 1;
	g->ow = (g->w + g->pad[2] + g->pad[3] - g->dilation[1] * (g->kw - 1) -
	    1) / g->stride[1] + 1;
	if (g->h + g->pad[0] + g->pad[1] < g->dilation[0] * (g->kh - 1) + 1 ||
	    g->w + g->pad[2] + g->pad[3] < g->dilation[1] * (g->kw - 1) + 1)
		return -1;
	g->set = 1;
	return 0;
}

void
conv_sizes(const struct conv_geom *g, size_t n[3])
{
	n[0] = (size_t)g->n * g->h * g->w * g->c;
	n[1] = (size_t)g->kh * g->kw * g->c * g->f;
	n[2] = (size_t)g->n * g->oh * g->ow * g->f;
}

/* Offsets of an input, filter and output element in g's layout. */
static size_t
at_src(const struct conv_geom *g, long b, long y, long x, long c)
{
	return g->nchw ? (((size_t)b * g->c + c) * g->h + y) * g->w + x :
	    (((size_t)b * g->h + y) * g->w + x) * g->c + c;
}

static size_t
at_wei(const struct conv_geom *g, long y, long x, long c, long f)
{
	return g->nchw ? (((size_t)f * g->c + c) * g->kh + y) * g->kw + x :
	    (((size_t)y * g->kw + x) * g->c + c) * g->f + f;
}

static size_t
at_dst(const struct conv_geom *g, long b, long y, long x, long f)
{
	return g->nchw ? (((size_t)b * g->f + f) * g->oh + y) * g->ow + x :
	    (((size_t)b * g->oh + y) * g->ow + x) * g->f + f;
}

/*
 * One output pixel's sums over the window into sum[F], the padding read as
 * zeros; the filters innermost, as HWCF stores them.
 */
static void
conv_pixel(const struct conv_geom *g, const float *src, const float *wei,
    long b, long oy, long ox, double *sum)
{
	long ky, kx, c, y, x, f;
	double v;

	for (f = 0; f < g->f; f++)
		sum[f] = 0;
	for (ky = 0; ky < g->kh; ky++) {
		y = oy * g->stride[0] + ky * g->dilation[0] - g->pad[0];
		if (y < 0 || y >= g->h)
			continue;
		for (kx = 0; kx < g->kw; kx++) {
			x = ox * g->stride[1] + kx * g->dilation[1] - g->pad[2];
			if (x < 0 || x >= g->w)
				continue;
			for (c = 0; c < g->c; c++) {
				v = src[at_src(g, b, y, x, c)];
				for (f = 0; f < g->f; f++)
					sum[f] += v * wei[at_wei(g, ky, kx, c,
					    f)];
			}
		}
	}
}

void
conv_direct(const struct conv_geom *g, const float *src, const float *wei,
    const float *dst, double **want)
{
	size_t n[3], i;
	long b, oy, ox, f;
	double *sum;

	conv_sizes(g, n);
	*want = malloc(n[2] * sizeof **want);
	sum = malloc((size_t)g->f * sizeof *sum);
	if (*want == NULL || sum == NULL)
		die("out of memory");
	for (b = 0; b < g->n; b++)
		for (oy = 0; oy < g->oh; oy++)
			for (ox = 0; ox < g->ow; ox++) {
				conv_pixel(g, src, wei, b, oy, ox, sum);
				for (f = 0; f < g->f; f++) {
					i = at_dst(g, b, oy, ox, f);
					(*want)[i] = dst[i] + sum[f];
				}
			}
	free(sum);
}

int
conv_gemm_matches(const struct conv_geom *g, long batch, long m, long n,
    long k)
{
	long pixels = g->n * g->oh * g->ow, window = g->kh * g->kw * g->c;

	if (g->nchw)
		return batch == 1 && g->n == 1 && m == g->f && n == pixels &&
		    k == window;
	return batch == 1 && m == pixels && n == g->f && k == window;
}

/* NHWC: each output pixel's row, the window's taps of C channels each. */
static void
im2col_nhwc(const struct conv_geom *g, const float *src, float *cols)
{
	long b, oy, ox, ky, kx, y, x;
	size_t row = (size_t)g->kh * g->kw * g->c, c = (size_t)g->c;

	for (b = 0; b < g->n; b++)
	for (oy = 0; oy < g->oh; oy++)
	for (ox = 0; ox < g->ow; ox++)
	for (ky = 0; ky < g->kh; ky++) {
		y = oy * g->stride[0] + ky * g->dilation[0] - g->pad[0];
		for (kx = 0; kx < g->kw; kx++) {
			float *to = cols + (((size_t)b * g->oh + oy) * g->ow +
			    ox) * row + ((size_t)ky * g->kw + kx) * c;

			x = ox * g->stride[1] + kx * g->dilation[1] - g->pad[2];
			if (y < 0 || y >= g->h || x < 0 || x >= g->w)
				memset(to, 0, c * sizeof *to);
			else
				memcpy(to, src + at_src(g, b, y, x, 0),
				    c * sizeof *to);
		}
	}
}

/* NCHW, batch 1: a row per (channel, tap), a column per output pixel. */
static void
im2col_nchw(const struct conv_geom *g, const float *src, float *cols)
{
	long c, ky, kx, oy, ox, y, x;
	size_t pixels = (size_t)g->oh * g->ow;

	for (c = 0; c < g->c; c++)
	for (ky = 0; ky < g->kh; ky++)
	for (kx = 0; kx < g->kw; kx++) {
		float *to = cols + (((size_t)c * g->kh + ky) * g->kw + kx) *
		    pixels;

		for (oy = 0; oy < g->oh; oy++) {
			y = oy * g->stride[0] + ky * g->dilation[0] - g->pad[0];
			for (ox = 0; ox < g->ow; ox++) {
				x = ox * g->stride[1] + kx * g->dilation[1] -
				    g->pad[2];
				*to++ = y < 0 || y >= g->h || x < 0 ||
				    x >= g->w ? 0 : src[at_src(g, 0, y, x, c)];
			}
		}
	}
}

void
conv_im2col(const struct conv_geom *g, const float *src, float *cols)
{
	if (g->nchw)
		im2col_nchw(g, src, cols);
	else
		im2col_nhwc(g, src, cols);
}
