/*
 * The harness's im2col (backends/mlir-cpu/measure_conv.c), run-wise and
 * split over threads, byte for byte against the per-tap loops it replaced,
 * kept here as the reference: padding edges, strides, dilations, C=3, 7x7
 * windows, both layouts, asymmetric padding, 1 to 3 threads.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/mlir-cpu/measure_int.h"
#include "tests/check.h"

void
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static size_t
ref_at(const struct conv_geom *g, long b, long y, long x, long c)
{
	return g->nchw ? (((size_t)b * g->c + c) * g->h + y) * g->w + x :
	    (((size_t)b * g->h + y) * g->w + x) * g->c + c;
}

/* The old NHWC copy: a memcpy of C channels per tap, zeros outside. */
static void
ref_nhwc(const struct conv_geom *g, const float *src, float *cols)
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
				memcpy(to, src + ref_at(g, b, y, x, 0),
				    c * sizeof *to);
		}
	}
}

/* The old NCHW copy, batch 1: element by element. */
static void
ref_nchw(const struct conv_geom *g, const float *src, float *cols)
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
				    x >= g->w ? 0 : src[ref_at(g, 0, y, x, c)];
			}
		}
	}
}

/*
 * Geometry s's im2col on threads 1 to 3 against the reference, every byte
 * of cols (filled with garbage first); then a copy a row off (the harness's
 * --fault im2col) must differ.
 */
static void
check_geom(const char *s)
{
	struct conv_geom g, off;
	size_t n[3], ncols, i;
	float *src, *want, *got;
	int t, same;

	if (conv_parse(s, &g) != 0) {
		CHECK(!"geometry parses");
		return;
	}
	conv_sizes(&g, n);
	ncols = (size_t)g.n * g.oh * g.ow * g.kh * g.kw * g.c;
	src = malloc(n[0] * sizeof *src);
	want = malloc(ncols * sizeof *want);
	got = malloc(ncols * sizeof *got);
	if (src == NULL || want == NULL || got == NULL)
		die("out of memory");
	for (i = 0; i < n[0]; i++)
		src[i] = (float)(i % 251) + 1;	/* never 0, as the padding is */
	memset(want, 0x7f, ncols * sizeof *want);
	(g.nchw ? ref_nchw : ref_nhwc)(&g, src, want);
	for (t = 1; t <= 3; t++) {
		memset(got, 0x7f, ncols * sizeof *got);
		conv_im2col(&g, src, got, t);
		same = memcmp(got, want, ncols * sizeof *got) == 0;
		if (!same)
			fprintf(stderr, "%s at %d threads: differs\n", s, t);
		CHECK(same);
	}
	off = g;
	off.pad[0]--;
	conv_im2col(&off, src, got, 2);
	CHECK(memcmp(got, want, ncols * sizeof *got) != 0);
	free(src);
	free(want);
	free(got);
}

int
main(void)
{
	/* N,H,W,C,F,KH,KW,SH,SW,DH,DW,PT,PB,PL,PR; over 64 KiB: split. */
	static const char *const geoms[] = {
		"nhwc:1,32,32,3,8,7,7,2,2,1,1,3,2,3,2",	/* the stem's kind */
		"nhwc:1,31,33,3,8,7,7,2,2,1,1,2,3,1,3",
		"nhwc:2,20,20,3,4,3,3,1,1,2,2,2,1,1,2",	/* dilation 2 */
		"nhwc:1,17,23,5,4,3,5,2,1,1,2,0,1,2,0",	/* dilation along W */
		"nhwc:1,24,24,16,8,3,3,1,1,1,1,1,1,1,1",
		"nhwc:1,9,7,4,5,3,3,2,1,1,1,0,1,1,0",	/* small: one thread */
		"nhwc:1,4,4,3,2,7,7,1,1,1,1,3,3,3,3",	/* clipped both sides */
		"nhwc:1,5,5,2,2,3,3,1,1,1,1,4,4,4,4",	/* taps all padding */
		"nhwc:1,8,8,16,8,1,1,2,2,1,1,0,0,0,0",
		"nchw:1,32,32,3,8,7,7,2,2,1,1,3,2,3,2",
		"nchw:1,30,30,4,8,3,3,1,1,1,1,1,2,0,1",	/* stride 1: memcpy */
		"nchw:1,21,21,3,4,3,3,1,2,2,2,2,2,2,1",
		"nchw:1,4,4,3,2,7,7,1,1,1,1,3,3,3,3",
		"nchw:1,5,5,2,2,3,3,1,1,1,1,4,4,4,4",
		"nchw:1,8,8,4,8,1,1,2,2,1,1,0,0,0,0",
	};
	size_t i;

	for (i = 0; i < sizeof geoms / sizeof geoms[0]; i++)
		check_geom(geoms[i]);
	return check_done();
}
