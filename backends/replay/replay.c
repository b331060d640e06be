/*
 * The replay backend: answers each trial from a store holding an exhaustive
 * sweep of the same op, like Kernel Tuner's simulation mode, so tuners can be
 * compared without hardware. Recorded compile and measure times add up to a
 * simulated clock; a config the sweep lacks is an error result, never a guess.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "backends/backend.h"
#include "store/store.h"
#include "util/util.h"

#define REPLAY_MAX_RECORDS	(1 << 22)	/* bound on what a store may hand us */

/* Which recorded trial of a config wins: tune over baseline over confirm. */
enum replay_rank {
	REPLAY_CONFIRM = 1,
	REPLAY_BASELINE,
	REPLAY_TUNE,
};

struct replay_record {
	int64_t			 target_id;
	int			 rank;
	size_t			 seq;		/* walk order: later is newer */
	struct config		 key;		/* the config, recorded knobs only */
	struct trial_result	 res;		/* res.error owned */
};

struct backend {
	char			*sig;		/* op signature */
	char			*path;		/* the recording */
	uint32_t		 knobs;		/* knobs nonzero anywhere in the sweep */
	struct replay_record	*rec;		/* sorted by key, one per config */
	size_t			 nrec, caprec;
	struct trial_result	 reference;	/* status TRIAL_ERROR if none */
	int			 have_reference;
	int64_t			 target_id;
	char			*cpu, *toolchain;
	double			 clock;		/* simulated seconds so far */
};

/* What the store walk gathers: every trial of our op on any target. */
struct replay_walk {
	struct backend		*be;
	int64_t			 last_op;	/* op_id of the last verdict */
	int			 last_match;
	struct replay_record	 ref;		/* latest reference trial */
	int			 have_ref;
	char			*err;
};

/*
 * The replay needs the knobs before any recording is open (rules and
 * baseline take no parameters), so it answers as the backend the sweeps are
 * recorded with; open checks that the recording agrees.
 */
static const struct backend_ops *
replay_recorder(void)
{
	return backend_find("mlir-cpu");
}

static void
replay_rules(const struct op_desc *op, struct space_rules *r)
{
	const struct backend_ops *rb = replay_recorder();

	memset(r, 0, sizeof *r);
	if (rb != NULL) {
		rb->rules(op, r);
		return;
	}
	r->knobs = KNOB_BIT(KNOB_THREADS + 1) - 1;	/* the CPU knobs */
}

static void
replay_baseline(const struct op_desc *op, struct config *c)
{
	const struct backend_ops *rb = replay_recorder();

	memset(c, 0, sizeof *c);
	if (rb != NULL)
		rb->baseline(op, c);
}

static int
replay_supports(const struct op_desc *op, const char **reason)
{
	if (op->kind == NULL || (strcmp(op->kind, "matmul") != 0 &&
	    strcmp(op->kind, "batch_matmul") != 0)) {
		*reason = "replay answers matmul and batch_matmul only";
		return 0;
	}
	*reason = NULL;
	return 1;
}

static int
replay_rank_of(const char *phase)
{
	if (strcmp(phase, "tune") == 0)
		return REPLAY_TUNE;
	if (strcmp(phase, "baseline") == 0)
		return REPLAY_BASELINE;
	if (strcmp(phase, "confirm") == 0)
		return REPLAY_CONFIRM;
	return 0;
}

/* Copy a store-borrowed result into r (error text duplicated). */
static void
replay_copy(struct trial_result *r, const struct trial_result *from)
{
	*r = *from;
	r->error = from->error != NULL ? xstrdup(from->error) : NULL;
}

