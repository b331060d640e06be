/*
 * XGBoostTuner: model-based search in the manner of AutoTVM's XGBTuner. An
 * XGBoost cost model, retrained on every result so far, scores the configs;
 * simulated annealing over the indexed space (or, in a small space, scoring
 * every point) picks the next batch of unvisited configs, plus a few random
 * ones. Records of other shapes warm it up through a base model.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xgboost/c_api.h>

#include "analysis/analysis.h"
#include "tuners/tuner_int.h"
#include "util/util.h"

#define NF		SPACE_NFEATURES
#define XGB_NONE	UINT64_MAX	/* "no sample yet" in the sample map */

/* The knobs of the tuner, each with a [SearchStrategy] key (see xgboost_keys). */
struct xgboost_opts {
	int64_t	 batch_size;	/* configs per model round; 0 = from n_trial */
	int64_t	 plan_size;	/* cap on the batch (AutoTVM's plan_size) */
	int64_t	 cold_start;	/* random picks before the first model; 0 = one batch */
	double	 epsilon;	/* share of each batch picked at random */
	int64_t	 sa_chains;
	int64_t	 sa_steps;
	int64_t	 sa_early_stop;	/* steps without a change of the top set */
	int64_t	 sa_exhaustive;	/* score every point of spaces this small */
	int64_t	 max_depth;
	double	 eta;
	double	 gamma;
	double	 min_child_weight;
	int64_t	 rounds;
	char	 objective[32];
	int64_t	 transfer;	/* 0 = ignore records of other shapes */
	int64_t	 transfer_min;	/* fewer records than this are ignored */
	double	 transfer_halflife; /* base weight halves every this many samples */
};

struct xgboost {
	struct xgboost_opts	 o;
	const struct op_desc	*op;		/* borrowed until destroy */
	const struct space	*space;		/* borrowed until destroy */
	uint64_t		 count;
	uint64_t		 seed;
	struct tuner_rng	 rng;
	struct tuner_perm	 perm;		/* random picks */
	int64_t			 batch;

	struct tuner_set	 visited;	/* index -> sample number, or XGB_NONE */
	float			*x;		/* nsamples × NF features */
	double			*gflops;	/* 0 for failed configs */
	size_t			 nsamples, capsamples;
	size_t			 new_results;	/* since the last training */

	BoosterHandle		 model;		/* NULL until trained */
	BoosterHandle		 base;		/* transfer model, or NULL */
	double			 w;		/* weight of base in scores */
	int			 rounds_done;	/* trainings, to vary the seed */

	uint64_t		*plan;		/* proposals not handed out yet */
	size_t			 nplan, planpos;

	uint64_t		*chain;		/* persistent SA chains */
	double			*chain_score;
	size_t			 nchain;

	float			*all_x;		/* features of every point (small spaces) */
	float			*all_base;	/* base margins of every point */

	int			 knobs[KNOB_COUNT];	/* knobs with > 1 value */
	int			 nknobs;

	double			 overhead;	/* seconds since the last overhead call */
	int			 warned;
};

static const char *const xgboost_keys[] = {
	"batch_size", "plan_size", "cold_start", "epsilon", "sa_chains",
	"sa_steps", "sa_early_stop", "sa_exhaustive", "xgb_max_depth",
	"xgb_eta", "xgb_gamma", "xgb_min_child_weight", "xgb_rounds",
	"objective", "transfer", "transfer_min", "transfer_halflife", NULL
};

#define XGB_CHECK(call) do {						\
	if ((call) != 0) {						\
		util_seterr(err, "xgboost: %s", XGBGetLastError());	\
		goto fail;						\
	}								\
} while (0)

/* Say once that the model failed; the tuner goes on with random picks. */
static void
xgboost_warn(struct xgboost *x, const char *msg)
{
	if (!x->warned)
		fprintf(stderr, "XGBoostTuner: %s; picking at random\n", msg);
	x->warned = 1;
}

