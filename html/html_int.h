/*
 * Private to html/: the inline-SVG chart helpers (chart.c) the report
 * (report.c) draws with, and HTML escaping.
 */
#ifndef AUTOSCHED_HTML_INT_H
#define AUTOSCHED_HTML_INT_H

#include <stddef.h>
#include <stdio.h>

/* One plot area: pixel size, margins, and the data range mapped onto it. */
struct chart {
	FILE	*f;
	double	 w, h;
	double	 ml, mr, mt, mb;	/* margins */
	double	 x0, x1, y0, y1;	/* data range */
	struct {
		double	 y;
		int	 left;
	}	 labels[16];		/* where chart_hline put its labels */
	size_t	 nlabels;
};

/* Print s with &, <, >, " and ' escaped (control characters dropped). */
void	 html_esc(FILE *, const char *s);

/*
 * Open an <svg> of w×h pixels with a frame, nice ticks on both axes (x ticks
 * as integers when xint, none when xint < 0; no y ticks when ylabel is
 * ""), axis labels and a title. cls is the svg's class
 * (the test finds charts by it). Data outside the range is clamped.
 */
void	 chart_begin(struct chart *, FILE *, int w, int h, const char *cls,
	    const char *title, const char *xlabel, const char *ylabel,
	    double x0, double x1, double y0, double y1, int xint);
/* The same with a left margin of ml pixels (room for row labels). */
void	 chart_begin_margin(struct chart *, int ml, FILE *, int w, int h,
	    const char *cls, const char *title, const char *xlabel,
	    const char *ylabel, double x0, double x1, double y0, double y1,
	    int xint);
/* Categorical x axis: label i at x = i (range -0.5 .. n-0.5). */
void	 chart_xlabels(struct chart *, const char *const *labels, size_t n);
double	 chart_x(const struct chart *, double);
double	 chart_y(const struct chart *, double);
/*
 * A dashed horizontal line across the plot at y, labelled at its right end
 * (or elsewhere when an earlier label is there).
 */
void	 chart_hline(struct chart *, double y, const char *color,
	    const char *label);
void	 chart_end(struct chart *);

/* A round upper bound for an axis holding values up to v (> 0). */
double	 chart_nice_max(double v);

/* Colours: a fixed one for the known phases and statuses, else from a palette. */
const char *html_phase_color(const char *phase);
const char *html_status_color(int status);

#endif
