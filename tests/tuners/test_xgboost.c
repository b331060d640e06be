/*
 * Unit tests of XGBoostTuner on a synthetic objective over a real space: it
 * must reach the optimum in fewer trials than random (over fixed seeds), be
 * deterministic, never repeat a config, and profit from transfer.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "search/space.h"
#include "tuners/tuner.h"
#include "util/util.h"
#include "tests/check.h"

#define NSEEDS	10
#define CAP	1500	/* trials before a run counts as "never got there" */

static int
vec_ok(const struct op_desc *op, int64_t vm, int64_t vn, int64_t vk)
{
	(void)op;
	return vm * vn <= 64 && vk == 1;
}

static void
make_op(struct op_desc *op, int64_t m, int64_t n, int64_t k)
{
	memset(op, 0, sizeof *op);
	op->kind = "matmul";
	op->name = "synthetic";
	op->batch = 1;
	op->m = m;
	op->n = n;
	op->k = k;
	op->lhs = op->rhs = op->acc = ELEM_F32;
	op->tunable = 1;
}

static struct space *
make_space(const struct op_desc *op)
{
	static const int64_t tm[] = { 8, 16, 32, 64, 128, 256 };
	static const int64_t tk[] = { 16, 32, 64, 128, 256 };
	static const int64_t vm[] = { 1, 2, 4, 8 }, vn[] = { 4, 8, 16, 32 };
	static const int64_t vk[] = { 1 }, th[] = { 1, 2, 4 };
	struct knob_values lists[] = {
		{ KNOB_TILE_M, tm, 6 }, { KNOB_TILE_N, tm, 6 },
		{ KNOB_TILE_K, tk, 5 }, { KNOB_VECTOR_M, vm, 4 },
		{ KNOB_VECTOR_N, vn, 4 }, { KNOB_VECTOR_K, vk, 1 },
		{ KNOB_THREADS, th, 3 },
	};
	struct space_rules rules = { 0 };
	struct space *s = NULL;
	char *err = NULL;

	rules.knobs = 0x7f;
	rules.vector_ok = vec_ok;
	if (space_new(op, lists, 7, &rules, &s, &err) != 0) {
		fprintf(stderr, "space_new: %s\n", err);
		free(err);
		return NULL;
	}
	return s;
}

static double
sq(double v)
{
	return v * v;
}

/*
 * A smooth objective with one optimum whose tile_m moves with the op's M;
 * big cache tiles "fail to compile".
 */
static void
objective(const struct op_desc *op, const struct config *c,
    struct trial_result *r)
{
	double lm = log2((double)c->v[KNOB_TILE_M]);
	double ln = log2((double)c->v[KNOB_TILE_N]);
	double lk = log2((double)c->v[KNOB_TILE_K]);
	double lv = log2((double)(c->v[KNOB_VECTOR_M] * c->v[KNOB_VECTOR_N]));
	double lvm = log2((double)c->v[KNOB_VECTOR_M]);
	double cm = log2((double)op->m) - 4;
	double thr[] = { 0, 0.35, 0.6, 0, 1.0 };

	memset(r, 0, sizeof *r);
	r->compile_s = 1;
	r->measure_s = 1;
	if (c->v[KNOB_TILE_M] * c->v[KNOB_TILE_N] >= 128 * 256 &&
	    c->v[KNOB_TILE_K] >= 128) {
		r->status = TRIAL_COMPILE_FAILED;
		return;
	}
	r->status = TRIAL_OK;
	r->gflops = 100 * thr[c->v[KNOB_THREADS]] *
	    exp(-(sq(lm - cm) + sq(ln - 7)) / 4 - sq(lk - 5) / 6 -
	    sq(lv - 5) / 3 - sq(lvm - 2) / 5);
	r->median_ms = 2e-6 * (double)(op->m * op->n * op->k) / r->gflops;
}

static double
best_of(const struct op_desc *op, const struct space *s)
{
	struct trial_result r;
	struct config c;
	double best = 0;
	uint64_t i;

	for (i = 0; i < space_count(s); i++) {
		space_get(s, i, &c);
		objective(op, &c, &r);
		if (r.gflops > best)
			best = r.gflops;
	}
	return best;
}

/*
 * Tune with name (extra keys as given) until a config reaches frac of best;
 * returns the number of trials it took (cap + 1 if never). With out, also
 * records the first nout proposals.
 */
