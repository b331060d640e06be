/*
 * The loop of a tuning job, shared by `autosched run` and autoschedd: every
 * distinct op's baseline, then the scheduler's rounds (schedule.c) each run
 * by the op's search step (steps.c), then every op's finish (its choice,
 * final figures and noise floor); the job's row, leases, stop requests and
 * outcome. prepare.c checked everything before this runs.
 */
#include <errno.h>
#include <fcntl.h>
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
#include "executors/executor.h"
#include "html/html.h"
#include "job/job.h"
#include "job/job_int.h"
#include "search/space.h"
#include "store/store.h"
#include "tuners/tuner.h"
#include "util/util.h"

void
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
double
job_elapsed(struct job *c)
{
	double s = c->sim_done;
	size_t i;

	if (c->be->clock == NULL)
		return util_now() - c->t0;
	for (i = 0; i < c->nops; i++) {
		if (c->ops[i].b != NULL)
			s += c->be->clock(c->ops[i].b);
	}
	return s;
}

/*
 * 1 once the caller's stop flag is set (by its signal handler, on whichever
 * thread: read atomically, as the lanes read it too).
 */
int
job_stop_asked(const struct job *c)
{
	return c->o->stop != NULL && __atomic_load_n(c->o->stop,
	    __ATOMIC_SEQ_CST) != 0;
}

/* 1 (logged) when the cfg's time_limit is reached: the search ends. */
int
job_time_up(struct job *c)
{
	if (c->cfg->time_limit <= 0 || job_elapsed(c) < c->cfg->time_limit)
		return 0;
	job_log(c, "info", "time limit reached: the search ends");
	return 1;
}

