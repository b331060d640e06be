/*
 * A tuning job: cfg + MLIR → analysis → per op: space, tuner, backend,
 * baseline, tuning loop, confirm → store and reports. The one engine both
 * `autosched run` and autoschedd use.
 */
#ifndef AUTOSCHED_JOB_H
#define AUTOSCHED_JOB_H

#include <signal.h>
#include <stdint.h>

struct cfg;
struct cfg_exec;
struct op_desc;
struct space;
struct store;

struct job_opts {
	int			 json;		/* machine output on stdout */
	int			 quiet;		/* no per-candidate blocks */
	int			 fresh;		/* measure again even what the store has */
	int64_t			 job_id;	/* an existing (queued/claimed) job, or 0 to create one */
	const char		*mlir_text;	/* snapshot of the input (daemon), or NULL to read the file */
	const char		*work_dir;	/* artifacts and scratch (backend cache) */
	/*
	 * The store's path, or NULL: no output may name it, the runner's
	 * lease lives beside it, and a store deleted or replaced under the job
	 * stops it.
	 */
	const char		*db;
	const int		*cpus;		/* CPUs for measurements, NULL = the first one */
	int			 ncpus;
	int			 compile_nice;
	/*
	 * Where measurements run when the cfg's [Env] does not say (the
	 * service's autoschedd.conf), key by key; NULL = local.
	 */
	const struct cfg_exec	*exec_default;
	volatile sig_atomic_t	*stop;		/* set by a signal: stop at the next trial boundary */
	const char		*report_path;	/* the HTML report instead of the cfg's report_file, or NULL */
	/*
	 * executor batch: the folder the next measurements are staged into,
	 * and the measured folder whose results this run records (its job:
	 * job_id, mlir_text its snapshot). NULL: none.
	 */
	const char		*stage_dir;
	const char		*ingest_dir;
	/* Called after each trial with a one-line status (daemon: sd_notify STATUS=). */
	void			(*progress)(const char *line, void *arg);
	void			*progress_arg;
};

/* Outcome of a job run. */
enum job_outcome {
	JOB_OK = 0,		/* something valid found for every tunable op */
	JOB_NOTHING = 1,	/* ran, found nothing valid for some op */
	JOB_BAD_INPUT = 2,	/* bad cfg, MLIR, or usage: nothing was written */
	JOB_STOPPED = 3,	/* stopped by *stop or a cancel at a trial boundary */
	JOB_FAILED = 4,		/* internal failure (store, backend setup) */
	/* executor batch: the next measurements are staged (job_opts.stage_dir) */
	JOB_STAGED = 5,
};

struct job;

/*
 * The memory a job's buffers may take (bytes): $AUTOSCHED_MEMORY_LIMIT in
 * MiB, else half of this machine's physical memory. An op whose operands
 * and result (and the verifier's copy) need more is refused at prepare.
 */
uint64_t job_memory_limit(void);

/*
 * A job's runner holds a lease: an flock on DB.job-ID.lock for the job's
 * life (the kernel drops it when the runner dies). 1 if some process holds
 * the lease of job id of the store at db, 0 if none: a job "running" that
 * nobody holds was abandoned.
 */
int	 job_runner_alive(const char *db, int64_t id);

/*
 * The CPUs measurements use when none are given: from CPU 0, as many as the
 * cfg's largest threads value needs, or every one this process may use when
 * the cfg lists no threads (they are then searched over 1…that count).
 * Caller frees.
 */
int	*job_default_cpus(const struct cfg *, int *ncpus);

/*
 * Check everything that can be wrong with the input (MLIR, backend, spaces,
 * buffer sizes against job_memory_limit, threads against the measurement
 * CPUs, output_file and the HTML report through util_out_check: never the
 * store, the input, the cfg, the replayed store, each other, a link or a
 * device, nor a file autosched did not write) without writing anything. The one validator of run,
 * submit, the spool and the service. -1 with *err (the caller exits 2) or 0 and a job
 * the caller frees with job_free. cfg and opts are borrowed for the job's life.
 */
int	 job_prepare(const struct cfg *, const struct job_opts *, struct job **,
	    char **err) __attribute__((warn_unused_result));
/*
 * The distinct ops a prepared job found (program order of their first
 * occurrence), and the space of each (NULL when skipped, with why).
 * job_op_uses: how many times the program uses op i, and where (the
 * analysis indices of its occurrences, borrowed).
 */
size_t	 job_nops(const struct job *);
const struct op_desc *job_op(const struct job *, size_t i,
	    const struct space **space, const char **skipped);
size_t	 job_op_uses(const struct job *, size_t i, const size_t **idx);
/* The knobs the job's backend understands (for config names). */
uint32_t job_knobs(const struct job *);
/*
 * Where knob k's values came from: the cfg line that lists it (> 0), 0 for
 * the backend's default candidates, -1 when the backend does not use it.
 */
int	 job_knob_origin(const struct job *, int knob);

/* Run a prepared job to its end, recording into the store. */
enum job_outcome job_execute(struct job *, struct store *, char **err);
void	 job_free(struct job *);

/* job_prepare + job_execute. *err is set for JOB_BAD_INPUT and JOB_FAILED. */
enum job_outcome job_run(const struct cfg *, struct store *, const struct job_opts *,
	    char **err);

#endif