static int
trials_to(const char *name, const struct op_desc *op, const struct space *s,
    uint64_t seed, const char *const *keys, const char *const *vals,
    size_t nkeys, const struct tuner_record *rec, size_t nrec, double best,
    double frac, int cap, uint64_t *out, size_t nout, int *dup)
{
	const struct tuner_ops *ops = tuner_find(name);
	struct tuner_params p = { 0 };
	struct tuner t;
	struct trial_result res[64];
	struct config c;
	uint64_t idx[64];
	char *err = NULL, *seen;
	int lines[16] = { 0 }, done = 0, reached = cap + 1;
	size_t i, n;

	p.seed = seed;
	p.n_trial = 256;
	p.extra_keys = keys;
	p.extra_values = vals;
	p.extra_lines = lines;
	p.nextra = nkeys;
	p.cfg_path = "test.cfg";
	if (ops == NULL || tuner_create(ops, &p, op, s, &t, &err) != 0) {
		/* The subject is missing: a failure, not a number to average. */
		fprintf(stderr, "%s: %s\n", name, err ? err : "not found");
		free(err);
		CHECK(!"the tuner could be made");
		return cap + 1;
	}
	if (rec != NULL)
		tuner_transfer(&t, rec, nrec);
	seen = calloc(space_count(s), 1);
	while (done < cap && reached > cap) {
		n = tuner_propose(&t, idx, 64);
		if (n == 0)
			break;
		for (i = 0; i < n; i++) {
			if (seen[idx[i]] && dup != NULL)
				(*dup)++;
			seen[idx[i]] = 1;
			if (out != NULL && (size_t)done < nout)
				out[done] = idx[i];
			space_get(s, idx[i], &c);
			objective(op, &c, &res[i]);
			done++;
			if (res[i].gflops >= frac * best && reached > cap)
				reached = done;
		}
		tuner_update(&t, idx, res, n);
	}
	free(seen);
	tuner_destroy(&t);
	return reached;
}

static void
test_faster_than_random(const struct op_desc *op, const struct space *s,
    double best)
{
	static const char *const keys[] = { "sa_exhaustive" };
	static const char *const sa[] = { "0" };
	double sum_x = 0, sum_sa = 0, sum_r = 0, sum_x99 = 0;
	uint64_t seed;
	int a, b, c, d;

	for (seed = 1; seed <= NSEEDS; seed++) {
		a = trials_to("xgboost", op, s, seed, NULL, NULL, 0, NULL, 0,
		    best, 0.95, CAP, NULL, 0, NULL);
		b = trials_to("XGBoostTuner", op, s, seed, keys, sa, 1, NULL, 0,
		    best, 0.95, CAP, NULL, 0, NULL);
		c = trials_to("random", op, s, seed, NULL, NULL, 0, NULL, 0,
		    best, 0.95, CAP, NULL, 0, NULL);
		d = trials_to("xgboost", op, s, seed, NULL, NULL, 0, NULL, 0,
		    best, 1.0, CAP, NULL, 0, NULL);
		sum_x += a;
		sum_sa += b;
		sum_r += c;
		sum_x99 += d;
	}
	printf("trials to 95%% of the optimum over %d seeds (space %llu): "
	    "xgboost %.1f, xgboost with annealing %.1f, random %.1f; "
	    "xgboost to the optimum %.1f\n", NSEEDS,
	    (unsigned long long)space_count(s), sum_x / NSEEDS,
	    sum_sa / NSEEDS, sum_r / NSEEDS, sum_x99 / NSEEDS);
	CHECK(sum_x < sum_r / 3);
	CHECK(sum_sa < sum_r / 3);
	CHECK(sum_x99 / NSEEDS <= CAP);
}

static void
test_deterministic(const struct op_desc *op, const struct space *s,
    double best)
{
	uint64_t a[300], b[300];
	int dup = 0, na, nb;

	memset(a, 0, sizeof a);
	memset(b, 0, sizeof b);
	/* frac > 1: never reached, so both runs go to the cap. */
	na = trials_to("xgboost", op, s, 7, NULL, NULL, 0, NULL, 0, best, 2.0,
	    300, a, 300, &dup);
	nb = trials_to("xgboost", op, s, 7, NULL, NULL, 0, NULL, 0, best, 2.0,
	    300, b, 300, &dup);
	CHECK(na == nb);
	CHECK(memcmp(a, b, sizeof a) == 0);
	CHECK(dup == 0);
}

