/*
 * One distinct op's steps: its baseline (the backend's untuned default),
 * search rounds (the tuner proposes a batch, each config measured or found
 * in the store, the tuner learns; the default re-measured now and then),
 * and its finish: the top candidates confirmed side by side with the
 * default, the choice measured again in final rounds with the default and
 * the reference library, the default kept when the choice is not
 * measurably faster, the noise floor. Each trial is committed on its own.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "backends/backend.h"
#include "cfg/cfg.h"
#include "executors/executor.h"
#include "job/job.h"
#include "job/job_int.h"
#include "search/space.h"
#include "store/store.h"
#include "tuners/tuner.h"
#include "util/util.h"

/*
 * Evaluate one config and commit it as a trial of the given phase. 0 when
 * recorded (or recorded by an earlier run of a batch job), 1 when a stop
 * interrupted it (nothing recorded), 2 when it was staged for another host
 * (executor batch: nothing recorded, no result yet), -1 on error.
 */

static int
job_trial(struct job *c, struct backend *b, struct job_op *jo,
    const struct config *cf, const char *phase, struct trial_result *res,
    char **err)
{
	int64_t staged = executor_staged(c->exec);
	char name[160];
	int r;

	memset(res, 0, sizeof *res);
	space_config_name(cf, c->rep.knobs, name, sizeof name);
	/* (A tune trial was looked up, and named, by job_tune_found.) */
	if (strcmp(phase, "tune") != 0 && carry_begin(c, jo, phase, name,
	    res)) {
		/* An earlier run of this batch job recorded it. */
		report_block(&c->rep, jo->op, name, phase, res, 1);
		report_csv_row(&c->rep, jo->op, cf, name, phase, res);
		return 0;
	}
	job_measuring(c);
	r = c->be->evaluate(b, cf, res, err);
	job_measured(c);
	if (executor_staged(c->exec) != staged) {
		/* Staged for another host: no outcome of the config's yet. */
		if (r != 0) {
			free(*err);
			*err = NULL;
		}
		trial_result_clear(res);
		c->deferred++;
		return 2;
	}
	if (r != 0)
		return -1;
	return steps_record(c, jo, cf, phase, res, err);
}

/*
 * Commit the result of cf as a trial of the given phase, on the engine's
 * thread. 0 when recorded, 1 when a stop interrupted its measurement
 * (nothing recorded), -1 on error (the environment failed: nothing
 * recorded; or the store).
 */
int
steps_record(struct job *c, struct job_op *jo, const struct config *cf,
    const char *phase, struct trial_result *res, char **err)
{
	struct store_trial t;
	char name[160];

	space_config_name(cf, c->rep.knobs, name, sizeof name);
	if (job_stop_asked(c)) {
		/* Our own stop killed the child: not the candidate's outcome. */
		trial_result_clear(res);
		c->stopped = 1;
		return 1;
	}
	if (res->env_failure) {
		/* Not the candidate's outcome: record nothing, measure it later. */
		util_seterr(err, "%s: %s: the environment failed, not the config:"
		    " %s; nothing recorded for it, the job stops (run it again"
		    " once this is fixed: it resumes)", jo->op->name, name,
		    res->error ? res->error : "?");
		trial_result_clear(res);
		return -1;
	}
	if (job_store_gone(c, err)) {
		trial_result_clear(res);
		return -1;
	}
	memset(&t, 0, sizeof t);
	t.job_id = c->job_id;
	t.op_id = jo->op_id;
	t.target_id = c->target_id;
	t.phase = phase;
	t.config_name = name;
	t.config = *cf;
	t.result = *res;
	if (store_trial_add(c->st, &t, err) < 0)
		return -1;
	report_block(&c->rep, jo->op, name, phase, res, 0);
	report_csv_row(&c->rep, jo->op, cf, name, phase, res);
	return 0;
}

/*
 * A result that ran and verified. An unstable one (CV above the limit) is
 * noisy, not wrong: it may win, and the confirm phase measures it again.
 */
int
steps_valid(const struct trial_result *r)
{
	return r->status == TRIAL_OK || r->status == TRIAL_UNSTABLE;
}

/* Records of other ops of the same kind on this target, for transfer. */
struct job_transfer {
	const struct op_desc	*op;
	struct tuner_record	*rec;
	struct op_desc		*ops;	/* copies (numbers only) */
	const struct backend_ops *be;
	size_t			 n, cap;
	size_t			 refused;	/* outside the space's rules */
	int64_t			 job_id;
	int64_t			 before;	/* only trials of smaller id */
};

