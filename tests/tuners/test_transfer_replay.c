/*
 * Transfer on real data: XGBoostTuner warmed on one recorded sweep of this
 * repository (bench/data) needs fewer trials to reach 95% of another sweep's
 * best than a cold start, averaged over fixed seeds. Replayed, so no timing.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench/sweep.h"
#include "util/util.h"
#include "tests/check.h"

#define SEEDS	8

/* Mean trials to 95% on sweep to, warmed on from (NULL = cold). */
static double
mean_to95(const struct sweep *to, const struct sweep *from)
{
	const struct tuner_ops *t = tuner_find("xgboost");
	struct tuner_record *rec = NULL;
	struct sweep_run run;
	size_t nrec = 0;
	char *err = NULL;
	double sum = 0;
	int s;

	if (from != NULL)
		rec = sweep_records(&from, 1, &nrec);
	for (s = 0; s < SEEDS; s++) {
		if (sweep_run(to, t, 1 + (uint64_t)s, NULL, NULL, 0, rec, nrec,
		    &run, &err) != 0) {
			fprintf(stderr, "sweep_run: %s\n", err);
			free(err);
			CHECK(0);
			break;
		}
		CHECK(run.to95 > 0);
		sum += run.to95 > 0 ? (double)run.to95 : (double)to->count;
	}
	free(rec);
	return sum / SEEDS;
}

int
main(void)
{
	static const char *const names[] = { "mm512", "mm1024" };
	struct sweep sw[2];
	char *path, *err = NULL;
	double cold, warm;
	int i;

	for (i = 0; i < 2; i++) {
		path = xasprintf("%s/%s.db", AUTOSCHED_BENCH_DATA, names[i]);
		if (sweep_load(path, &sw[i], &err) != 0) {
			fprintf(stderr, "%s\n", err);
			free(err);
			free(path);
			CHECK(0);
			return check_done();
		}
		free(path);
		CHECK(sw[i].count >= 500);
		CHECK(sw[i].best > 0);
	}

	/* Both ways: each sweep teaches the other. */
	for (i = 0; i < 2; i++) {
		cold = mean_to95(&sw[i], NULL);
		warm = mean_to95(&sw[i], &sw[1 - i]);
		printf("%s: trials to 95%%: cold %.1f, warmed on %s %.1f\n",
		    sw[i].name, cold, sw[1 - i].name, warm);
		CHECK(warm < cold);
	}
	for (i = 0; i < 2; i++)
		sweep_free(&sw[i]);
	return check_done();
}
