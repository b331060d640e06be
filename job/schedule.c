/*
 * The task scheduler across a job's distinct ops: which op gets the next
 * round of tune trials. The model's cost is the sum over distinct ops of
 * occurrences x the op's best time so far; after a first round for every
 * op, each next round goes to the op whose round is expected to lower that
 * sum the most (the gradient scheduler of Ansor, Zheng et al., OSDI 2020,
 * section 6): its recent improvement and an optimistic hope (as much again
 * as it has gained per round on average, or up to beta x the best
 * throughput of ops of its kind), weighted by how often the program runs
 * it. Ops that stopped improving, exhausted their space or reached n_trial
 * get no more. Budgets: trial_budget (tune trials over all ops) and
 * time_budget (wall seconds for the whole job, the ops' confirm and final
 * rounds kept in reserve). Every decision is recorded in the store, so a
 * job the service runs again replays its plan before going on.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/cfg.h"
#include "job/job.h"
#include "job/job_int.h"
#include "store/store.h"
#include "util/util.h"

_Static_assert(JOB_ROUND_TRIALS <= STORE_ROUND_TRIALS_MAX,
    "a round the store refuses to give back");

#define SCHED_ALPHA	0.2	/* the observed improvement's share of the estimate */
#define SCHED_BETA	2.0	/* hope: within this factor of the best of its kind */
#define SCHED_WINDOW	3	/* rounds the observed improvement spans */
#define SCHED_STALL	3	/* rounds ... (early_stopping replaces it) */
#define SCHED_STALL_GAIN 0.01	/* ... without this much gain: the op closes */

/* The most tune trials op may get: n_trial (or no cap), its space. */
static int64_t
sched_cap(const struct job *c, const struct job_op *jo)
{
	int64_t cap = c->per_op_max;

	if (jo->space_count < (uint64_t)cap)
		cap = (int64_t)jo->space_count;
	return cap;
}

/*
 * Tune trials a round: 8, so that the scheduler moves on often; with
 * executor = batch, where a round is a trip to the measuring host, the
 * tuner's batch_size when the cfg sets one (up to 64): one trip carries a
 * whole model round.
 */
static int64_t
sched_round_trials(const struct cfg *cfg)
{
	struct tuner_params tp;
	const char **ek, **ev;
	int *el;
	int64_t b;

	if (cfg->exec.executor != CFG_EXEC_BATCH)
		return JOB_ROUND_TRIALS;
	steps_tuner_params(cfg, &tp, &ek, &ev, &el);
	b = tuner_batch(tuner_find(cfg->tuner), &tp);
	free(ek);
	free(ev);
	free(el);
	if (b <= JOB_ROUND_TRIALS)
		return JOB_ROUND_TRIALS;
	return b < STORE_ROUND_TRIALS_MAX ? b : STORE_ROUND_TRIALS_MAX;
}

int
sched_init(struct job *c, char **err)
{
	const struct cfg *cfg = c->cfg;
	struct store_alloc *v = NULL;
	size_t n = 0, i;
	int budgeted;

	c->trial_budget = cfg->trial_budget;
	c->time_budget = cfg->time_budget;
	c->round_trials = sched_round_trials(cfg);
	budgeted = c->trial_budget > 0 || c->time_budget > 0;
	/* With a model budget, n_trial caps an op only when the cfg says so. */
	c->per_op_max = budgeted && !cfg->n_trial_set ? INT64_MAX :
	    cfg->n_trial;
	c->budget_total = 0;
	for (i = 0; i < c->nops; i++) {
		if (c->ops[i].sp != NULL)
			c->budget_total += sched_cap(c, &c->ops[i]);
	}
	if (c->trial_budget > 0 && c->trial_budget < c->budget_total)
		c->budget_total = c->trial_budget;
	if (c->o->job_id <= 0 || c->st == NULL)
		return 0;
	/* The service runs a job again: its earlier decisions first. */
	if (store_alloc_list(c->st, c->o->job_id, &v, &n, err) != 0)
		return -1;
	c->replay_op = xcalloc(n ? n : 1, sizeof *c->replay_op);
	c->replay_n = xcalloc(n ? n : 1, sizeof *c->replay_n);
	for (i = 0; i < n; i++) {
		c->replay_op[i] = v[i].op_id;
		c->replay_n[i] = v[i].trials;
		if (v[i].elapsed_s > c->spent_before)
			c->spent_before = v[i].elapsed_s;
	}
	c->nreplay = n;
	c->sched_seq = n > 0 ? v[n - 1].seq : 0;
	free(v);
	return 0;
}

/* Seconds op's confirm and final rounds will take (reserved from time_budget). */
static double
sched_reserve(const struct job *c, const struct job_op *jo)
{
	int confirm = c->cfg->confirm_top > 1 ? c->cfg->confirm_top + 1 : 0;

	if (jo->finished)
		return 0;
	return jo->meas_s * (double)(confirm * JOB_CONFIRM_ROUNDS +
	    JOB_FINAL_ROUNDS * 4);
}

