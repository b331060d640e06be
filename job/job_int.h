/*
 * Internals of the job folder. The engine reads as its phases, a file each:
 * prepare.c (the one validator: cfg + program -> distinct ops, spaces,
 * limits), steps.c (one op's baseline, search rounds, confirm, final,
 * noise), schedule.c (which distinct op gets the next round, from the
 * model's budget and each op's weight and progress), lanes.c (the plan
 * run: baselines, rounds and finishes, one op at a time or several at
 * once), report.c (console, CSV, JSON, summary) and job.c (what ties
 * them: the job's row, its ops opened, leases, stop requests).
 */
#ifndef AUTOSCHED_JOB_INT_H
#define AUTOSCHED_JOB_INT_H

#include <pthread.h>
#include <stdio.h>
#include <sys/types.h>

#include "analysis/analysis.h"
#include "backends/backend.h"
#include "search/space.h"
#include "tuners/tuner.h"
#include "util/util.h"

#define JOB_NOISE_MAX		64	/* measurements of the default kept per op */
#define JOB_CONFIRM_ROUNDS	3	/* rounds that choose among the top few */
#define JOB_FINAL_ROUNDS	5	/* rounds after the choice: the figures */
#define JOB_NOISE_EVERY		8	/* measured trials between two of the default */
#define JOB_DRIFT_MIN		0.02	/* a drift smaller than this is not flagged */
#define JOB_BATCH_MAX		64
/*
 * Tune trials a round of the scheduler gives one op (the first round of
 * every op included): the tuner proposes them as one batch.
 */
#define JOB_ROUND_TRIALS	8

struct cfg;
struct cfg_exec;
struct executor;
struct job_opts;
struct store;

/* A paired ratio a/b over rounds: geometric mean and its 95% interval. */
struct stats_ratio {
	double	est, lo, hi;
	int	n;		/* rounds with both sides valid */
};

/* Did a series move more than its own noise explains? */
struct stats_drift {
	double	before, after;	/* geometric means of the first and second half */
	double	t, t_crit;	/* Welch's t on logs, and its 99% critical value */
	int	drift;
};

/* A candidate for the confirm step. */
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

/*
 * One distinct op of the program (kind, shapes, types, layout: its store
 * signature) and what the engine learnt about it. It stands for every
 * occurrence of that op in the program (uses): tuned once, applied to all.
 */
struct job_op {
	const struct op_desc	*op;		/* the first occurrence */
	size_t			*uses;		/* analysis indices of its occurrences */
	size_t			 nuses;
	const char		*backend;
	int64_t			 op_id;
	uint64_t		 space_count;
	struct space		*sp;		/* NULL when skipped */
	int			 skipped;	/* not tunable or not supported */
	const char		*skip_reason;

	/* The engine's state while the op is tuned. */
	struct backend		*b;		/* open from its baseline to its end */
	struct tuner		 t;
	int			 tuner_on;
	struct job_cands	 cs;		/* valid tune results, for confirm */
	double			 best_seen;	/* best tune GFLOP/s so far */
	int64_t			 since_best, since_noise;
	int			 reached;	/* a search round ran for it */
	int			 based;		/* its baseline ran */
	int			 finished;	/* its confirm and final ran */
	int			 busy;		/* a lane works on it (lanes.c) */

	/* What the scheduler keeps (schedule.c). */
	int			 rounds;	/* search rounds given */
	double			*hist_ms;	/* best ms after each round */
	double			 now_ms;	/* best time so far (baseline before any) */
	double			 trial_s;	/* wall seconds a tune trial took, mean */
	int64_t			 compiled;	/* compiles the pool started (slurm) */
	int			 compile_most;	/* of which the most at once */
	double			 meas_s;	/* wall seconds of one measurement */
	int			 closed;	/* gets no more rounds */
	const char		*closed_why;