static int
xgboost_parse(const struct tuner_params *p, struct xgboost_opts *o, char **err)
{
	const char *s;
	int line = 0;

	/* AutoTVM's XGBTuner defaults, except where the comments say. */
	o->batch_size = 0;
	o->plan_size = 64;
	o->cold_start = 0;
	o->epsilon = 0.05;
	o->sa_chains = 128;
	o->sa_steps = 500;
	o->sa_early_stop = 50;
	o->sa_exhaustive = 32768;
	o->max_depth = 3;
	o->eta = 0.3;
	o->gamma = 1e-4;
	o->min_child_weight = 1;
	o->rounds = 100;
	strcpy(o->objective, "rank:pairwise");
	o->transfer = 1;
	o->transfer_min = 32;
	o->transfer_halflife = 64;

	if (tuner_param_int(p, "batch_size", 0, 4096, &o->batch_size, err) != 0 ||
	    tuner_param_int(p, "plan_size", 1, 4096, &o->plan_size, err) != 0 ||
	    tuner_param_int(p, "cold_start", 0, 1 << 20, &o->cold_start, err) != 0 ||
	    tuner_param_double(p, "epsilon", 0, 1, &o->epsilon, err) != 0 ||
	    tuner_param_int(p, "sa_chains", 1, 4096, &o->sa_chains, err) != 0 ||
	    tuner_param_int(p, "sa_steps", 1, 100000, &o->sa_steps, err) != 0 ||
	    tuner_param_int(p, "sa_early_stop", 1, 100000, &o->sa_early_stop,
	    err) != 0 ||
	    tuner_param_int(p, "sa_exhaustive", 0, 1 << 22, &o->sa_exhaustive,
	    err) != 0 ||
	    tuner_param_int(p, "xgb_max_depth", 1, 16, &o->max_depth, err) != 0 ||
	    tuner_param_double(p, "xgb_eta", 1e-6, 1, &o->eta, err) != 0 ||
	    tuner_param_double(p, "xgb_gamma", 0, 1e6, &o->gamma, err) != 0 ||
	    tuner_param_double(p, "xgb_min_child_weight", 0, 1e6,
	    &o->min_child_weight, err) != 0 ||
	    tuner_param_int(p, "xgb_rounds", 1, 10000, &o->rounds, err) != 0 ||
	    tuner_param_int(p, "transfer", 0, 1, &o->transfer, err) != 0 ||
	    tuner_param_int(p, "transfer_min", 1, 1 << 24, &o->transfer_min,
	    err) != 0 ||
	    tuner_param_double(p, "transfer_halflife", 1, 1e9,
	    &o->transfer_halflife, err) != 0)
		return -1;
	if ((s = tuner_param(p, "objective", &line)) != NULL) {
		if (strcmp(s, "rank:pairwise") != 0 &&
		    strcmp(s, "reg:squarederror") != 0) {
			util_seterr(err, "%s:%d: [SearchStrategy] objective: "
			    "expected rank:pairwise or reg:squarederror, not \"%s\"",
			    p->cfg_path ? p->cfg_path : "cfg", line, s);
			return -1;
		}
		snprintf(o->objective, sizeof o->objective, "%s", s);
	}
	return 0;
}

/* batch_size as p sets it; 0 where it does not (or not to a count). */
static int64_t
xgboost_batch(const struct tuner_params *p)
{
	struct xgboost_opts o;

	return xgboost_parse(p, &o, NULL) == 0 ? o.batch_size : 0;
}

static int
xgboost_create(const struct tuner_params *p, const struct op_desc *op,
    const struct space *s, void **priv, char **err)
{
	struct xgboost *x = xcalloc(1, sizeof *x);
	int k;

	if (xgboost_parse(p, &x->o, err) != 0) {
		free(x);
		return -1;
	}
	x->op = op;
	x->space = s;
	x->count = space_count(s);
	x->seed = p->seed;
	tuner_rng_seed(&x->rng, p->seed);
	tuner_perm_init(&x->perm, x->count);
	tuner_set_init(&x->visited);
	x->w = 1;

	/*
	 * AutoTVM measures plan_size (64) configs between trainings, which
	 * suits budgets of thousands. Our budgets are often tens (the seed's
	 * example has n_trial 16), and a training costs milliseconds against
	 * seconds per compiled and measured trial, so retrain more often: an
	 * eighth of the budget, at least 4, at most 16 (on the recorded sweeps,
	 * bench/tuners.sh, batches of 16 reach 95% of the best in about half
	 * the trials batches of 64 need), and never above plan_size.
	 */
	x->batch = x->o.batch_size;
	if (x->batch == 0) {
		x->batch = p->n_trial > 0 ? p->n_trial / 8 : 16;
		if (x->batch < 4)
			x->batch = 4;
		if (x->batch > 16)
			x->batch = 16;
	}
	if (x->batch > x->o.plan_size)
		x->batch = x->o.plan_size;
	if (x->o.cold_start == 0)
		x->o.cold_start = x->batch;
	x->plan = xcalloc((size_t)(x->batch > x->o.plan_size ? x->batch :
	    x->o.plan_size), sizeof *x->plan);

	for (k = 0; k < KNOB_COUNT; k++) {
		if (space_knob_size(s, (enum knob)k) > 1)
			x->knobs[x->nknobs++] = k;
	}
	/* XGBoost talks on stderr otherwise; errors still come back to us. */
	XGBSetGlobalConfig("{\"verbosity\":0}");
	*priv = x;
	return 0;
}

