/*
 * Inline SVG charts drawn by hand: a frame, nice ticks, labels; the report
 * places its points and lines through chart_x / chart_y.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "html/html_int.h"
#include "trial/trial.h"

void
html_esc(FILE *f, const char *s)
{
	/* HTML's five: the rest as they are, control characters dropped. */
	static const char *const entity[256] = { ['&'] = "&amp;",
	    ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;", ['\''] = "&#39;" };

	for (; s != NULL && *s != '\0'; s++) {
		if (entity[(unsigned char)*s] != NULL)
			fputs(entity[(unsigned char)*s], f);
		else if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
			fputc(*s, f);
	}
}

double
chart_nice_max(double v)
{
	static const double nice[] = { 1, 2, 2.5, 5 };
	double p, m;
	size_t i;

	if (!(v > 0) || !isfinite(v))
		return 1;
	p = pow(10, floor(log10(v)));
	m = v / p;
	for (i = 0; i < sizeof nice / sizeof nice[0]; i++) {
		if (m <= nice[i])
			return nice[i] * p;
	}
	return 10 * p;
}

/* A tick step giving about n ticks over span. */
static double
chart_step(double span, int n)
{
	double raw = span / n, p, m;

	if (!(raw > 0))
		return 1;
	p = pow(10, floor(log10(raw)));
	m = raw / p;
	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

/* Where v lies between lo and hi, clamped: 0 to 1 (0.5 when they meet). */
static double
chart_frac(double v, double lo, double hi)
{
	double span = hi - lo;

	if (v < lo)
		v = lo;
	if (v > hi)
		v = hi;
	return span > 0 ? (v - lo) / span : 0.5;
}

double
chart_x(const struct chart *c, double v)
{
	return c->ml + chart_frac(v, c->x0, c->x1) * (c->w - c->ml - c->mr);
}

double
chart_y(const struct chart *c, double v)
{
	return c->h - c->mb - chart_frac(v, c->y0, c->y1) *
	    (c->h - c->mt - c->mb);
}

void
chart_begin(struct chart *c, FILE *f, int w, int h, const char *cls,
    const char *title, const char *xlabel, const char *ylabel, double x0,
    double x1, double y0, double y1, int xint)
{
	chart_begin_margin(c, 56, f, w, h, cls, title, xlabel, ylabel, x0, x1,
	    y0, y1, xint);
}

void
chart_begin_margin(struct chart *c, int ml, FILE *f, int w, int h,
    const char *cls, const char *title, const char *xlabel,
    const char *ylabel, double x0, double x1, double y0, double y1, int xint)
{
	double s, v;

	memset(c, 0, sizeof *c);
	c->f = f;
	c->w = w;
	c->h = h;
	c->ml = ml;
	c->mr = 16;
	c->mt = 24;
	c->mb = 40;
	c->x0 = x0;
	c->x1 = x1 > x0 ? x1 : x0 + 1;
	c->y0 = y0;
	c->y1 = y1 > y0 ? y1 : y0 + 1;
	fprintf(f, "<svg class=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", cls, w, h,
	    w, h);
	fprintf(f, "<text x=\"%g\" y=\"15\" class=\"ttl\">", ml > 56 ? 8 : c->ml);
	html_esc(f, title);
	fprintf(f, "</text>\n");
	fprintf(f, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" "
	    "class=\"frame\"/>\n", c->ml, c->mt, c->w - c->ml - c->mr,
	    c->h - c->mt - c->mb);
	/* y ticks and grid; an unlabelled y axis is categorical: none */
	s = chart_step(c->y1 - c->y0, 5);
	for (v = ceil(c->y0 / s) * s; ylabel[0] != '\0' &&
	    v <= c->y1 + s * 1e-9; v += s) {
		double y = chart_y(c, v);

		fprintf(f, "<line x1=\"%g\" x2=\"%g\" y1=\"%.1f\" y2=\"%.1f\" "
		    "class=\"grid\"/><text x=\"%g\" y=\"%.1f\" class=\"tk\" "
		    "text-anchor=\"end\">%g</text>\n", c->ml, c->w - c->mr, y, y,
		    c->ml - 4, y + 4, fabs(v) < s * 1e-9 ? 0 : v);
	}
	if (xint >= 0) {
		s = chart_step(c->x1 - c->x0, 6);
		if (xint && s < 1)
			s = 1;
		for (v = ceil(c->x0 / s) * s; v <= c->x1 + s * 1e-9; v += s) {
			double x = chart_x(c, v);

			fprintf(f, "<text x=\"%.1f\" y=\"%g\" class=\"tk\" "
			    "text-anchor=\"middle\">%g</text>\n", x,
			    c->h - c->mb + 14, v);
		}
	}
	fprintf(f, "<text x=\"%g\" y=\"%g\" class=\"ax\" text-anchor=\"middle\">",
	    c->ml + (c->w - c->ml - c->mr) / 2, c->h - 6);
	html_esc(f, xlabel);
	fprintf(f, "</text>\n<text x=\"12\" y=\"%g\" class=\"ax\" "
	    "text-anchor=\"middle\" transform=\"rotate(-90 12 %g)\">",
	    c->mt + (c->h - c->mt - c->mb) / 2, c->mt + (c->h - c->mt - c->mb) / 2);
	html_esc(f, ylabel);
	fprintf(f, "</text>\n");
}

void
chart_xlabels(struct chart *c, const char *const *labels, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		fprintf(c->f, "<text x=\"%.1f\" y=\"%g\" class=\"tk\" "
		    "text-anchor=\"middle\">", chart_x(c, (double)i),
		    c->h - c->mb + 14);
		html_esc(c->f, labels[i]);
		fprintf(c->f, "</text>\n");
	}
}