static int
job_transfer_cb(const struct store_trial *t, const struct op_desc *op,
    void *arg)
{
	struct job_transfer *x = arg;
	struct space_rules rules;
	struct op_desc *copy;

	if (t->id >= x->before)
		return 0;
	if (strcmp(op->kind, x->op->kind) != 0 || (op->m == x->op->m &&
	    op->n == x->op->n && op->k == x->op->k && op->batch == x->op->batch &&
	    op->lhs == x->op->lhs && op->transpose_a == x->op->transpose_a &&
	    op->transpose_b == x->op->transpose_b))
		return 0;
	/* A record is read from the store: the space's rules, as for best. */
	memset(&rules, 0, sizeof rules);
	if (x->be->rules != NULL)
		x->be->rules(op, &rules);
	if (space_config_check(op, x->be->rules != NULL ? &rules : NULL,
	    &t->config, NULL) != 0) {
		x->refused++;
		return 0;
	}
	if (x->n == x->cap) {
		x->cap = x->cap ? x->cap * 2 : 256;
		x->rec = xrealloc(x->rec, x->cap * sizeof *x->rec);
		x->ops = xrealloc(x->ops, x->cap * sizeof *x->ops);
	}
	copy = &x->ops[x->n];
	memset(copy, 0, sizeof *copy);
	copy->kind = x->op->kind;
	copy->batch = op->batch;
	copy->m = op->m;
	copy->n = op->n;
	copy->k = op->k;
	copy->lhs = op->lhs;
	copy->rhs = op->rhs;
	copy->acc = op->acc;
	copy->transpose_a = op->transpose_a;
	copy->transpose_b = op->transpose_b;
	copy->tunable = 1;
	x->rec[x->n].config = t->config;
	x->rec[x->n].status = t->result.status;
	x->rec[x->n].gflops = t->result.gflops;
	x->n++;
	return x->n >= 100000;	/* enough */
}

/* The smallest id of this job's tune trials of the op. */
static int
job_transfer_first(const struct store_trial *t, const struct op_desc *op,
    void *arg)
{
	struct job_transfer *x = arg;

	(void)op;
	if (t->job_id == x->job_id && t->id < x->before)
		x->before = t->id;
	return 0;
}

/*
 * Offer the tuner what the store knows of other shapes of this op kind:
 * the records that were there when this op's search began (trials older
 * than its first tune trial in this job), so that a run that resumes the
 * job, or ingests its next batch folder, trains the tuner on what the
 * first run did and proposes the same configs.
 */
static void
job_offer_transfer(struct job *c, struct tuner *t, const struct job_op *jo)
{
	const struct op_desc *op = jo->op;
	struct job_transfer x;
	char *err = NULL;
	size_t i;

	if (t->ops->transfer == NULL)
		return;
	memset(&x, 0, sizeof x);
	x.op = op;
	x.be = c->be;
	x.job_id = c->job_id;
	x.before = INT64_MAX;
	if (c->job_id > 0 && store_trial_foreach(c->st, jo->op_id,
	    c->target_id, "tune", job_transfer_first, &x, &err) != 0) {
		free(err);
		return;
	}
	if (store_trial_foreach(c->st, 0, c->target_id, "tune", job_transfer_cb,
	    &x, &err) == 0 && x.n > 0) {
		/* The copies moved while growing: point the records at them now. */
		for (i = 0; i < x.n; i++)
			x.rec[i].op = &x.ops[i];
		tuner_transfer(t, x.rec, x.n);
		job_log(c, "info", "%s: %zu records of other shapes offered for "
		    "transfer", op->name, x.n);
	}
	if (x.refused > 0)
		job_log(c, "warning", "%s: %zu records of other shapes in the "
		    "store refused (outside the space's rules)", op->name,
		    x.refused);
	free(err);
	free(x.rec);
	free(x.ops);
}

/* The tuner's settings from the cfg; the caller frees the three arrays. */
void
steps_tuner_params(const struct cfg *cfg, struct tuner_params *tp,
    const char ***ek, const char ***ev, int **el)
{
	size_t i;

	memset(tp, 0, sizeof *tp);
	tp->seed = cfg->seed;
	tp->n_trial = cfg->n_trial;
	tp->cfg_path = cfg->path;
	tp->nextra = cfg->nextra;
	*ek = xcalloc(cfg->nextra + 1, sizeof **ek);
	*ev = xcalloc(cfg->nextra + 1, sizeof **ev);
	*el = xcalloc(cfg->nextra + 1, sizeof **el);
	for (i = 0; i < cfg->nextra; i++) {
		(*ek)[i] = cfg->extra[i].key;
		(*ev)[i] = cfg->extra[i].value;
		(*el)[i] = cfg->extra[i].line;
	}
	tp->extra_keys = *ek;
	tp->extra_values = *ev;
	tp->extra_lines = *el;
}