/*
 * Margins of booster h for n rows into out (caller's array). XGBoost's own
 * output buffer lives only until its next call: it is copied out here.
 */
static int
xgboost_predict(BoosterHandle h, const float *rows, size_t n, float *out,
    char **err)
{
	DMatrixHandle dm = NULL;
	bst_ulong len;
	const float *res;
	int rc = -1;

	XGB_CHECK(XGDMatrixCreateFromMat(rows, (bst_ulong)n, NF, NAN, &dm));
	XGB_CHECK(XGBoosterPredict(h, dm, 1, 0, 0, &len, &res));
	if (len != n) {
		util_seterr(err, "xgboost: %llu predictions for %zu rows",
		    (unsigned long long)len, n);
		goto fail;
	}
	memcpy(out, res, n * sizeof *out);
	rc = 0;
fail:
	if (dm != NULL)
		XGDMatrixFree(dm);
	return rc;
}

/*
 * Train a new booster on n rows (labels y, optional groups for ranking,
 * optional base margins). The caller frees *out with XGBoosterFree.
 */
static int
xgboost_fit(const struct xgboost_opts *o, uint64_t seed, const float *rows,
    const float *y, size_t n, const unsigned *groups, size_t ngroups,
    const float *margin, BoosterHandle *out, char **err)
{
	DMatrixHandle dm = NULL;
	BoosterHandle h = NULL;
	char buf[64];
	int i;

	*out = NULL;
	XGB_CHECK(XGDMatrixCreateFromMat(rows, (bst_ulong)n, NF, NAN, &dm));
	XGB_CHECK(XGDMatrixSetFloatInfo(dm, "label", y, (bst_ulong)n));
	if (groups != NULL)
		XGB_CHECK(XGDMatrixSetGroup(dm, groups, (bst_ulong)ngroups));
	if (margin != NULL)
		XGB_CHECK(XGDMatrixSetFloatInfo(dm, "base_margin", margin,
		    (bst_ulong)n));
	XGB_CHECK(XGBoosterCreate(&dm, 1, &h));
	/* One thread and a seed: the same results give the same model. */
	XGB_CHECK(XGBoosterSetParam(h, "nthread", "1"));
	snprintf(buf, sizeof buf, "%u", (unsigned)(seed & 0x7fffffff));
	XGB_CHECK(XGBoosterSetParam(h, "seed", buf));
	XGB_CHECK(XGBoosterSetParam(h, "verbosity", "0"));
	XGB_CHECK(XGBoosterSetParam(h, "tree_method", "exact"));
	XGB_CHECK(XGBoosterSetParam(h, "objective", o->objective));
	snprintf(buf, sizeof buf, "%lld", (long long)o->max_depth);
	XGB_CHECK(XGBoosterSetParam(h, "max_depth", buf));
	snprintf(buf, sizeof buf, "%.17g", o->eta);
	XGB_CHECK(XGBoosterSetParam(h, "eta", buf));
	snprintf(buf, sizeof buf, "%.17g", o->gamma);
	XGB_CHECK(XGBoosterSetParam(h, "gamma", buf));
	snprintf(buf, sizeof buf, "%.17g", o->min_child_weight);
	XGB_CHECK(XGBoosterSetParam(h, "min_child_weight", buf));
	for (i = 0; i < (int)o->rounds; i++)
		XGB_CHECK(XGBoosterUpdateOneIter(h, i, dm));
	XGDMatrixFree(dm);
	*out = h;
	return 0;
fail:
	if (h != NULL)
		XGBoosterFree(h);
	if (dm != NULL)
		XGDMatrixFree(dm);
	return -1;
}

