/*
 * The tuner benchmark: grid, random, XGBoost cold and XGBoost warmed on the
 * other sweeps, replayed over recorded exhaustive sweeps; trials to 95% and
 * 99% of each sweep's best over many seeds, and the tuner's own overhead.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/sweep.h"
#include "util/util.h"

#define BENCH_MAX_SWEEPS	16
#define BENCH_MAX_SETS		16

struct bench_stat {
	double	 sum, sumsq, min, max;
	int	 n, missed;	/* missed: runs that never got there */
};

/* One row of the table: a tuner on a sweep, over every seed. */
struct bench_row {
	struct bench_stat to95, to99;
	double		 tuner_s, replay_s, worst_frac;
	double		 wall_s;	/* the bench's own time on this row */
};

static void
bench_add(struct bench_stat *st, int64_t v, int64_t cap)
{
	double x;

	/* A run that never gets there counts as the whole space, and is flagged. */
	if (v < 0) {
		st->missed++;
		v = cap;
	}
	x = (double)v;
	if (st->n == 0 || x < st->min)
		st->min = x;
	if (st->n == 0 || x > st->max)
		st->max = x;
	st->sum += x;
	st->sumsq += x * x;
	st->n++;
}

static double
bench_mean(const struct bench_stat *st)
{
	return st->n ? st->sum / st->n : 0;
}

static double
bench_sd(const struct bench_stat *st)
{
	double m = bench_mean(st), v;

	if (st->n < 2)
		return 0;
	v = (st->sumsq - st->n * m * m) / (st->n - 1);
	return v > 0 ? sqrt(v) : 0;
}

/* "123.4±5.6 [1-300]", plus "*k" when k runs never got there. */
static void
bench_fmt(const struct bench_stat *st, char *buf, size_t len)
{
	int w;

	w = snprintf(buf, len, "%6.1f±%5.1f [%3.0f-%3.0f]", bench_mean(st),
	    bench_sd(st), st->min, st->max);
	if (st->missed > 0 && w > 0 && (size_t)w < len)
		snprintf(buf + w, len - (size_t)w, " *%d", st->missed);
}

