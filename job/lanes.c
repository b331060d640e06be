/*
 * Several distinct ops worked on at once (executor slurm: one lane per
 * node that measures). The work of a job is cut into units -- an op's
 * baseline, one of its search rounds, its finish -- and each lane takes
 * the next unit from the same plan: every baseline first, then the
 * scheduler's rounds (an op is in one lane at a time, so its tuner and its
 * side-by-side rounds stay its own), and an op's finish as soon as it gets
 * no more rounds, while the others are still searched. The lanes share
 * one lock (c->mu): the lane holding it reads and writes the job, the
 * store and the report; it lets go only while a measurement or a compile
 * runs (steps.c, job_unlock), which is when the other lanes get on.
 * Results are recorded as they end, each in its own transaction; a stop or
 * an error ends every lane after its unit.
 *
 * One lane is the job's work one op at a time, on the calling thread
 * (no other thread, nothing waits): every baseline in program order, the
 * scheduler's rounds, then each op's finish in program order. Under
 * executor batch a finish that staged its measurements does not hold the
 * others up: theirs are staged into the same folder, so one trip carries
 * every op's confirm rounds, the next their final rounds (lanes_run; the
 * job stops staged once every finish has asked for its measurements).
 *
 * A time_budget holds across the lanes (lanes_afford): the scheduler's
 * reserve for the ops' confirm and final rounds assumes the lanes finish
 * side by side at the speed of one op alone, which they do not when there
 * are more lanes than places that really measure at once (ops_at_once
 * above the nodes or their CPUs: Slurm queues the steps, and four lanes'
 * finishes on two one-CPU nodes took 5 to 25 times the reserve). Here a
 * round starts only if what is left of the budget pays for it and for the
 * open ops' finishes, each measurement of them counted as long as a tune
 * trial of the op took, and once a finish has ended, at the pace it was
 * measured to run beside the others'.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/cfg.h"
#include "job/job.h"
#include "job/job_int.h"
#include "util/util.h"

enum lane_kind {
	LANE_NONE,		/* nothing left: the lane ends */
	LANE_WAIT,		/* nothing now: wait for a unit to end */
	LANE_BASELINE,
	LANE_ROUND,
	LANE_FINISH
};

/*
 * A finish's measurement beside the other lanes' work, in tune trials of
 * its op: four lanes on two one-CPU nodes took 1.25 times as long.
 */
#define LANES_FINISH_MARGIN	1.5

/*
 * What the lanes learnt about the finishes (under c->mu): the largest
 * ratio of a finish's wall time to its estimate (lanes_finish_est), and
 * whether one staged its measurements.
 */
struct lanes_ledger {
	double	 rho;		/* 0 until a finish has ended */
	int	 said;		/* the end of the search logged */
	int	 staged;	/* a finish stopped staged (c->stopped 3, reset) */
	double	*round_s;	/* per op: seconds its round in flight may take */
};

/* A lane's argument: the job and the ledger all its lanes share. */
struct lanes_ctx {
	struct job		*c;
	struct lanes_ledger	*lg;
};

struct lane_unit {
	enum lane_kind	 kind;
	size_t		 op;
	int64_t		 n;	/* LANE_ROUND: tune trials */
};

/* The next baseline no lane runs; LANE_WAIT while one runs. */
static enum lane_kind
lanes_baseline(struct job *c, struct lane_unit *u)
{
	int waiting = 0;
	size_t i;

	for (i = 0; i < c->nops; i++) {
		struct job_op *jo = &c->ops[i];

		if (jo->b == NULL || jo->based)
			continue;
		if (!jo->busy) {
			u->op = i;
			return LANE_BASELINE;
		}
		waiting = 1;
	}
	return waiting ? LANE_WAIT : LANE_NONE;
}

/*
 * Seconds op's confirm and final rounds take in a lane: as many
 * measurements as schedule.c's sched_reserve counts, each half again as
 * long as a tune trial of the op took (compile included; beside the other
 * lanes' work a finish's measurement took 1.25 times as long, while the
 * baseline's, the scheduler's figure, was measured up to 30 times shorter).
 */
static double
lanes_finish_est(const struct job *c, const struct job_op *jo)
{
	int confirm = c->cfg->confirm_top > 1 ? c->cfg->confirm_top + 1 : 0;
	double m = jo->trial_s > 0 ? jo->trial_s : 2 * jo->meas_s;

	if (jo->finished)
		return 0;
	if (jo->meas_s > m)
		m = jo->meas_s;
	return LANES_FINISH_MARGIN * m * (double)(confirm *
	    JOB_CONFIRM_ROUNDS + JOB_FINAL_ROUNDS * 4);
}