/*
 * The expected change of the model's cost (ms, <= 0) per round of op i:
 * occurrences x (alpha x observed + (1 - alpha) x hoped), per round.
 */
static double
sched_gradient(const struct job *c, size_t i)
{
	const struct job_op *jo = &c->ops[i];
	double g = jo->now_ms, back = 0, fwd, hope2 = -INFINITY, best = 0;
	size_t k;
	int t = jo->rounds;

	if (t > SCHED_WINDOW)
		back = (jo->hist_ms[t - 1] - jo->hist_ms[t - 1 - SCHED_WINDOW]) /
		    SCHED_WINDOW;
	fwd = -g / (double)(t > 0 ? t : 1);
	/* Ops of the same kind and types: how fast this one could get. */
	for (k = 0; k < c->nops; k++) {
		const struct job_op *o = &c->ops[k];

		if (k == i || o->sp == NULL || o->now_ms <= 0 ||
		    strcmp(o->op->kind, jo->op->kind) != 0 ||
		    o->op->lhs != jo->op->lhs || o->op->rhs != jo->op->rhs ||
		    o->op->acc != jo->op->acc)
			continue;
		if (stats_flops(o->op) / o->now_ms > best)
			best = stats_flops(o->op) / o->now_ms;
	}
	if (best > 0)
		hope2 = SCHED_BETA * stats_flops(jo->op) / best - g;
	if (hope2 > -INFINITY && hope2 < fwd)
		fwd = hope2;
	return (double)jo->nuses * (SCHED_ALPHA * back +
	    (1 - SCHED_ALPHA) * fwd);
}

/* 1 if op i may have another round (a lane working on it or not). */
int
sched_wants(const struct job *c, size_t i)
{
	const struct job_op *jo = &c->ops[i];

	return jo->sp != NULL && jo->b != NULL && !jo->closed &&
	    !jo->finished && jo->trials < sched_cap(c, jo);
}

/* 1 if op i may have another round now: no lane works on it. */
static int
sched_open(const struct job *c, size_t i)
{
	return !c->ops[i].busy && sched_wants(c, i);
}

/*
 * The replayed decision's op, by its store id; 0 when none is left in this
 * job, -1 when the next one's op is busy in a lane (taken when it is not).
 */
static int
sched_replay(struct job *c, size_t *op, int64_t *n)
{
	int64_t cap;
	size_t i;

	while (c->replayed < c->nreplay) {
		int64_t id = c->replay_op[c->replayed];

		for (i = 0; i < c->nops; i++) {
			if (c->ops[i].op_id == id && c->ops[i].busy &&
			    sched_wants(c, i))
				return -1;
		}
		*n = c->replay_n[c->replayed++];
		for (i = 0; i < c->nops; i++) {
			if (c->ops[i].op_id != id || !sched_open(c, i))
				continue;
			/* Never more than n_trial and a round allow now. */
			cap = sched_cap(c, &c->ops[i]) - c->ops[i].trials;
			if (*n > cap)
				*n = cap;
			if (*n > c->round_trials)
				*n = c->round_trials;
			if (*n < 1)
				break;
			*op = i;
			return 1;
		}
	}
	return 0;
}

/*
 * Which op gets the next round: the first op, in program order, without a
 * round yet, else the one of largest expected gain. *first counts the ops
 * without a round. Returns its index, or (size_t)-1 when none is open.
 */
static size_t
sched_pick(const struct job *c, size_t *first, double *gain,
    const char **why)
{
	double best = 0, gr;
	size_t i, pick = (size_t)-1;

	*first = 0;
	for (i = 0; i < c->nops; i++) {
		if (sched_open(c, i) && c->ops[i].rounds == 0) {
			if (pick == (size_t)-1)
				pick = i;
			(*first)++;
		}
	}
	if (pick != (size_t)-1) {
		*why = "first round";
		return pick;
	}
	for (i = 0; i < c->nops; i++) {
		if (!sched_open(c, i))
			continue;
		gr = sched_gradient(c, i);
		if (pick == (size_t)-1 || gr < best) {
			best = gr;
			pick = i;
		}
	}
	*why = "largest expected gain";
	*gain = -best / (double)c->round_trials;
	return pick;
}

/*
 * Cut round *n of op pick to time_budget: a first round takes at most its
 * share of the time left, so that every op gets one (nine IREE ops, whose
 * candidates compile in seconds: 12 minutes went to the first three).
 * Returns 0 when no round fits any more (the search ends), else 1.
 */
