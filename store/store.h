/*
 * The store: SQLite (WAL) holding targets, jobs (and the queue), ops and
 * trials. The only code that speaks SQL. Every trial is its own transaction.
 */
#ifndef AUTOSCHED_STORE_H
#define AUTOSCHED_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "search/space.h"
#include "trial/trial.h"

#define STORE_SCHEMA_VERSION 10

/*
 * What autosched's writers write, and so all a reader takes back: values
 * outside are refused on read, naming the table, the row and the column.
 */
#define STORE_ROUND_TRIALS_MAX	64		/* one scheduler decision */
#define STORE_TRIALS_MAX	(INT64_C(1) << 50)	/* a job's, an op's */
#define STORE_DIM_MAX		(INT64_C(1) << 40)	/* an op's M, N, K, batch */
#define STORE_GFLOPS_MAX	1e9	/* GFLOP/s: an exaflop on one chip */
#define STORE_MS_MAX		1e10	/* a trial's time: four months */
#define STORE_SECONDS_MAX	1e10
#define STORE_CV_MAX		1e6
#define STORE_MHZ_MAX		100000	/* a GPU's clocks */
#define STORE_TEMP_MAX		200	/* °C */
#define STORE_POWER_MAX		100000	/* W */

struct store;

/* The store a command uses without --db: $AUTOSCHED_DB, else ./autosched.db. Borrowed. */
const char *store_default_path(void);

/*
 * 0 if path (and SQLite's -wal, -shm and -journal files beside it) is a
 * regular file or missing; else -1 with *err "PATH: not a regular file;
 * expected an SQLite store" (a FIFO, a device, a folder). store_open and
 * store_open_readonly check it first; so does anything opening files beside
 * a store.
 */
int	 store_check_path(const char *path, char **err)
	    __attribute__((warn_unused_result));
/*
 * Open (creating and migrating as needed) the store at path: WAL mode, 5 s
 * busy timeout, foreign keys on. Refuses a store whose schema is newer than
 * STORE_SCHEMA_VERSION or a path store_check_path refuses. Caller closes.
 * Errors read "store PATH: message".
 */
int	 store_open(const char *path, struct store **out, char **err)
	    __attribute__((warn_unused_result));
/* Open an existing store read-only (replay, queries); no migration. */
int	 store_open_readonly(const char *path, struct store **out, char **err)
	    __attribute__((warn_unused_result));
void	 store_close(struct store *);
/* The path the store was opened with; borrowed until store_close. */
const char *store_path(const struct store *);
/* The schema version (PRAGMA user_version) of an open store, or -1. */
int	 store_schema_version(struct store *, char **err);

/* The id of a target (found or created). -1 with *err on failure. */
int64_t	 store_target(struct store *, const char *cpu, const char *flags,
	    const char *toolchain, const char *backend, char **err);
/* The id of an op by its signature (found or created). */
int64_t	 store_op(struct store *, const struct op_desc *, char **err);
/*
 * What makes two ops the same: "matmul_1024x512x256_f32t_f32t_f32t", a
 * batch_matmul "batch_matmul_8x64x64x64_…", plus "_ta"/"_tb" if transposed.
 * Built from kind, sizes and types, never from op->name. Caller frees.
 */
char	*store_op_signature(const struct op_desc *);

/* Jobs. States: "queued", "running", "done", "failed", "cancelled". */
struct store_job {
	int64_t		 id;
	char		*state;
	int		 priority;
	char		*cfg_path;
	char		*cfg_text;
	char		*mlir_path;
	char		*mlir_text;
	char		*mlir_hash;
	char		*tuner;
	int64_t		 n_trial;
	int64_t		 trials_done;
	double		 created, started, finished;
	int		 cancel_requested;
	char		*error;
};
void	 store_job_clear(struct store_job *);
/*
 * The check of a job row before it is run: a known state, the cfg's and the
 * program's snapshots present (the service never falls back to reading a
 * path), trial counts in range. 0, or -1 with *err "store PATH: table jobs,
 * row ID, column C: …".
 */
int	 store_job_check(struct store *, const struct store_job *, char **err)
	    __attribute__((warn_unused_result));

/*
 * Insert a job (state j->state, "queued" if NULL; created now if 0) and
 * return its id, or -1. The strings are copied.
 */