static void
usage(void)
{
	fprintf(stderr, "usage: tuners [-s seeds] [-o key=value]... "
	    "SWEEP.db...\n"
	    "  -s N          seeds per tuner and sweep (default 50)\n"
	    "  -o key=value  an XGBoostTuner [SearchStrategy] setting\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	static struct sweep sw[BENCH_MAX_SWEEPS];
	static const char *const names[] = { "grid", "random", "xgboost",
	    "xgboost+transfer" };
	const char *keys[BENCH_MAX_SETS], *vals[BENCH_MAX_SETS];
	const struct sweep *others[BENCH_MAX_SWEEPS];
	struct bench_row rows[BENCH_MAX_SWEEPS][4];
	struct tuner_record *rec;
	struct sweep_run run;
	struct config c;
	char *err = NULL, *eq, name[160], a[64], b[64];
	double t0 = util_now(), sum_frac[4] = { 0 }, sum_ratio = 0,
	    sum_transfer = 0, tot_tuner = 0, tot_replay = 0, worst = 0;
	size_t nsw = 0, nset = 0, nrec, no, i, j;
	int seeds = 50, ch, r, s, rc = 1;

	while ((ch = getopt(argc, argv, "s:o:")) != -1) {
		switch (ch) {
		case 's':
			seeds = atoi(optarg);
			if (seeds < 1 || seeds > 10000)
				usage();
			break;
		case 'o':
			if (nset == BENCH_MAX_SETS ||
			    (eq = strchr(optarg, '=')) == NULL)
				usage();
			*eq = '\0';
			keys[nset] = optarg;
			vals[nset++] = eq + 1;
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1 || argc > BENCH_MAX_SWEEPS)
		usage();
	for (i = 0; i < (size_t)argc; i++) {
		if (sweep_load(argv[i], &sw[nsw], &err) != 0) {
			fprintf(stderr, "tuners: %s\n", err);
			free(err);
			goto out;
		}
		nsw++;
	}

	printf("Recorded sweeps (target: %s, %s; mlir-cpu backend)\n",
	    sw[0].cpu, sw[0].toolchain);
	for (i = 0; i < nsw; i++) {
		space_get(sw[i].space, sw[i].best_idx, &c);
		space_config_name(&c, space_knobs(sw[i].space), name,
		    sizeof name);
		printf("  %-8s %-42s %4llu configs, best %6.1f GFLOP/s  %s\n",
		    sw[i].name, sw[i].op.name,
		    (unsigned long long)sw[i].count, sw[i].best, name);
	}
	printf("\nTrials to reach 95%% / 99%% of the exhaustive best: mean±sd "
	    "[min-max] over %d seeds\n", seeds);
	if (nset > 0) {
		printf("XGBoost settings:");
		for (i = 0; i < nset; i++)
			printf(" %s=%s", keys[i], vals[i]);
		printf("\n");
	}
	printf("%-8s %-17s %-27s %-27s %9s %9s %9s %7s\n", "sweep", "tuner",
	    "to 95%", "to 99%", "rand/this", "overhead", "worst", "bench");

	for (i = 0; i < nsw; i++) {
		/* Transfer learns from every other sweep. */
		for (j = no = 0; j < nsw; j++) {
			if (j != i)
				others[no++] = &sw[j];
		}
		rec = sweep_records(others, no, &nrec);
		memset(rows[i], 0, sizeof rows[i]);
		for (r = 0; r < 4; r++) {
			const struct tuner_ops *t = tuner_find(r < 2 ? names[r] :
			    "xgboost");
			struct bench_row *row = &rows[i][r];
			double w0 = util_now();

			for (s = 0; s < seeds; s++) {
				if (sweep_run(&sw[i], t, 1000 + (uint64_t)s,
				    r >= 2 ? keys : NULL, r >= 2 ? vals : NULL,
				    r >= 2 ? nset : 0, r == 3 ? rec : NULL,
				    r == 3 ? nrec : 0, &run, &err) != 0) {
					fprintf(stderr, "tuners: %s: %s: %s\n",
					    sw[i].name, names[r], err);
					free(err);
					free(rec);
					goto out;
				}
				bench_add(&row->to95, run.to95,
				    (int64_t)sw[i].count);
				bench_add(&row->to99, run.to99,
				    (int64_t)sw[i].count);
				row->tuner_s += run.tuner_s;
				row->replay_s += run.replay_s;
				if (run.worst_frac > row->worst_frac)
					row->worst_frac = run.worst_frac;
			}
			row->wall_s = util_now() - w0;
		}
		/* Printed once random's row is in, for the ratio. */
		for (r = 0; r < 4; r++) {
			struct bench_row *row = &rows[i][r];

			bench_fmt(&row->to95, a, sizeof a);
			bench_fmt(&row->to99, b, sizeof b);
			printf("%-8s %-17s %-27s %-27s %9.2f", sw[i].name,
			    names[r], a, b, bench_mean(&rows[i][1].to95) /
			    bench_mean(&row->to95));
			if (r >= 2) {
				printf(" %8.2f%% %8.2f%% %6.1fs\n", 100 *
				    row->tuner_s / row->replay_s,
				    100 * row->worst_frac, row->wall_s);
				tot_tuner += row->tuner_s;
				tot_replay += row->replay_s;
				if (row->worst_frac > worst)
					worst = row->worst_frac;
			} else
				printf(" %9s %9s\n", "-", "-");
			sum_frac[r] += bench_mean(&row->to95) /
			    (double)sw[i].count;
		}
		free(rec);
		sum_ratio += bench_mean(&rows[i][1].to95) /
		    bench_mean(&rows[i][2].to95);
		sum_transfer += bench_mean(&rows[i][2].to95) /
		    bench_mean(&rows[i][3].to95);
	}

	printf("\nTargets (averaged over the %zu sweeps):\n", nsw);
	printf("  XGBoost trials to 95%% / space size:  %5.1f%%  (target <= 10%%;"
	    " random %.1f%%, with transfer %.1f%%)\n", 100 * sum_frac[2] / nsw,
	    100 * sum_frac[1] / nsw, 100 * sum_frac[3] / nsw);
	printf("  random / XGBoost trials to 95%%:      %5.2f   (target >= 3)\n",
	    sum_ratio / nsw);
	printf("  cold / transfer trials to 95%%:       %5.2f   (target >= 2)\n",
	    sum_transfer / nsw);
	printf("  XGBoost overhead / replayed time:    %5.2f%%  (target <= 5%%;"
	    " worst batch %.2f%%)\n", 100 * tot_tuner / tot_replay, 100 * worst);
	printf("  (\"overhead\": tuner seconds / recorded compile+measure seconds "
	    "of its trials; \"*k\": k runs never got there, counted as the "
	    "space size)\n");
	printf("bench time %.1f s\n", util_now() - t0);
	rc = 0;
out:
	for (i = 0; i < nsw; i++)
		sweep_free(&sw[i]);
	return rc;
}