/* Retrain the model on every result so far (failed configs label 0). */
static int
xgboost_train(struct xgboost *x, char **err)
{
	BoosterHandle h = NULL;
	float *y, *margin = NULL;
	double max = 0;
	size_t i, n = x->nsamples;
	int rc = -1;

	y = xcalloc(n, sizeof *y);
	for (i = 0; i < n; i++) {
		if (x->gflops[i] > max)
			max = x->gflops[i];
	}
	for (i = 0; i < n; i++)
		y[i] = max > 0 ? (float)(x->gflops[i] / max) : 0;

	/* AutoTVM's transfer: the base model's margin, fading with our samples. */
	x->w = 0;
	if (x->base != NULL) {
		x->w = exp2(-(double)n / x->o.transfer_halflife);
		if (x->w < 0.05) {
			XGBoosterFree(x->base);
			x->base = NULL;
			free(x->all_base);
			x->all_base = NULL;
			x->w = 0;
		}
	}
	if (x->base != NULL) {
		margin = xcalloc(n, sizeof *margin);
		if (xgboost_predict(x->base, x->x, n, margin, err) != 0)
			goto fail;
		for (i = 0; i < n; i++)
			margin[i] *= (float)x->w;
	}
	if (xgboost_fit(&x->o, x->seed + (uint64_t)x->rounds_done, x->x, y, n,
	    NULL, 0, margin, &h, err) != 0)
		goto fail;
	if (x->model != NULL)
		XGBoosterFree(x->model);
	x->model = h;
	x->rounds_done++;
	x->new_results = 0;
	rc = 0;
fail:
	free(margin);
	free(y);
	return rc;
}

/*
 * Scores of n rows: the model's margin plus the weighted base margin (the
 * model was trained on top of it). base, if not NULL, holds the base margins.
 */
static int
xgboost_score(struct xgboost *x, const float *rows, size_t n,
    const float *base, double *out, char **err)
{
	float *tmp = xcalloc(n, sizeof *tmp), *bm = NULL;
	size_t i;
	int rc = -1;

	for (i = 0; i < n; i++)
		out[i] = 0;
	if (x->model != NULL) {
		if (xgboost_predict(x->model, rows, n, tmp, err) != 0)
			goto fail;
		for (i = 0; i < n; i++)
			out[i] = tmp[i];
	}
	if (x->base != NULL && x->w > 0) {
		if (base == NULL) {
			if (xgboost_predict(x->base, rows, n, tmp, err) != 0)
				goto fail;
			bm = tmp;
		} else
			bm = (float *)base;
		for (i = 0; i < n; i++)
			out[i] += x->w * bm[i];
	}
	rc = 0;
fail:
	free(tmp);
	return rc;
}

static void
xgboost_features(struct xgboost *x, uint64_t i, float *out)
{
	struct config c;

	space_get(x->space, i, &c);
	space_features(x->op, &c, out);
}