void
chart_hline(struct chart *c, double y, const char *color, const char *label)
{
	double py = chart_y(c, y), ly = py - 3, lx = c->w - c->mr - 2;
	const char *anchor = "end";
	size_t i;
	int side;

	/*
	 * Labels of close lines must not print over each other: try the
	 * right end, then the left, then further down on the right.
	 */
	for (side = 0; side < 3; side++) {
		int clash = 0;

		if (side == 1) {
			lx = c->ml + 4;
			anchor = "start";
		} else if (side == 2) {
			lx = c->w - c->mr - 2;
			anchor = "end";
			ly = py + 11;
		}
		for (i = 0; i < c->nlabels; i++) {
			if (c->labels[i].left == (side == 1) &&
			    ly > c->labels[i].y - 11 && ly < c->labels[i].y + 11)
				clash = 1;
		}
		if (!clash)
			break;
	}
	if (side == 3)
		side = 2;
	if (c->nlabels < sizeof c->labels / sizeof c->labels[0]) {
		c->labels[c->nlabels].y = ly;
		c->labels[c->nlabels].left = side == 1;
		c->nlabels++;
	}
	fprintf(c->f, "<line x1=\"%g\" x2=\"%g\" y1=\"%.1f\" y2=\"%.1f\" "
	    "stroke=\"%s\" stroke-dasharray=\"6 4\" stroke-width=\"1.5\"/>"
	    "<text x=\"%g\" y=\"%.1f\" class=\"tk\" fill=\"%s\" "
	    "text-anchor=\"%s\">", c->ml, c->w - c->mr, py, py, color, lx, ly,
	    color, anchor);
	html_esc(c->f, label);
	fprintf(c->f, "</text>\n");
}

void
chart_end(struct chart *c)
{
	fprintf(c->f, "</svg>\n");
}

const char *
html_phase_color(const char *phase)
{
	static const struct {
		const char	*phase;
		const char	*color;
	} known[] = {
		{ "baseline", "#7f7f7f" },
		{ "tune", "#1f77b4" },
		{ "confirm", "#ff7f0e" },
		{ "reference", "#2ca02c" },
		{ "final", "#9467bd" },
		{ "noise", "#8c564b" },
	};
	static const char *const other[] = {
		"#e377c2", "#17becf", "#bcbd22", "#393b79", "#637939",
	};
	unsigned h = 0;
	size_t i;

	for (i = 0; i < sizeof known / sizeof known[0]; i++) {
		if (strcmp(phase, known[i].phase) == 0)
			return known[i].color;
	}
	for (; *phase != '\0'; phase++)
		h = h * 31 + (unsigned char)*phase;
	return other[h % (sizeof other / sizeof other[0])];
}

const char *
html_status_color(int status)
{
	static const char *const colors[TRIAL_STATUS_COUNT] = {
		[TRIAL_OK] = "#1f77b4",
		[TRIAL_COMPILE_FAILED] = "#d62728",
		[TRIAL_COMPILE_TIMEOUT] = "#ff9896",
		[TRIAL_CRASHED] = "#000000",
		[TRIAL_TIMEOUT] = "#e377c2",
		[TRIAL_WRONG_RESULT] = "#bcbd22",
		[TRIAL_UNSTABLE] = "#aec7e8",
		[TRIAL_ERROR] = "#8c564b",
	};

	if (status < 0 || status >= TRIAL_STATUS_COUNT)
		return "#444444";
	return colors[status];
}