	/* The results. */
	int64_t			 trials;	/* tune trials done (measured or resumed) */
	int64_t			 measured;	/* of which measured in this run */
	int64_t			 ok;
	struct config		 deflt;		/* the backend's default, at 1 thread */
	int			 have_best;
	struct config		 best;
	char			 best_name[160];
	double			 best_gflops, best_ms, best_cv;	/* after the choice */
	int			 default_best;	/* the chosen config is the default */
	/*
	 * The winner of the search was not measurably faster than the default
	 * in the final rounds (its ratio's interval reaches 1): the default
	 * is kept, as best, export and build take it; winner_* say what lost.
	 */
	int			 kept_default;
	char			 winner_name[160];
	struct stats_ratio	 winner_speedup;
	int			 final_rounds;	/* post-choice rounds measured */
	double			 baseline_gflops;	/* the default at 1 thread, first */
	int			 base_threads;	/* the winner's thread count */
	double			 base_thr_gflops;	/* the default at base_threads, after the choice */
	double			 base1_gflops;	/* the default at 1 thread, after the choice */
	struct stats_ratio	 speedup;	/* winner / default at base_threads */
	struct stats_ratio	 speedup1;	/* winner / default at 1 thread */
	struct stats_ratio	 deflt_speedup1;	/* default at base_threads / at 1 */
	double			 reference_gflops;
	char			 reference_name[96];	/* what the reference computed */
	int			 reference_same;	/* it computes the op's own precision */
	/*
	 * GPU backends: the GPU of the final rounds (the winner's trials and
	 * the reference's), the ranges of its SM clock and temperature and
	 * its memory clock then (0: not known), and the device's peak for
	 * the op's types: the median of the reference rounds' (0: none).
	 */
	char			 gpu[64];
	int			 sm_mhz_lo, sm_mhz_hi, mem_mhz, temp_lo, temp_hi;
	double			 peak_v[JOB_FINAL_ROUNDS];
	int			 npeak;
	double			 peak_gflops;
	char			 peak_name[64];
	double			 noise[JOB_NOISE_MAX];	/* the 1-thread default, in time order */
	int			 nnoise;
	double			 noise_cv;	/* CV of noise[]: this op's noise floor */
	struct stats_drift	 drift;		/* of noise[] over the job */
	double			 tuner_s;	/* the tuner's own time */
};

/* The first bytes of every CSV report: a file starting so may be replaced. */
#define REPORT_CSV_MAGIC	"Provider,op_kind,Operation,"

struct job_report {
	FILE		*csv;
	int		 blocks;	/* print the dispatch profiler's block per trial */
	int		 progress;	/* one-line progress on a terminal */
	const char	*backend;
	uint32_t	 knobs;
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
	double			 sim_done;	/* simulated seconds of closed ops */
	int			 stopped;	/* 1 stop signal, 2 cancel, 3 staged (carry.c) */
	int64_t			 trials_total;
	int64_t			 budget_total;	/* tune trials the job plans */
	struct analysis		*an;
	struct job_op		*ops;		/* distinct ops, in program order */
	size_t			 nops;
	size_t			 ntunable;	/* distinct ops tuned */
	size_t			 nuses;		/* occurrences of those */
	char			*mlir_text;	/* read from the file, or NULL */
	int			 ncpus;		/* CPUs measurements use */
	int			 node_cpus;	/* executor slurm: CPUs of a node, else 0 */
	dev_t			 db_dev;	/* the store file when the job began */
	ino_t			 db_ino;
	int			 db_known;
	int			 run_lock;	/* the lease of this cfg on the store, or -1 */
	int			 job_lock;	/* the lease of the job id, or -1 */
	int			 op_lock;	/* the leases of its ops (DB.ops.lock), or -1 */
	char			*job_lock_path;
	struct util_out		*csv_out;	/* the CSV report while written */
	struct util_out_guard	 csv_guard;
	int			 parallel;	/* tune measurements at once (executor slurm) */
	int			 compile_jobs;	/* compiles at once meanwhile, here */
	int			 begun;		/* the backend's begin ran */
	struct executor		*exec;		/* where measurements run (params.exec) */
	/*
	 * executor batch (carry.c): this job's trials from its earlier runs,
	 * and the measurements this run staged (or left unanswered) so far.
	 */
	struct carry		*carry;
	int64_t			 deferred;
	char			 step_name[40];	/* the Slurm steps' job name */

	/*
	 * Ops worked on at once (lanes.c): under executor slurm one per
	 * measurement slot, else 1. With more than one, mu is the engine's
	 * lock: the lane that holds it reads and writes everything here
	 * (the store, the report, the scheduler, its op), and lets go of it
	 * only while a measurement or a compile runs (job_unlock).
	 */
	int			 lanes;
	pthread_mutex_t		 mu;
	pthread_cond_t		 lane_cv;	/* a unit of work ended */
	int			 units;		/* units in flight */
	int			 measuring;	/* measurements in flight, all lanes */
	int			 pool_held;	/* candidates compiling or waiting for a step, all lanes */
	int			 rounds_out;	/* of which search rounds */
	int64_t			 inflight_trials;	/* tune trials those rounds may add */
	int			 plan_over;	/* the scheduler gives no more rounds */
	int			 lane_failed;	/* a unit failed: lane_err, all stop */
	char			*lane_err;

