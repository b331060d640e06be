/*
 * The worker slots and the compile pool of a tune round measured at once
 * (executor slurm), apart from one op's steps (steps.c), which call
 * job_batch_parallel and record through steps_record.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/backend.h"
#include "job/job.h"
#include "job/job_int.h"
#include "search/space.h"
#include "store/store.h"
#include "util/util.h"

/*
 * A batch measured at once (executor slurm): each candidate on a thread of
 * its own, compiled here (backend prepare) up to c->compile_jobs at once,
 * then measured when the engine says go (backend measure: a step on some
 * node) up to c->parallel at once. Everything a thread touches that the
 * engine reads (state, go, art, rc, err, the result) is under the batch's
 * mutex until the slot is done; the store and the tuner stay the engine's.
 */
enum {
	JOB_SLOT_IDLE,		/* found in the store, or not started */
	JOB_SLOT_COMPILING,
	JOB_SLOT_COMPILED,	/* waiting for go */
	JOB_SLOT_MEASURING,
	JOB_SLOT_DONE		/* res final (or dropped: go < 0) */
};

struct job_batch;

struct job_slot {
	struct job_batch	*bt;
	const struct config	*cf;
	struct trial_result	*res;
	void			*art;		/* prepared, or NULL: res is final */
	char			*err;
	int			 rc;
	int			 state;		/* JOB_SLOT_* */
	int			 go;		/* 1 measure, -1 dropped, 0 not yet */
	int			 counted;	/* in c->measuring */
	int			 started;	/* a thread runs it: joined at the end */
	pthread_t		 th;
};

struct job_batch {
	struct job		*c;
	struct job_op		*jo;
	struct space		*sp;
	struct backend		*b;
	const uint64_t		*idx;
	struct trial_result	*res;
	size_t			 n;		/* candidates */
	size_t			 next;		/* looked up and started so far */
	size_t			 rec;		/* recorded so far (a prefix) */
	size_t			 limit;		/* recorded at most: n, or a halt's cut */
	int			 halted;	/* a stop or the time limit: nothing new */
	struct config		 cf[JOB_BATCH_MAX];
	int			 found[JOB_BATCH_MAX];
	struct job_slot		 slot[JOB_BATCH_MAX];
	pthread_mutex_t		 mu;
	pthread_cond_t		 cv;
	unsigned long		 gen;		/* bumped at every change of a slot */
	int			 compiling, most;	/* compiles in flight, most at once */
	int			 compiles;	/* compiles started */
	int			 held;		/* its part of c->pool_held */
};

/* A slot's new state, told to the engine. Under bt->mu. */
static void
job_slot_set(struct job_slot *s, int state)
{
	s->state = state;
	s->bt->gen++;
	pthread_cond_broadcast(&s->bt->cv);
}

/* A slot's thread: compile, wait for go, measure. */
static void *
job_slot_run(void *arg)
{
	struct job_slot *s = arg;
	struct job_batch *bt = s->bt;
	const struct backend_ops *be = bt->c->be;
	void *art = NULL;
	char *err = NULL;
	int rc;

	pthread_mutex_lock(&bt->mu);
	if (++bt->compiling > bt->most)
		bt->most = bt->compiling;
	pthread_mutex_unlock(&bt->mu);
	rc = be->prepare(bt->b, s->cf, s->res, &art, &err);
	pthread_mutex_lock(&bt->mu);
	bt->compiling--;
	s->art = art;
	s->rc = rc;
	s->err = err;
	if (rc != 0 || art == NULL) {
		job_slot_set(s, JOB_SLOT_DONE);
		pthread_mutex_unlock(&bt->mu);
		return NULL;
	}
	job_slot_set(s, JOB_SLOT_COMPILED);
	while (s->go == 0)
		pthread_cond_wait(&bt->cv, &bt->mu);
	if (s->go < 0) {
		job_slot_set(s, JOB_SLOT_DONE);
		pthread_mutex_unlock(&bt->mu);
		return NULL;
	}
	job_slot_set(s, JOB_SLOT_MEASURING);
	pthread_mutex_unlock(&bt->mu);
	err = NULL;
	rc = be->measure(bt->b, art, s->res, &err);
	pthread_mutex_lock(&bt->mu);
	s->rc = rc;
	s->err = err;
	job_slot_set(s, JOB_SLOT_DONE);
	pthread_mutex_unlock(&bt->mu);
	return NULL;
}