/* Keep a measurement of the 1-thread default in the op's noise series. */
static void
job_noise_add(struct job_op *jo, const struct trial_result *r)
{
	if (steps_valid(r) && jo->nnoise < JOB_NOISE_MAX)
		jo->noise[jo->nnoise++] = r->gflops;
}

/* A final-round result's GPU and clocks into jo's ranges (GPU backends). */
static void
job_gpu_note(struct job_op *jo, const struct trial_result *r)
{
	if (r->gpu[0] == '\0')
		return;
	snprintf(jo->gpu, sizeof jo->gpu, "%s", r->gpu);
	if (r->sm_mhz > 0 && (jo->sm_mhz_lo == 0 || r->sm_mhz < jo->sm_mhz_lo))
		jo->sm_mhz_lo = r->sm_mhz;
	if (r->sm_mhz > jo->sm_mhz_hi)
		jo->sm_mhz_hi = r->sm_mhz;
	if (r->temp_c > 0 && (jo->temp_lo == 0 || r->temp_c < jo->temp_lo))
		jo->temp_lo = r->temp_c;
	if (r->temp_c > jo->temp_hi)
		jo->temp_hi = r->temp_c;
	if (r->mem_mhz > 0)
		jo->mem_mhz = r->mem_mhz;
	if (r->peak_gflops > 0 && jo->npeak < JOB_FINAL_ROUNDS) {
		jo->peak_v[jo->npeak++] = r->peak_gflops;
		snprintf(jo->peak_name, sizeof jo->peak_name, "%s",
		    r->peak_routine);
	}
}

/*
 * Measure one config of a step and keep its GFLOP/s in *gflops (0 when it
 * failed) and, when measure_s is not NULL, the seconds its measurement took
 * (compiling and making the op's data not counted; 0 when unknown). 0 when
 * recorded, 1 when a stop interrupted it, -1 on error.
 */
static int
job_measure(struct job *c, struct backend *b, struct job_op *jo,
    const struct config *cf, const char *phase, double *gflops,
    double *measure_s, char **err)
{
	struct trial_result res;
	int r;

	*gflops = 0;
	if (measure_s != NULL)
		*measure_s = 0;
	if (job_should_stop(c))
		return 1;
	r = job_trial(c, b, jo, cf, phase, &res, err);
	if (r == 2)
		return 0;	/* staged: no figure yet */
	if (r == 0 && measure_s != NULL)
		*measure_s = res.measure_s;
	if (r == 0 && steps_valid(&res)) {
		*gflops = res.gflops;
		if (memcmp(cf, &jo->deflt, sizeof *cf) == 0)
			job_noise_add(jo, &res);
		if (strcmp(phase, "final") == 0)
			job_gpu_note(jo, &res);
	}
	trial_result_clear(&res);
	return r;
}

/*
 * The baseline: the backend's untuned default at 1 thread, measured first.
 * Its time starts the op's weight in the scheduler (now_ms).
 */
int
steps_baseline(struct job *c, struct job_op *jo, char **err)
{
	double t0 = job_elapsed(c), m;
	int r;

	c->be->baseline(jo->op, &jo->deflt);
	if (jo->deflt.v[KNOB_THREADS] > 1)
		jo->deflt.v[KNOB_THREADS] = 1;	/* the series is at 1 thread */
	r = job_measure(c, jo->b, jo, &jo->deflt, "baseline",
	    &jo->baseline_gflops, &m, err);
	/*
	 * What one measurement of it takes (simulated under replay): its
	 * measure time, not its compile's or the op's data's, which the
	 * confirm and final rounds it is kept for do not pay again (an IREE
	 * compile is seconds: counted, a 3-minute budget kept everything for
	 * them and searched nothing). The wall time when the backend does
	 * not say.
	 */
	jo->meas_s = m > 0 ? m : job_elapsed(c) - t0;
	jo->based = 1;
	if (jo->baseline_gflops > 0)
		jo->now_ms = stats_flops(jo->op) / (jo->baseline_gflops * 1e6);
	return r;
}

/* Append a valid tuning result to the candidates for the confirm step. */
static void
job_cand_add(struct job_cands *cs, const struct config *cf, double gflops)
{
	if (cs->n == cs->cap) {
		cs->cap = cs->cap ? cs->cap * 2 : 64;
		cs->v = xrealloc(cs->v, cs->cap * sizeof *cs->v);
	}
	memset(&cs->v[cs->n], 0, sizeof *cs->v);
	cs->v[cs->n].config = *cf;
	cs->v[cs->n].gflops = gflops;
	cs->n++;
}

