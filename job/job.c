/*
 * The engine of a tuning job, shared by `autosched run` and autoschedd:
 * analyse the MLIR, and for each tunable op build its space, measure the
 * baseline, let the tuner propose batches the backend evaluates (each trial
 * committed to the store on its own, resumed trials taken from it), confirm
 * the top candidates interleaved with the baseline, measure the reference.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "backends/backend.h"
#include "cfg/cfg.h"
#include "generate/generate.h"
#include "html/html.h"
#include "job/job.h"
#include "job/job_int.h"
#include "search/space.h"
#include "store/store.h"
#include "tuners/tuner.h"
#include "util/util.h"

#define JOB_CONFIRM_ROUNDS	3	/* rounds that choose among the top few */
#define JOB_FINAL_ROUNDS	5	/* rounds after the choice: the figures */
#define JOB_NOISE_EVERY		8	/* measured trials between two of the default */
#define JOB_DRIFT_MIN		0.02	/* a drift smaller than this is not flagged */
#define JOB_BATCH_MAX		64

/* A candidate for the confirm phase. */
struct job_cand {
	struct config	 config;
	double		 gflops;	/* from tuning */
	double		 confirm[JOB_CONFIRM_ROUNDS];
	int		 nconfirm;
};

struct job_cands {
	struct job_cand	*v;
	size_t		 n, cap;
};

/* Everything one run carries from op to op. */
struct job {
	const struct cfg	*cfg;
	struct store		*st;
	const struct job_opts	*o;
	const struct backend_ops *be;
	struct backend_params	 params;
	struct job_report	 rep;
	int64_t			 job_id;
	int64_t			 target_id;
	double			 t0;
	double			 sim_done;	/* simulated seconds of finished ops */
	int			 stopped;	/* 1 stop signal, 2 cancel */
	int64_t			 trials_total;
	int64_t			 budget_total;
	struct analysis		*an;
	struct job_op		*ops;
	struct space		**spaces;
	size_t			 nops;
	size_t			 ntunable;
	char			*mlir_text;	/* read from the file, or NULL */
	int			 ncpus;		/* CPUs measurements use */
	dev_t			 db_dev;	/* the store file when the job began */
	ino_t			 db_ino;
	int			 db_known;
	int			 run_lock;	/* the lease of this cfg on the store, or -1 */
	int			 job_lock;	/* the lease of the job id, or -1 */
	char			*job_lock_path;
	struct util_out		*csv_out;	/* the CSV report while written */
	struct util_out_guard	 csv_guard;
	int			 parallel;	/* tune measurements at once (executor slurm) */
	int			 begun;		/* the backend's begin ran */
	char			 step_name[40];	/* the Slurm steps' job name */
};