	/* The scheduler's plan (schedule.c). */
	int64_t			 trial_budget;	/* tune trials over all ops, 0 = n_trial each */
	double			 time_budget;	/* seconds for the whole job, 0 = none */
	int64_t			 per_op_max;	/* tune trials one op may get */
	int64_t			 round_trials;	/* tune trials a round */
	int64_t			 sched_seq;	/* decisions recorded so far */
	int64_t			*replay_op;	/* decisions of an earlier run of the job */
	int64_t			*replay_n;
	size_t			 nreplay, replayed;
	double			 spent_before;	/* seconds an earlier run of the job spent */
};

/* job.c */
void	 job_log(struct job *, const char *level, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
int	 job_should_stop(struct job *);
/* 1 (logged) when the cfg's time_limit is reached: the search ends. */
int	 job_time_up(struct job *);
/* 1 once the caller's stop flag (job_opts.stop) is set. */
int	 job_stop_asked(const struct job *);
/* Seconds the job has spent (simulated where the backend has a clock). */
double	 job_elapsed(struct job *);
/* 1 (with *err) if the store file was deleted or replaced under the job. */
int	 job_store_gone(struct job *, char **err);
/* Open op's backend instance (its dispatch, target, store id). 0 or -1. */
int	 job_open_op(struct job *, struct job_op *, int *bad_input, char **err);
/*
 * Open the executor ex names (executors/executor.h) with its slurm_* keys,
 * the steps' job name (NULL: autosched-PID) and the measurement timeout.
 * 0, or -1 with *err. executor_close frees it.
 */
int	 job_executor(const struct cfg_exec *ex, const char *job_name,
	    double timeout, struct executor **, char **err);
void	 job_close_op(struct job *, struct job_op *);
/*
 * The engine's lock let go while a measurement or compile runs, and taken
 * again after it; nothing when one op is worked on at a time.
 */
void	 job_unlock(struct job *);
void	 job_lock(struct job *);
/*
 * A measurement of a series (not a tune batch's) starts: counted in
 * c->measuring and the lock let go; job_measured after it.
 */
void	 job_measuring(struct job *);
void	 job_measured(struct job *);

/* carry.c: the job's side of executor batch (a no-op under the others). */
struct carry;
/* The job's own trials from its earlier runs (a batch job run again). 0/-1. */
int	 carry_load(struct job *, char **err);
void	 carry_free(struct carry *);
/*
 * A measurement of op's config name (a trial of phase) is asked for: 1
 * with *res filled (caller clears) when an earlier run of the job recorded
 * it (taken, not recorded again), else 0 with the executor told its name.
 */
int	 carry_begin(struct job *, const struct job_op *, const char *phase,
	    const char *name, struct trial_result *res);
/*
 * At the end of a step: 1 (the job stops, c->stopped 3) when a measurement
 * of it was staged (c->deferred grew past since, its value when the step
 * began), so that what needs its result waits for the next run.
 */
int	 carry_staged(struct job *, int64_t since);

/* lanes.c */
/*
 * The job's work with c->lanes ops at once, every op open: baselines, the
 * scheduler's rounds (an op in one lane at a time) and finishes, each a
 * unit a lane takes; an op whose search is over is finished while others
 * are still searched. One lane runs on the calling thread: every baseline,
 * the rounds, then the finishes, in program order. Finishes that staged
 * their measurements (executor batch) leave c->stopped 3 once all of them
 * are asked. 0, or -1 with *err.
 */
int	 lanes_work(struct job *, char **err);

/* prepare.c */
/* The out guard of output_file (csv) or the HTML report. */
void	 job_out_guard(const struct cfg *, const struct job_opts *, int csv,
	    struct util_out_guard *);
/* What the input is called in messages: its file, or the cfg's sweep. */
const char *job_input_name(const struct cfg *);

/* steps.c: one op's steps; 0 go on, 1 stopped, -1 error (*err). */
int	 steps_baseline(struct job *, struct job_op *, char **err);
/*
 * One search round: up to n more tune trials of op (found in the store or
 * measured), the tuner learning from them; the default re-measured now and
 * then. *done the trials it added; 0 with *done 0 when the op can give no
 * more (its space or its tuner exhausted).
 */
int	 steps_search_round(struct job *, struct job_op *, int64_t n,
	    int64_t *done, char **err);
/* The choice, the figures, the noise floor; the tuner freed. */
int	 steps_finish(struct job *, struct job_op *, char **err);
/* A result that ran and verified (unstable included). */
int	 steps_valid(const struct trial_result *);
/*
 * Commit cf's result as a trial of phase, on the engine's thread: 0
 * recorded, 1 a stop interrupted its measurement (nothing recorded), -1 on
 * error (the environment failed, nothing recorded; or the store).
 */
int	 steps_record(struct job *, struct job_op *, const struct config *,
	    const char *phase, struct trial_result *, char **err);
/* A tune trial done (measured or found): counts, confirm candidates, progress. */
void	 steps_tune_done(struct job *, struct job_op *, const struct config *,
	    const struct trial_result *, int found);
/*
 * 1 when the store has cf's tune trial (res filled, reported), 2 when an
 * earlier run of this batch job measured it, 0 when it must be measured,
 * -1 on error.
 */
int	 steps_tune_found(struct job *, struct job_op *, const struct config *,
	    struct trial_result *, char **err);
/* 1 when no new measurement may start: a stop, a cancel, the time limit. */
int	 steps_tune_halt(struct job *);

/*
 * pool.c: a tune round measured at once (executor slurm), its candidates
 * compiled here up to c->compile_jobs at a time over all lanes, measured
 * up to c->parallel at a time, recorded on the engine's thread in the
 * round's order; *done how many of idx[] were recorded (a prefix). 0, or
 * -1 on error; a stop ends it early.
 */
int	 job_batch_parallel(struct job *, struct job_op *, struct space *,
	    struct backend *, const uint64_t *idx, size_t n,
	    struct trial_result *res, size_t *done, char **err);
/* The tuner's settings from the cfg; the caller frees the three arrays. */
void	 steps_tuner_params(const struct cfg *, struct tuner_params *,
	    const char ***ek, const char ***ev, int **el);

/* schedule.c: the task scheduler across distinct ops. */
/* The budgets and, for a job run again, the decisions it made before. 0/-1. */
int	 sched_init(struct job *, char **err);
/*
 * The next round: the op (index into c->ops) and how many tune trials. 0
 * when the plan is done (every op closed, or the budget spent) as far as
 * the ops no lane works on say; -1 when the next decision of an earlier
 * run's plan is for an op a lane works on (wait for it).
 */
int	 sched_next(struct job *, size_t *op, int64_t *n, double *gain,
	    const char **why);
/* 1 if op (index) may have another round, a lane working on it or not. */
int	 sched_wants(const struct job *, size_t op);
/* After a round of op that added done trials: its history, whether it closes. */
void	 sched_after(struct job *, size_t op, int64_t done);
/* Record a decision in the store (and the job log). 0 or -1. */
int	 sched_record(struct job *, size_t op, int64_t n, double gain,
	    const char *why, char **err);

/* report.c */
void	 report_block(struct job_report *, const struct op_desc *,
	    const char *config_name, const char *phase,
	    const struct trial_result *, int cached);
void	 report_csv_header(struct job_report *);
void	 report_csv_row(struct job_report *, const struct op_desc *,
	    const struct config *, const char *config_name, const char *phase,
	    const struct trial_result *);
void	 report_progress(struct job_report *, const char *line);
void	 report_summary(FILE *, const struct job_op *, size_t n);
char	*report_json(int64_t job_id, const struct job_op *, size_t n,
	    int outcome);
/* The median CV of the ops' noise series; 0 when none was measured. */
double	 report_noise_floor(const struct job_op *, size_t n, int *nmeas);

/* stats.c */
/* Floating-point operations of op (analysis_op_flops). */
double	 stats_flops(const struct op_desc *);
double	 stats_t(double df, int level99);	/* Student's t, 97.5% or 99.5% */
double	 stats_median(const double *, int n);
void	 stats_mean_sd(const double *, int n, double *mean, double *sd);
double	 stats_cv(const double *, int n);
/* a[i]/b[i] over n rounds (rounds with a side <= 0 left out). -1 if none. */
int	 stats_ratio_ci(const double *a, const double *b, int n, struct stats_ratio *);
/* Halves of v compared; drift only past min_change too. -1 if n < 4. */
int	 stats_drift(const double *v, int n, double min_change, struct stats_drift *);

#endif