/*
 * "matmul_…: trial 5/16, best 41.20 GFLOP/s, ETA 1m20s": the ETA from the
 * mean time of this run's trials so far, over what is left of the job.
 */
static void
job_progress_line(struct job *c, const struct job_op *jo, double best,
    int found, char *line, size_t len)
{
	double spent = util_now() - c->t0, eta = -1;
	int64_t left = c->budget_total - c->trials_total;
	char etas[32] = "", count[32] = "";

	if (c->trials_total > 0 && left >= 0)
		eta = spent / (double)c->trials_total * (double)left;
	if (eta >= 0)
		snprintf(etas, sizeof etas, ", ETA %dm%02ds", (int)eta / 60,
		    (int)eta % 60);
	if (jo->nuses > 1)
		snprintf(count, sizeof count, " (x%zu)", jo->nuses);
	snprintf(line, len, "%s%s: trial %lld (job %lld/%lld), best %.2f "
	    "GFLOP/s%s%s", jo->op->name, count, (long long)jo->trials,
	    (long long)c->trials_total, (long long)c->budget_total, best, etas,
	    found ? " (from the store)" : "");
}

/*
 * A tune trial is done (measured now, or found in the store): the counts,
 * the candidates for the confirm step, the progress line.
 */
void
steps_tune_done(struct job *c, struct job_op *jo, const struct config *cf,
    const struct trial_result *r, int found)
{
	char line[512];

	if (!found) {
		jo->measured++;
		jo->since_noise++;
		/* What a trial costs: the scheduler's time budget uses it. */
		jo->trial_s += ((r->compile_s + r->measure_s) - jo->trial_s) /
		    (double)jo->measured;
	}
	jo->trials++;
	c->trials_total++;
	jo->since_best++;
	if (steps_valid(r)) {
		jo->ok++;
		if (r->gflops > jo->best_seen) {
			jo->best_seen = r->gflops;
			jo->since_best = 0;
		}
		job_cand_add(&jo->cs, cf, r->gflops);
	}
	if (c->job_id > 0)
		(void)store_job_set_progress(c->st, c->job_id, c->trials_total,
		    NULL);
	job_progress_line(c, jo, jo->best_seen, found, line, sizeof line);
	report_progress(&c->rep, line);
	if (c->o->progress != NULL)
		c->o->progress(line, c->o->progress_arg);
}

/*
 * 1 when the store has cf's tune trial (res filled, reported), 2 when an
 * earlier run of this batch job measured it (counted as this job's
 * measurement), 0 when it must be measured, -1 on error.
 */
int
steps_tune_found(struct job *c, struct job_op *jo, const struct config *cf,
    struct trial_result *res, char **err)
{
	char name[160];
	int found;

	space_config_name(cf, c->rep.knobs, name, sizeof name);
	if (carry_begin(c, jo, "tune", name, res)) {
		/* This batch job's own, measured by an earlier run: as measured. */
		report_block(&c->rep, jo->op, name, "tune", res, 1);
		report_csv_row(&c->rep, jo->op, cf, name, "tune", res);
		return 2;
	}
	if (c->o->fresh)
		return 0;
	found = store_trial_find(c->st, jo->op_id, c->target_id, name, res, err);
	if (found > 0) {
		report_block(&c->rep, jo->op, name, "tune", res, 1);
		report_csv_row(&c->rep, jo->op, cf, name, "tune", res);
	}
	return found;
}

/* 1 when no new measurement may start: a stop, a cancel, the time limit. */
int
steps_tune_halt(struct job *c)
{
	return job_should_stop(c) || (c->cfg->time_limit > 0 &&
	    job_elapsed(c) >= c->cfg->time_limit);
}

_Static_assert(JOB_BATCH_MAX <= TUNER_PROPOSE_MAX, "a batch the tuner cuts");

/*
 * The tuner of op jo, made at its first search round and kept until its
 * finish, offered what other jobs learnt. 0, or -1 with *err.
 */
static int
steps_tuner_on(struct job *c, struct job_op *jo, char **err)
{
	const struct cfg *cfg = c->cfg;
	struct tuner_params tp;
	const char **ek = NULL, **ev = NULL;
	int *el = NULL;
	int r;

	if (jo->tuner_on)
		return 0;
	steps_tuner_params(cfg, &tp, &ek, &ev, &el);
	tp.n_trial = c->per_op_max;
	r = tuner_create(tuner_find(cfg->tuner), &tp, jo->op, jo->sp,
	    &jo->t, err);
	free(ek);
	free(ev);
	free(el);
	if (r != 0)
		return -1;
	jo->tuner_on = 1;
	job_offer_transfer(c, &jo->t, jo);
	return 0;
}

