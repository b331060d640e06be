/*
 * Recorded sweeps as lookup tables (space index -> recorded result) and
 * tuners replayed over them, in the manner of Kernel Tuner's simulation mode.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/sweep.h"
#include "best/best.h"
#include "store/store.h"
#include "util/util.h"

#define SWEEP_MAX_TRIALS	(1 << 20)	/* bound on what a store may hand us */
#define SWEEP_MAX_VALUES	64		/* distinct values of one knob */
#define SWEEP_BATCH		64		/* as job.c asks the tuner */

struct sweep_trial {
	struct config		 c;
	enum trial_status	 status;
	double			 gflops, cost;
};

struct sweep_walk {
	struct sweep		*s;
	int64_t			 op_id;
	struct sweep_trial	*t;
	size_t			 n, cap;
	char			*err;
};

static int
sweep_collect(const struct store_trial *t, const struct op_desc *op,
    void *arg)
{
	struct sweep_walk *w = arg;
	struct sweep_trial *r;

	if (w->op_id == 0) {
		w->op_id = t->op_id;
		w->s->op = *op;
		w->s->op.kind = xstrdup(op->kind);
		w->s->op.op_name = xstrdup(op->op_name);
		w->s->op.name = xstrdup(op->name);
		w->s->op.function = xstrdup("");
		w->s->op.loc = xstrdup("");
		w->s->op.reason = NULL;
	} else if (t->op_id != w->op_id) {
		w->err = xasprintf("%s holds trials of more than one op",
		    w->s->path);
		return 1;
	}
	if (w->n == SWEEP_MAX_TRIALS) {
		w->err = xasprintf("%s holds more than %d trials", w->s->path,
		    SWEEP_MAX_TRIALS);
		return 1;
	}
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 1024;
		w->t = xrealloc(w->t, w->cap * sizeof *w->t);
	}
	r = &w->t[w->n++];
	r->c = t->config;
	r->status = t->result.status;
	r->gflops = t->result.gflops;
	r->cost = t->result.compile_s + t->result.measure_s;
	return 0;
}

/* Add v to a sorted list of distinct values. -1 if the list is full. */
static int
sweep_value_add(int64_t *list, size_t *n, int64_t v)
{
	size_t i, j;

	for (i = 0; i < *n && list[i] < v; i++)
		;
	if (i < *n && list[i] == v)
		return 0;
	if (*n == SWEEP_MAX_VALUES)
		return -1;
	for (j = *n; j > i; j--)
		list[j] = list[j - 1];
	list[i] = v;
	(*n)++;
	return 0;
}

/*
 * The register tiles the recorder allowed are those it recorded: the rule of
 * the recording machine (its vector width), not of the one replaying. Set
 * for the one space_new call that asks (it is eager and single-threaded).
 */
static const struct sweep_walk *sweep_tiles;

static int
sweep_vector_recorded(const struct op_desc *op, int64_t vm, int64_t vn,
    int64_t vk)
{
	size_t i;

	(void)op;
	for (i = 0; i < sweep_tiles->n; i++) {
		const struct config *c = &sweep_tiles->t[i].c;

		if (c->v[KNOB_VECTOR_M] == vm && c->v[KNOB_VECTOR_N] == vn &&
		    c->v[KNOB_VECTOR_K] == vk)
			return 1;
	}
	return 0;
}

/* The space of the recorded knob values, under the rules of the recorder. */
static int
sweep_space(struct sweep *s, const struct sweep_walk *w, char **err)
{
	int rc;

	static int64_t vals[KNOB_COUNT][SWEEP_MAX_VALUES];
	const struct backend_ops *rb = backend_find("mlir-cpu");
	struct knob_values lists[KNOB_COUNT];
	struct space_rules rules;
	size_t nv[KNOB_COUNT], nl = 0, i;
	int k;

	if (rb == NULL) {
		util_seterr(err, "no mlir-cpu backend to take the rules from");
		return -1;
	}
	rb->rules(&s->op, &rules);
	memset(nv, 0, sizeof nv);
	for (i = 0; i < w->n; i++) {
		for (k = 0; k < KNOB_COUNT; k++) {
			if (!(rules.knobs & KNOB_BIT(k)))
				continue;
			if (sweep_value_add(vals[k], &nv[k], w->t[i].c.v[k]) != 0) {
				util_seterr(err, "%s: more than %d values of %s",
				    s->path, SWEEP_MAX_VALUES,
				    space_knob_name((enum knob)k));
				return -1;
			}
		}
	}
	for (k = 0; k < KNOB_COUNT; k++) {
		if (nv[k] == 0)
			continue;
		lists[nl].knob = (enum knob)k;
		lists[nl].values = vals[k];
		lists[nl++].n = nv[k];
	}
	sweep_tiles = w;
	rules.vector_ok = sweep_vector_recorded;
	rc = space_new(&s->op, lists, nl, &rules, &s->space, err);
	sweep_tiles = NULL;
	return rc;
}