/* Start slot's thread (signals stay with the engine's). 0, or -1 with *err. */
static int
job_slot_start(struct job_slot *s, char **err)
{
	sigset_t all, old;
	int e;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_mutex_lock(&s->bt->mu);
	s->state = JOB_SLOT_COMPILING;
	pthread_mutex_unlock(&s->bt->mu);
	e = pthread_create(&s->th, NULL, job_slot_run, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		s->state = JOB_SLOT_IDLE;
		util_seterr(err, "cannot start a compile thread: %s; nothing "
		    "recorded for the rest of the batch, the job stops (run it "
		    "again: it resumes)", strerror(e));
		return -1;
	}
	s->bt->compiles++;
	s->started = 1;
	return 0;
}

/*
 * Record, in the batch's order, what is final. 0 (go on), 1 when a stop
 * interrupted a measurement (nothing more recorded), -1 on error.
 */
static int
job_batch_record(struct job_batch *bt, char **err)
{
	struct job_slot *s;
	size_t i;
	int st, r;

	while ((i = bt->rec) < bt->next && i < bt->limit) {
		s = &bt->slot[i];
		if (!bt->found[i]) {
			pthread_mutex_lock(&bt->mu);
			st = s->state;
			pthread_mutex_unlock(&bt->mu);
			if (st != JOB_SLOT_DONE)
				return 0;
			pthread_join(s->th, NULL);
			s->started = 0;
			bt->c->be->release(s->art);
			s->art = NULL;
			if (s->rc != 0) {
				*err = s->err;
				s->err = NULL;
				return -1;
			}
			if ((r = steps_record(bt->c, bt->jo, &bt->cf[i], "tune",
			    &bt->res[i], err)) != 0)
				return r;
		}
		steps_tune_done(bt->c, bt->jo, &bt->cf[i], &bt->res[i],
		    bt->found[i]);
		bt->rec++;
	}
	return 0;
}

/*
 * The measurements of the batch that ended (or all of them, at its end)
 * leave the job's count of measurements in flight (c->measuring, shared by
 * the lanes).
 */
static void
job_batch_settle(struct job_batch *bt, int all)
{
	size_t i;

	pthread_mutex_lock(&bt->mu);
	for (i = 0; i < bt->next; i++) {
		if (bt->slot[i].counted && (all ||
		    bt->slot[i].state == JOB_SLOT_DONE)) {
			bt->slot[i].counted = 0;
			bt->c->measuring--;
		}
	}
	pthread_mutex_unlock(&bt->mu);
}

/*
 * Send compiled candidates to measure, in order, while the job has fewer
 * than c->parallel measurements in flight (every lane's, side-by-side
 * rounds included).
 */
static void
job_batch_go(struct job_batch *bt)
{
	struct job *c = bt->c;
	struct job_slot *s;
	size_t i;

	job_batch_settle(bt, 0);
	pthread_mutex_lock(&bt->mu);
	for (i = bt->rec; i < bt->next && i < bt->limit &&
	    c->measuring < c->parallel; i++) {
		s = &bt->slot[i];
		if (s->go == 0 && s->state == JOB_SLOT_COMPILED) {
			s->go = 1;
			s->counted = 1;
			c->measuring++;
			pthread_cond_broadcast(&bt->cv);
		}
	}
	pthread_mutex_unlock(&bt->mu);
}

/* Compiling, or compiled and waiting for a step: what the pool holds. */
static int
job_batch_ahead(struct job_batch *bt)
{
	size_t i;
	int k = 0;

	pthread_mutex_lock(&bt->mu);
	for (i = bt->rec; i < bt->next; i++)
		k += bt->slot[i].state == JOB_SLOT_COMPILING ||
		    (bt->slot[i].state == JOB_SLOT_COMPILED &&
		    bt->slot[i].go == 0);
	pthread_mutex_unlock(&bt->mu);
	return k;
}

/*
 * Look up the next candidates and start compiling those the store lacks,
 * while the pool holds fewer than c->compile_jobs (with 1: the old one
 * ahead), over every lane's batch. 1 when it took one, 0 when none, -1 on
 * error.
 */
static int
job_batch_compile(struct job_batch *bt, char **err)
{
	struct job *c = bt->c;
	size_t i;
	int any = 0, f, now = job_batch_ahead(bt);

	/* This batch's part of what the pool holds, brought up to date. */
	c->pool_held += now - bt->held;
	bt->held = now;
	while (!bt->halted && bt->next < bt->n &&
	    c->pool_held < c->compile_jobs) {
		i = bt->next;
		space_get(bt->sp, bt->idx[i], &bt->cf[i]);
		if ((f = steps_tune_found(bt->c, bt->jo, &bt->cf[i], &bt->res[i],
		    err)) < 0)
			return -1;
		bt->found[i] = f;
		bt->next++;
		any = 1;
		if (f)
			continue;
		memset(&bt->res[i], 0, sizeof bt->res[i]);
		if (job_slot_start(&bt->slot[i], err) != 0)
			return -1;
		bt->held++;
		c->pool_held++;
	}
	return any;
}