/* In a small space the tuner hands out every config once, then says 0. */
static void
test_exhausts(void)
{
	static const int64_t t[] = { 16, 32, 64 }, v[] = { 1, 2, 4 };
	static const int64_t one[] = { 1 };
	struct knob_values lists[] = {
		{ KNOB_TILE_M, t, 3 }, { KNOB_TILE_N, t, 3 },
		{ KNOB_TILE_K, t, 3 }, { KNOB_VECTOR_M, v, 3 },
		{ KNOB_VECTOR_N, v, 3 }, { KNOB_VECTOR_K, one, 1 },
	};
	const struct tuner_ops *ops = tuner_find("xgboost");
	struct tuner_params p = { 0 };
	struct space_rules rules = { 0 };
	struct trial_result res[16];
	struct op_desc op;
	struct space *s = NULL;
	struct tuner tu;
	struct config c;
	uint64_t idx[16], total = 0;
	char *err = NULL, *seen;
	size_t i, n;
	int dup = 0;

	make_op(&op, 64, 64, 64);
	rules.knobs = 0x3f;
	if (space_new(&op, lists, 6, &rules, &s, &err) != 0 ||
	    tuner_create(ops, &p, &op, s, &tu, &err) != 0) {
		fprintf(stderr, "%s\n", err);
		CHECK(0);
		free(err);
		space_free(s);
		return;
	}
	seen = calloc(space_count(s), 1);
	while ((n = tuner_propose(&tu, idx, 16)) > 0) {
		for (i = 0; i < n; i++) {
			dup += seen[idx[i]];
			seen[idx[i]] = 1;
			space_get(s, idx[i], &c);
			objective(&op, &c, &res[i]);
		}
		total += n;
		tuner_update(&tu, idx, res, n);
	}
	CHECK(total == space_count(s));
	CHECK(dup == 0);
	CHECK(tuner_overhead(&tu) > 0);
	CHECK(tuner_overhead(&tu) == 0);
	free(seen);
	tuner_destroy(&tu);
	space_free(s);
}

/* Bad keys name the cfg line. */
static void
test_keys(const struct op_desc *op, const struct space *s)
{
	static const char *const keys[] = { "epsilon" }, *const bad[] = { "2" };
	static const char *const okeys[] = { "objective" };
	static const char *const obad[] = { "rank:nope" };
	const struct tuner_ops *ops = tuner_find("XGBoostTuner");
	struct tuner_params p = { 0 };
	struct tuner t;
	char *err = NULL;
	int lines[] = { 12 };

	p.extra_keys = keys;
	p.extra_values = bad;
	p.extra_lines = lines;
	p.nextra = 1;
	p.cfg_path = "a.cfg";
	CHECK(tuner_create(ops, &p, op, s, &t, &err) == -1);
	CHECK(err != NULL && strncmp(err,
	    "a.cfg:12: [SearchStrategy] epsilon: expected a number in [0, 1]",
	    62) == 0);
	free(err);
	err = NULL;
	p.extra_keys = okeys;
	p.extra_values = obad;
	CHECK(tuner_create(ops, &p, op, s, &t, &err) == -1);
	CHECK(err != NULL && strstr(err, "a.cfg:12: [SearchStrategy] objective")
	    != NULL);
	free(err);
}

/* Records of another shape (its optimum elsewhere) warm the model up. */
static void
test_transfer(const struct op_desc *op, const struct space *s, double best)
{
	struct tuner_record *rec;
	struct trial_result r;
	struct op_desc other;
	struct space *os;
	double sum_cold = 0, sum_warm = 0;
	uint64_t i, n, seed;

	make_op(&other, 512, 1024, 1024);
	if ((os = make_space(&other)) == NULL) {
		CHECK(0);
		return;
	}
	n = space_count(os);
	rec = calloc(n, sizeof *rec);
	for (i = 0; i < n; i++) {
		rec[i].op = &other;
		space_get(os, i, &rec[i].config);
		objective(&other, &rec[i].config, &r);
		rec[i].status = r.status;
		rec[i].gflops = r.gflops;
	}
	for (seed = 1; seed <= NSEEDS; seed++) {
		sum_cold += trials_to("xgboost", op, s, seed, NULL, NULL, 0,
		    NULL, 0, best, 0.95, CAP, NULL, 0, NULL);
		sum_warm += trials_to("xgboost", op, s, seed, NULL, NULL, 0,
		    rec, n, best, 0.95, CAP, NULL, 0, NULL);
	}
	printf("trials to 95%% over %d seeds: cold %.1f, with transfer from "
	    "%llu records of 512x1024x1024 %.1f\n", NSEEDS, sum_cold / NSEEDS,
	    (unsigned long long)n, sum_warm / NSEEDS);
	CHECK(sum_warm < sum_cold);
	free(rec);
	space_free(os);
}

int
main(void)
{
	struct op_desc op;
	struct space *s;
	double best;

	make_op(&op, 1024, 1024, 1024);
	if ((s = make_space(&op)) == NULL) {
		CHECK(0);
		return check_done();
	}
	CHECK(space_count(s) >= 2000);
	best = best_of(&op, s);
	test_keys(&op, s);
	test_exhausts();
	test_deterministic(&op, s, best);
	test_faster_than_random(&op, s, best);
	test_transfer(&op, s, best);
	space_free(s);
	return check_done();
}