static int
sched_time_share(struct job *c, size_t pick, size_t first, int64_t *n)
{
	const struct job_op *jo = &c->ops[pick];
	double per = jo->trial_s > 0 ? jo->trial_s : 2 * jo->meas_s;
	double reserve = 0, left;
	size_t i;

	/* Lanes finish ops side by side: the reserve shrinks as many times. */
	for (i = 0; i < c->nops; i++)
		reserve += sched_reserve(c, &c->ops[i]) / (double)c->lanes;
	left = c->time_budget - c->spent_before - job_elapsed(c) - reserve;
	if (first > 0 && per > 0 && left * (double)c->lanes /
	    (double)first < per * (double)*n) {
		*n = (int64_t)(left * (double)c->lanes / (double)first / per);
		if (*n < 1)
			*n = 1;
	}
	if (left < per * (double)*n) {
		job_log(c, "info", "time_budget: %.0f s left, %.0f s "
		    "kept for the ops' confirm and final rounds: the "
		    "search ends", left + reserve, reserve);
		return 0;
	}
	return 1;
}

int
sched_next(struct job *c, size_t *op, int64_t *n, double *gain,
    const char **why)
{
	size_t pick, first;
	/* Tune trials done, and those the rounds in flight may add. */
	int64_t cap, total = c->trials_total + c->inflight_trials;
	int r;

	*gain = 0;
	if ((r = sched_replay(c, op, n)) != 0) {
		*why = "the plan of an earlier run of this job";
		return r;
	}
	if (c->trial_budget > 0 && total >= c->trial_budget)
		return 0;
	if ((pick = sched_pick(c, &first, gain, why)) == (size_t)-1)
		return 0;
	cap = sched_cap(c, &c->ops[pick]) - c->ops[pick].trials;
	*n = cap < c->round_trials ? cap : c->round_trials;
	/* A first round takes at most its share of a trial budget's rest. */
	if (c->trial_budget > 0) {
		int64_t rest = c->trial_budget - total;
		int64_t share = first > 0 ? rest / (int64_t)first : rest;

		if (share < *n)
			*n = share > 0 ? share : 1;
		if (rest < *n)
			*n = rest;
	}
	if (c->time_budget > 0 && !sched_time_share(c, pick, first, n))
		return 0;
	*op = pick;
	return *n > 0;
}

void
sched_after(struct job *c, size_t op, int64_t done)
{
	struct job_op *jo = &c->ops[op];
	double ms = jo->best_seen > 0 ? stats_flops(jo->op) /
	    (jo->best_seen * 1e6) : 0;
	int t;

	if (ms > 0 && (jo->now_ms <= 0 || ms < jo->now_ms))
		jo->now_ms = ms;
	jo->hist_ms = xrealloc(jo->hist_ms, (size_t)(jo->rounds + 1) *
	    sizeof *jo->hist_ms);
	jo->hist_ms[jo->rounds++] = jo->now_ms;
	t = jo->rounds;
	if (jo->closed)
		return;
	if (done == 0 && !c->stopped) {
		jo->closed = 1;
		jo->closed_why = "its space is searched";
	} else if (jo->trials >= sched_cap(c, jo)) {
		jo->closed = 1;
		jo->closed_why = jo->trials >= (int64_t)jo->space_count ?
		    "its space is searched" : "n_trial reached";
	} else if (c->cfg->early_stop > 0 &&
	    jo->since_best >= c->cfg->early_stop) {
		jo->closed = 1;
		jo->closed_why = "early_stopping: no improvement";
	} else if ((c->trial_budget > 0 || c->time_budget > 0) &&
	    c->cfg->early_stop == 0 && t > SCHED_STALL && jo->hist_ms[t - 1] >
	    jo->hist_ms[t - 1 - SCHED_STALL] * (1 - SCHED_STALL_GAIN)) {
		jo->closed = 1;
		jo->closed_why = "stopped improving (under 1% in 3 rounds)";
	}
	if (jo->closed)
		job_log(c, "info", "%s (x%zu): no more rounds: %s, after %lld "
		    "trials in %d rounds", jo->op->name, jo->nuses,
		    jo->closed_why, (long long)jo->trials, jo->rounds);
}

int
sched_record(struct job *c, size_t op, int64_t n, double gain,
    const char *why, char **err)
{
	const struct job_op *jo = &c->ops[op];
	struct store_alloc a;

	if (c->replayed > 0 && c->replayed <= c->nreplay &&
	    strcmp(why, "the plan of an earlier run of this job") == 0)
		return 0;	/* already in the store */
	if (c->job_id <= 0)
		return 0;
	memset(&a, 0, sizeof a);
	a.job_id = c->job_id;
	a.seq = ++c->sched_seq;
	a.op_id = jo->op_id;
	a.trials = n;
	a.trials_before = jo->trials;
	a.now_ms = jo->now_ms;
	a.weight = (int64_t)jo->nuses;
	a.gain = gain;
	a.elapsed_s = c->spent_before + job_elapsed(c);
	a.reason = why;
	return store_alloc_add(c->st, &a, err) < 0 ? -1 : 0;
}