/* The recorded target's CPU and toolchain, as the store names them. */
static void
sweep_target(struct sweep *s, struct store *st)
{
	struct store_best *rows = NULL;
	size_t n = 0, i;
	char *err = NULL;

	if (best_configs(st, NULL, 0, &rows, &n, &err) != 0)
		free(err);
	for (i = 0; i < n; i++) {
		if (s->cpu == NULL) {
			s->cpu = xstrdup(rows[i].cpu ? rows[i].cpu : "");
			s->toolchain = xstrdup(rows[i].toolchain ?
			    rows[i].toolchain : "");
		}
		store_best_clear(&rows[i]);
	}
	free(rows);
	if (s->cpu == NULL) {
		s->cpu = xstrdup("?");
		s->toolchain = xstrdup("?");
	}
}

/* 1 if the toolchain string names schedule version tag exactly. */
static int
sweep_has_tag(const char *toolchain, const char *tag)
{
	const char *at = strstr(toolchain, tag);
	size_t n = strlen(tag);

	return at != NULL && (at[n] == '\0' || at[n] == ';');
}

/*
 * A sweep replays the code of one schedule version: refuse one recorded
 * with another (the version is in the target's toolchain string), so that
 * figures cannot silently go stale. A sweep of 1-thread configs only may
 * come from the version since which the backend's 1-thread code is the same
 * (for ops with neither bf16 nor i8 inputs: v6 to v8 changed only those).
 */
static int
sweep_check_version(const struct sweep *s, const struct sweep_walk *w,
    char **err)
{
	const char *want = mlircpu_backend.schedule_tag;
	const char *serial = mlircpu_backend.schedule_serial_since, *at;
	size_t i;

	if (want == NULL || sweep_has_tag(s->toolchain, want))
		return 0;
	if (serial != NULL && sweep_has_tag(s->toolchain, serial) &&
	    s->op.lhs != ELEM_BF16 && s->op.rhs != ELEM_BF16 &&
	    s->op.lhs != ELEM_I8 && s->op.rhs != ELEM_I8) {
		for (i = 0; i < w->n && w->t[i].c.v[KNOB_THREADS] <= 1; i++)
			;
		if (i == w->n)
			return 0;
	}
	at = strstr(s->toolchain, "schedule v");
	util_seterr(err, "%s: recorded with %.*s, but this build generates %s: "
	    "record it again (bench/sweeps/compact.sh says how)", s->path,
	    at != NULL ? (int)strcspn(at, ";") : 40,
	    at != NULL ? at : "no schedule version (before v4)", want);
	return -1;
}

int
sweep_load(const char *path, struct sweep *s, char **err)
{
	struct store *st = NULL;
	struct sweep_walk w;
	const char *base;
	unsigned char *seen = NULL;
	uint64_t have = 0;
	int64_t idx;
	size_t i;
	char *dot;

	memset(s, 0, sizeof *s);
	memset(&w, 0, sizeof w);
	s->path = xstrdup(path);
	base = strrchr(path, '/');
	s->name = xstrdup(base != NULL ? base + 1 : path);
	if ((dot = strrchr(s->name, '.')) != NULL)
		*dot = '\0';
	w.s = s;

	if (store_open_readonly(path, &st, err) != 0)
		goto fail;
	if (store_trial_foreach(st, 0, 0, "tune", sweep_collect, &w, err) != 0) {
		if (w.err != NULL)
			util_seterr(err, "%s", w.err);
		goto fail;
	}
	if (w.n == 0) {
		util_seterr(err, "%s holds no tune trials", path);
		goto fail;
	}
	sweep_target(s, st);
	if (sweep_check_version(s, &w, err) != 0)
		goto fail;
	if (sweep_space(s, &w, err) != 0)
		goto fail;

	s->count = space_count(s->space);
	s->gflops = xcalloc((size_t)s->count, sizeof *s->gflops);
	s->cost = xcalloc((size_t)s->count, sizeof *s->cost);
	s->status = xcalloc((size_t)s->count, sizeof *s->status);
	seen = xcalloc((size_t)s->count, 1);
	for (i = 0; i < w.n; i++) {
		if ((idx = space_index(s->space, &w.t[i].c)) < 0)
			continue;
		have += !seen[idx];
		seen[idx] = 1;
		/* Unstable runs ran and verified: their speed counts (as in xgboost.c). */
		s->status[idx] = w.t[i].status;
		s->gflops[idx] = (w.t[i].status == TRIAL_OK ||
		    w.t[i].status == TRIAL_UNSTABLE) ? w.t[i].gflops : 0;
		s->cost[idx] = w.t[i].cost;
	}
	if (have != s->count) {
		util_seterr(err, "%s: %llu of %llu configs recorded; not an "
		    "exhaustive sweep", path, (unsigned long long)have,
		    (unsigned long long)s->count);
		goto fail;
	}
	for (i = 0; i < s->count; i++) {
		if (s->gflops[i] > s->best) {
			s->best = s->gflops[i];
			s->best_idx = i;
		}
	}
	free(seen);
	free(w.t);
	free(w.err);
	store_close(st);
	return 0;
fail:
	free(seen);
	free(w.t);
	free(w.err);
	if (st != NULL)
		store_close(st);
	sweep_free(s);
	return -1;
}