/* 1 if the job must stop at this trial boundary. */
int
job_should_stop(struct job *c)
{
	if (c->stopped)
		return 1;
	if (job_stop_asked(c)) {
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
int
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
	for (i = 0; c->ops != NULL && i < c->nops; i++) {
		struct job_op *jo = &c->ops[i];

		if (jo->tuner_on)
			tuner_destroy(&jo->t);
		if (jo->b != NULL)
			c->be->close(jo->b);
		space_free(jo->sp);
		free(jo->uses);
		free(jo->hist_ms);
		free(jo->cs.v);
	}
	free(c->ops);
	/* After the backends: they borrow it. */
	executor_close(c->exec);
	carry_free(c->carry);
	free(c->replay_op);
	free(c->replay_n);
	free(c->mlir_text);
	if (c->job_lock != -1) {
		/* Only the holder unlinks: nobody waits on a job's lease. */
		unlink(c->job_lock_path);
		close(c->job_lock);
	}
	if (c->run_lock != -1)
		close(c->run_lock);
	if (c->op_lock != -1)
		close(c->op_lock);	/* every op's lease with it */
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

int
job_executor(const struct cfg_exec *ex, const char *job_name, double timeout,
    struct executor **out, char **err)
{
	const struct executor_ops *const *all;
	struct executor_config ec;
	size_t n;

	all = executor_all(&n);
	if (ex->executor < 0 || (size_t)ex->executor >= n) {
		util_seterr(err, "executor %d: not in the executors' registry "
		    "(%zu of them)", ex->executor, n);
		*out = NULL;
		return -1;
	}
	memset(&ec, 0, sizeof ec);
	ec.partition = ex->slurm_partition;
	ec.srun_args = ex->slurm_srun_args;
	ec.step_timeout = ex->slurm_step_timeout;
	ec.max_steps = ex->slurm_max_steps;
	ec.job_name = job_name;
	ec.timeout = timeout;
	return executor_open(all[ex->executor], &ec, out, err);
}

/*
 * Executor batch: its stage and ingest folders, the job and the cfg (by its
 * real path) its manifest names. 0, or -1 with *err.
 */
static int
job_batch_executor(struct job *c, char **err)
{
	struct executor_config ec;
	char *rp = realpath(c->cfg->path, NULL);
	int rc;

	memset(&ec, 0, sizeof ec);
	ec.timeout = c->cfg->timeout;
	ec.stage_dir = c->o->stage_dir;
	ec.ingest_dir = c->o->ingest_dir;
	ec.batch_job = c->job_id;
	ec.batch_cfg = rp != NULL ? rp : c->cfg->path;
	rc = executor_open(&executor_batch, &ec, &c->exec, err);
	free(rp);
	return rc;
}

/*
 * The backend's settings from the cfg, the options and the executor (the
 * job's one instance, opened here). 0, or -1 with *err.
 */
static int
job_params(struct job *c, char **err)
{
	const struct cfg *cfg = c->cfg;
	const struct job_opts *o = c->o;
	static const int cpus_default[1] = { 0 };
	struct cfg_exec ex;

	c->params.work_dir = o->work_dir;
	c->params.iree_bin = cfg->iree_bin;
	c->params.gpu_arch = cfg->gpu_arch;
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
	job_step_name(c);
	if (ex.executor == CFG_EXEC_BATCH) {
		if (job_batch_executor(c, err) != 0)
			return -1;
	} else if (job_executor(&ex, c->step_name, cfg->timeout, &c->exec,
	    err) != 0)
		return -1;
	c->params.exec = c->exec;
	return 0;
}

/* The job's row in the store: a new one, or the queued one it runs. 0/-1. */
/*
 * Earlier runs of this cfg and input left "running" by a kill (no runner
 * holds their lease, and we hold the run's): marked failed, with why.
 */
static void
job_mark_abandoned(struct job *c, const char *hash)
{
	struct store_job *v;
	size_t n, i;

	if (c->o->db == NULL || store_job_list(c->st, &v, &n, NULL) != 0)
		return;
	for (i = 0; i < n; i++) {
		if (strcmp(v[i].state, "running") == 0 && v[i].cfg_path != NULL &&
		    strcmp(v[i].cfg_path, c->cfg->path) == 0 &&
		    v[i].mlir_hash != NULL && strcmp(v[i].mlir_hash, hash) == 0 &&
		    !job_runner_alive(c->o->db, v[i].id)) {
			(void)store_job_set_state(c->st, v[i].id, "failed",
			    "abandoned: its run ended without closing it (killed);"
			    " marked by the next run of its cfg", NULL);
			fprintf(stderr, "autosched: job %lld, an earlier run of %s"
			    " that was killed, marked failed (abandoned)\n",
			    (long long)v[i].id, c->cfg->path);
		}
		store_job_clear(&v[i]);
	}
	free(v);
}

static int
job_row(struct job *c, char **err)
{
	const struct cfg *cfg = c->cfg;
	const struct job_opts *o = c->o;
	struct store_job j;
	char hash[17];
	const char *text = o->mlir_text ? o->mlir_text : c->mlir_text;

	if (o->job_id > 0) {
		c->job_id = o->job_id;
		return 0;
	}
	memset(&j, 0, sizeof j);
	util_hash_hex(text, strlen(text), hash);
	job_mark_abandoned(c, hash);
	j.state = "running";
	j.cfg_path = cfg->path;
	j.cfg_text = cfg->text;
	j.mlir_path = (char *)job_input_name(cfg);
	j.mlir_text = (char *)text;
	j.mlir_hash = hash;
	j.tuner = cfg->tuner;
	j.n_trial = c->budget_total;
	if ((c->job_id = store_job_add(c->st, &j, err)) < 0)
		return -1;
	(void)store_job_set_state(c->st, c->job_id, "running", NULL, NULL);
	return 0;
}

/* Where the program uses op: its occurrences' locations, a line each. */
static char *
job_locations(const struct job *c, const struct job_op *jo)
{
	size_t i, len = 0;
	char *s = xstrdup("");

	for (i = 0; i < jo->nuses; i++) {
		const char *loc = analysis_op(c->an, jo->uses[i])->loc;

		s = xrealloc(s, len + strlen(loc) + 2);
		len += (size_t)sprintf(s + len, "%s%s", i ? "\n" : "", loc);
	}
	return s;
}

int
job_open_op(struct job *c, struct job_op *jo, int *bad_input, char **err)
{
	struct store_job_op jop;
	char *dispatch = NULL, *cpu = NULL, *flags = NULL, *toolchain = NULL;
	int rc = -1;

	if (analysis_emit_dispatch(jo->op, &dispatch, err) != 0)
		return -1;
	if (c->be->open(&c->params, jo->op, dispatch, &jo->b, err) != 0)
		goto out;
	if (c->target_id == 0) {
		c->be->target(jo->b, &cpu, &flags, &toolchain);
		c->target_id = store_target(c->st, cpu, flags, toolchain,
		    c->be->name, err);
		if (c->target_id < 0)
			goto out;
	}
	if ((jo->op_id = store_op(c->st, jo->op, err)) < 0)
		goto out;
	memset(&jop, 0, sizeof jop);
	jop.job_id = c->job_id;
	jop.op_id = jo->op_id;
	jop.occurrences = (int64_t)jo->nuses;
	jop.locations = job_locations(c, jo);
	rc = store_job_op_add(c->st, &jop, err);
	free(jop.locations);
	if (rc != 0)
		goto out;
	rc = -1;
	/* Once per job, before measuring: the executor's own checks. */
	if (!c->begun && c->be->begin != NULL) {
		c->begun = 1;
		if (c->be->begin(jo->b, err) != 0) {
			*bad_input = 1;
			goto out;
		}
	}
	/* Tune measurements at once: where the executor places them (slurm). */
	if (c->parallel == 0 && executor_places(c->exec) &&
	    c->be->prepare != NULL && c->be->measure != NULL &&
	    c->be->release != NULL) {
		c->parallel = executor_parallel(c->exec);
		if (c->parallel > JOB_BATCH_MAX)
			c->parallel = JOB_BATCH_MAX;
		if (c->parallel < 1)
			c->parallel = 1;
		job_log(c, "info", "up to %d measurements at once (executor "
		    "%s)", c->parallel, executor_kind(c->exec)->name);
		/*
		 * The coordinator's compiles: compile_jobs, else one per CPU
		 * this process may run on (compiles are not pinned: --cpus
		 * names the measurements' CPUs, which are the nodes' here).
		 */
		c->compile_jobs = c->cfg->exec.compile_jobs > 0 ?
		    c->cfg->exec.compile_jobs : util_ncpus();
		if (c->compile_jobs > JOB_BATCH_MAX)
			c->compile_jobs = JOB_BATCH_MAX;
		if (c->compile_jobs < 1)
			c->compile_jobs = 1;
		job_log(c, "info", "up to %d compiles at once here (%s)",
		    c->compile_jobs, c->cfg->exec.compile_jobs > 0 ?
		    "compile_jobs" : "the CPUs this process may run on");
	}
	rc = 0;
out:
	if (rc != 0 && jo->b != NULL) {
		c->be->close(jo->b);
		jo->b = NULL;
	}
	free(dispatch);
	free(cpu);
	free(flags);
	free(toolchain);
	return rc;
}

void
job_close_op(struct job *c, struct job_op *jo)
{
	if (jo->b == NULL)
		return;
	if (c->be->clock != NULL)
		c->sim_done += c->be->clock(jo->b);
	c->be->close(jo->b);
	jo->b = NULL;
}

/*
 * Ops worked on at once: under executor slurm one per measurement slot
 * (node), at most ops_at_once, never more than the ops; with a backend that
 * simulates its clock (replay), one.
 */
static void
job_lanes(struct job *c)
{
	c->lanes = 1;
	if (c->parallel > 1 && c->be->clock == NULL)
		c->lanes = c->parallel < (int)c->ntunable ? c->parallel :
		    (int)c->ntunable;
	if (c->cfg->exec.ops_at_once > 0 && c->lanes > c->cfg->exec.ops_at_once)
		c->lanes = c->cfg->exec.ops_at_once;
	if (c->lanes < 1)
		c->lanes = 1;
	/* Said, not ignored without a word. */
	if (c->parallel == 0 && (c->cfg->exec.ops_at_once > 0 ||
	    c->cfg->exec.compile_jobs > 0)) {
		const char *k = c->cfg->exec.ops_at_once > 0 ? "ops_at_once" :
		    "compile_jobs";

		job_log(c, "warn", "[Env] %s: for an executor that places"
		    " measurements on nodes (slurm); this job measures here, one"
		    " op and one compile at a time: ignored", k);
		if (!c->o->json)
			fprintf(stderr, "autosched: warning: %s: [Env] %s: for an"
			    " executor that places measurements on nodes (executor"
			    " = slurm); measured here one op and one compile at a"
			    " time: ignored\n", c->cfg->path, k);
	}
}

/*
 * The leases of the ops a run tunes, whatever its cfg's path (a cfg copied
 * into another folder measured the same configs at once on the same CPU):
 * one byte each of DB.ops.lock, at an offset hashed from the op's signature
 * and the backend, held (an open-file-description lock) until the job ends.
 * 0, 1 when another process holds one (*err names the op), -1.
 */
static int
job_op_leases(struct job *c, char **err)
{
	char *p = xasprintf("%s.ops.lock", c->o->db), *sig, *key;
	struct flock fl;
	size_t i;
	int fd, rc = -1, e;

	if ((fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK | O_NOCTTY, 0666)) == -1) {
		util_seterr(err, "%s: %s", p, strerror(errno));
		goto out;
	}
	if (util_lock_file_check(fd, p, "the store's lock file of ops",
	    err) != 0)
		goto out;
	for (i = 0; i < c->nops; i++) {
		if (c->ops[i].sp == NULL)
			continue;
		sig = store_op_signature(c->ops[i].op);
		key = xasprintf("%s\n%s", sig, c->be->name);
		memset(&fl, 0, sizeof fl);
		fl.l_type = F_WRLCK;
		fl.l_whence = SEEK_SET;
		fl.l_start = (off_t)(util_hash64(key, strlen(key)) & 0x3fffffff);
		fl.l_len = 1;
		e = fcntl(fd, F_OFD_SETLK, &fl) == 0 ? 0 : errno;
		free(key);
		if (e == EAGAIN || e == EACCES) {
			util_seterr(err, "%s: op %s (backend %s) is being tuned by"
			    " another process on %s: refused, nothing written;"
			    " wait for it to end (one tuning of an op and target"
			    " at a time)", c->cfg->path, sig, c->be->name,
			    c->o->db);
			rc = 1;
		} else if (e != 0)
			util_seterr(err, "%s: %s", p, strerror(e));
		free(sig);
		if (e != 0)
			goto out;
	}
	c->op_lock = fd;
	fd = -1;
	rc = 0;
out:
	if (fd != -1)
		close(fd);
	free(p);
	return rc;
}

void
job_unlock(struct job *c)
{
	if (c->lanes > 1)
		pthread_mutex_unlock(&c->mu);
}

void
job_lock(struct job *c)
{
	if (c->lanes > 1)
		pthread_mutex_lock(&c->mu);
}

void
job_measuring(struct job *c)
{
	c->measuring++;
	job_unlock(c);
}

void
job_measured(struct job *c)
{
	job_lock(c);
	c->measuring--;
}

/* What an ingest recorded of its folder, said (it may be nothing: twice). */
static void
job_batch_said(struct job *c)
{
	int64_t entries, served = executor_served(c->exec, &entries);
	char *msg;

	if (c->o->ingest_dir == NULL)
		return;
	if (served == 0 && entries > 0)
		msg = xasprintf("%s: its %lld results are already recorded in job"
		    " %lld (ingested before): nothing recorded from it",
		    c->o->ingest_dir, (long long)entries, (long long)c->job_id);
	else
		msg = xasprintf("%s: %lld of its %lld results recorded in job "
		    "%lld%s", c->o->ingest_dir, (long long)served,
		    (long long)entries, (long long)c->job_id, served < entries ?
		    " (the others were already)" : "");
	job_log(c, "info", "%s", msg);
	if (!c->o->json)
		fprintf(stderr, "autosched: %s\n", msg);
	free(msg);
}

/*
 * The job stopped with measurements staged: the folder's manifest written
 * and the job left waiting (cancelled, with why, until its next run).
 * JOB_STAGED, or JOB_FAILED with *err.
 */
static enum job_outcome
job_batch_staged(struct job *c, char **err)
{
	char *why;

	if (c->o->stage_dir == NULL) {
		util_seterr(err, "the next %lld measurement%s of job %lld need "
		    "another trip: run `autosched run %s --ingest %s --stage "
		    "DIR2` (what was ingested is recorded; nothing is recorded "
		    "twice)", (long long)c->deferred, c->deferred == 1 ? "" : "s",
		    (long long)c->job_id, c->cfg->path, c->o->ingest_dir ?
		    c->o->ingest_dir : "DIR");
		why = xstrdup(*err);
	} else {
		if (executor_flush(c->exec, err) != 0) {
			(void)store_job_set_state(c->st, c->job_id, "failed",
			    *err, NULL);
			return JOB_FAILED;
		}
		why = xasprintf("waiting for measurements in %s (executor "
		    "batch): autosched-measure --batch %s there, then autosched"
		    " run %s --ingest %s", c->o->stage_dir, c->o->stage_dir,
		    c->cfg->path, c->o->stage_dir);
	}
	job_log(c, "info", "%lld measurements staged: %s",
	    (long long)c->deferred, why);
	(void)store_job_set_state(c->st, c->job_id, "cancelled", why, NULL);
	free(why);
	return JOB_STAGED;
}

/*
 * The job's work: each distinct op opened, then the plan run by lanes.c
 * (its baselines, weights in the model, the scheduler's rounds until the
 * plan is done or the job stops, each op's finish), one op at a time, or
 * several at once on several nodes. 0, or -1 with *err (*bad_input when
 * the input is to blame).
 */
static int
job_work(struct job *c, int *bad_input, char **err)
{
	size_t i;

	for (i = 0; i < c->nops && !job_should_stop(c); i++) {
		struct job_op *jo = &c->ops[i];

		if (jo->sp == NULL)
			continue;
		if (job_open_op(c, jo, bad_input, err) != 0)
			return -1;
	}
	job_lanes(c);
	if (lanes_work(c, err) != 0)
		return -1;
	/* Anything staged and not waited for yet (a noise measurement). */
	if (!c->stopped)
		(void)carry_staged(c, 0);
	return 0;
}

/* What job c shows: the profiler's blocks and progress, or only --json. */
static void
job_set_report(struct job *c)
{
	const struct job_opts *o = c->o;

	if (o->json) {
		c->rep.blocks = 0;
		c->rep.progress = 0;
	} else {
		c->rep.blocks = !o->quiet;
		c->rep.progress = isatty(STDERR_FILENO) && isatty(STDOUT_FILENO);
	}
	c->rep.backend = c->be->name;
}

/*
 * With a store: refuse a second runner of the same cfg and input, and note
 * which file the store is. 0, or what the leases said (>0 for bad input).
 */
static int
job_claim(struct job *c, char **err)
{
	const struct job_opts *o = c->o;
	struct stat sb;
	int r;

	if (o->db == NULL)
		return 0;
	/* A second runner of the same cfg and input is refused. */
	if (o->job_id == 0 && ((r = job_run_lease(c, err)) != 0 ||
	    (r = job_op_leases(c, err)) != 0))
		return r;
	if (stat(o->db, &sb) == 0) {
		c->db_dev = sb.st_dev;
		c->db_ino = sb.st_ino;
		c->db_known = 1;
	}
	return 0;
}

/*
 * Open output_file, written beside and renamed into place at the end (never
 * half a file), and write its header. 0, or -1 with *err.
 */
static int
job_open_csv(struct job *c, char **err)
{
	const struct cfg *cfg = c->cfg;

	if (cfg->output_file == NULL)
		return 0;
	job_out_guard(cfg, c->o, 1, &c->csv_guard);
	if (util_out_open(cfg->output_file, &c->csv_guard, &c->csv_out,
	    err) != 0)
		return -1;
	c->rep.csv = util_out_file(c->csv_out);
	report_csv_header(&c->rep);
	return 0;
}

/* Drop the CSV being written: a part never replaces a whole one. */
static void
job_abort_csv(struct job *c)
{
	util_out_abort(c->csv_out);
	c->csv_out = NULL;
	c->rep.csv = NULL;
}

/* The log's first lines: what the job tunes, a lowering and folds done first. */
static void
job_log_start(struct job *c)
{
	const struct cfg *cfg = c->cfg;
	const struct analysis_lowering *low;
	char *folds;

	job_log(c, "info", "job started: %s, %zu distinct op%s to tune (%zu "
	    "in the program), tuner %s, backend %s, %s", cfg->path,
	    c->ntunable, c->ntunable == 1 ? "" : "s", c->nuses, cfg->tuner,
	    c->be->name, c->trial_budget > 0 || c->time_budget > 0 ?
	    "a budget for the model" : "n_trial per op");
	if ((low = analysis_lowered(c->an, NULL)) != NULL)
		job_log(c, "info", "%s: lowered %s to linalg before analysis, "
		    "as mlir-opt --pass-pipeline='%s' does",
		    job_input_name(cfg), low->from, low->pipeline);
	if ((folds = analysis_folded_said(c->an)) != NULL)
		job_log(c, "info", "%s: %s", job_input_name(cfg), folds);
	free(folds);
}

/*
 * How a job that ran to its end (or was stopped) came out: logged and set
 * in the store. Returns the outcome.
 */
static enum job_outcome
job_end_state(struct job *c)
{
	struct store *st = c->st;
	enum job_outcome outcome;
	int any_missing = 0;
	size_t i;

	for (i = 0; i < c->nops; i++) {
		if (c->ops[i].sp != NULL && !c->ops[i].have_best &&
		    c->ops[i].finished)
			any_missing = 1;
	}
	if (c->stopped == 2) {
		outcome = JOB_STOPPED;
		job_log(c, "info", "job cancelled");
		(void)store_job_set_state(st, c->job_id, "cancelled", NULL, NULL);
	} else if (c->stopped) {
		outcome = JOB_STOPPED;
		job_log(c, "info", "job stopped; it resumes where it left off");
		/* (A batch job is not the service's to run again.) */
		(void)store_job_set_state(st, c->job_id, c->o->job_id > 0 &&
		    c->carry == NULL ? "queued" : "cancelled", NULL, NULL);
	} else {
		outcome = any_missing ? JOB_NOTHING : JOB_OK;
		job_log(c, "info", "job done");
		(void)store_job_set_state(st, c->job_id, "done", any_missing ?
		    "no valid config found for some op" : NULL, NULL);
	}
	return outcome;
}

/* The job's HTML report, then its --json document or its summary. */
static void
job_show(struct job *c, enum job_outcome outcome)
{
	job_html_report(c);
	if (c->o->json) {
		char *js = report_json(c->job_id, c->ops, c->nops, (int)outcome);

		puts(js);
		free(js);
	} else
		report_summary(stdout, c->ops, c->nops);
}

/*
 * A failed job: logged and set in the store; its partial CSV never replaces
 * an earlier whole one. Returns the outcome.
 */
static enum job_outcome
job_failed(struct job *c, int bad_input, char **err)
{
	const struct cfg *cfg = c->cfg;

	job_log(c, "error", "job failed: %s", *err ? *err : "?");
	if (c->job_id > 0)
		(void)store_job_set_state(c->st, c->job_id, "failed", *err,
		    NULL);
	if (c->csv_out != NULL && access(cfg->output_file, F_OK) == 0) {
		job_abort_csv(c);
		fprintf(stderr, "autosched: %s: left as it was (this run failed;"
		    " what it measured is in the store)\n", cfg->output_file);
	}
	return bad_input ? JOB_BAD_INPUT : JOB_FAILED;
}

/* Close every op, and put the CSV in place (the results stay in the store). */
static void
job_end(struct job *c)
{
	size_t i;

	for (i = 0; i < c->nops; i++)
		job_close_op(c, &c->ops[i]);
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
}

enum job_outcome
job_execute(struct job *c, struct store *st, char **err)
{
	const struct job_opts *o = c->o;
	enum job_outcome outcome = JOB_FAILED;
	int bad_input = 0, r;

	c->st = st;
	c->t0 = util_now();
	job_set_report(c);
	if ((r = job_claim(c, err)) != 0)
		return r > 0 ? JOB_BAD_INPUT : JOB_FAILED;
	if (job_open_csv(c, err) != 0) {
		bad_input = 1;
		goto fail;
	}
	if (sched_init(c, err) != 0 || job_row(c, err) != 0)
		goto fail;
	if (o->db != NULL && job_lease(c, c->job_id, err) != 0) {
		/* Someone else runs it: leave its state alone. */
		c->job_id = 0;
		goto fail;
	}
	job_log_start(c);
	if (job_params(c, err) != 0 || carry_load(c, err) != 0)
		goto fail;
	if (c->carry != NULL && o->job_id > 0)
		(void)store_job_set_state(st, c->job_id, "running", NULL, NULL);
	if (job_work(c, &bad_input, err) != 0)
		goto fail;
	report_progress(&c->rep, NULL);
	job_batch_said(c);
	if (c->stopped == 3) {
		/* A part of the job's CSV never replaces a whole one. */
		job_abort_csv(c);
		outcome = job_batch_staged(c, err);
		goto out;
	}
	outcome = job_end_state(c);
	job_show(c, outcome);
	goto out;
fail:
	outcome = job_failed(c, bad_input, err);
out:
	job_end(c);
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