/*
 * Seconds the open ops' finishes will take, all lanes: after the longest
 * round in flight, side by side, as many at once as there are lanes, each
 * at its estimate, or at the pace measured once a finish has ended.
 */
static double
lanes_reserve(const struct job *c, const struct lanes_ledger *lg)
{
	double sum = 0, est, wait = 0;
	size_t i;
	int open = 0;

	for (i = 0; i < c->nops; i++) {
		if ((est = lanes_finish_est(c, &c->ops[i])) > 0) {
			sum += est;
			open++;
		}
		/* An op's finish waits for its round in flight. */
		if (lg->round_s[i] > wait)
			wait = lg->round_s[i];
	}
	if (open == 0)
		return 0;
	if (lg->rho > 0)
		sum *= lg->rho;
	return wait + sum / (double)(open < c->lanes ? open : c->lanes);
}

/*
 * Whether what is left of the time budget pays for round u and the
 * finishes after it: 1 (u->n cut to what it pays for), or 0: the search
 * ends (logged once). One lane finishes its ops one at a time, alone,
 * after the search: the scheduler's own reserve (sched_next) holds.
 */
static int
lanes_afford(struct job *c, struct lanes_ledger *lg, struct lane_unit *u)
{
	const struct job_op *jo = &c->ops[u->op];
	double per = jo->trial_s > 0 ? jo->trial_s : 2 * jo->meas_s;
	double reserve, left;

	if (c->lanes == 1 || c->time_budget <= 0 || per <= 0)
		return 1;
	reserve = lanes_reserve(c, lg);
	left = c->time_budget - c->spent_before - job_elapsed(c) - reserve;
	if (left >= per * (double)u->n)
		return 1;
	if (left >= per) {
		u->n = (int64_t)(left / per);
		return 1;
	}
	if (!lg->said)
		job_log(c, "info", "time_budget: %.0f s left, %.0f s kept for "
		    "the ops' confirm and final rounds with %d ops at once: "
		    "the search ends", left + reserve, reserve, c->lanes);
	lg->said = 1;
	return 0;
}

/*
 * The next round from the scheduler (recorded as a decision), or the end
 * of the plan once no round is in flight or the time limit is reached.
 * LANE_NONE: no round now.
 */
static enum lane_kind
lanes_round(struct job *c, struct lanes_ledger *lg, struct lane_unit *u,
    char **err)
{
	double gain;
	const char *why;
	int r;

	if (c->plan_over)
		return LANE_NONE;
	r = sched_next(c, &u->op, &u->n, &gain, &why);
	if (r != 0 && job_time_up(c)) {
		c->plan_over = 1;
		return LANE_NONE;
	}
	if (r > 0 && !lanes_afford(c, lg, u))
		r = 0;
	if (r > 0) {
		if (sched_record(c, u->op, u->n, gain, why, err) != 0)
			return LANE_NONE;
		return LANE_ROUND;
	}
	if (r < 0)
		return LANE_WAIT;	/* the plan's next op is in a lane */
	if (c->time_budget > 0 && lg->said)
		c->plan_over = 1;	/* rounds in flight end as they are */
	if (c->rounds_out == 0)
		c->plan_over = 1;
	return LANE_NONE;
}

/* The finish of an op that gets no more rounds and no lane works on. */
static enum lane_kind
lanes_finish(struct job *c, struct lane_unit *u)
{
	size_t i;

	for (i = 0; i < c->nops; i++) {
		const struct job_op *jo = &c->ops[i];

		if (jo->b == NULL || jo->busy || jo->finished)
			continue;
		if (c->plan_over || !sched_wants(c, i)) {
			u->op = i;
			return LANE_FINISH;
		}
	}
	return LANE_NONE;
}

/* What a lane does next. Under c->mu. */
static enum lane_kind
lanes_pick(struct job *c, struct lanes_ledger *lg, struct lane_unit *u)
{
	char *err = NULL;
	enum lane_kind k;

	if (c->lane_failed || job_should_stop(c))
		return c->units > 0 ? LANE_WAIT : LANE_NONE;
	if ((k = lanes_baseline(c, u)) != LANE_NONE)
		return k;
	k = lanes_round(c, lg, u, &err);
	if (err != NULL) {
		c->lane_failed = 1;
		c->lane_err = err;
		return c->units > 0 ? LANE_WAIT : LANE_NONE;
	}
	if (k == LANE_ROUND)
		return k;
	if (lanes_finish(c, u) == LANE_FINISH)
		return LANE_FINISH;
	if (k == LANE_WAIT || c->units > 0)
		return LANE_WAIT;
	return LANE_NONE;
}