void
sweep_free(struct sweep *s)
{
	if (s->space != NULL)
		space_free(s->space);
	free((char *)s->op.kind);
	free((char *)s->op.op_name);
	free((char *)s->op.name);
	free((char *)s->op.function);
	free((char *)s->op.loc);
	free(s->gflops);
	free(s->cost);
	free(s->status);
	free(s->cpu);
	free(s->toolchain);
	free(s->path);
	free(s->name);
	memset(s, 0, sizeof *s);
}

struct tuner_record *
sweep_records(const struct sweep *const *s, size_t n, size_t *nrec)
{
	struct tuner_record *r;
	size_t i, total = 0, j = 0;
	uint64_t k;

	for (i = 0; i < n; i++)
		total += (size_t)s[i]->count;
	r = xcalloc(total ? total : 1, sizeof *r);
	for (i = 0; i < n; i++) {
		for (k = 0; k < s[i]->count; k++, j++) {
			r[j].op = &s[i]->op;
			space_get(s[i]->space, k, &r[j].config);
			r[j].status = s[i]->status[k];
			r[j].gflops = s[i]->gflops[k];
		}
	}
	*nrec = total;
	return r;
}

int
sweep_run(const struct sweep *s, const struct tuner_ops *t, uint64_t seed,
    const char *const *keys, const char *const *values, size_t nextra,
    const struct tuner_record *rec, size_t nrec, struct sweep_run *out,
    char **err)
{
	struct tuner_params p;
	struct tuner tu;
	struct trial_result res[SWEEP_BATCH];
	uint64_t idx[SWEEP_BATCH];
	int lines[16];
	double cost, over;
	size_t n, i, want;

	memset(out, 0, sizeof *out);
	out->to95 = out->to99 = -1;
	memset(&p, 0, sizeof p);
	memset(lines, 0, sizeof lines);
	if (nextra > sizeof lines / sizeof lines[0]) {
		util_seterr(err, "too many tuner settings");
		return -1;
	}
	p.seed = seed;
	p.n_trial = (int64_t)s->count;
	p.extra_keys = keys;
	p.extra_values = values;
	p.extra_lines = lines;
	p.nextra = nextra;
	p.cfg_path = "bench";
	if (tuner_create(t, &p, &s->op, s->space, &tu, err) != 0)
		return -1;
	if (nrec > 0)
		tuner_transfer(&tu, rec, nrec);

	while (out->trials < (int64_t)s->count && out->to99 < 0) {
		want = (size_t)((int64_t)s->count - out->trials);
		if (want > SWEEP_BATCH)
			want = SWEEP_BATCH;
		n = tuner_propose(&tu, idx, want);
		if (n == 0)
			break;
		cost = 0;
		for (i = 0; i < n; i++) {
			memset(&res[i], 0, sizeof res[i]);
			if (idx[i] >= s->count) {
				res[i].status = TRIAL_ERROR;
				continue;
			}
			res[i].status = s->status[idx[i]];
			res[i].gflops = s->gflops[idx[i]];
			cost += s->cost[idx[i]];
			out->trials++;
			if (out->to95 < 0 && res[i].gflops >= 0.95 * s->best)
				out->to95 = out->trials;
			if (out->to99 < 0 && res[i].gflops >= 0.99 * s->best)
				out->to99 = out->trials;
		}
		tuner_update(&tu, idx, res, n);
		over = tuner_overhead(&tu);
		out->tuner_s += over;
		out->replay_s += cost;
		if (cost > 0 && over / cost > out->worst_frac)
			out->worst_frac = over / cost;
	}
	tuner_destroy(&tu);
	return 0;
}