/*
 * A halt (a stop, the time limit): nothing more starts; the first candidate
 * not sent to measure and everything after it are dropped (not recorded:
 * measured again on resume), what measures goes on.
 */
static void
job_batch_cut(struct job_batch *bt)
{
	struct job_slot *s;
	size_t i;

	bt->halted = 1;
	pthread_mutex_lock(&bt->mu);
	for (i = bt->rec; i < bt->next; i++) {
		s = &bt->slot[i];
		if (!bt->found[i] && s->go == 0 && s->state != JOB_SLOT_DONE)
			break;
	}
	bt->limit = i;
	for (; i < bt->next; i++) {
		if (bt->slot[i].go == 0)
			bt->slot[i].go = -1;
	}
	pthread_cond_broadcast(&bt->cv);
	pthread_mutex_unlock(&bt->mu);
}

/* Every thread ended (a compile waiting is dropped), what was kept freed. */
static void
job_batch_end(struct job_batch *bt)
{
	size_t i;

	pthread_mutex_lock(&bt->mu);
	for (i = 0; i < bt->next; i++) {
		if (bt->slot[i].go == 0)
			bt->slot[i].go = -1;
	}
	pthread_cond_broadcast(&bt->cv);
	pthread_mutex_unlock(&bt->mu);
	/* A compile may still run: the other lanes go on meanwhile. */
	job_unlock(bt->c);
	for (i = 0; i < bt->next; i++) {
		if (bt->slot[i].started) {
			pthread_join(bt->slot[i].th, NULL);
			bt->slot[i].started = 0;
		}
	}
	job_lock(bt->c);
	job_batch_settle(bt, 1);
	bt->c->pool_held -= bt->held;
	bt->held = 0;
	for (i = 0; i < bt->next; i++) {
		bt->c->be->release(bt->slot[i].art);
		free(bt->slot[i].err);
		if (i >= bt->rec)
			trial_result_clear(&bt->res[i]);
	}
	bt->jo->compiled += bt->compiles;
	if (bt->most > bt->jo->compile_most)
		bt->jo->compile_most = bt->most;
	pthread_mutex_destroy(&bt->mu);
	pthread_cond_destroy(&bt->cv);
}

/*
 * A batch measured up to c->parallel at a time (executor slurm), compiled
 * up to c->compile_jobs at a time here (job_batch above): results are
 * recorded here, on the engine's thread only, in the batch's order, as
 * soon as every earlier one is; configs the store has are not measured.
 * *done is how many of idx[] were recorded (a prefix: the tuner learns
 * from those). 0, or -1 on error; a stop ends it early, and what it had
 * not recorded is measured again on resume.
 */
int
job_batch_parallel(struct job *c, struct job_op *jo, struct space *sp,
    struct backend *b, const uint64_t *idx, size_t n,
    struct trial_result *res, size_t *done, char **err)
{
	struct job_batch *bt = xcalloc(1, sizeof *bt);
	unsigned long seen;
	size_t i;
	int rc = -1, r;

	bt->c = c;
	bt->jo = jo;
	bt->sp = sp;
	bt->b = b;
	bt->idx = idx;
	bt->res = res;
	bt->n = bt->limit = n;
	pthread_mutex_init(&bt->mu, NULL);
	pthread_cond_init(&bt->cv, NULL);
	for (i = 0; i < n; i++) {
		bt->slot[i].bt = bt;
		bt->slot[i].cf = &bt->cf[i];
		bt->slot[i].res = &res[i];
	}
	for (;;) {
		pthread_mutex_lock(&bt->mu);
		seen = bt->gen;
		pthread_mutex_unlock(&bt->mu);
		if ((r = job_batch_record(bt, err)) < 0)
			goto out;
		if (r > 0 || bt->rec == bt->limit)
			break;
		if (!bt->halted && steps_tune_halt(c)) {
			job_batch_cut(bt);
			continue;
		}
		job_batch_go(bt);
		if ((r = job_batch_compile(bt, err)) < 0)
			goto out;
		if (r > 0)
			continue;
		job_unlock(c);
		pthread_mutex_lock(&bt->mu);
		while (bt->gen == seen) {
			struct timespec ts;

			if (c->lanes == 1) {
				pthread_cond_wait(&bt->cv, &bt->mu);
				continue;
			}
			/* Another lane's measurement may end meanwhile. */
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 20 * 1000 * 1000;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			if (pthread_cond_timedwait(&bt->cv, &bt->mu, &ts) != 0)
				break;
		}
		pthread_mutex_unlock(&bt->mu);
		job_lock(c);
	}
	rc = 0;
out:
	job_batch_end(bt);
	*done = bt->rec;
	free(bt);
	return rc;
}