/*
 * The k proposed configs idx of a round, one after another: each taken from
 * the store or measured into res. *k becomes how many the tuner may learn
 * from (fewer when the job halts). 0, or -1 with *err.
 */
static int
steps_round_serial(struct job *c, struct job_op *jo, const uint64_t *idx,
    struct trial_result *res, size_t *k, char **err)
{
	struct config cf;
	size_t i;
	int found, r;

	for (i = 0; i < *k; i++) {
		if (steps_tune_halt(c)) {
			*k = i;
			break;
		}
		space_get(jo->sp, idx[i], &cf);
		if ((found = steps_tune_found(c, jo, &cf, &res[i], err)) < 0)
			return -1;
		if (!found) {
			if ((r = job_trial(c, jo->b, jo, &cf, "tune", &res[i],
			    err)) < 0)
				return -1;
			if (r == 1) {
				*k = i;
				break;
			}
			if (r == 2)
				continue;	/* staged: the tuner waits */
		}
		steps_tune_done(c, jo, &cf, &res[i], found == 1);
	}
	return 0;
}

/*
 * A search round: the tuner (made at the op's first round, kept until its
 * finish) proposes up to n configs, each measured or taken from the store,
 * and learns from them; the default is measured again every
 * JOB_NOISE_EVERY measured trials, for the noise floor and the drift check.
 * Under executor slurm the batch is measured c->parallel at a time.
 */
int
steps_search_round(struct job *c, struct job_op *jo, int64_t n,
    int64_t *done, char **err)
{
	uint64_t idx[JOB_BATCH_MAX];
	struct trial_result res[JOB_BATCH_MAX];
	int64_t before = jo->trials, d0 = c->deferred;
	double g;
	size_t i, k;
	int rc = -1;

	*done = 0;
	memset(res, 0, sizeof res);
	/* n is the scheduler's, or a replayed plan's: idx holds JOB_BATCH_MAX. */
	if (n < 1)
		return 0;
	if (n > JOB_BATCH_MAX)
		n = JOB_BATCH_MAX;
	if (steps_tuner_on(c, jo, err) != 0)
		return -1;
	jo->reached = 1;
	if (steps_tune_halt(c))
		return c->stopped ? 1 : 0;
	k = tuner_propose(&jo->t, idx, (size_t)n);
	jo->tuner_s += tuner_overhead(&jo->t);
	if (k == 0)
		return 0;	/* the space is exhausted */
	if (c->parallel > 0) {
		if (job_batch_parallel(c, jo, jo->sp, jo->b, idx, k, res, &k,
		    err) != 0)
			goto out;
	} else if (steps_round_serial(c, jo, idx, res, &k, err) != 0)
		goto out;
	if (carry_staged(c, d0)) {
		rc = 1;
		goto out;
	}
	tuner_update(&jo->t, idx, res, k);
	jo->tuner_s += tuner_overhead(&jo->t);
	if (jo->since_noise >= JOB_NOISE_EVERY) {
		jo->since_noise = 0;
		if (job_measure(c, jo->b, jo, &jo->deflt, "noise", &g,
		    NULL, err) < 0)
			goto out;
	}
	/* A staged noise measurement holds nothing up: its round goes on. */
	rc = c->stopped ? 1 : 0;
out:
	*done = jo->trials - before;
	for (i = 0; i < JOB_BATCH_MAX; i++)
		trial_result_clear(&res[i]);
	return rc;
}

static int
job_cand_cmp(const void *a, const void *b)
{
	const struct job_cand *x = a, *y = b;

	return (x->gflops < y->gflops) - (x->gflops > y->gflops);
}

/*
 * The default as a build on the CPUs the job measures on runs it (export's
 * build_default): the backend's default at the most threads of the space
 * the op has the work for (space_default_threads); the default at 1
 * thread where the backend has no threads knob or the space one thread.
 */
static void
steps_build_default(const struct job_op *jo, struct config *d)
{
	const int64_t *th;
	size_t n, i;
	int64_t most = 1;

	*d = jo->deflt;
	if (d->v[KNOB_THREADS] != 1)
		return;
	th = space_knob_list(jo->sp, KNOB_THREADS, &n);
	for (i = 0; th != NULL && i < n; i++)
		if (th[i] > most)
			most = th[i];
	d->v[KNOB_THREADS] = space_default_threads(jo->op, (int)most);
}

