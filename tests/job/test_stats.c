/*
 * The statistics behind the engine's figures: paired ratios and their 95%
 * interval, the drift test, medians and CVs, on series with known answers.
 */
#include <math.h>
#include <stdlib.h>

#include "job/job_int.h"
#include "tests/check.h"

static double
rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return ((*s >> 8) & 0xffff) / 65536.0;
}

int
main(void)
{
	double a[5] = { 110, 111, 109, 110, 112 }, b[5] = { 100, 101, 99, 100, 102 };
	double same[5] = { 100, 100, 100, 100, 100 };
	double steady[12], step[12], none[1] = { 0 };
	struct stats_ratio r;
	struct stats_drift d;
	unsigned s = 7;
	int i, covered = 0, trial;

	/* Medians and CVs. */
	CHECK(stats_median(a, 5) == 110);
	CHECK(stats_median(b, 4) == 100);
	CHECK(stats_cv(same, 5) == 0);
	CHECK(fabs(stats_cv(b, 5) - 0.01135633) < 1e-6);
	CHECK(stats_t(4, 0) == 2.776);
	CHECK(stats_t(1000, 1) == 2.576);

	/* A paired ratio: 1.10 within a tight interval that holds it. */
	CHECK(stats_ratio_ci(a, b, 5, &r) == 0);
	CHECK(r.n == 5);
	CHECK(fabs(r.est - 1.1) < 0.002);
	CHECK(r.lo <= r.est && r.est <= r.hi);
	CHECK(r.lo > 1.09 && r.hi < 1.11);
	/* Identical sides: exactly 1, no width. */
	CHECK(stats_ratio_ci(same, same, 5, &r) == 0);
	CHECK(r.est == 1 && r.lo == 1 && r.hi == 1);
	/* Rounds where a side failed (0) are left out; none left: -1. */
	b[2] = 0;
	CHECK(stats_ratio_ci(a, b, 5, &r) == 0 && r.n == 4);
	CHECK(stats_ratio_ci(none, none, 1, &r) == -1);

	/*
	 * Coverage: with 5% noise on both sides and a true ratio of 1.2, the
	 * 95% interval holds 1.2 in most of 400 draws (and not in all of them:
	 * it is an interval, not a guarantee).
	 */
	for (trial = 0; trial < 400; trial++) {
		double x[5], y[5];

		for (i = 0; i < 5; i++) {
			x[i] = 120 * (1 + 0.05 * (rnd(&s) - 0.5) * 3.46);
			y[i] = 100 * (1 + 0.05 * (rnd(&s) - 0.5) * 3.46);
		}
		(void)stats_ratio_ci(x, y, 5, &r);
		covered += r.lo <= 1.2 && 1.2 <= r.hi;
	}
	CHECK(covered >= 360 && covered < 400);

	/* Drift: noise alone is not drift; a 10% step is. */
	for (i = 0; i < 12; i++) {
		steady[i] = 100 * (1 + 0.03 * (rnd(&s) - 0.5));
		step[i] = (i < 6 ? 100 : 90) * (1 + 0.01 * (rnd(&s) - 0.5));
	}
	CHECK(stats_drift(steady, 12, 0.02, &d) == 0);
	CHECK(!d.drift);
	CHECK(stats_drift(step, 12, 0.02, &d) == 0);
	CHECK(d.drift);
	CHECK(d.after < d.before && fabs(d.after / d.before - 0.9) < 0.01);
	/* A real but tiny move (0.5%) is under the floor: not flagged. */
	for (i = 0; i < 12; i++)
		step[i] = i < 6 ? 100 : 99.5;
	CHECK(stats_drift(step, 12, 0.02, &d) == 0);
	CHECK(!d.drift);
	/* Too few points: no verdict. */
	CHECK(stats_drift(a, 3, 0.02, &d) == -1);
	return check_done();
}