int64_t	 store_job_add(struct store *, const struct store_job *j, char **err);
/* Read job id into *j (caller clears). 1 found, 0 not found, -1 error. */
int	 store_job_get(struct store *, int64_t id, struct store_job *j, char **err);
/* All jobs, newest first; *jobs is an array the caller frees (and clears each). */
int	 store_job_list(struct store *, struct store_job **jobs, size_t *n, char **err);
/*
 * Atomically take the highest-priority, then oldest, queued job, mark it
 * running and stamp started; *j gets it (caller clears). 1 taken, 0 none
 * queued, -1 error.
 */
int	 store_job_claim(struct store *, struct store_job *j, char **err);
/*
 * Set state (and error text, NULL clears it): "running" stamps started (if
 * unset), done/failed/cancelled stamp finished, "queued" clears both and
 * any cancel request. -1 with *err if there is no such job.
 */
int	 store_job_set_state(struct store *, int64_t id, const char *state,
	    const char *error, char **err);
/*
 * Jobs left "running" (by a crash) go back to "queued", except those asked
 * to cancel, which become "cancelled". Returns how many were requeued, or -1.
 */
int	 store_job_requeue_running(struct store *, char **err);
/*
 * Ask a job to stop: a queued job becomes cancelled now, a running one gets
 * cancel_requested and stops at its next trial. -1 with *err if there is no
 * such job or it has already finished.
 */
int	 store_job_cancel(struct store *, int64_t id, char **err);
/* 1 if job id was asked to stop, 0 if not, -1 if the store cannot say. */
int	 store_job_cancel_requested(struct store *, int64_t id);
/* Record how many trials job id has done. */
int	 store_job_set_progress(struct store *, int64_t id, int64_t done, char **err);

/* Append a log line to a job's log (committed at once). 0 or -1. */
int	 store_log(struct store *, int64_t job_id, const char *level,
	    const char *msg);
/* Call fn for each log line of a job, oldest first (strings borrowed). */
int	 store_log_foreach(struct store *, int64_t job_id,
	    void (*fn)(double when, const char *level, const char *msg, void *),
	    void *arg, char **err);

/* Trials. phase: "baseline", "tune", "confirm", "reference". */
struct store_trial {
	int64_t			 id;
	int64_t			 job_id, op_id, target_id;
	const char		*phase;
	const char		*config_name;
	struct config		 config;
	struct trial_result	 result;
	double			 created;
};
/*
 * Record one trial, committed on its own: a killed process loses at most
 * the trial in flight. job_id 0 = no job; config_name NULL = named by
 * space_config_name from the nonzero knobs; created 0 = now. Returns its
 * id or -1.
 */
int64_t	 store_trial_add(struct store *, const struct store_trial *, char **err);
/*
 * Find the latest "tune" trial of config_name for op and target (an "error"
 * trial is not a result of the config: never taken). 1 and *res
 * filled (caller clears) if found, 0 if not, -1 on error.
 */
int	 store_trial_find(struct store *, int64_t op_id, int64_t target_id,
	    const char *config_name, struct trial_result *res, char **err);
/*
 * Call fn for each trial of op (0 = any op) on target (0 = any) in phase
 * (NULL = any), oldest first. The trial's strings (phase, config_name,
 * result.error) and op's are borrowed from the store until fn returns; op
 * is rebuilt from the ops row (function and loc are ""). fn may call the
 * store. A nonzero return from fn stops the walk and is returned; else 0,
 * or -1 with *err on a store error.
 */
int	 store_trial_foreach(struct store *, int64_t op_id, int64_t target_id,
	    const char *phase,
	    int (*fn)(const struct store_trial *, const struct op_desc *, void *),
	    void *arg, char **err);
/* Number of trials of job_id (0 = all jobs) in phase (NULL = all), or -1. */
int64_t	 store_trial_count(struct store *, int64_t job_id, const char *phase);

/*
 * The best "ok" trial per op and target, by gflops. Within a job that ran a
 * confirm phase only its confirm figures count (the tune maximum is the
 * luckiest of many noisy draws); a job without one offers its best tune
 * trial; across jobs the highest wins.
 */