static void
job_log(struct job *c, const char *level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
job_log(struct job *c, const char *level, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (msg == NULL)
		return;
	if (c->job_id > 0)
		(void)store_log(c->st, c->job_id, level, msg);
	free(msg);
}

/* Seconds the job has spent, simulated when the backend has a clock. */
static double
job_elapsed(struct job *c, struct backend *b)
{
	if (c->be->clock != NULL && b != NULL)
		return c->sim_done + c->be->clock(b);
	return util_now() - c->t0;
}

/* 1 if the job must stop at this trial boundary. */
static int
job_should_stop(struct job *c)
{
	if (c->stopped)
		return 1;
	if (c->o->stop != NULL && *c->o->stop) {
		c->stopped = 1;
		return 1;
	}
	if (c->job_id > 0 && store_job_cancel_requested(c->st, c->job_id)) {
		c->stopped = 2;
		return 1;
	}
	return 0;
}

/*
 * 1 (with *err) if the store file the job began with was deleted or replaced:
 * what the job records from now on would go nowhere anyone reads.
 */
static int
job_store_gone(struct job *c, char **err)
{
	struct stat sb;

	if (!c->db_known)
		return 0;
	if (stat(c->o->db, &sb) == 0 && sb.st_dev == c->db_dev &&
	    sb.st_ino == c->db_ino)
		return 0;
	util_seterr(err, "the store %s was deleted or replaced while the job"
	    " ran: stopping, nothing more is recorded (results since then are"
	    " lost)", c->o->db);
	return 1;
}

/*
 * Evaluate one config and commit it as a trial of the given phase. 0 when
 * recorded, 1 when a stop interrupted it (nothing recorded), -1 on error.
 */
static int job_record(struct job *, struct job_op *, const struct config *,
    const char *, struct trial_result *, char **);

static int
job_trial(struct job *c, struct backend *b, struct job_op *jo,
    const struct config *cf, const char *phase, struct trial_result *res,
    char **err)
{
	memset(res, 0, sizeof *res);
	if (c->be->evaluate(b, cf, res, err) != 0)
		return -1;
	return job_record(c, jo, cf, phase, res, err);
}

/*
 * Commit the result of cf as a trial of the given phase, on the engine's
 * thread. 0 when recorded, 1 when a stop interrupted its measurement
 * (nothing recorded), -1 on error (the environment failed: nothing
 * recorded; or the store).
 */
static int
job_record(struct job *c, struct job_op *jo, const struct config *cf,
    const char *phase, struct trial_result *res, char **err)
{
	struct store_trial t;
	char name[160];

	space_config_name(cf, c->rep.knobs, name, sizeof name);
	if (c->o->stop != NULL && *c->o->stop) {
		/* Our own stop killed the child: not the candidate's outcome. */
		backend_result_clear(res);
		c->stopped = 1;
		return 1;
	}
	if (res->env_failure) {
		/* Not the candidate's outcome: record nothing, measure it later. */
		util_seterr(err, "%s: %s: the environment failed, not the config:"
		    " %s; nothing recorded for it, the job stops (run it again"
		    " once this is fixed: it resumes)", jo->op->name, name,
		    res->error ? res->error : "?");
		backend_result_clear(res);
		return -1;
	}
	if (job_store_gone(c, err)) {
		backend_result_clear(res);
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
static int
job_valid(const struct trial_result *r)
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
};

static int
job_transfer_cb(const struct store_trial *t, const struct op_desc *op,
    void *arg)
{
	struct job_transfer *x = arg;
	struct space_rules rules;
	struct op_desc *copy;

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

/* Offer the tuner what the store knows of other shapes of this op kind. */
static void
job_offer_transfer(struct job *c, struct tuner *t, const struct op_desc *op)
{
	struct job_transfer x;
	char *err = NULL;
	size_t i;

	if (t->ops->transfer == NULL)
		return;
	memset(&x, 0, sizeof x);
	x.op = op;
	x.be = c->be;
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
	char etas[32] = "";

	if (c->trials_total > 0 && left >= 0)
		eta = spent / (double)c->trials_total * (double)left;
	if (eta >= 0)
		snprintf(etas, sizeof etas, ", ETA %dm%02ds", (int)eta / 60,
		    (int)eta % 60);
	snprintf(line, len, "%s: trial %lld/%lld, best %.2f GFLOP/s%s%s",
	    jo->op->name, (long long)jo->trials, (long long)c->cfg->n_trial,
	    best, etas, found ? " (from the store)" : "");
}

/* The tuner's settings from the cfg; the caller frees the three arrays. */
static void
job_tuner_params(const struct cfg *cfg, struct tuner_params *tp,
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
	if (job_valid(r) && jo->nnoise < JOB_NOISE_MAX)
		jo->noise[jo->nnoise++] = r->gflops;
}

/*
 * Measure one config of a step and keep its GFLOP/s in *gflops (0 when it
 * failed). 0 when recorded, 1 when a stop interrupted it, -1 on error.
 */
static int
job_measure(struct job *c, struct backend *b, struct job_op *jo,
    const struct config *cf, const char *phase, double *gflops, char **err)
{
	struct trial_result res;
	int r;

	*gflops = 0;
	if (job_should_stop(c))
		return 1;
	r = job_trial(c, b, jo, cf, phase, &res, err);
	if (r == 0 && job_valid(&res)) {
		*gflops = res.gflops;
		if (memcmp(cf, &jo->deflt, sizeof *cf) == 0)
			job_noise_add(jo, &res);
	}
	backend_result_clear(&res);
	return r;
}

/* The step's outcome: 0 go on, 1 stopped (nothing more to do), -1 error. */

/* The baseline: the backend's untuned default at 1 thread, measured first. */
static int
job_step_baseline(struct job *c, struct job_op *jo, struct backend *b,
    char **err)
{
	c->be->baseline(jo->op, &jo->deflt);
	if (jo->deflt.v[KNOB_THREADS] > 1)
		jo->deflt.v[KNOB_THREADS] = 1;	/* the series is at 1 thread */
	return job_measure(c, b, jo, &jo->deflt, "baseline",
	    &jo->baseline_gflops, err);
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

/* What the search carries from trial to trial. */
struct job_search {
	struct job_cands	*cs;
	double			 best_seen;
	int64_t			 since_best, since_noise;
};

/*
 * A tune trial is done (measured now, or found in the store): the counts,
 * the candidates for the confirm step, the progress line.
 */
static void
job_tune_done(struct job *c, struct job_op *jo, struct job_search *js,
    const struct config *cf, const struct trial_result *r, int found)
{
	char line[512];

	if (!found) {
		jo->measured++;
		js->since_noise++;
	}
	jo->trials++;
	c->trials_total++;
	js->since_best++;
	if (job_valid(r)) {
		jo->ok++;
		if (r->gflops > js->best_seen) {
			js->best_seen = r->gflops;
			js->since_best = 0;
		}
		job_cand_add(js->cs, cf, r->gflops);
	}
	if (c->job_id > 0)
		(void)store_job_set_progress(c->st, c->job_id, c->trials_total,
		    NULL);
	job_progress_line(c, jo, js->best_seen, found, line, sizeof line);
	report_progress(&c->rep, line);
	if (c->o->progress != NULL)
		c->o->progress(line, c->o->progress_arg);
}

/*
 * 1 when the store has cf's tune trial (res filled, reported), 0 when it
 * must be measured, -1 on error.
 */
static int
job_tune_found(struct job *c, struct job_op *jo, const struct config *cf,
    struct trial_result *res, char **err)
{
	char name[160];
	int found;

	if (c->o->fresh)
		return 0;
	space_config_name(cf, c->rep.knobs, name, sizeof name);
	found = store_trial_find(c->st, jo->op_id, c->target_id, name, res, err);
	if (found > 0) {
		report_block(&c->rep, jo->op, name, "tune", res, 1);
		report_csv_row(&c->rep, jo->op, cf, name, "tune", res);
	}
	return found;
}

/* 1 when no new measurement may start: a stop, a cancel, the time limit. */
static int
job_tune_halt(struct job *c, struct backend *b)
{
	return job_should_stop(c) || (c->cfg->time_limit > 0 &&
	    job_elapsed(c, b) >= c->cfg->time_limit);
}

/* One measurement of a batch measured at once, on a thread of its own. */
struct job_slot {
	const struct backend_ops *be;
	struct backend		*b;
	void			*art;		/* prepared, or NULL: res is final */
	struct trial_result	*res;
	char			*err;
	int			 rc;
	int			 state;		/* JOB_SLOT_* */
	pthread_t		 th;
	pthread_mutex_t		*mu;
	pthread_cond_t		*cv;
};
enum { JOB_SLOT_IDLE, JOB_SLOT_RUNNING, JOB_SLOT_DONE, JOB_SLOT_JOINED };

static void *
job_slot_run(void *arg)
{
	struct job_slot *s = arg;
	char *err = NULL;
	int rc;

	rc = s->be->measure(s->b, s->art, s->res, &err);
	pthread_mutex_lock(s->mu);
	s->rc = rc;
	s->err = err;
	s->state = JOB_SLOT_DONE;
	pthread_cond_broadcast(s->cv);
	pthread_mutex_unlock(s->mu);
	return NULL;
}

/* Start slot's measurement on a thread of its own. */
static void
job_slot_start(struct job_slot *s)
{
	sigset_t all, old;

	/* Signals stay with the engine's thread: its handler stops us. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_mutex_lock(s->mu);
	s->state = JOB_SLOT_RUNNING;
	pthread_mutex_unlock(s->mu);
	if (pthread_create(&s->th, NULL, job_slot_run, s) != 0) {
		s->rc = s->be->measure(s->b, s->art, s->res, &s->err);
		s->state = JOB_SLOT_IDLE;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * A batch measured up to c->parallel at a time (executor slurm): the engine
 * compiles each candidate here (backend prepare), hands its measurement to
 * a thread (backend measure: a step on some node), and compiles the next
 * while steps run, one ahead when every step is busy, so that it starts as
 * soon as one frees. Results are recorded here, on the engine's thread
 * only, in the batch's order, as soon as every earlier one is; configs the
 * store has are not measured. *done is how many of idx[] were recorded (a
 * prefix: the tuner learns from those). 0, or -1 on error; a stop ends it
 * early, and what it had not recorded is measured again on resume.
 */
static int
job_batch_parallel(struct job *c, struct job_op *jo, struct space *sp,
    struct backend *b, const uint64_t *idx, size_t n,
    struct trial_result *res, struct job_search *js, size_t *done,
    char **err)
{
	struct job_slot slot[JOB_BATCH_MAX];
	struct config cf[JOB_BATCH_MAX];
	int found[JOB_BATCH_MAX];
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
	size_t next = 0, rec = 0, i;
	long ready = -1;	/* the compiled slot waiting for a step */
	int halt = 0, stop = 0, rc = -1, running = 0, r, st;

	memset(slot, 0, sizeof slot);
	memset(found, 0, sizeof found);
	for (i = 0; i < n; i++) {
		slot[i].be = c->be;
		slot[i].b = b;
		slot[i].res = &res[i];
		slot[i].mu = &mu;
		slot[i].cv = &cv;
	}
	for (;;) {
		/* Record, in the batch's order, what is final. */
		while (rec < next && !stop) {
			struct job_slot *s = &slot[rec];

			if (found[rec]) {
				job_tune_done(c, jo, js, &cf[rec], &res[rec], 1);
				rec++;
				continue;
			}
			pthread_mutex_lock(&mu);
			st = s->state;
			pthread_mutex_unlock(&mu);
			if (st == JOB_SLOT_RUNNING || (long)rec == ready)
				break;
			if (st == JOB_SLOT_DONE) {
				pthread_join(s->th, NULL);
				s->state = JOB_SLOT_JOINED;
			}
			c->be->release(s->art);
			s->art = NULL;
			if (s->rc != 0) {
				*err = s->err;
				s->err = NULL;
				goto out;
			}
			if ((r = job_record(c, jo, &cf[rec], "tune", &res[rec],
			    err)) < 0)
				goto out;
			if (r > 0) {
				stop = 1;
				break;
			}
			job_tune_done(c, jo, js, &cf[rec], &res[rec], 0);
			rec++;
		}
		if (stop || rec == n)
			break;
		pthread_mutex_lock(&mu);
		for (i = rec, running = 0; i < next; i++)
			running += slot[i].state == JOB_SLOT_RUNNING;
		pthread_mutex_unlock(&mu);
		/* The one compiled ahead: started when a step frees, or dropped. */
		if (ready >= 0 && (halt || running < c->parallel)) {
			if (halt) {
				c->be->release(slot[ready].art);
				slot[ready].art = NULL;
				backend_result_clear(&res[ready]);
				next = (size_t)ready;
			} else {
				job_slot_start(&slot[ready]);
				running++;
			}
			ready = -1;
		}
		/* Compile and start more; one ahead when every step is busy. */
		while (!halt && next < n && ready < 0) {
			if (job_tune_halt(c, b)) {
				halt = 1;
				break;
			}
			space_get(sp, idx[next], &cf[next]);
			if ((found[next] = job_tune_found(c, jo, &cf[next],
			    &res[next], err)) < 0)
				goto out;
			if (found[next]) {
				next++;
				continue;
			}
			memset(&res[next], 0, sizeof res[next]);
			if (c->be->prepare(b, &cf[next], &res[next],
			    &slot[next].art, err) != 0)
				goto out;
			if (slot[next].art != NULL) {
				if (running < c->parallel) {
					job_slot_start(&slot[next]);
					running++;
				} else
					ready = (long)next;
			}
			next++;
		}
		/*
		 * Wait until the next one in order is final, or a step is free
		 * for the one compiled ahead.
		 */
		pthread_mutex_lock(&mu);
		for (;;) {
			for (i = rec, running = 0; i < next; i++)
				running += slot[i].state == JOB_SLOT_RUNNING;
			if (rec < next && (long)rec != ready && (found[rec] ||
			    slot[rec].state != JOB_SLOT_RUNNING))
				break;
			if ((ready >= 0 && running < c->parallel) ||
			    (!halt && next < n && ready < 0) || running == 0)
				break;
			pthread_cond_wait(&cv, &mu);
		}
		pthread_mutex_unlock(&mu);
		if (rec == next && running == 0 && halt)
			break;		/* halted with nothing in flight */
	}
	rc = 0;
out:
	/* What is still measuring ends (a stop killed it) and is not recorded. */
	for (i = 0; i < next; i++) {
		pthread_mutex_lock(&mu);
		st = slot[i].state;
		pthread_mutex_unlock(&mu);
		if (st == JOB_SLOT_RUNNING || st == JOB_SLOT_DONE) {
			pthread_join(slot[i].th, NULL);
			slot[i].state = JOB_SLOT_JOINED;
		}
		c->be->release(slot[i].art);
		free(slot[i].err);
		if (i >= rec)
			backend_result_clear(&res[i]);
	}
	pthread_mutex_destroy(&mu);
	pthread_cond_destroy(&cv);
	*done = rec;
	return rc;
}

/*
 * The search: the tuner proposes batches, each config is measured (or taken
 * from the store), the tuner learns; between batches the default is
 * measured again now and then, for the noise floor and the drift check.
 * Under executor slurm a batch is measured c->parallel at a time.
 */
static int
job_step_search(struct job *c, struct job_op *jo, struct space *sp,
    struct backend *b, struct job_cands *cs, char **err)
{
	const struct cfg *cfg = c->cfg;
	const struct op_desc *op = jo->op;
	struct tuner t = { 0 };
	struct tuner_params tp;
	struct config cf;
	struct job_search js;
	uint64_t idx[JOB_BATCH_MAX];
	struct trial_result batch_res[JOB_BATCH_MAX];
	const char **ek = NULL, **ev = NULL;
	int *el = NULL;
	double g;
	size_t i, n;
	int rc = -1, r;

	memset(batch_res, 0, sizeof batch_res);
	memset(&js, 0, sizeof js);
	js.cs = cs;
	job_tuner_params(cfg, &tp, &ek, &ev, &el);
	if (tuner_create(tuner_find(cfg->tuner), &tp, op, sp, &t, err) != 0)
		goto out;
	job_offer_transfer(c, &t, op);

	while (jo->trials < cfg->n_trial && !job_should_stop(c)) {
		size_t want = (size_t)(cfg->n_trial - jo->trials);

		if (cfg->time_limit > 0 && job_elapsed(c, b) >= cfg->time_limit) {
			job_log(c, "info", "%s: time limit reached", op->name);
			break;
		}
		if (cfg->early_stop > 0 && js.since_best >= cfg->early_stop) {
			job_log(c, "info", "%s: no improvement in %lld trials, "
			    "stopping early", op->name,
			    (long long)js.since_best);
			break;
		}
		if (want > JOB_BATCH_MAX)
			want = JOB_BATCH_MAX;
		n = tuner_propose(&t, idx, want);
		jo->tuner_s += tuner_overhead(&t);
		if (n == 0)
			break;		/* the space is exhausted */
		if (c->parallel > 0) {
			if (job_batch_parallel(c, jo, sp, b, idx, n, batch_res,
			    &js, &n, err) != 0)
				goto out;
		} else for (i = 0; i < n; i++) {
			int found;

			if (job_tune_halt(c, b)) {
				n = i;
				break;
			}
			space_get(sp, idx[i], &cf);
			if ((found = job_tune_found(c, jo, &cf, &batch_res[i],
			    err)) < 0)
				goto out;
			if (!found) {
				if ((r = job_trial(c, b, jo, &cf, "tune",
				    &batch_res[i], err)) < 0)
					goto out;
				if (r > 0) {
					n = i;
					break;
				}
			}
			job_tune_done(c, jo, &js, &cf, &batch_res[i], found);
		}
		tuner_update(&t, idx, batch_res, n);
		jo->tuner_s += tuner_overhead(&t);
		for (i = 0; i < n; i++)
			backend_result_clear(&batch_res[i]);
		if (js.since_noise >= JOB_NOISE_EVERY) {
			js.since_noise = 0;
			if ((r = job_measure(c, b, jo, &jo->deflt, "noise", &g,
			    err)) < 0)
				goto out;
		}
	}
	rc = c->stopped ? 1 : 0;
out:
	for (i = 0; i < JOB_BATCH_MAX; i++)
		backend_result_clear(&batch_res[i]);
	if (t.ops != NULL)
		tuner_destroy(&t);
	free(ek);
	free(ev);
	free(el);
	return rc;
}

static int
job_cand_cmp(const void *a, const void *b)
{
	const struct job_cand *x = a, *y = b;

	return (x->gflops < y->gflops) - (x->gflops > y->gflops);
}

/*
 * The choice: the top few of the search re-measured side by side, rounds
 * interleaved, each by its median; the default competes when it is a point
 * of the space, so tuning never chooses a config slower than the default it
 * could have chosen. These figures choose; they are not reported (winner's
 * curse): the final step measures the winner again.
 */
static int
job_step_confirm(struct job *c, struct job_op *jo, struct space *sp,
    struct backend *b, struct job_cands *cs, char **err)
{
	size_t i, k;
	double best = 0;
	int round, r;

	if (cs->n == 0)
		return 0;
	qsort(cs->v, cs->n, sizeof *cs->v, job_cand_cmp);
	k = cs->n < (size_t)c->cfg->confirm_top ? cs->n :
	    (size_t)c->cfg->confirm_top;
	if (k <= 1) {
		jo->best = cs->v[0].config;
		jo->have_best = 1;
		return 0;
	}
	for (i = 0; i < k; i++) {
		if (memcmp(&cs->v[i].config, &jo->deflt, sizeof jo->deflt) == 0)
			break;
	}
	if (i == k && space_index(sp, &jo->deflt) >= 0) {
		job_cand_add(cs, &jo->deflt, 0);
		/* job_cand_add appended it at cs->n - 1: bring it to k. */
		cs->v[k] = cs->v[cs->n - 1];
		k++;
	}
	for (round = 0; round < JOB_CONFIRM_ROUNDS; round++) {
		for (i = 0; i < k; i++) {
			struct job_cand *cd = &cs->v[round % 2 ? k - 1 - i : i];

			r = job_measure(c, b, jo, &cd->config, "confirm",
			    &cd->confirm[cd->nconfirm], err);
			if (r != 0)
				return r;
			cd->nconfirm++;
		}
	}
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
	char name[64];
	int rc = -1;

	*g = 0;
	memset(&res, 0, sizeof res);
	if (c->be->reference(b, jo->base_threads, &res, err) != 0)
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
	snprintf(name, sizeof name, "reference_thr_%d", jo->base_threads);
	st.config_name = name;
	st.config.v[KNOB_THREADS] = jo->base_threads;
	st.result = res;
	if (store_trial_add(c->st, &st, err) < 0)
		goto out;
	if (job_valid(&res))
		*g = res.gflops;
	/* What it computed, and whether a "vs" ratio is like for like. */
	snprintf(jo->reference_name, sizeof jo->reference_name, "%s",
	    res.ref_routine[0] != '\0' ? res.ref_routine : "reference");
	jo->reference_same = res.ref_routine[0] != '\0' && res.ref_same_precision;
	rc = 0;
out:
	backend_result_clear(&res);
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
			    order[j], phase[j], &into[j][round], err);
			if (r != 0)
				return r;
		}
		jo->final_rounds++;
	}
	for (i = nv = 0; i < JOB_FINAL_ROUNDS; i++) {
		if (ref[i] > 0)
			v[nv++] = ref[i];
	}
	jo->reference_gflops = stats_median(v, nv);
	jo->best_gflops = stats_median(w, JOB_FINAL_ROUNDS);
	if (jo->default_best)
		memcpy(d, w, sizeof d);
	jo->base_thr_gflops = stats_median(d, JOB_FINAL_ROUNDS);
	(void)stats_ratio_ci(w, d, JOB_FINAL_ROUNDS, &jo->speedup);
	if (jo->base_threads != 1) {
		jo->base1_gflops = stats_median(d1, JOB_FINAL_ROUNDS);
		(void)stats_ratio_ci(w, d1, JOB_FINAL_ROUNDS, &jo->speedup1);
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
 * Tune one op: baseline, search, confirm (the choice), final (the figures,
 * after the choice, the reference library among them), noise floor. -1 on a fatal error; a stop is
 * not an error.
 */
static int
job_tune_op(struct job *c, struct job_op *jo, struct space *sp,
    struct backend *b, char **err)
{
	struct job_cands cs = { 0 };
	int r;

	if ((r = job_step_baseline(c, jo, b, err)) != 0)
		goto out;
	if ((r = job_step_search(c, jo, sp, b, &cs, err)) != 0)
		goto out;
	if ((r = job_step_confirm(c, jo, sp, b, &cs, err)) != 0)
		goto out;
	if ((r = job_step_final(c, jo, b, err)) != 0)
		goto out;
	job_step_noise(c, jo);
	if (jo->have_best) {
		space_config_name(&jo->best, c->rep.knobs, jo->best_name,
		    sizeof jo->best_name);
		jo->best_ms = jo->best_gflops > 0 ? 2.0 * (double)jo->op->m *
		    (double)jo->op->n * (double)jo->op->k *
		    (double)jo->op->batch / (jo->best_gflops * 1e6) : 0;
		job_log(c, "info", "%s: best %s at %.2f GFLOP/s after %lld "
		    "trials (measured after the choice, %d rounds)",
		    jo->op->name, jo->best_name, jo->best_gflops,
		    (long long)jo->trials, jo->final_rounds);
	} else
		job_log(c, "warning", "%s: no valid config found in %lld trials",
		    jo->op->name, (long long)jo->trials);
	r = 0;
out:
	free(cs.v);
	return r < 0 ? -1 : 0;
}

/* The knob lists of the cfg the backend understands; the rest reported once. */
static size_t
job_knob_lists(const struct cfg *cfg, uint32_t knobs, struct knob_values *out,
    const char *backend, int warn)
{
	size_t i, n = 0;
	char ignored[512] = "";
	int line = 0;

	for (i = 0; i < cfg->nknobs; i++) {
		const struct cfg_knob *k = &cfg->knobs[i];

		if (knobs & KNOB_BIT(k->knob)) {
			out[n].knob = k->knob;
			out[n].values = k->values;
			out[n].n = k->n;
			n++;
		} else {
			size_t l = strlen(ignored);

			if (line == 0)
				line = k->line;
			snprintf(ignored + l, sizeof ignored - l, "%s%s",
			    l ? ", " : "", space_knob_name(k->knob));
		}
	}
	if (warn && ignored[0] != '\0')
		fprintf(stderr, "autosched: %s:%d: [SearchSpace] %s: not "
		    "applicable to backend %s; ignored\n", cfg->path, line,
		    ignored, backend);
	return n;
}

/* The cfg line that lists knob k, or 0 when it does not. */
static int
job_cfg_line(const struct cfg *cfg, enum knob k)
{
	size_t i;

	for (i = 0; i < cfg->nknobs; i++) {
		if (cfg->knobs[i].knob == k && cfg->knobs[i].n > 0)
			return cfg->knobs[i].line > 0 ? cfg->knobs[i].line : 1;
	}
	return 0;
}

uint64_t
job_memory_limit(void)
{
	const char *e = getenv("AUTOSCHED_MEMORY_LIMIT");
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	unsigned long long mib;
	char *end;

	if (e != NULL && *e != '\0') {
		errno = 0;
		mib = strtoull(e, &end, 10);
		if (errno == 0 && *end == '\0' && mib > 0 && mib < (1ULL << 40))
			return (uint64_t)mib << 20;
	}
	if (pages <= 0 || psize <= 0)
		return (uint64_t)4 << 30;
	return (uint64_t)pages * (uint64_t)psize / 2;
}

/*
 * The bytes of an op's operands and result, plus a second result for the
 * verifier; 0 when the product overflows 64 bits (never fits).
 */
static uint64_t
job_op_bytes(const struct op_desc *op)
{
	uint64_t b = op->batch > 0 ? (uint64_t)op->batch : 1, m = (uint64_t)op->m,
	    n = (uint64_t)op->n, k = (uint64_t)op->k, x, y, z, sum;

	if (op->m <= 0 || op->n <= 0 || op->k <= 0 ||
	    __builtin_mul_overflow(b, m, &x) || __builtin_mul_overflow(x, k, &x) ||
	    __builtin_mul_overflow(x, analysis_elem_size(op->lhs), &x) ||
	    __builtin_mul_overflow(b, k, &y) || __builtin_mul_overflow(y, n, &y) ||
	    __builtin_mul_overflow(y, analysis_elem_size(op->rhs), &y) ||
	    __builtin_mul_overflow(b, m, &z) || __builtin_mul_overflow(z, n, &z) ||
	    __builtin_mul_overflow(z, analysis_elem_size(op->acc), &z) ||
	    __builtin_mul_overflow(z, 2, &z) ||
	    __builtin_add_overflow(x, y, &sum) || __builtin_add_overflow(sum, z, &sum))
		return 0;
	return sum;
}

/*
 * The guard of one of the job's outputs (csv: output_file, else the HTML
 * report): never the store or its side files, the input, the cfg, the
 * replayed store or the job's other output; an existing file only if it is
 * an earlier one of the same kind. Strings are borrowed from cfg and o.
 */
static void
job_out_guard(const struct cfg *cfg, const struct job_opts *o, int csv,
    struct util_out_guard *g)
{
	const char *html = o->report_path != NULL ? o->report_path :
	    cfg->report_file;

	memset(g, 0, sizeof *g);
	g->where = cfg->path;
	g->key = csv ? "[Env] output_file" : o->report_path != NULL ?
	    "the service's report" : "[Env] report_file";
	g->what = csv ? "the CSV report" : "the HTML report";
	g->stores[0] = o->db;
	g->stores[1] = cfg->replay_db;
	g->inputs[0].path = cfg->input_file;
	g->inputs[0].what = "the input MLIR";
	g->inputs[1].path = cfg->path;
	g->inputs[1].what = "the cfg itself";
	g->inputs[2].path = csv ? (cfg->report_file != NULL ? html : NULL) :
	    cfg->output_file;
	g->inputs[2].what = csv ? "the HTML report (report_file)" :
	    "the CSV report (output_file)";
	g->magic[0] = csv ? REPORT_CSV_MAGIC : HTML_MAGIC;
}

/*
 * The job's outputs checked before anything runs: output_file and the HTML
 * report may each name only a new file or an earlier one of the same kind.
 */
static int
job_check_output(const struct cfg *cfg, const struct job_opts *o, char **err)
{
	struct util_out_guard g;
	const char *html = o->report_path != NULL ? o->report_path :
	    cfg->report_file;

	if (cfg->output_file != NULL) {
		job_out_guard(cfg, o, 1, &g);
		if (util_out_check(cfg->output_file, &g, err) != 0)
			return -1;
	}
	if (cfg->report_file != NULL && html != NULL) {
		job_out_guard(cfg, o, 0, &g);
		if (util_out_check(html, &g, err) != 0)
			return -1;
	}
	return 0;
}

/*
 * Threads the cfg does not list are searched over the CPUs measurements use:
 * 1, 2, 4, … up to their count, and the count itself.
 */
static void
job_threads_candidates(const struct job *c, struct space_rules *r)
{
	int n = c->o->cpus != NULL && c->o->ncpus > 0 ? c->o->ncpus : 0, t;
	int *cpus;

	if (!(r->knobs & KNOB_BIT(KNOB_THREADS)) ||
	    job_cfg_line(c->cfg, KNOB_THREADS) > 0)
		return;
	if (n == 0) {
		cpus = job_default_cpus(c->cfg, &n);
		free(cpus);
	}
	if (n > SPACE_THREADS_MAX)	/* what a stored config may hold */
		n = SPACE_THREADS_MAX;
	r->ncand[KNOB_THREADS] = 0;
	for (t = 1; t < n && r->ncand[KNOB_THREADS] < SPACE_CANDS_MAX - 1; t *= 2)
		r->cand[KNOB_THREADS][r->ncand[KNOB_THREADS]++] = t;
	r->cand[KNOB_THREADS][r->ncand[KNOB_THREADS]++] = n > 0 ? n : 1;
}

int
job_knob_origin(const struct job *c, int k)
{
	if (k < 0 || k >= KNOB_COUNT || !(c->rep.knobs & KNOB_BIT(k)))
		return -1;
	return job_cfg_line(c->cfg, (enum knob)k);
}

/* The largest threads value of the cfg, and the line giving it (0 if none). */
static int64_t
job_max_threads(const struct cfg *cfg, int *line)
{
	int64_t max = 1;
	size_t k;

	*line = 0;
	for (k = 0; k < cfg->nknobs; k++) {
		if (cfg->knobs[k].knob == KNOB_THREADS && cfg->knobs[k].n > 0) {
			max = cfg->knobs[k].values[cfg->knobs[k].n - 1];
			*line = cfg->knobs[k].line;
		}
	}
	return max;
}

/* What the input is called in messages: its file, or the cfg's sweep. */
static const char *
job_input_name(const struct cfg *cfg)
{
	return cfg->input_file != NULL ? cfg->input_file : cfg->path;
}

int
job_prepare(const struct cfg *cfg, const struct job_opts *o, struct job **out,
    char **err)
{
	struct job *c = xcalloc(1, sizeof *c);
	struct knob_values lists[KNOB_COUNT];
	struct space_rules rules;
	size_t i, nl, len;
	int warned = 0;

	*out = NULL;
	c->cfg = cfg;
	c->o = o;
	c->run_lock = c->job_lock = -1;
	if (job_check_output(cfg, o, err) != 0)
		goto fail;
	if (cfg->problem != NULL) {
		/* A [Problem] sweep: its ops, generated, are the input. */
		char *note = xasprintf("the [Problem] sweep of %s", cfg->path);
		char *name = xasprintf("%s[Problem]", cfg->path);
		int bad = o->mlir_text == NULL && generate_module(cfg->problem,
		    note, &c->mlir_text, err) != 0;
		const char *text = o->mlir_text ? o->mlir_text : c->mlir_text;

		bad = bad || analysis_parse(name, text, strlen(text), &c->an,
		    err) != 0;
		free(note);
		free(name);
		if (bad)
			goto fail;
	} else if (o->mlir_text != NULL) {
		if (analysis_parse(cfg->input_file, o->mlir_text,
		    strlen(o->mlir_text), &c->an, err) != 0)
			goto fail;
	} else {
		if (util_read_file(cfg->input_file, ANALYSIS_INPUT_MAX, &c->mlir_text, &len,
		    err) != 0)
			goto fail;
		if (analysis_parse(cfg->input_file, c->mlir_text, len, &c->an,
		    err) != 0)
			goto fail;
	}
	if ((c->be = backend_find(cfg->backend)) == NULL) {
		util_seterr(err, "%s: unknown backend \"%s\"", cfg->path,
		    cfg->backend);
		goto fail;
	}
	c->ncpus = o->cpus != NULL ? o->ncpus : util_ncpus();
	c->nops = analysis_count(c->an);
	c->ops = xcalloc(c->nops ? c->nops : 1, sizeof *c->ops);
	c->spaces = xcalloc(c->nops ? c->nops : 1, sizeof *c->spaces);
	for (i = 0; i < c->nops; i++) {
		const struct op_desc *op = analysis_op(c->an, i);
		struct job_op *jo = &c->ops[i];
		const char *why = NULL;

		jo->op = op;
		jo->backend = c->be->name;
		if (!op->tunable) {
			jo->skipped = 1;
			jo->skip_reason = op->reason;
			continue;
		}
		if (!c->be->supports(op, &why)) {
			jo->skipped = 1;
			jo->skip_reason = why;
			continue;
		}
		/* A backend with a clock replays: nothing runs here. */
		if (c->be->clock == NULL && job_op_bytes(op) == 0) {
			util_seterr(err, "%s: %s (%s at %s): the sizes of its buffers"
			    " overflow 64 bits (M=%lld N=%lld K=%lld batch=%lld)",
			    cfg->input_file, op->name, op->kind, op->loc,
			    (long long)op->m, (long long)op->n, (long long)op->k,
			    (long long)op->batch);
			goto fail;
		}
		if (c->be->clock == NULL && job_op_bytes(op) > job_memory_limit()) {
			util_seterr(err, "%s: %s (%s at %s): its buffers need %llu"
			    " MiB, above the memory limit of %llu MiB (half of"
			    " physical memory; set AUTOSCHED_MEMORY_LIMIT in MiB)",
			    cfg->input_file, op->name, op->kind, op->loc,
			    (unsigned long long)(job_op_bytes(op) >> 20),
			    (unsigned long long)(job_memory_limit() >> 20));
			goto fail;
		}
		memset(&rules, 0, sizeof rules);
		c->be->rules(op, &rules);
		if (c->be->clock == NULL && (rules.knobs & KNOB_BIT(KNOB_THREADS))) {
			int tline;
			int64_t tmax = job_max_threads(cfg, &tline);

			if (tmax > c->ncpus) {
				util_seterr(err, "%s:%d: [SearchSpace] threads: %lld"
				    " threads on the %d CPU%s measurements use win"
				    " nothing; expected at most %d (or more CPUs:"
				    " --cpus, or cpus in autoschedd.conf)", cfg->path,
				    tline, (long long)tmax, c->ncpus,
				    c->ncpus == 1 ? "" : "s", c->ncpus);
				goto fail;
			}
		}
		c->rep.knobs = rules.knobs;
		job_threads_candidates(c, &rules);
		nl = job_knob_lists(cfg, rules.knobs, lists, c->be->name,
		    !warned && !o->json);
		warned = 1;
		if (space_new(op, lists, nl, &rules, &c->spaces[i], err) != 0) {
			char *m = xasprintf("%s: [SearchSpace] for %s: %s",
			    cfg->path, op->name, *err);

			free(*err);
			*err = m;
			goto fail;
		}
		if (space_count(c->spaces[i]) == 0 && cfg->problem != NULL) {
			/* A sweep's odd shape does not sink the sweep. */
			space_free(c->spaces[i]);
			c->spaces[i] = NULL;
			jo->skipped = 1;
			jo->skip_reason = rules.ragged == 0 ?
			    "no config of [SearchSpace] fits this shape (cache "
			    "tiles must divide M, N and K)" :
			    "no config of [SearchSpace] fits this shape (a "
			    "register tile must fit in its cache tile, M, N and "
			    "K, and the vector registers)";
			continue;
		}
		if (space_count(c->spaces[i]) == 0) {
			util_seterr(err, "%s: [SearchSpace] has no valid config "
			    "for %s (%s at %s): %s (M=%lld N=%lld K=%lld); widen "
			    "the lists, or leave them out for the backend's own",
			    cfg->path, op->name, op->kind, op->loc,
			    rules.ragged == 0 ? "every cache tile must divide "
			    "its dimension and every register tile its cache "
			    "tile" : "every register tile must fit in its cache "
			    "tile and the op, and in the vector registers",
			    (long long)op->m, (long long)op->n, (long long)op->k);
			goto fail;
		}
		jo->space_count = space_count(c->spaces[i]);
		c->ntunable++;
	}
	/* The tuner's own keys are checked now, while nothing is written. */
	for (i = 0; i < c->nops; i++) {
		struct tuner_params tp;
		struct tuner t;
		const char **ek, **ev;
		int *el, bad;

		if (c->spaces[i] == NULL)
			continue;
		job_tuner_params(cfg, &tp, &ek, &ev, &el);
		bad = tuner_create(tuner_find(cfg->tuner), &tp, c->ops[i].op,
		    c->spaces[i], &t, err) != 0;
		if (!bad)
			tuner_destroy(&t);
		free(ek);
		free(ev);
		free(el);
		if (bad)
			goto fail;
		break;
	}
	if (c->ntunable == 0) {
		util_seterr(err, "%s: no op the %s backend can tune (%zu "
		    "matmul-like op%s found%s%s)", job_input_name(cfg),
		    c->be->name, c->nops, c->nops == 1 ? "" : "s",
		    c->nops ? "; first: " : "",
		    c->nops ? (c->ops[0].skip_reason ? c->ops[0].skip_reason :
		    "") : "");
		goto fail;
	}
	*out = c;
	return 0;
fail:
	job_free(c);
	return -1;
}

int *
job_default_cpus(const struct cfg *cfg, int *ncpus)
{
	int have = util_ncpus(), need = have, *cpus, i;
	size_t k;

	/* Threads listed: as many CPUs as the most threads; else all of them. */
	for (k = 0; k < cfg->nknobs; k++) {
		if (cfg->knobs[k].knob == KNOB_THREADS && cfg->knobs[k].n > 0)
			need = (int)cfg->knobs[k].values[cfg->knobs[k].n - 1];
	}
	if (need > have)
		need = have;
	if (need < 1)
		need = 1;
	cpus = xcalloc((size_t)need, sizeof *cpus);
	for (i = 0; i < need; i++)
		cpus[i] = i;
	*ncpus = need;
	return cpus;
}

size_t
job_nops(const struct job *c)
{
	return c->nops;
}

const struct op_desc *
job_op(const struct job *c, size_t i, const struct space **space,
    const char **skipped)
{
	*space = c->spaces[i];
	*skipped = c->ops[i].skipped ? (c->ops[i].skip_reason ?
	    c->ops[i].skip_reason : "not supported") : NULL;
	return c->ops[i].op;
}

uint32_t
job_knobs(const struct job *c)
{
	return c->rep.knobs;
}

int
job_runner_alive(const char *db, int64_t id)
{
	char *p = xasprintf("%s.job-%lld.lock", db, (long long)id);
	int held = util_lock_held(p);

	free(p);
	return held;
}

/* Take the lease of job id (see job_runner_alive). 0, or -1 with *err. */
static int
job_lease(struct job *c, int64_t id, char **err)
{
	int r;

	c->job_lock_path = xasprintf("%s.job-%lld.lock", c->o->db, (long long)id);
	if ((r = util_lock(c->job_lock_path, 0, &c->job_lock, err)) < 0)
		return -1;
	if (r > 0) {
		util_seterr(err, "job %lld is running under another runner;"
		    " nothing done", (long long)id);
		return -1;
	}
	return 0;
}

/* The lease of the cfg and input of a new job: 0, 1 when held elsewhere, -1. */
static int
job_run_lease(struct job *c, char **err)
{
	const struct cfg *cfg = c->cfg;
	char *rc_ = realpath(cfg->path, NULL), *ri = realpath(cfg->input_file, NULL);
	char *key, *p, hash[17], pid[32] = "";
	int r;

	key = xasprintf("%s\n%s", rc_ ? rc_ : cfg->path,
	    ri ? ri : cfg->input_file);
	util_hash_hex(key, strlen(key), hash);
	p = xasprintf("%s.run-%s.lock", c->o->db, hash);
	if ((r = util_lock(p, 0, &c->run_lock, err)) > 0) {
		/* The holder's pid as a hint: read without blocking, digits only. */
		char *text = NULL;

		if (util_read_file(p, sizeof pid - 1, &text, NULL, NULL) == 0) {
			text[strcspn(text, "\n")] = '\0';
			if (text[0] != '\0' && text[strspn(text, "0123456789")] == '\0')
				snprintf(pid, sizeof pid, "%s", text);
		}
		free(text);
		util_seterr(err, "%s: a job of this cfg and input is already"
		    " running on %s (pid %s): refused, nothing written; wait for"
		    " it to end or stop it", cfg->path, c->o->db,
		    pid[0] ? pid : "?");
	}
	free(p);
	free(key);
	free(rc_);
	free(ri);
	return r;
}

void
job_free(struct job *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; c->spaces != NULL && i < c->nops; i++)
		space_free(c->spaces[i]);
	free(c->spaces);
	free(c->ops);
	free(c->mlir_text);
	if (c->job_lock != -1) {
		/* Only the holder unlinks: nobody waits on a job's lease. */
		unlink(c->job_lock_path);
		close(c->job_lock);
	}
	if (c->run_lock != -1)
		close(c->run_lock);
	free(c->job_lock_path);
	util_out_abort(c->csv_out);
	analysis_free(c->an);
	free(c);
}

/*
 * The HTML report of the job (report_file = in [Env], or where the daemon
 * asks), written at its end. A failure to write it is logged, not fatal:
 * the results are in the store.
 */
static void
job_html_report(struct job *c)
{
	struct html_opts ho;
	struct util_out_guard g;
	const char *path = c->o->report_path ? c->o->report_path :
	    c->cfg->report_file;
	char *err = NULL;

	if (c->cfg->report_file == NULL || path == NULL)
		return;
	memset(&ho, 0, sizeof ho);
	ho.job_id = c->job_id;
	ho.db_path = c->o->db;
	job_out_guard(c->cfg, c->o, 0, &g);
	if (html_report(c->st, &ho, path, &g, &err) != 0) {
		job_log(c, "warn", "%s", err);
		if (!c->o->json)
			fprintf(stderr, "autosched: %s\n", err);
	} else
		job_log(c, "info", "report written to %s", path);
	free(err);
}

/*
 * The job name of the job's Slurm steps: autosched-HASH of the store and of
 * the job (a queued job's id; for `autosched run`, the cfg and input, as
 * its lease), so that every run of one job finds the steps a killed run
 * left. Without a store, autosched-PID.
 */
static void
job_step_name(struct job *c)
{
	const struct cfg *cfg = c->cfg;
	char *rdb, *rc_, *ri, *key, hash[17];

	if (c->o->db == NULL) {
		snprintf(c->step_name, sizeof c->step_name, "autosched-%ld",
		    (long)getpid());
		return;
	}
	rdb = realpath(c->o->db, NULL);
	rc_ = realpath(cfg->path, NULL);
	ri = cfg->input_file != NULL ? realpath(cfg->input_file, NULL) : NULL;
	if (c->o->job_id > 0)
		key = xasprintf("%s\njob %lld", rdb ? rdb : c->o->db,
		    (long long)c->o->job_id);
	else
		key = xasprintf("%s\n%s\n%s", rdb ? rdb : c->o->db,
		    rc_ ? rc_ : cfg->path, ri ? ri : job_input_name(cfg));
	util_hash_hex(key, strlen(key), hash);
	snprintf(c->step_name, sizeof c->step_name, "autosched-%s", hash);
	free(key);
	free(rdb);
	free(rc_);
	free(ri);
}

enum job_outcome
job_execute(struct job *c, struct store *st, char **err)
{
	const struct cfg *cfg = c->cfg;
	const struct job_opts *o = c->o;
	char *dispatch = NULL, *cpu = NULL, *flags = NULL, *toolchain = NULL;
	enum job_outcome outcome = JOB_FAILED;
	struct cfg_exec ex;
	int any_missing = 0, bad_input = 0;
	static const int cpus_default[1] = { 0 };
	size_t i;

	c->st = st;
	c->t0 = util_now();
	if (o->json) {
		c->rep.blocks = 0;
		c->rep.progress = 0;
	} else {
		c->rep.blocks = !o->quiet;
		c->rep.progress = isatty(STDERR_FILENO) && isatty(STDOUT_FILENO);
	}
	c->rep.backend = c->be->name;
	if (o->db != NULL) {
		struct stat sb;
		int r;

		/* A second runner of the same cfg and input is refused. */
		if (o->job_id == 0 && (r = job_run_lease(c, err)) != 0)
			return r > 0 ? JOB_BAD_INPUT : JOB_FAILED;
		if (stat(o->db, &sb) == 0) {
			c->db_dev = sb.st_dev;
			c->db_ino = sb.st_ino;
			c->db_known = 1;
		}
	}
	if (cfg->output_file != NULL) {
		/* Written beside, renamed into place at the end: never half a file. */
		job_out_guard(cfg, o, 1, &c->csv_guard);
		if (util_out_open(cfg->output_file, &c->csv_guard, &c->csv_out,
		    err) != 0) {
			bad_input = 1;
			goto fail;
		}
		c->rep.csv = util_out_file(c->csv_out);
		report_csv_header(&c->rep);
	}
	if (o->job_id > 0)
		c->job_id = o->job_id;
	else {
		struct store_job j;
		char hash[17];
		const char *text = o->mlir_text ? o->mlir_text : c->mlir_text;

		memset(&j, 0, sizeof j);
		util_hash_hex(text, strlen(text), hash);
		j.state = "running";
		j.cfg_path = cfg->path;
		j.cfg_text = cfg->text;
		j.mlir_path = (char *)job_input_name(cfg);
		j.mlir_text = (char *)text;
		j.mlir_hash = hash;
		j.tuner = cfg->tuner;
		j.n_trial = cfg->n_trial * (int64_t)c->ntunable;
		if ((c->job_id = store_job_add(st, &j, err)) < 0)
			goto fail;
		(void)store_job_set_state(st, c->job_id, "running", NULL, NULL);
	}
	if (o->db != NULL && job_lease(c, c->job_id, err) != 0) {
		/* Someone else runs it: leave its state alone. */
		c->job_id = 0;
		goto fail;
	}
	job_log(c, "info", "job started: %s, %zu tunable op%s, tuner %s, "
	    "backend %s, %lld trials per op", cfg->path, c->ntunable,
	    c->ntunable == 1 ? "" : "s", cfg->tuner, c->be->name,
	    (long long)cfg->n_trial);

	c->params.work_dir = o->work_dir;
	c->params.iree_bin = cfg->iree_bin;
	c->params.replay_db = cfg->replay_db;
	c->params.min_time = cfg->min_time;
	c->params.warmup = cfg->warmup;
	c->params.min_reps = cfg->min_reps;
	c->params.max_reps = cfg->max_reps;
	c->params.timeout = cfg->timeout;
	c->params.compile_timeout = cfg->compile_timeout;
	c->params.cv_max = cfg->cv_max;
	c->params.verify = cfg->verify;
	c->params.cpus = o->cpus ? o->cpus : cpus_default;
	c->params.ncpus = o->cpus ? o->ncpus : 1;
	c->params.compile_nice = o->compile_nice;
	c->params.seed = cfg->seed;
	/* The cfg's [Env] says, else the service's default (autoschedd.conf). */
	ex = cfg->exec;
	cfg_exec_merge(&ex, o->exec_default);
	c->params.executor = ex.executor == CFG_EXEC_SLURM ?
	    BACKEND_EXEC_SLURM : BACKEND_EXEC_LOCAL;
	c->params.slurm_partition = ex.slurm_partition;
	c->params.slurm_srun_args = ex.slurm_srun_args;
	c->params.slurm_step_timeout = ex.slurm_step_timeout;
	c->params.slurm_max_steps = ex.slurm_max_steps;
	job_step_name(c);
	c->params.slurm_job_name = c->step_name;
	c->budget_total = (int64_t)c->ntunable * cfg->n_trial;

	for (i = 0; i < c->nops && !job_should_stop(c); i++) {
		struct job_op *jo = &c->ops[i];
		struct backend *b = NULL;

		if (jo->skipped)
			continue;
		if (analysis_emit_dispatch(jo->op, &dispatch, err) != 0)
			goto fail;
		if (c->be->open(&c->params, jo->op, dispatch, &b, err) != 0)
			goto fail;
		free(dispatch);
		dispatch = NULL;
		if (c->target_id == 0) {
			c->be->target(b, &cpu, &flags, &toolchain);
			c->target_id = store_target(st, cpu, flags, toolchain,
			    c->be->name, err);
			if (c->target_id < 0) {
				c->be->close(b);
				goto fail;
			}
		}
		if ((jo->op_id = store_op(st, jo->op, err)) < 0) {
			c->be->close(b);
			goto fail;
		}
		/* Once per job, before measuring: the executor's own checks. */
		if (!c->begun && c->be->begin != NULL) {
			c->begun = 1;
			if (c->be->begin(b, err) != 0) {
				c->be->close(b);
				bad_input = 1;
				goto fail;
			}
		}
		/* Tune measurements at once: executor slurm only. */
		c->parallel = 0;
		if (c->params.executor == BACKEND_EXEC_SLURM &&
		    c->be->prepare != NULL && c->be->measure != NULL &&
		    c->be->release != NULL && c->be->parallel != NULL) {
			c->parallel = c->be->parallel(b);
			if (c->parallel > JOB_BATCH_MAX)
				c->parallel = JOB_BATCH_MAX;
			if (c->parallel < 1)
				c->parallel = 1;
			job_log(c, "info", "%s: up to %d measurements at once "
			    "(executor slurm)", jo->op->name, c->parallel);
		}
		if (job_tune_op(c, jo, c->spaces[i], b, err) != 0) {
			c->be->close(b);
			goto fail;
		}
		if (c->be->clock != NULL)
			c->sim_done += c->be->clock(b);
		c->be->close(b);
		if (!jo->have_best && !c->stopped)
			any_missing = 1;
	}
	report_progress(&c->rep, NULL);

	if (c->stopped == 2) {
		outcome = JOB_STOPPED;
		job_log(c, "info", "job cancelled");
		(void)store_job_set_state(st, c->job_id, "cancelled", NULL, NULL);
	} else if (c->stopped) {
		outcome = JOB_STOPPED;
		job_log(c, "info", "job stopped; it resumes where it left off");
		(void)store_job_set_state(st, c->job_id, o->job_id > 0 ?
		    "queued" : "cancelled", NULL, NULL);
	} else {
		outcome = any_missing ? JOB_NOTHING : JOB_OK;
		job_log(c, "info", "job done");
		(void)store_job_set_state(st, c->job_id, "done", any_missing ?
		    "no valid config found for some op" : NULL, NULL);
	}
	job_html_report(c);
	if (o->json) {
		char *js = report_json(c->job_id, c->ops, c->nops, (int)outcome);

		puts(js);
		free(js);
	} else
		report_summary(stdout, c->ops, c->nops);
	goto out;
fail:
	job_log(c, "error", "job failed: %s", *err ? *err : "?");
	if (c->job_id > 0)
		(void)store_job_set_state(st, c->job_id, "failed", *err, NULL);
	outcome = bad_input ? JOB_BAD_INPUT : JOB_FAILED;
out:
	if (c->csv_out != NULL) {
		char *cerr = NULL;

		if (util_out_commit(c->csv_out, &cerr) != 0) {
			fprintf(stderr, "autosched: %s (the results are in the"
			    " store)\n", cerr);
			job_log(c, "warn", "%s", cerr);
			free(cerr);
		}
		c->csv_out = NULL;
	}
	c->rep.csv = NULL;
	free(dispatch);
	free(cpu);
	free(flags);
	free(toolchain);
	return outcome;
}

enum job_outcome
job_run(const struct cfg *cfg, struct store *st, const struct job_opts *o,
    char **err)
{
	struct job *j = NULL;
	enum job_outcome out;

	if (job_prepare(cfg, o, &j, err) != 0) {
		if (o->job_id > 0)
			(void)store_job_set_state(st, o->job_id, "failed", *err,
			    NULL);
		return JOB_BAD_INPUT;
	}
	out = job_execute(j, st, err);
	job_free(j);
	return out;
}
