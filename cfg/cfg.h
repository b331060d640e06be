/*
 * The auto-scheduler.cfg reader (libinih): [Env], [SearchSpace],
 * [SearchStrategy] and [Measure], compatible with the seed's format, and
 * [Problem], a shape sweep tuned instead of an input file.
 */
#ifndef AUTOSCHED_CFG_H
#define AUTOSCHED_CFG_H

#include <stddef.h>
#include <stdint.h>

#include "generate/generate.h"
#include "search/space.h"
#include "trial/trial.h"

/* The one limit on a cfg's size, for every reader of one (run, submit, spool). */
#define CFG_TEXT_MAX	((size_t)1024 * 1024)

/*
 * The bounds on what [SearchSpace] and [Measure] hold, also the bounds of
 * autosched-measure's options (--threads, --warmup, --min-time, --reps,
 * --seed), so a cfg the reader takes is one the harness takes: both read
 * them from the headers below them (search/space.h, trial/trial.h).
 */
#define CFG_VALUE_MAX	SPACE_VALUE_MAX		/* largest [SearchSpace] value (search/space.h) */
#define CFG_WARMUP_MAX	TRIAL_WARMUP_MAX	/* warmup runs */
#define CFG_REPS_MAX	TRIAL_REPS_MAX		/* min_reps, max_reps */
#define CFG_MIN_TIME_MAX TRIAL_MIN_TIME_MAX	/* min_time, seconds */
#define CFG_SEED_MAX	TRIAL_SEED_MAX		/* seed */

/* One [SearchSpace] list, as written (values sorted, duplicates removed). */
struct cfg_knob {
	enum knob	 knob;
	int64_t		*values;
	size_t		 n;
	int		 line;
};

/* A key = value pair of [SearchStrategy] that only some tuner reads. */
struct cfg_kv {
	char	*key;
	char	*value;
	int	 line;
};

/*
 * The positions of local, slurm and batch in the executors' registry
 * (executors/executor.c: local first, the default; a new executor goes at
 * its end).
 */
enum { CFG_EXEC_LOCAL = 0, CFG_EXEC_SLURM = 1, CFG_EXEC_BATCH = 2 };

/*
 * Where measurements run: a cfg's [Env] keys, and autoschedd.conf's
 * defaults for the jobs whose cfg does not say. A value left unset is 0 or
 * NULL (executor: executor_set 0).
 */
struct cfg_exec {
	/*
	 * The executor the key names, by its position in the executors'
	 * registry (executor_all): CFG_EXEC_LOCAL (default: a child of this
	 * process), CFG_EXEC_SLURM (an srun job step on a Slurm node),
	 * CFG_EXEC_BATCH (staged into a folder measured elsewhere: autosched
	 * run --stage/--ingest), or any other the registry holds.
	 */
	int		 executor;
	int		 executor_set;	/* the key was given */
	char		*slurm_partition;	/* NULL = the cluster's default */
	int		 slurm_max_steps;	/* steps at once, 0 = one per node */
	char		*slurm_srun_args;	/* extra srun words, split on blanks */
	double		 slurm_step_timeout;	/* seconds per step, 0 = timeout + 60 */
	/*
	 * executor slurm: candidates compiled at once on the coordinator while
	 * steps measure, 0 = one per CPU this process may run on.
	 */
	int		 compile_jobs;
	/*
	 * executor slurm: distinct ops worked on at once, each with its
	 * side-by-side rounds on a node of its own; 0 = one per measurement
	 * slot (node).
	 */
	int		 ops_at_once;
};

/*
 * The one check of the executor keys (executor, slurm_partition,
 * slurm_max_steps, slurm_srun_args, slurm_step_timeout, compile_jobs,
 * ops_at_once), for the cfg and
 * autoschedd.conf: 1 when key is none of them, 0 when value was stored in
 * e, -1 with what was expected in why (the caller names file, line, key).
 */
int	 cfg_exec_key(struct cfg_exec *e, const char *key, const char *value,
	    char *why, size_t len) __attribute__((warn_unused_result));
/* e with what d says for every key e leaves unset (strings borrowed). */
void	 cfg_exec_merge(struct cfg_exec *e, const struct cfg_exec *d);
void	 cfg_exec_clear(struct cfg_exec *);

struct cfg {
	char		*path;		/* the cfg file as named */
	char		*dir;		/* its folder: relative paths start here */
	char		*text;		/* the whole file as read (snapshotted into the store) */

	/* [Env]; paths resolved against dir. */
	char		*input_file;	/* required unless [Problem] is given */
	char		*output_file;	/* CSV report; NULL = none */
	char		*report_file;	/* HTML report at the end of a job; NULL = none */
	char		*backend;	/* "mlir-cpu" (default) | "iree" | "replay" */
	char		*database;	/* NULL = the default (autosched.db beside the cfg) */
	char		*iree_bin;
	/*
	 * The NVIDIA GPU backend iree compiles for: "auto" (the GPU here) or
	 * an arch ("sm_90a"); NULL: the CPU. With it, backend iree reads
	 * back as "iree-cuda". gpu_arch_line: its line, 0 if none.
	 */
	char		*gpu_arch;
	int		 gpu_arch_line;
	char		*replay_db;	/* replay backend: the recorded store */
	/*
	 * The x86 vector ISA backend mlir-cpu builds for ("sse2", "avx2",
	 * "avx512"; at most this CPU's), NULL or "auto": this CPU's.
	 */
	char		*isa;
	struct cfg_exec	 exec;		/* executor and slurm_* */
	/*
	 * The first [Env] key a submitted job may not carry (an executor key,
	 * iree_bin or replay_db; static storage) and its line; NULL and 0 if
	 * none.
	 */
	const char	*service_key;
	int		 service_key_line;