/*
 * The choice: the top few of the search re-measured side by side, rounds
 * interleaved, each by its median; the default as a build runs it
 * (steps_build_default: on the job's threads) competes when it is a point
 * of the space, so tuning never chooses a config slower than the default
 * an untuned build would run. These figures choose; they are not reported (winner's
 * curse): the final step measures the winner again.
 */
static int
job_step_confirm(struct job *c, struct job_op *jo, char **err)
{
	struct job_cands *cs = &jo->cs;
	struct space *sp = jo->sp;
	struct backend *b = jo->b;
	struct config d;
	int64_t d0 = c->deferred;
	size_t i, k;
	double best = 0;
	int round, r;

	if (cs->n == 0) {
		/*
		 * No search trial reached the op (a budget spent elsewhere) or
		 * none was valid: the default stands when it ran.
		 */
		if (jo->baseline_gflops > 0) {
			jo->best = jo->deflt;
			jo->have_best = 1;
		}
		return 0;
	}
	qsort(cs->v, cs->n, sizeof *cs->v, job_cand_cmp);
	k = cs->n < (size_t)c->cfg->confirm_top ? cs->n :
	    (size_t)c->cfg->confirm_top;
	if (k <= 1) {
		jo->best = cs->v[0].config;
		jo->have_best = 1;
		return 0;
	}
	steps_build_default(jo, &d);
	for (i = 0; i < k; i++) {
		if (memcmp(&cs->v[i].config, &d, sizeof d) == 0)
			break;
	}
	if (i == k && space_index(sp, &d) >= 0) {
		job_cand_add(cs, &d, 0);
		/* job_cand_add appended it at cs->n - 1: bring it to k. */
		cs->v[k] = cs->v[cs->n - 1];
		k++;
	}
	for (round = 0; round < JOB_CONFIRM_ROUNDS; round++) {
		for (i = 0; i < k; i++) {
			struct job_cand *cd = &cs->v[round % 2 ? k - 1 - i : i];

			r = job_measure(c, b, jo, &cd->config, "confirm",
			    &cd->confirm[cd->nconfirm], NULL, err);
			if (r != 0)
				return r;
			cd->nconfirm++;
		}
	}
	if (carry_staged(c, d0))
		return 1;	/* the choice waits for the figures */
	for (i = 0; i < k; i++) {
		double m = stats_median(cs->v[i].confirm, cs->v[i].nconfirm);

		if (m > best) {
			best = m;
			jo->best = cs->v[i].config;
			jo->have_best = 1;
		}
	}
	return 0;
}

/*
 * The reference library once at the winner's thread count, recorded; *g its
 * GFLOP/s (0 when it failed). 0, 1 when stopped, -1 on error.
 */
static int
job_reference_once(struct job *c, struct job_op *jo, struct backend *b,
    double *g, char **err)
{
	struct trial_result res;
	struct store_trial st;
	int64_t staged = executor_staged(c->exec);
	char name[64];
	int rc = -1, r;

	*g = 0;
	memset(&res, 0, sizeof res);
	snprintf(name, sizeof name, "reference_thr_%d", jo->base_threads);
	if (carry_begin(c, jo, "reference", name, &res))
		goto kept;	/* recorded by an earlier run of this batch job */
	job_measuring(c);
	r = c->be->reference(b, jo->base_threads, &res, err);
	job_measured(c);
	if (executor_staged(c->exec) != staged) {
		/* Staged for another host: no figure yet. */
		if (r != 0) {
			free(*err);
			*err = NULL;
		}
		c->deferred++;
		rc = 0;
		goto out;
	}
	if (r != 0)
		goto out;
	if (job_should_stop(c)) {
		rc = 1;
		goto out;
	}
	memset(&st, 0, sizeof st);
	st.job_id = c->job_id;
	st.op_id = jo->op_id;
	st.target_id = c->target_id;
	st.phase = "reference";
	st.config_name = name;
	st.config.v[KNOB_THREADS] = jo->base_threads;
	st.result = res;
	if (store_trial_add(c->st, &st, err) < 0)
		goto out;
kept:
	if (steps_valid(&res)) {
		*g = res.gflops;
		job_gpu_note(jo, &res);
	}
	/* What it computed, and whether a "vs" ratio is like for like. */
	snprintf(jo->reference_name, sizeof jo->reference_name, "%s",
	    res.ref_routine[0] != '\0' ? res.ref_routine : "reference");
	jo->reference_same = res.ref_routine[0] != '\0' && res.ref_same_precision;
	rc = 0;
out:
	trial_result_clear(&res);
	return rc;
}