static int
replay_collect(const struct store_trial *t, const struct op_desc *op,
    void *arg)
{
	struct replay_walk *w = arg;
	struct backend *be = w->be;
	struct replay_record *r;
	char *sig;
	int k;

	if (t->op_id != w->last_op) {
		sig = store_op_signature(op);
		w->last_match = strcmp(sig, be->sig) == 0;
		w->last_op = t->op_id;
		free(sig);
	}
	if (!w->last_match)
		return 0;
	if (strcmp(t->phase, "reference") == 0) {
		trial_result_clear(&w->ref.res);
		replay_copy(&w->ref.res, &t->result);
		w->ref.target_id = t->target_id;
		w->have_ref = 1;
		return 0;
	}
	if (be->nrec == REPLAY_MAX_RECORDS) {
		w->err = xasprintf("replay: %s holds more than %d trials of %s",
		    be->path, REPLAY_MAX_RECORDS, be->sig);
		return 1;
	}
	if (be->nrec == be->caprec) {
		be->caprec = be->caprec ? be->caprec * 2 : 256;
		be->rec = xrealloc(be->rec, be->caprec * sizeof *be->rec);
	}
	r = &be->rec[be->nrec++];
	memset(r, 0, sizeof *r);
	r->target_id = t->target_id;
	r->rank = replay_rank_of(t->phase);
	r->seq = be->nrec;
	r->key = t->config;
	replay_copy(&r->res, &t->result);
	for (k = 0; k < KNOB_COUNT; k++) {
		if (t->config.v[k] != 0)
			be->knobs |= KNOB_BIT(k);
	}
	return 0;
}

/* The config with the knobs the recording does not vary set to 0. */
static void
replay_key(const struct backend *be, const struct config *c, struct config *k)
{
	int i;

	for (i = 0; i < KNOB_COUNT; i++)
		k->v[i] = (be->knobs & KNOB_BIT(i)) ? c->v[i] : 0;
}

/* Order of configs, for lookups. */
static int
replay_cmp_key(const void *a, const void *b)
{
	const struct replay_record *x = a, *y = b;
	int i;

	for (i = 0; i < KNOB_COUNT; i++) {
		if (x->key.v[i] != y->key.v[i])
			return x->key.v[i] < y->key.v[i] ? -1 : 1;
	}
	return 0;
}

/* Configs in order; of one config, the preferred phase first, then the latest. */
static int
replay_cmp(const void *a, const void *b)
{
	const struct replay_record *x = a, *y = b;
	int c;

	if ((c = replay_cmp_key(a, b)) != 0)
		return c;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	return x->seq > y->seq ? -1 : x->seq < y->seq;
}

/*
 * Keep the trials of the most recorded target, one per config (the
 * preferred and latest), sorted for lookups.
 */
static void
replay_index(struct backend *be)
{
	size_t i, j, n, best = 0;
	int64_t tid;

	for (i = 0; i < be->nrec; i++) {
		tid = be->rec[i].target_id;
		for (j = n = 0; j < be->nrec; j++)
			n += be->rec[j].target_id == tid;
		if (n > best) {
			best = n;
			be->target_id = tid;
		}
		/* Most sweeps have one target: stop once it holds them all. */
		if (best == be->nrec)
			break;
	}
	for (i = j = 0; i < be->nrec; i++) {
		if (be->rec[i].target_id != be->target_id || be->rec[i].rank == 0) {
			trial_result_clear(&be->rec[i].res);
			continue;
		}
		replay_key(be, &be->rec[i].key, &be->rec[j].key);
		if (i != j) {
			be->rec[j].target_id = be->rec[i].target_id;
			be->rec[j].rank = be->rec[i].rank;
			be->rec[j].seq = be->rec[i].seq;
			be->rec[j].res = be->rec[i].res;
		}
		j++;
	}
	be->nrec = j;
	if (be->nrec > 1)
		qsort(be->rec, be->nrec, sizeof *be->rec, replay_cmp);
	for (i = j = 0; i < be->nrec; i++) {
		if (j > 0 && replay_cmp_key(&be->rec[j - 1], &be->rec[i]) == 0) {
			trial_result_clear(&be->rec[i].res);
			continue;
		}
		be->rec[j++] = be->rec[i];
	}
	be->nrec = j;
}

static void
replay_close(struct backend *be)
{
	size_t i;

	if (be == NULL)
		return;
	for (i = 0; i < be->nrec; i++)
		trial_result_clear(&be->rec[i].res);
	trial_result_clear(&be->reference);
	free(be->rec);
	free(be->sig);
	free(be->path);
	free(be->cpu);
	free(be->toolchain);
	free(be);
}

