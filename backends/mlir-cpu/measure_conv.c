/*
 * The convolution of a run given --conv: its geometry read from the
 * command line, its buffers' sizes, the direct loop that checks oneDNN's
 * convolution exactly on small-integer data, and the im2col copy timed
 * before a kernel that is the conv's GEMM.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/mlir-cpu/measure_int.h"

#define CONV_SIZE_MAX	(1L << 20)
#define CONV_PAD_MAX	(1L << 16)
/* conv_im2col's split: at most so many threads, none below so many bytes. */
#define IM2COL_THREADS_MAX	256
#define IM2COL_SPLIT_MIN	(64 * 1024)

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

/*
 * The first o >= 0 (at most lim_o) whose position o·step + off reaches at
 * least lim: where a window's taps or an output row's pixels enter the
 * input, or leave it on the far side.
 */
static long
first_at_least(long lim, long off, long step, long lim_o)
{
	long o = off >= lim ? 0 : (lim - off + step - 1) / step;

	return o < lim_o ? o : lim_o;
}

/*
 * NHWC: output pixels [p0, p1)'s rows of cols, each the window's taps of
 * C channels. Along W the taps of one (pixel, kh) inside the input are one
 * run: with dilation 1 a single memcpy of its KW·C floats, clipped at the
 * padding, which is zero-filled; with a dilation, a memcpy per tap.
 */
static void
im2col_nhwc(const struct conv_geom *g, const float *src, float *cols,
    long p0, long p1)
{
	size_t c = (size_t)g->c, row = (size_t)g->kh * g->kw * c;
	long p, b, oy, ox, ky, kx, y, x0, lo, hi;
	float *to;

	for (p = p0; p < p1; p++) {
		b = p / (g->oh * g->ow);
		oy = p / g->ow % g->oh;
		ox = p % g->ow;
		x0 = ox * g->stride[1] - g->pad[2];
		lo = first_at_least(0, x0, g->dilation[1], g->kw);
		hi = first_at_least(g->w, x0, g->dilation[1], g->kw);
		for (ky = 0; ky < g->kh; ky++) {
			to = cols + (size_t)p * row + (size_t)ky * g->kw * c;
			y = oy * g->stride[0] + ky * g->dilation[0] - g->pad[0];
			if (y < 0 || y >= g->h || lo >= hi) {
				memset(to, 0, g->kw * c * sizeof *to);
				continue;
			}
			memset(to, 0, lo * c * sizeof *to);
			if (g->dilation[1] == 1)
				memcpy(to + lo * c, src + at_src(g, b, y,
				    x0 + lo, 0), (hi - lo) * c * sizeof *to);
			else
				for (kx = lo; kx < hi; kx++)
					memcpy(to + kx * c, src + at_src(g, b,
					    y, x0 + kx * g->dilation[1], 0),
					    c * sizeof *to);
			memset(to + hi * c, 0, (g->kw - hi) * c * sizeof *to);
		}
	}
}

/*
 * NCHW, batch 1: rows [r0, r1) of cols, a row per (channel, tap) and a
 * column per output pixel. Each output row's pixels inside the input are
 * one run of an input row: a memcpy at stride 1 along W, a strided loop
 * otherwise; the padding on either side zero-filled.
 */
static void
im2col_nchw(const struct conv_geom *g, const float *src, float *cols,
    long r0, long r1)
{
	size_t ow = (size_t)g->ow;
	long r, c, ky, kx, oy, ox, y, x0, lo, hi;
	const float *from;
	float *to;

	for (r = r0; r < r1; r++) {
		c = r / (g->kh * g->kw);
		ky = r / g->kw % g->kh;
		kx = r % g->kw;
		x0 = kx * g->dilation[1] - g->pad[2];
		lo = first_at_least(0, x0, g->stride[1], g->ow);
		hi = first_at_least(g->w, x0, g->stride[1], g->ow);
		for (oy = 0; oy < g->oh; oy++) {
			to = cols + ((size_t)r * g->oh + oy) * ow;
			y = oy * g->stride[0] + ky * g->dilation[0] - g->pad[0];
			if (y < 0 || y >= g->h || lo >= hi) {
				memset(to, 0, ow * sizeof *to);
				continue;
			}
			memset(to, 0, lo * sizeof *to);
			from = src + at_src(g, 0, y, x0 + lo * g->stride[1], c);
			if (g->stride[1] == 1)
				memcpy(to + lo, from, (hi - lo) * sizeof *to);
			else
				for (ox = lo; ox < hi; ox++)
					to[ox] = from[(ox - lo) * g->stride[1]];
			memset(to + hi, 0, (ow - hi) * sizeof *to);
		}
	}
}

/* One thread's share of conv_im2col: rows [r0, r1) of the split. */
struct im2col_part {
	const struct conv_geom	*g;
	const float		*src;
	float			*cols;
	long			 r0, r1;
	pthread_t		 tid;
};

static void *
im2col_part_run(void *arg)
{
	struct im2col_part *t = arg;

	if (t->g->nchw)
		im2col_nchw(t->g, t->src, t->cols, t->r0, t->r1);
	else
		im2col_nhwc(t->g, t->src, t->cols, t->r0, t->r1);
	return NULL;
}

void
conv_im2col(const struct conv_geom *g, const float *src, float *cols,
    int threads)
{
	struct im2col_part t[IM2COL_THREADS_MAX];
	long rows = g->nchw ? g->c * g->kh * g->kw : g->n * g->oh * g->ow;
	size_t bytes = (size_t)g->n * g->oh * g->ow * g->kh * g->kw * g->c *
	    sizeof *cols;
	int i, n;

	n = threads < IM2COL_THREADS_MAX ? threads : IM2COL_THREADS_MAX;
	if (n > rows)
		n = (int)rows;
	if (n < 1 || bytes < IM2COL_SPLIT_MIN)
		n = 1;
	for (i = 0; i < n; i++) {
		t[i] = (struct im2col_part){ g, src, cols, rows * i / n,
		    rows * (i + 1) / n, 0 };
		/* The calling thread copies the first share itself. */
		if (i > 0 && pthread_create(&t[i].tid, NULL, im2col_part_run,
		    &t[i]) != 0)
			die("im2col: pthread_create failed");
	}
	im2col_part_run(&t[0]);
	for (i = 1; i < n; i++)
		pthread_join(t[i].tid, NULL);
}