/* A fixed pseudo-random tie-break, so equal scores do not favour low indices. */
static uint64_t
xgboost_tie(const struct xgboost *x, uint64_t i)
{
	uint64_t h = (i + 1) ^ (x->seed * 0x9e3779b97f4a7c15ULL) ^
	    ((uint64_t)x->rounds_done << 48);

	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

/* The best n candidates seen, unvisited and distinct, kept sorted. */
struct xgboost_top {
	uint64_t	*idx;
	double		*score;
	uint64_t	*tie;
	size_t		 n, max;
};

/* 1 if (s, t) ranks above slot j. */
static int
xgboost_above(const struct xgboost_top *t, double s, uint64_t tie, size_t j)
{
	return s > t->score[j] || (s == t->score[j] && tie > t->tie[j]);
}

/* Offer i with score s; 1 if the top set changed. */
static int
xgboost_top_offer(struct xgboost *x, struct xgboost_top *t, uint64_t i,
    double s)
{
	uint64_t tie = xgboost_tie(x, i);
	size_t j;

	if (tuner_set_has(&x->visited, i))
		return 0;
	if (t->n == t->max && !xgboost_above(t, s, tie, t->n - 1))
		return 0;
	for (j = 0; j < t->n; j++) {
		if (t->idx[j] == i)
			return 0;
	}
	if (t->n < t->max)
		t->n++;
	for (j = t->n - 1; j > 0 && xgboost_above(t, s, tie, j - 1); j--) {
		t->idx[j] = t->idx[j - 1];
		t->score[j] = t->score[j - 1];
		t->tie[j] = t->tie[j - 1];
	}
	t->idx[j] = i;
	t->score[j] = s;
	t->tie[j] = tie;
	return 1;
}

/* Score every point of a small space; the best unvisited go into t. */
static int
xgboost_rank_all(struct xgboost *x, struct xgboost_top *t, char **err)
{
	double *score = NULL;
	uint64_t i;
	int rc = -1;

	if (x->all_x == NULL) {
		x->all_x = xcalloc((size_t)x->count * NF, sizeof *x->all_x);
		for (i = 0; i < x->count; i++)
			xgboost_features(x, i, x->all_x + i * NF);
	}
	if (x->base != NULL && x->all_base == NULL) {
		x->all_base = xcalloc((size_t)x->count, sizeof *x->all_base);
		if (xgboost_predict(x->base, x->all_x, (size_t)x->count,
		    x->all_base, err) != 0) {
			free(x->all_base);
			x->all_base = NULL;
			goto fail;
		}
	}
	score = xcalloc((size_t)x->count, sizeof *score);
	if (xgboost_score(x, x->all_x, (size_t)x->count, x->all_base, score,
	    err) != 0)
		goto fail;
	for (i = 0; i < x->count; i++)
		xgboost_top_offer(x, t, i, score[i]);
	rc = 0;
fail:
	free(score);
	return rc;
}

/* A random valid neighbour of point i: one knob moved to another of its values. */
static int
xgboost_neighbour(struct xgboost *x, uint64_t i, uint64_t *out)
{
	struct config c, d;
	const int64_t *list;
	size_t n, pos, j;
	int64_t ni;
	int tries, k;

	if (x->nknobs == 0)
		return -1;
	space_get(x->space, i, &c);
	for (tries = 0; tries < 8; tries++) {
		k = x->knobs[tuner_rng_below(&x->rng, (uint64_t)x->nknobs)];
		list = space_knob_list(x->space, (enum knob)k, &n);
		for (pos = 0; pos < n && list[pos] != c.v[k]; pos++)
			;
		j = (size_t)tuner_rng_below(&x->rng, n - 1);
		if (pos < n && j >= pos)
			j++;
		if (j >= n)
			continue;
		d = c;
		d.v[k] = list[j];
		if ((ni = space_index(x->space, &d)) >= 0) {
			*out = (uint64_t)ni;
			return 0;
		}
	}
	return -1;
}

/*
 * Simulated annealing over the model's scores (AutoTVM's): persistent chains
 * walk by one-knob moves, temperature falls linearly from 1 to 0, and the
 * walk stops early once the top set has not changed for sa_early_stop steps.
 */
static int
xgboost_anneal(struct xgboost *x, struct xgboost_top *t, char **err)
{
	size_t c, n = 0, nc;
	uint64_t *next = NULL;
	size_t *who = NULL;
	float *rows = NULL;
	double *sc = NULL, temp;
	int64_t step, last = 0;
	int rc = -1;

	if (x->chain == NULL) {
		x->nchain = (size_t)x->o.sa_chains;
		x->chain = xcalloc(x->nchain, sizeof *x->chain);
		x->chain_score = xcalloc(x->nchain, sizeof *x->chain_score);
		for (c = 0; c < x->nchain; c++)
			x->chain[c] = tuner_rng_below(&x->rng, x->count);
	}
	nc = x->nchain;
	next = xcalloc(nc, sizeof *next);
	who = xcalloc(nc, sizeof *who);
	rows = xcalloc(nc * NF, sizeof *rows);
	sc = xcalloc(nc, sizeof *sc);

	/* The model changed since the chains last moved: score them again. */
	for (c = 0; c < nc; c++)
		xgboost_features(x, x->chain[c], rows + c * NF);
	if (xgboost_score(x, rows, nc, NULL, x->chain_score, err) != 0)
		goto fail;
	for (c = 0; c < nc; c++)
		xgboost_top_offer(x, t, x->chain[c], x->chain_score[c]);

	for (step = 0; step < x->o.sa_steps; step++) {
		temp = 1.0 - (double)step / (double)x->o.sa_steps;
		n = 0;
		for (c = 0; c < nc; c++) {
			if (xgboost_neighbour(x, x->chain[c], &next[n]) != 0)
				continue;
			xgboost_features(x, next[n], rows + n * NF);
			who[n++] = c;
		}
		if (n == 0)
			break;
		if (xgboost_score(x, rows, n, NULL, sc, err) != 0)
			goto fail;
		for (c = 0; c < n; c++) {
			size_t ch = who[c];
			double d = sc[c] - x->chain_score[ch];

			if (xgboost_top_offer(x, t, next[c], sc[c]))
				last = step;
			if (d >= 0 || (temp > 0 &&
			    tuner_rng_double(&x->rng) < exp(d / temp))) {
				x->chain[ch] = next[c];
				x->chain_score[ch] = sc[c];
			}
		}
		if (step - last >= x->o.sa_early_stop)
			break;
	}
	rc = 0;
fail:
	free(sc);
	free(rows);
	free(who);
	free(next);
	return rc;
}

/* A random unvisited point, or -1 when none is left. */
static int
xgboost_random(struct xgboost *x, uint64_t *out)
{
	uint64_t i;
	int done;

	for (;;) {
		i = tuner_perm_next(&x->perm, &x->rng, &done);
		if (done)
			return -1;
		if (!tuner_set_has(&x->visited, i)) {
			*out = i;
			return 0;
		}
	}
}

/* The next batch: the model's best unvisited configs, then ε random ones. */
static void
xgboost_plan(struct xgboost *x)
{
	struct xgboost_top t;
	char *err = NULL;
	size_t want = (size_t)x->batch, nrand = want, i;
	int guided;

	/*
	 * Warmed by other shapes and nothing of our own yet: the base model's
	 * ranking is the best guide there is, so take a whole plan_size of its
	 * top picks before small batches let our own noisy samples steer.
	 */
	if (x->base != NULL && x->nsamples == 0 && x->o.plan_size > x->batch)
		want = (size_t)x->o.plan_size;
	x->nplan = x->planpos = 0;
	if (x->nsamples >= (size_t)x->o.cold_start && x->new_results > 0 &&
	    !x->warned && xgboost_train(x, &err) != 0) {
		xgboost_warn(x, err);
		free(err);
		err = NULL;
	}
	guided = !x->warned && (x->model != NULL || x->base != NULL);
	if (guided) {
		nrand = (size_t)floor(x->o.epsilon * (double)want +
		    tuner_rng_double(&x->rng));
		if (nrand > want)
			nrand = want;
	}

	memset(&t, 0, sizeof t);
	t.max = want - nrand;
	if (t.max > 0) {
		t.idx = xcalloc(t.max, sizeof *t.idx);
		t.score = xcalloc(t.max, sizeof *t.score);
		t.tie = xcalloc(t.max, sizeof *t.tie);
		if ((x->count <= (uint64_t)x->o.sa_exhaustive ?
		    xgboost_rank_all(x, &t, &err) :
		    xgboost_anneal(x, &t, &err)) != 0) {
			xgboost_warn(x, err);
			free(err);
		}
		for (i = 0; i < t.n; i++) {
			tuner_set_put(&x->visited, t.idx[i], XGB_NONE);
			x->plan[x->nplan++] = t.idx[i];
		}
	}
	/* The ε share, and whatever the model could not fill. */
	while (x->nplan < want && xgboost_random(x, &x->plan[x->nplan]) == 0)
		tuner_set_put(&x->visited, x->plan[x->nplan++], XGB_NONE);
	free(t.idx);
	free(t.score);
	free(t.tie);
}

static size_t
xgboost_propose(void *priv, uint64_t *idx, size_t max)
{
	struct xgboost *x = priv;
	double t0 = util_now();
	size_t n = 0;

	/*
	 * A new plan (and model) once the last plan is handed out: its configs
	 * are marked visited when planned, so none may be dropped.
	 */
	if (x->count == 0)
		return 0;
	if (x->planpos >= x->nplan)
		xgboost_plan(x);
	while (n < max && x->planpos < x->nplan)
		idx[n++] = x->plan[x->planpos++];
	x->overhead += util_now() - t0;
	return n;
}

static void
xgboost_update(void *priv, const uint64_t *idx, const struct trial_result *res,
    size_t n)
{
	struct xgboost *x = priv;
	double t0 = util_now();
	uint64_t s;
	size_t i;

	for (i = 0; i < n; i++) {
		if (idx[i] >= x->count)
			continue;
		s = tuner_set_get(&x->visited, idx[i], XGB_NONE);
		if (s == XGB_NONE) {
			if (x->nsamples == x->capsamples) {
				x->capsamples = x->capsamples ? x->capsamples * 2 : 64;
				x->x = xrealloc(x->x,
				    x->capsamples * NF * sizeof *x->x);
				x->gflops = xrealloc(x->gflops,
				    x->capsamples * sizeof *x->gflops);
			}
			s = x->nsamples++;
			xgboost_features(x, idx[i], x->x + s * NF);
			tuner_set_put(&x->visited, idx[i], s);
		}
		/* Unstable runs still ran and verified: their speed is a fair label. */
		x->gflops[s] = (res[i].status == TRIAL_OK ||
		    res[i].status == TRIAL_UNSTABLE) && res[i].gflops > 0 ?
		    res[i].gflops : 0;
		x->new_results++;
	}
	x->overhead += util_now() - t0;
}

/* Records of one op in a row, so that ranking compares within a shape. */
static int
xgboost_same_op(const struct op_desc *a, const struct op_desc *b)
{
	return a == b || (a->batch == b->batch && a->m == b->m &&
	    a->n == b->n && a->k == b->k && a->lhs == b->lhs &&
	    a->rhs == b->rhs && a->acc == b->acc &&
	    a->transpose_a == b->transpose_a &&
	    a->transpose_b == b->transpose_b);
}

/*
 * Train the base model on records of other shapes: labels are normalised per
 * shape, and each shape is its own ranking group.
 */
static void
xgboost_transfer(void *priv, const struct tuner_record *r, size_t n)
{
	struct xgboost *x = priv;
	double t0 = util_now(), max;
	float *rows = NULL, *y = NULL;
	unsigned *groups = NULL;
	size_t i, j, g = 0, rn = 0, start;
	char *err = NULL, *done = NULL;
	BoosterHandle h = NULL;

	if (!x->o.transfer || n < (size_t)x->o.transfer_min || x->base != NULL)
		goto out;
	rows = xcalloc(n * NF, sizeof *rows);
	y = xcalloc(n, sizeof *y);
	groups = xcalloc(n, sizeof *groups);
	done = xcalloc(n, 1);
	/* Gather each op's records in a row, in the order the ops first appear. */
	for (i = 0; i < n; i++) {
		if (done[i])
			continue;
		start = rn;
		max = 0;
		for (j = i; j < n; j++) {
			if (done[j] || !xgboost_same_op(r[i].op, r[j].op))
				continue;
			done[j] = 1;
			space_features(r[j].op, &r[j].config, rows + rn * NF);
			y[rn] = (r[j].status == TRIAL_OK ||
			    r[j].status == TRIAL_UNSTABLE) && r[j].gflops > 0 ?
			    (float)r[j].gflops : 0;
			if (y[rn] > max)
				max = y[rn];
			rn++;
		}
		for (j = start; j < rn; j++)
			y[j] = max > 0 ? (float)(y[j] / max) : 0;
		groups[g++] = (unsigned)(rn - start);
	}
	if (xgboost_fit(&x->o, x->seed ^ 0x7472616e73666572ULL, rows, y, rn,
	    strcmp(x->o.objective, "rank:pairwise") == 0 ? groups : NULL, g,
	    NULL, &h, &err) != 0) {
		xgboost_warn(x, err);
		free(err);
		goto out;
	}
	x->base = h;
	x->w = 1;
out:
	free(done);
	free(groups);
	free(y);
	free(rows);
	x->overhead += util_now() - t0;
}

static double
xgboost_overhead(void *priv)
{
	struct xgboost *x = priv;
	double o = x->overhead;

	x->overhead = 0;
	return o;
}

static void
xgboost_destroy(void *priv)
{
	struct xgboost *x = priv;

	if (x->model != NULL)
		XGBoosterFree(x->model);
	if (x->base != NULL)
		XGBoosterFree(x->base);
	tuner_perm_free(&x->perm);
	tuner_set_free(&x->visited);
	free(x->x);
	free(x->gflops);
	free(x->plan);
	free(x->chain);
	free(x->chain_score);
	free(x->all_x);
	free(x->all_base);
	free(x);
}

const struct tuner_ops tuner_xgboost_ops = {
	.name = "xgboost",
	.long_name = "XGBoostTuner",
	.keys = xgboost_keys,
	.create = xgboost_create,
	.propose = xgboost_propose,
	.update = xgboost_update,
	.transfer = xgboost_transfer,
	.overhead = xgboost_overhead,
	.batch = xgboost_batch,
	.destroy = xgboost_destroy,
};