/* The recorded target's cpu and toolchain, from the store's best rows. */
static int
replay_target_names(struct backend *be, struct store *st, char **err)
{
	struct store_best *rows = NULL;
	size_t n = 0, i;

	if (store_best(st, be->sig, 0, &rows, &n, err) != 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (be->cpu == NULL && rows[i].target_id == be->target_id &&
		    rows[i].op_signature != NULL &&
		    strcmp(rows[i].op_signature, be->sig) == 0) {
			be->cpu = xstrdup(rows[i].cpu ? rows[i].cpu : "");
			be->toolchain = xstrdup(rows[i].toolchain ?
			    rows[i].toolchain : "");
		}
		store_best_clear(&rows[i]);
	}
	free(rows);
	/* A sweep without a single "ok" trial has no best row to name it. */
	if (be->cpu == NULL)
		be->cpu = xstrdup("");
	if (be->toolchain == NULL)
		be->toolchain = xstrdup("");
	return 0;
}

static int
replay_open(const struct backend_params *p, const struct op_desc *op,
    const char *dispatch_mlir, struct backend **out, char **err)
{
	struct backend *be;
	struct store *st = NULL;
	struct replay_walk w;

	*out = NULL;
	if (p->replay_db == NULL || *p->replay_db == '\0') {
		util_seterr(err, "replay: no recording given (set replay_db = "
		    "PATH under [Env])");
		return -1;
	}
	be = xcalloc(1, sizeof *be);
	be->sig = store_op_signature(op);
	be->path = xstrdup(p->replay_db);
	be->reference.status = TRIAL_ERROR;
	memset(&w, 0, sizeof w);
	w.be = be;
	w.last_op = -1;

	if (store_open_readonly(p->replay_db, &st, err) != 0)
		goto fail;
	if (store_trial_foreach(st, 0, 0, NULL, replay_collect, &w, err) != 0) {
		if (w.err != NULL) {
			util_seterr(err, "%s", w.err);
			free(w.err);
		}
		goto fail;
	}
	replay_index(be);
	if (be->nrec == 0) {
		util_seterr(err, "replay: %s holds no trials of %s", be->path,
		    be->sig);
		goto fail;
	}
	if (w.have_ref && w.ref.target_id == be->target_id) {
		be->reference = w.ref.res;
		be->have_reference = 1;
		memset(&w.ref.res, 0, sizeof w.ref.res);
	}
	if (replay_target_names(be, st, err) != 0)
		goto fail;
	trial_result_clear(&w.ref.res);
	store_close(st);
	*out = be;
	return 0;
fail:
	trial_result_clear(&w.ref.res);
	if (st != NULL)
		store_close(st);
	replay_close(be);
	return -1;
}

/* The recorded target, as backend "replay" (the engine names the backend). */
static void
replay_target(struct backend *be, char **cpu, char **flags, char **toolchain)
{
	*cpu = xstrdup(be->cpu);
	*flags = xstrdup("");
	*toolchain = xstrdup(be->toolchain);
}

static int
replay_evaluate(struct backend *be, const struct config *c,
    struct trial_result *res, char **err)
{
	struct replay_record key, *r;
	char name[160];

	trial_result_clear(res);
	memset(&key, 0, sizeof key);
	replay_key(be, c, &key.key);
	r = bsearch(&key, be->rec, be->nrec, sizeof *be->rec, replay_cmp_key);
	if (r == NULL) {
		space_config_name(c, be->knobs, name, sizeof name);
		res->status = TRIAL_ERROR;
		res->error = xasprintf("replay: config %s not recorded for op %s "
		    "in %s", name, be->sig, be->path);
		return 0;
	}
	replay_copy(res, &r->res);
	be->clock += r->res.compile_s + r->res.measure_s;
	return 0;
}

static int
replay_reference(struct backend *be, int threads, struct trial_result *res,
    char **err)
{
	trial_result_clear(res);
	if (!be->have_reference) {
		res->status = TRIAL_ERROR;
		res->error = xasprintf("replay: no reference trial recorded for "
		    "op %s in %s", be->sig, be->path);
		return 0;
	}
	replay_copy(res, &be->reference);
	be->clock += be->reference.compile_s + be->reference.measure_s;
	return 0;
}

static double
replay_clock(struct backend *be)
{
	return be->clock;
}

const struct backend_ops replay_backend = {
	.name = "replay",
	.description = "answers from a recorded exhaustive sweep (replay_db)",
	.rules = replay_rules,
	.baseline = replay_baseline,
	.supports = replay_supports,
	.open = replay_open,
	.target = replay_target,
	.evaluate = replay_evaluate,
	.reference = replay_reference,
	.clock = replay_clock,
	.close = replay_close,
};