struct store_best {
	int64_t		 op_id;
	char		*op_signature;
	char		*op_name;
	char		*config_name;
	struct config	 config;
	double		 gflops, median_ms, cv;
	double		 baseline_gflops;	/* 0 if never measured */
	double		 reference_gflops;	/* OpenBLAS, 0 if never measured */
	int64_t		 trials;
	char		*cpu, *toolchain, *backend;
	int64_t		 job_id;
	int64_t		 target_id;
	int64_t		 trial_id;	/* the winning row */
	int		 confirmed;	/* 1 if the figures are confirm-phase */
	/* The reference's routine ("cublas:GemmEx", "openblas:sgemm"), "" if none. */
	char		*reference_routine;
	int		 reference_same;	/* it computes in the op's precision */
	/*
	 * GPU rows (schema 8): the GPU that measured the winning row, its SM
	 * and memory clocks and temperature then (0: not known), and the
	 * winning job's mean measured peak for the op's types with what was
	 * timed (0, "": not measured). "" and 0 for CPU rows.
	 */
	char		*gpu;
	int		 sm_mhz, mem_mhz, temp_c;
	double		 peak_gflops;
	char		*peak_routine;
	/*
	 * The winning job's choice of this config, if it recorded one: why
	 * (choices.reason, "" if none), and the paired ratio to the default
	 * in the final rounds with its 95% interval (0 when none; for "default
	 * kept" rows the search's best against the default).
	 */
	char		*choice_reason;
	double		 speedup, speedup_lo, speedup_hi;
	int		 speedup_rounds;
	/* The op as stored: its strings the row's (function and loc ""). */
	struct op_desc	 op;
};
void	 store_best_clear(struct store_best *);
/*
 * Best configs: one row per op and target, ordered by op name, filtered by
 * op name or signature substring (NULL = all) and job (0 = all; with a job,
 * baseline, reference and trial count come from that job too). trials
 * counts the "tune" trials. Caller clears each row and frees the array.
 * The rows' ops and figures are checked here; their configs against the
 * space's rules of their backend are not (the store knows no backend):
 * readers take them through best_configs (best/best.h), which does.
 */
int	 store_best(struct store *, const char *op_filter, int64_t job_id,
	    struct store_best **rows, size_t *n, char **err);

/*
 * A job's distinct ops: how many times, and where, the program uses each
 * (locations: "file:line:col" lines). Replaced when written again.
 */
struct store_job_op {
	int64_t		 job_id, op_id;
	int64_t		 occurrences;
	char		*locations;	/* owned by a list's rows */
};
int	 store_job_op_add(struct store *, const struct store_job_op *,
	    char **err);
/* The distinct ops of job_id, by op id; caller frees each locations and *v. */
int	 store_job_op_list(struct store *, int64_t job_id,
	    struct store_job_op **v, size_t *n, char **err);

/*
 * The scheduler's decisions: round seq of job_id gave op_id `trials` tune
 * trials (it had trials_before), its best time then now_ms (ms) weighted by
 * its occurrences, the expected gain per trial (ms of the model's matmul
 * time), the job's seconds spent so far, and why.
 */
struct store_alloc {
	int64_t		 job_id, seq, op_id;
	int64_t		 trials, trials_before, weight;
	double		 now_ms, gain, elapsed_s;
	const char	*reason;	/* borrowed (lists: static "") */
};
int64_t	 store_alloc_add(struct store *, const struct store_alloc *,
	    char **err);
/* Job's decisions in order; caller frees *v (reason is ""). 0 or -1. */
int	 store_alloc_list(struct store *, int64_t job_id,
	    struct store_alloc **v, size_t *n, char **err);

/*
 * The config a job chose for an op on a target, and why: what best,
 * export, annotate and build take from that job. A default kept because
 * the search's winner was not measurably faster is a choice too; speedup,
 * lo, hi (the 95% interval) and rounds are the winner's ratio to the
 * default in the final rounds.
 */
struct store_choice {
	int64_t		 job_id, op_id, target_id;
	const char	*config_name;
	const char	*reason;
	double		 speedup, lo, hi;
	int		 rounds;
	int64_t		 occurrences;
};
int64_t	 store_choice_add(struct store *, const struct store_choice *,
	    char **err);
/* 1 if job recorded a choice for op on target, 0 if not, -1 with *err. */
int	 store_choice_has(struct store *, int64_t job_id, int64_t op_id,
	    int64_t target_id, char **err);

/* PRAGMA integrity_check and foreign_key_check: 0 if clean, else -1, *err. */
int	 store_check(struct store *, char **err);

#endif