/*
 * The figures: the chosen config measured again after the choice, in rounds
 * interleaved (order alternating) with the default at the winner's thread
 * count, the default at 1 thread when that is not 1, and the reference
 * library at the winner's thread count. The reported GFLOP/s is the
 * winner's median here, the library's its median too (one run of a
 * multi-threaded library moves by 20% here); speedups are paired per round.
 */
static int
job_step_final(struct job *c, struct job_op *jo, struct backend *b,
    char **err)
{
	struct config bt = jo->deflt;
	double w[JOB_FINAL_ROUNDS], d[JOB_FINAL_ROUNDS], d1[JOB_FINAL_ROUNDS];
	double ref[JOB_FINAL_ROUNDS], v[JOB_FINAL_ROUNDS];
	const struct config *order[4];
	double *into[4];
	const char *phase[4];
	int64_t d0 = c->deferred;
	int round, n, i, j, r, nv;

	if (!jo->have_best)
		return 0;
	jo->base_threads = jo->best.v[KNOB_THREADS] > 1 ?
	    (int)jo->best.v[KNOB_THREADS] : 1;
	bt.v[KNOB_THREADS] = jo->best.v[KNOB_THREADS];
	jo->default_best = memcmp(&bt, &jo->best, sizeof bt) == 0;
	n = 0;
	order[n] = &jo->best, into[n] = w, phase[n++] = "final";
	if (!jo->default_best)
		order[n] = &bt, into[n] = d, phase[n++] = "baseline";
	if (jo->base_threads != 1)
		order[n] = &jo->deflt, into[n] = d1, phase[n++] = "baseline";
	if (c->be->reference != NULL)
		order[n] = NULL, into[n] = ref, phase[n++] = "reference";
	memset(ref, 0, sizeof ref);
	for (round = 0; round < JOB_FINAL_ROUNDS; round++) {
		for (i = 0; i < n; i++) {
			j = round % 2 ? n - 1 - i : i;
			r = order[j] == NULL ? job_reference_once(c, jo, b,
			    &into[j][round], err) : job_measure(c, b, jo,
			    order[j], phase[j], &into[j][round], NULL, err);
			if (r != 0)
				return r;
		}
		jo->final_rounds++;
	}
	if (carry_staged(c, d0))
		return 1;
	for (i = nv = 0; i < JOB_FINAL_ROUNDS; i++) {
		if (ref[i] > 0)
			v[nv++] = ref[i];
	}
	jo->reference_gflops = stats_median(v, nv);
	jo->peak_gflops = stats_median(jo->peak_v, jo->npeak);
	jo->best_gflops = stats_median(w, JOB_FINAL_ROUNDS);
	if (jo->default_best)
		memcpy(d, w, sizeof d);
	jo->base_thr_gflops = stats_median(d, JOB_FINAL_ROUNDS);
	(void)stats_ratio_ci(w, d, JOB_FINAL_ROUNDS, &jo->speedup);
	if (jo->base_threads != 1) {
		jo->base1_gflops = stats_median(d1, JOB_FINAL_ROUNDS);
		(void)stats_ratio_ci(w, d1, JOB_FINAL_ROUNDS, &jo->speedup1);
		(void)stats_ratio_ci(d, d1, JOB_FINAL_ROUNDS,
		    &jo->deflt_speedup1);
	} else {
		jo->base1_gflops = jo->base_thr_gflops;
		jo->speedup1 = jo->speedup;
	}
	for (i = nv = 0; i < JOB_FINAL_ROUNDS; i++) {
		if (w[i] > 0)
			v[nv++] = w[i];
	}
	jo->best_cv = stats_cv(v, nv);
	return 0;
}

/* The noise floor and the drift check, from the default's series. */
static void
job_step_noise(struct job *c, struct job_op *jo)
{
	jo->noise_cv = stats_cv(jo->noise, jo->nnoise);
	if (stats_drift(jo->noise, jo->nnoise, JOB_DRIFT_MIN, &jo->drift) == 0 &&
	    jo->drift.drift)
		job_log(c, "warning", "%s: the default moved from %.2f to %.2f "
		    "GFLOP/s during the job, more than its noise explains "
		    "(Welch t = %.1f > %.1f over %d measurements)",
		    jo->op->name, jo->drift.before, jo->drift.after,
		    jo->drift.t, jo->drift.t_crit, jo->nnoise);
}

/*
 * The default kept: the winner was not measurably faster in the final
 * rounds (its paired ratio's 95% interval reaches 1), so the best the job
 * records, and export and build take, is the default at the winner's
 * thread count, measured side by side in those same rounds.
 */
