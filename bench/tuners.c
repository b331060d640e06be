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

static const char *const tuner_names[] = { "grid", "random", "xgboost",
    "xgboost+transfer" };

/* The recorded sweeps, one line each. */
static void
print_sweeps(const struct sweep *sw, size_t nsw)
{
	struct config c;
	char name[160];

	printf("Recorded sweeps (target: %s, %s; mlir-cpu backend)\n",
	    sw[0].cpu, sw[0].toolchain);
	for (size_t i = 0; i < nsw; i++) {
		space_get(sw[i].space, sw[i].best_idx, &c);
		space_config_name(&c, space_knobs(sw[i].space), name,
		    sizeof name);
		printf("  %-8s %-42s %4llu configs, best %6.1f GFLOP/s  %s\n",
		    sw[i].name, sw[i].op.name,
		    (unsigned long long)sw[i].count, sw[i].best, name);
	}
}

/* XGBoost's settings (-o) and what the tuners are run with. */
struct bench_opts {
	const char	*keys[BENCH_MAX_SETS], *vals[BENCH_MAX_SETS];
	size_t		 nset;
	int		 seeds;
};

/*
 * Tuner r (grid, random, xgboost, xgboost with transfer from the records
 * rec) over seeds runs of sweep sw into row. 0, or -1 with a message.
 */
static int
bench_tuner(const struct sweep *sw, int r, const struct bench_opts *bo,
    struct tuner_record *rec, size_t nrec, struct bench_row *row)
{
	const struct tuner_ops *t = tuner_find(r < 2 ? tuner_names[r] : "xgboost");
	struct sweep_run run;
	double w0 = util_now();
	char *err = NULL;

	for (int s = 0; s < bo->seeds; s++) {
		if (sweep_run(sw, t, 1000 + (uint64_t)s,
		    r >= 2 ? bo->keys : NULL, r >= 2 ? bo->vals : NULL,
		    r >= 2 ? bo->nset : 0, r == 3 ? rec : NULL,
		    r == 3 ? nrec : 0, &run, &err) != 0) {
			fprintf(stderr, "tuners: %s: %s: %s\n", sw->name,
			    tuner_names[r], err);
			free(err);
			return -1;
		}
		bench_add(&row->to95, run.to95, (int64_t)sw->count);
		bench_add(&row->to99, run.to99, (int64_t)sw->count);
		row->tuner_s += run.tuner_s;
		row->replay_s += run.replay_s;
		if (run.worst_frac > row->worst_frac)
			row->worst_frac = run.worst_frac;
	}
	row->wall_s = util_now() - w0;
	return 0;
}

/* The sums the closing targets are made of. */
struct bench_sums {
	double	frac[4], ratio, transfer, tuner, replay, worst;
};

/* Sweep sw's four rows, printed once random's is in (for the ratio), and summed. */
static void
print_rows(const struct sweep *sw, struct bench_row rows[4],
    struct bench_sums *su)
{
	char a[64], b[64];

	for (int r = 0; r < 4; r++) {
		struct bench_row *row = &rows[r];

		bench_fmt(&row->to95, a, sizeof a);
		bench_fmt(&row->to99, b, sizeof b);
		printf("%-8s %-17s %-27s %-27s %9.2f", sw->name,
		    tuner_names[r], a, b, bench_mean(&rows[1].to95) /
		    bench_mean(&row->to95));
		if (r >= 2) {
			printf(" %8.2f%% %8.2f%% %6.1fs\n", 100 *
			    row->tuner_s / row->replay_s,
			    100 * row->worst_frac, row->wall_s);
			su->tuner += row->tuner_s;
			su->replay += row->replay_s;
			if (row->worst_frac > su->worst)
				su->worst = row->worst_frac;
		} else
			printf(" %9s %9s\n", "-", "-");
		su->frac[r] += bench_mean(&row->to95) / (double)sw->count;
	}
	su->ratio += bench_mean(&rows[1].to95) / bench_mean(&rows[2].to95);
	su->transfer += bench_mean(&rows[2].to95) / bench_mean(&rows[3].to95);
}

static void
print_targets(const struct bench_sums *su, size_t nsw)
{
	printf("\nTargets (averaged over the %zu sweeps):\n", nsw);
	printf("  XGBoost trials to 95%% / space size:  %5.1f%%  (target <= 10%%;"
	    " random %.1f%%, with transfer %.1f%%)\n", 100 * su->frac[2] / nsw,
	    100 * su->frac[1] / nsw, 100 * su->frac[3] / nsw);
	printf("  random / XGBoost trials to 95%%:      %5.2f   (target >= 3)\n",
	    su->ratio / nsw);
	printf("  cold / transfer trials to 95%%:       %5.2f   (target >= 2)\n",
	    su->transfer / nsw);
	printf("  XGBoost overhead / replayed time:    %5.2f%%  (target <= 5%%;"
	    " worst batch %.2f%%)\n", 100 * su->tuner / su->replay,
	    100 * su->worst);
	printf("  (\"overhead\": tuner seconds / recorded compile+measure seconds "
	    "of its trials; \"*k\": k runs never got there, counted as the "
	    "space size)\n");
}

static void
parse_opts(int argc, char **argv, struct bench_opts *bo)
{
	char *eq;
	int ch;

	while ((ch = getopt(argc, argv, "s:o:")) != -1) {
		switch (ch) {
		case 's':
			bo->seeds = atoi(optarg);
			if (bo->seeds < 1 || bo->seeds > 10000)
				usage();
			break;
		case 'o':
			if (bo->nset == BENCH_MAX_SETS ||
			    (eq = strchr(optarg, '=')) == NULL)
				usage();
			*eq = '\0';
			bo->keys[bo->nset] = optarg;
			bo->vals[bo->nset++] = eq + 1;
			break;
		default:
			usage();
		}
	}
}

int
main(int argc, char **argv)
{
	static struct sweep sw[BENCH_MAX_SWEEPS];
	const struct sweep *others[BENCH_MAX_SWEEPS];
	struct bench_row rows[BENCH_MAX_SWEEPS][4];
	struct bench_opts bo = { .seeds = 50 };
	struct bench_sums su;
	struct tuner_record *rec;
	char *err = NULL;
	double t0 = util_now();
	size_t nsw = 0, nrec, no, i, j;
	int r, rc = 1;

	memset(&su, 0, sizeof su);
	parse_opts(argc, argv, &bo);
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
	print_sweeps(sw, nsw);
	printf("\nTrials to reach 95%% / 99%% of the exhaustive best: mean±sd "
	    "[min-max] over %d seeds\n", bo.seeds);
	if (bo.nset > 0) {
		printf("XGBoost settings:");
		for (i = 0; i < bo.nset; i++)
			printf(" %s=%s", bo.keys[i], bo.vals[i]);
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
			if (bench_tuner(&sw[i], r, &bo, rec, nrec,
			    &rows[i][r]) != 0) {
				free(rec);
				goto out;
			}
		}
		print_rows(&sw[i], rows[i], &su);
		free(rec);
	}
	print_targets(&su, nsw);
	printf("bench time %.1f s\n", util_now() - t0);
	rc = 0;
out:
	for (i = 0; i < nsw; i++)
		sweep_free(&sw[i]);
	return rc;
}