/* Run one unit (c->mu held; the steps let go of it while they measure). */
static int
lanes_run(struct job *c, struct lanes_ledger *lg, const struct lane_unit *u,
    char **err)
{
	struct job_op *jo = &c->ops[u->op];
	double est = lanes_finish_est(c, jo), t0 = job_elapsed(c);
	int64_t done = 0;
	int r = 0;

	switch (u->kind) {
	case LANE_BASELINE:
		r = steps_baseline(c, jo, err);
		break;
	case LANE_ROUND:
		lg->round_s[u->op] = (jo->trial_s > 0 ? jo->trial_s :
		    2 * jo->meas_s) * (double)u->n;
		r = steps_search_round(c, jo, u->n, &done, err);
		lg->round_s[u->op] = 0;
		if (r >= 0)
			sched_after(c, u->op, done);
		break;
	case LANE_FINISH:
		r = steps_finish(c, jo, err);
		/* How fast finishes run beside the other lanes' work. */
		if (r == 0 && est > 0 && (job_elapsed(c) - t0) / est > lg->rho)
			lg->rho = (job_elapsed(c) - t0) / est;
		/* Staged: the other finishes go on, into the same folder. */
		if (r > 0 && c->stopped == 3) {
			lg->staged = 1;
			c->stopped = 0;
		}
		if (r >= 0)
			job_close_op(c, jo);
		break;
	default:
		break;
	}
	return r < 0 ? -1 : 0;
}

/* A lane: units until none is left. Takes and leaves c->mu itself. */
static void *
lanes_lane(void *arg)
{
	struct lanes_ctx *x = arg;
	struct job *c = x->c;
	struct lane_unit u;
	char *err = NULL;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		memset(&u, 0, sizeof u);
		u.kind = lanes_pick(c, x->lg, &u);
		if (u.kind == LANE_NONE)
			break;
		if (u.kind == LANE_WAIT) {
			pthread_cond_wait(&c->lane_cv, &c->mu);
			continue;
		}
		c->ops[u.op].busy = 1;
		c->units++;
		if (u.kind == LANE_ROUND) {
			c->rounds_out++;
			c->inflight_trials += u.n;
		}
		if (lanes_run(c, x->lg, &u, &err) != 0 && !c->lane_failed) {
			c->lane_failed = 1;
			c->lane_err = err;
			err = NULL;
		}
		free(err);
		err = NULL;
		if (u.kind == LANE_ROUND) {
			c->rounds_out--;
			c->inflight_trials -= u.n;
		}
		c->units--;
		c->ops[u.op].busy = 0;
		pthread_cond_broadcast(&c->lane_cv);
	}
	pthread_cond_broadcast(&c->lane_cv);
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/*
 * The lanes past the first, started on threads of their own that leave the
 * signals to this one. Returns how many started (th[] filled).
 */
static int
lanes_start(struct job *c, struct lanes_ctx *x, pthread_t *th)
{
	sigset_t all, old;
	int i, n = 0, e = 0;

	job_log(c, "info", "%d ops worked on at once (one per measurement "
	    "slot of executor slurm)", c->lanes);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 1; i < c->lanes && i < JOB_BATCH_MAX; i++) {
		if ((e = pthread_create(&th[n], NULL, lanes_lane, x)) != 0)
			break;
		n++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0 && n == 0)
		job_log(c, "warning", "cannot start a lane: %s; one op at a "
		    "time", strerror(e));
	return n;
}

int
lanes_work(struct job *c, char **err)
{
	pthread_t th[JOB_BATCH_MAX];
	struct lanes_ledger lg;
	struct lanes_ctx x = { c, &lg };
	int i, n = 0;

	memset(&lg, 0, sizeof lg);
	lg.round_s = xcalloc(c->nops > 0 ? c->nops : 1, sizeof *lg.round_s);
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->lane_cv, NULL);
	if (c->lanes > 1)
		n = lanes_start(c, &x, th);
	(void)lanes_lane(&x);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	/* From here on, one thread: the lock is not taken again. */
	c->lanes = 1;
	pthread_cond_destroy(&c->lane_cv);
	pthread_mutex_destroy(&c->mu);
	free(lg.round_s);
	/* A finish staged its measurements: the job waits for them. */
	if (lg.staged && c->stopped == 0)
		c->stopped = 3;
	if (c->lane_failed) {
		*err = c->lane_err;
		c->lane_err = NULL;
		return -1;
	}
	return 0;
}