	/* [SearchSpace], in file order. */
	struct cfg_knob	*knobs;
	size_t		 nknobs;

	/* [SearchStrategy] */
	char		*tuner;		/* canonical short name: "grid" | "random" | "xgboost" */
	int64_t		 n_trial;	/* tune trials per distinct op, default 16 */
	int		 n_trial_set;	/* n_trial was given (a cap under a budget) */
	/*
	 * The model's budget, spread over its distinct ops by the scheduler:
	 * tune trials in all (0 = n_trial each) and wall seconds for the
	 * whole job, confirm and final rounds included (0 = none).
	 */
	int64_t		 trial_budget;
	double		 time_budget;
	double		 time_limit;	/* seconds, 0 = none */
	int64_t		 early_stop;	/* stop after this many trials without improvement, 0 = never */
	uint64_t	 seed;		/* default 42 */
	struct cfg_kv	*extra;		/* tuner-specific keys (batch_size, epsilon, …) */
	size_t		 nextra;

	/* [Measure] */
	double		 min_time;	/* seconds of timed repetitions per trial, default 0.2 */
	int		 warmup;	/* discarded runs, default 1 */
	int		 min_reps;	/* default 5 */
	int		 max_reps;	/* default 1000 */
	double		 timeout;	/* per measurement, seconds, default 10 */
	double		 compile_timeout; /* seconds, default 60 */
	double		 cv_max;	/* a trial with a larger CV is unstable, default 0.05 */
	int		 confirm_top;	/* candidates re-measured at the end, default 3 */
	int		 verify;	/* default 1 */

	/*
	 * [Problem]: problem_m/n/k, batch, dtype, transpose, kind, as the
	 * dispatch profiler's generator takes them; NULL without the section.
	 */
	struct generate_sweep *problem;

	/* Warnings found while reading (repeated keys, …); printed by the caller. */
	char		**warnings;
	size_t		 nwarnings;
};

/*
 * Read and validate the cfg at path. On error returns -1 and sets *err to one
 * message naming the file, the line and the key and saying what was expected
 * (e.g. "x.cfg:12: [SearchSpace] tile_q: unknown key (did you mean tile_m?)").
 * The input file must exist. Caller frees *out with cfg_free.
 */
int	 cfg_load(const char *path, struct cfg **out, char **err)
	    __attribute__((warn_unused_result));
/*
 * The same from a buffer; path names the file for messages and gives the
 * folder relative paths start from. flags: CFG_CHECK_FILES (else the input
 * file need not exist: a queued job's snapshot), CFG_SUBMITTED (a cfg
 * submitted to the service: autosched submit, a spooled cfg; it may not say
 * where or how measurements run (executor, slurm_*: autoschedd.conf's) nor
 * name a program (iree_bin), "FILE:LINE: [Env] KEY: set by the service
 * (autoschedd.conf), not by a submitted job").
 */
#define CFG_CHECK_FILES	0x1
#define CFG_SUBMITTED	0x2
/*
 * A stored job's cfg read back by the service: the CFG_SUBMITTED rules,
 * every key they refuse dropped unread instead (cfg->service_key names the
 * first, for the log), so the service's own settings apply.
 */
#define CFG_STORED	0x4
int	 cfg_parse(const char *path, const char *text, size_t len,
	    int flags, struct cfg **out, char **err)
	    __attribute__((warn_unused_result));
void	 cfg_free(struct cfg *);

/*
 * Forget the keys CFG_SUBMITTED refuses (cfg->service_key), so that the
 * service's own settings apply to a job queued before they were refused.
 * Returns the first key dropped, or NULL.
 */
const char *cfg_drop_submitted(struct cfg *);
/* Why a submitted job may not set [Env] key (static text). */
const char *cfg_submitted_why(const char *key);

/*
 * A value list as [SearchSpace] and [Problem] take it: "64", "[64, 128]",
 * "64,128" or "64:1024:128" (stop exclusive), sorted without duplicates.
 * Caller frees *values; -1 with *err saying what is wrong.
 */
int	 cfg_parse_values(const char *s, int64_t **values, size_t *n,
	    char **err) __attribute__((warn_unused_result));
/* The same with values of at least min (0: a padding). */
int	 cfg_parse_values_from(const char *s, int64_t min, int64_t **values,
	    size_t *n, char **err) __attribute__((warn_unused_result));

/* The value of a tuner-specific key, or NULL. Borrowed. */
const char *cfg_extra(const struct cfg *, const char *key);

#endif
