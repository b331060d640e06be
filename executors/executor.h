/*
 * Executors run the measuring children of every backend: here (local), as
 * Slurm job steps on a cluster's nodes (slurm), or on another host through
 * a folder carried there and back (batch). Each is a const struct
 * executor_ops in the registry; a job opens one instance for all its ops
 * and hands it to its backends (backend_params.exec), which run each
 * measurement through executor_run and read its output and outcome.
 */
#ifndef AUTOSCHED_EXECUTOR_H
#define AUTOSCHED_EXECUTOR_H

#include <stddef.h>
#include <stdint.h>

#ifndef WUR
#define WUR __attribute__((warn_unused_result))
#endif

/* An open executor: its settings and what it learned (nodes lost, refused). */
struct executor;

/* Settings of an instance; strings are copied at open. */
struct executor_config {
	const char	*partition;	/* slurm: NULL = the cluster's default */
	const char	*srun_args;	/* slurm: extra srun words split on blanks, or NULL */
	double		 step_timeout;	/* slurm: seconds the coordinator waits per step, 0 = timeout + 60 */
	int		 max_steps;	/* slurm: steps at once, 0 = one per usable node */
	/*
	 * What the steps' job names start with ("autosched-<hash>"): the same
	 * for every run of one job, so that a run cancels the steps a killed
	 * one left. NULL = "autosched-<pid>".
	 */
	const char	*job_name;
	double		 timeout;	/* a measurement's own limit, s (for the probes' waits) */
	/*
	 * batch: the folder this run stages what it cannot answer into (NULL:
	 * none), the measured folder whose results it answers with (NULL:
	 * none), and the job and cfg the staged manifest names.
	 */
	const char	*stage_dir;
	const char	*ingest_dir;
	int64_t		 batch_job;
	const char	*batch_cfg;
};

/* One measuring child. Everything is borrowed for the call. */
struct executor_run {
	char *const	*argv;		/* program (a path valid where it runs) and arguments */
	char *const	*env;		/* extra NAME=VALUE strings, NULL-ended, or NULL */
	int		 threads;	/* CPUs it uses (slurm: the step's -c) */
	/*
	 * local: the CPUs to pin it to (NULL: not pinned). Executors that
	 * place their children (executor_places) bind them themselves and
	 * ignore these: the caller then names no CPUs to the child either.
	 */
	const int	*cpus;
	int		 ncpus;
	double		 timeout;	/* its own limit, s, enforced where it runs; 0 = none */
	/*
	 * A series measured one after the other that must stay on one
	 * machine: a buffer of EXECUTOR_NODE_MAX bytes holding the node ("":
	 * any, then filled with the one that ran it), or NULL for a child
	 * that may run anywhere. A node lost meanwhile is replaced, with a
	 * console line naming label.
	 */
	char		*node;
	const char	*label;		/* what is measured, for messages ("op name") */
};
#define EXECUTOR_NODE_MAX	64

enum executor_outcome {
	EXECUTOR_EXITED = 0,	/* ran to its end: status */
	EXECUTOR_SIGNALED,	/* died of a signal (a crash): signal */
	EXECUTOR_TIMEOUT,	/* ran past run.timeout and was killed where it ran */
	EXECUTOR_ENV_FAILED,	/* the environment failed, not the child: why */
	EXECUTOR_CANCELLED,	/* stopped by us (a stop, SIGTERM): why */
};

struct executor_result {
	enum executor_outcome outcome;
	int		 status;	/* EXECUTOR_EXITED: its exit status */
	int		 signal;	/* EXECUTOR_SIGNALED: the signal, 0 if unknown */
	double		 seconds;	/* wall time it took; EXECUTOR_TIMEOUT: how long it was let run */
	char		*out;		/* its stdout, NUL-terminated; never NULL */
	char		*err;		/* its stderr (srun's own lines left out); never NULL */
	/*
	 * EXECUTOR_ENV_FAILED and EXECUTOR_CANCELLED: what happened, a
	 * sentence. SIGNALED and TIMEOUT on a node: where and what srun said
	 * ("on the Slurm step: srun: error: n1: task 0: Segmentation fault").
	 * Else NULL.
	 */
	char		*why;
	char		 host[EXECUTOR_NODE_MAX];	/* where it ran: the node, or this host; "" unknown */
};
/* Free out, err and why (executor_run fills them; the caller frees). */
void	 executor_result_free(struct executor_result *);

