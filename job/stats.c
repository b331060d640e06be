/*
 * The small statistics the engine's figures rest on: medians, paired
 * ratios with a 95% confidence interval (Student's t on log ratios), and a
 * two-sample test for baseline drift (Welch's t on logs).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "job/job_int.h"

double
stats_flops(const struct op_desc *op)
{
	return analysis_op_flops(op);
}

/* Two-sided Student's t quantiles for df = 1…30; past 30 the normal's. */
static const double t975[30] = {
	12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
};
static const double t995[30] = {
	63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169,
	3.106, 3.055, 3.012, 2.977, 2.947, 2.921, 2.898, 2.878, 2.861, 2.845,
	2.831, 2.819, 2.807, 2.797, 2.787, 2.779, 2.771, 2.763, 2.756, 2.750,
};

double
stats_t(double df, int level99)
{
	int i = (int)floor(df);

	if (i < 1)
		i = 1;
	if (i > 30)
		return level99 ? 2.576 : 1.960;
	return level99 ? t995[i - 1] : t975[i - 1];
}

static int
stats_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double
stats_median(const double *v, int n)
{
	double *s;
	double m;

	if (n <= 0)
		return 0;
	s = malloc((size_t)n * sizeof *s);
	if (s == NULL)
		return 0;
	memcpy(s, v, (size_t)n * sizeof *s);
	qsort(s, (size_t)n, sizeof *s, stats_cmp);
	m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

void
stats_mean_sd(const double *v, int n, double *mean, double *sd)
{
	double s = 0, q = 0;
	int i;

	*mean = *sd = 0;
	if (n <= 0)
		return;
	for (i = 0; i < n; i++)
		s += v[i];
	*mean = s / n;
	for (i = 0; i < n; i++)
		q += (v[i] - *mean) * (v[i] - *mean);
	*sd = n > 1 ? sqrt(q / (n - 1)) : 0;
}

double
stats_cv(const double *v, int n)
{
	double mean, sd;

	stats_mean_sd(v, n, &mean, &sd);
	return mean > 0 ? sd / mean : 0;
}

int
stats_ratio_ci(const double *a, const double *b, int n, struct stats_ratio *r)
{
	double l[64], mean, sd, h;
	int i, k = 0;

	memset(r, 0, sizeof *r);
	for (i = 0; i < n && k < 64; i++) {
		if (a[i] > 0 && b[i] > 0)
			l[k++] = log(a[i] / b[i]);
	}
	r->n = k;
	if (k == 0)
		return -1;
	stats_mean_sd(l, k, &mean, &sd);
	r->est = exp(mean);
	if (k < 2) {
		r->lo = r->hi = r->est;
		return 0;
	}
	h = stats_t(k - 1, 0) * sd / sqrt((double)k);
	r->lo = exp(mean - h);
	r->hi = exp(mean + h);
	return 0;
}

int
stats_drift(const double *v, int n, double min_change, struct stats_drift *d)
{
	double la[64], lb[64], ma, sa, mb, sb, va, vb, se, df;
	int i, na, nb;

	memset(d, 0, sizeof *d);
	if (n < 4 || n > 128)
		return -1;
	na = n / 2;
	nb = n - na;
	for (i = 0; i < na; i++)
		la[i] = log(v[i] > 0 ? v[i] : 1e-300);
	for (i = 0; i < nb; i++)
		lb[i] = log(v[na + i] > 0 ? v[na + i] : 1e-300);
	stats_mean_sd(la, na, &ma, &sa);
	stats_mean_sd(lb, nb, &mb, &sb);
	d->before = exp(ma);
	d->after = exp(mb);
	va = sa * sa / na;
	vb = sb * sb / nb;
	se = sqrt(va + vb);
	if (se > 0) {
		/* Welch–Satterthwaite degrees of freedom. */
		df = (va + vb) * (va + vb) / (va * va / (na - 1) + vb * vb / (nb - 1));
		d->t = fabs(mb - ma) / se;
		d->t_crit = stats_t(df, 1);
	} else {
		d->t = fabs(mb - ma) > 0 ? INFINITY : 0;
		d->t_crit = 0;
	}
	d->drift = d->t > d->t_crit && fabs(d->after / d->before - 1) > min_change;
	return 0;
}