static void
job_keep_default(struct job *c, struct job_op *jo)
{
	struct config bt = jo->deflt;

	bt.v[KNOB_THREADS] = jo->best.v[KNOB_THREADS];
	jo->kept_default = 1;
	space_config_name(&jo->best, c->rep.knobs, jo->winner_name,
	    sizeof jo->winner_name);
	jo->winner_speedup = jo->speedup;
	jo->best = bt;
	jo->default_best = 1;
	jo->best_gflops = jo->base_thr_gflops;
	jo->speedup.est = jo->speedup.lo = jo->speedup.hi = 1;
	jo->speedup1 = jo->base_threads == 1 ? jo->speedup :
	    jo->deflt_speedup1;
}

/* Record which config the job chose for op, and why. 0 or -1. */
static int
job_choice(struct job *c, struct job_op *jo, char **err)
{
	struct store_choice ch;
	const struct stats_ratio *r = jo->kept_default ? &jo->winner_speedup :
	    &jo->speedup;

	if (c->carry != NULL) {
		/* A batch job run again: its choice is recorded once. */
		int h = store_choice_has(c->st, c->job_id, jo->op_id,
		    c->target_id, err);

		if (h != 0)
			return h < 0 ? -1 : 0;
	}
	memset(&ch, 0, sizeof ch);
	ch.job_id = c->job_id;
	ch.op_id = jo->op_id;
	ch.target_id = c->target_id;
	ch.config_name = jo->best_name;
	ch.reason = jo->kept_default ? "default kept: the winner was not "
	    "measurably faster" : jo->default_best ? "the default won" :
	    "faster than the default";
	ch.speedup = r->est;
	ch.lo = r->lo;
	ch.hi = r->hi;
	ch.rounds = r->n;
	ch.occurrences = (int64_t)jo->nuses;
	return store_choice_add(c->st, &ch, err) < 0 ? -1 : 0;
}

/*
 * Finish one op: confirm (the choice), final (the figures, after the
 * choice, the reference library among them), the default kept unless the
 * choice is measurably faster, the noise floor; the tuner freed. -1 on a
 * fatal error; a stop is not an error.
 */
int
steps_finish(struct job *c, struct job_op *jo, char **err)
{
	int r;

	jo->finished = 1;
	if (jo->tuner_on) {
		tuner_destroy(&jo->t);
		jo->tuner_on = 0;
	}
	if ((r = job_step_confirm(c, jo, err)) != 0)
		goto out;
	if ((r = job_step_final(c, jo, jo->b, err)) != 0)
		goto out;
	job_step_noise(c, jo);
	if (jo->compiled > 0)
		job_log(c, "info", "%s: %lld tune candidates compiled here, up "
		    "to %d at once (of %d)", jo->op->name,
		    (long long)jo->compiled, jo->compile_most, c->compile_jobs);
	if (jo->have_best) {
		/* (A default that failed to run is no choice.) */
		if (!jo->default_best && jo->base_thr_gflops > 0 &&
		    !(jo->speedup.n >= 2 && jo->speedup.lo > 1.0))
			job_keep_default(c, jo);
		space_config_name(&jo->best, c->rep.knobs, jo->best_name,
		    sizeof jo->best_name);
		jo->best_ms = jo->best_gflops > 0 ? stats_flops(jo->op) /
		    (jo->best_gflops * 1e6) : 0;
		if (c->job_id > 0 && jo->final_rounds > 0 &&
		    job_choice(c, jo, err) != 0) {
			r = -1;
			goto out;
		}
		if (jo->kept_default)
			job_log(c, "info", "%s (x%zu): the default kept: the "
			    "search's best %s was %.2fx [%.2f, %.2f] of it, not "
			    "measurably faster", jo->op->name, jo->nuses,
			    jo->winner_name, jo->winner_speedup.est,
			    jo->winner_speedup.lo, jo->winner_speedup.hi);
		else
			job_log(c, "info", "%s (x%zu): best %s at %.2f GFLOP/s "
			    "after %lld trials (measured after the choice, %d "
			    "rounds)", jo->op->name, jo->nuses, jo->best_name,
			    jo->best_gflops, (long long)jo->trials,
			    jo->final_rounds);
	} else
		job_log(c, "warning", "%s (x%zu): no valid config found in "
		    "%lld trials", jo->op->name, jo->nuses,
		    (long long)jo->trials);
	r = 0;
out:
	free(jo->cs.v);
	jo->cs.v = NULL;
	jo->cs.n = jo->cs.cap = 0;
	return r < 0 ? -1 : r;
}