struct executor_ops {
	const char	*name;		/* "local", "slurm" */
	const char	*description;
	/* 1: children run elsewhere, on CPUs the executor chooses and binds. */
	int		 places;
	/* Fill ex's own state (ex->cfg is set). -1 with *err. */
	int		(*open)(struct executor *, char **err);
	void		(*close)(struct executor *);
	/*
	 * Once per job, before its first measurement: cancel what a killed
	 * run of the job left; run probe here and on every node (a JSON line
	 * with "cpu", "flags", "libraries": autosched-measure --target) and
	 * refuse the nodes whose answer differs from this machine's (here
	 * names this machine's target for the message). -1 with *err when
	 * nothing can measure. NULL: nothing to do.
	 */
	int		(*begin)(struct executor *, char *const probe[],
			    const char *here, char **err);
	/* How many runs may go at once (threads calling run). NULL: 1. */
	int		(*parallel)(struct executor *);
	/*
	 * The CPUs one run may use where it runs (slurm: the fewest of a node
	 * of the partition); 0 when it runs here (the caller counts its own).
	 * -1 with *err when the executor cannot be asked. NULL: 0.
	 */
	int		(*node_cpus)(struct executor *, char **err);
	/*
	 * Run one child to its end and fill *res (a crash, a timeout, a lost
	 * step retried until it runs or the environment is to blame). May be
	 * called on several threads at once. 0, or -1 with *err when the
	 * child could not be started here at all (fork, a stop requested).
	 */
	int		(*run)(struct executor *, const struct executor_run *,
			    struct executor_result *res, char **err);
};

/* The registry. */
extern const struct executor_ops executor_local;	/* executors/local.c */
extern const struct executor_ops executor_slurm;	/* executors/slurm.c */
extern const struct executor_ops executor_batch;	/* executors/batch.c */
const struct executor_ops *executor_find(const char *name);	/* NULL if unknown */
const struct executor_ops *const *executor_all(size_t *n);

/* Open an instance of ops with cfg (NULL: all defaults). Close frees it. */
int	 executor_open(const struct executor_ops *,
	    const struct executor_config *, struct executor **, char **err) WUR;
void	 executor_close(struct executor *);
const struct executor_ops *executor_kind(const struct executor *);
/* ops->places of ex. */
int	 executor_places(const struct executor *);
/* The ops above, with their NULL defaults. */
int	 executor_begin(struct executor *, char *const probe[],
	    const char *here, char **err) WUR;
int	 executor_parallel(struct executor *);
int	 executor_node_cpus(struct executor *, char **err);
int	 executor_run(struct executor *, const struct executor_run *,
	    struct executor_result *res, char **err) WUR;

/*
 * Executor batch (others ignore these). executor_tag names what the next
 * runs measure (the job's "op ID PHASE CONFIG #N"): a staged entry is
 * matched by it and by its command. executor_staged: runs staged (or left
 * unanswered, without a stage folder) so far; their result says so and is
 * not the candidate's. executor_served: runs answered from the ingested
 * folder, and *entries how many it holds. executor_flush writes the stage
 * folder's manifest (0 when nothing was staged), or -1 with *err.
 */
void	 executor_tag(struct executor *, const char *tag);
int64_t	 executor_staged(const struct executor *);
int64_t	 executor_served(const struct executor *, int64_t *entries);
int	 executor_flush(struct executor *, char **err) WUR;

#endif
