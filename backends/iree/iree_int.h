/*
 * Internals shared by the files of the iree backend: the tools and their
 * version (tools.c), the candidate's compilation_info and its compile into
 * cached modules (compile.c), and the runs that check and time it
 * (measure.c).
 */
#ifndef AUTOSCHED_IREE_INT_H
#define AUTOSCHED_IREE_INT_H

#include <pthread.h>

#include "analysis/analysis.h"
#include "backends/backend.h"
#include "executors/executor.h"
#include "search/space.h"

struct cuda_arch;

/* IREE's tools, found once per backend instance (paths owned). */
struct iree_tools {
	char	*compile;	/* iree-compile */
	char	*run;		/* iree-run-module */
	char	*bench;		/* iree-benchmark-module */
	char	*version;	/* "3.13.0rc20261016 @ 89ece87…", or "unknown" */
};

/*
 * Find the tools: in params_bin alone when it is set (the cfg's iree_bin),
 * else on PATH, else in the venv scripts/deps.sh installs
 * (iree_venv_bin). 0, or -1 with *err naming where it looked and how to
 * install them. iree_tools_free frees the paths.
 */
int	 iree_tools_find(const char *params_bin, struct iree_tools *,
	    char **err);
void	 iree_tools_free(struct iree_tools *);
/* $AUTOSCHED_IREE_VENV/bin, else ~/.cache/autosched/iree-VERSION/bin. Caller frees. */
char	*iree_venv_bin(void);

/* AUTOSCHED_TEST_FAULT kinds the backend stages with IREE's own tools. */
enum iree_fault {
	IREE_FAULT_NONE = 0,
	IREE_FAULT_COMPILE_FAIL,	/* an attribute iree-compile refuses */
	IREE_FAULT_WRONG,		/* the check run gets the wrong acc */
	IREE_FAULT_HANG,		/* the timing run never returns */
};

struct backend {
	struct backend_params	 params;	/* strings borrowed from the caller */
	struct op_desc		 op;		/* strings borrowed from the caller */
	char			*dispatch;	/* the dispatch, no compilation_info */
	char			*work_dir;	/* params.work_dir/iree */
	struct iree_tools	 tools;
	char			*harness;	/* autosched-measure */
	char			*toolchain, *cpu, *flags;
	char			*data_dir;	/* the op's .npy inputs, once made */
	int			 data_check;	/* 1: check_*.npy exist */
	char			*not_verified;	/* why the op cannot be checked */
	int			 told_default;	/* IREE's own config printed */
	/*
	 * Guards data_dir, data_check, not_verified and told_default: prepare
	 * and measure run on several threads at once (the engine's compile
	 * pool, the steps measured at once).
	 */
	pthread_mutex_t		 mu;
	struct executor		*exec;		/* params.exec, or our own local one */
	int			 exec_owned;
	/*
	 * The node the measurements made one after the other (baseline,
	 * noise, confirm, final, reference) run on: the first that measured
	 * for this op, "" until then (executor_run.node).
	 */
	char			 node[EXECUTOR_NODE_MAX];
	unsigned long		 runs;		/* measurements started: scratch names */
	/* The CUDA target (cuda_ops.c); NULL for llvm-cpu. */
	const struct cuda_arch	*arch;
	char			*ptxas;		/* ptxas -v checks the PTX */
	char			*gpu_harness;	/* autosched-gpu-measure */
};

/*
 * How many times the timing module repeats the dispatch (the dispatch
 * profiler's --iree-hal-benchmark-dispatch-repeat-count, and the runs'
 * --batch_size): enough dispatches per call that the call's own cost
 * fades, from the op's work.
 */
int	 iree_repeat(const struct op_desc *);

/*
 * The compilation_info of cfg for op (IREE 3.13's llvm-cpu syntax), or
 * NULL for the backend's own default. fault IREE_FAULT_COMPILE_FAIL makes
 * it one iree-compile refuses. Caller frees.
 */
char	*iree_attr(const struct op_desc *, const struct config *,
	    enum iree_fault);
/*
 * The start both IREE backends share (iree.c): be's base opened for name,
 * its copies of params, op and dispatch made and IREE's tools found. 0 and
 * *out, or -1 with *err and nothing left to free.
 */
int	 iree_backend_new(const char *name,
	    int (*supports)(const struct op_desc *, const char **),
	    const struct backend_params *, const struct op_desc *,
	    const char *dispatch, struct backend **out, char **err);
/* Free be (NULL: nothing) and all it owns: the close of both backends. */
void	 iree_backend_free(struct backend *);
/* be's target words, copies the caller frees: the target of both. */
void	 iree_backend_target(struct backend *, char **cpu, char **flags,
	    char **toolchain);

/* The dispatch with attr (NULL: none) set on its contraction. Caller frees. */
char	*iree_dispatch_with(const char *dispatch, const char *attr);

/* A candidate's compiled modules in the cache. */
struct iree_art {
	char	*dir;		/* the cache entry */
	char	*verify;	/* dir/verify.vmfb: one dispatch per call */
	char	*bench;		/* dir/bench.vmfb: iree_repeat dispatches */
	char	*chosen;	/* IREE's lowering_config … as compiled, or NULL */
};
void	 iree_art_free(struct iree_art *);

/*
 * Compile the dispatch with attr into the two modules, cached under
 * work_dir by a hash of everything that shapes them. Fills res->artifact,
 * res->compile_s (0 when cached) and, on failure, res->status and
 * res->error. 0 with *art filled, or -1 (res says why).
 */
int	 iree_compile(struct backend *, const char *attr, struct iree_art *art,
	    struct trial_result *res);

/*
 * Remove the scratch entry dir of a compile (compile.c): its files (NULL-
 * ended), what is in its folder dump_name, and the folders.
 */
void	 iree_scratch_remove(const char *dir, const char *const files[],
	    const char *dump_name);

/* The dump's lowering and translation config of the op, or NULL. Caller frees. */
char	*iree_config_read(const char *dump_text);

/*
 * The op's data (autosched-measure --npy-inputs), made once per backend on
 * the caller's thread before any measurement. 0, or -1 with *err (an
 * environment failure: the data is ours, not the config's).
 */
int	 iree_data_make(struct backend *, char **err);

/*
 * Check (iree-run-module on the verification data, the harness compares)
 * then time (iree-benchmark-module) the compiled candidate with threads
 * threads through the executor; pinned: on the op's one node (be->node),
 * else where the executor puts it (several at once on threads). Fills res.
 * 0, or -1 with *err when the environment failed (res->env_failure set).
 */
int	 iree_measure(struct backend *, const struct iree_art *, int threads,
	    enum iree_fault, int pinned, struct trial_result *res, char **err);
/* OpenBLAS/oneDNN through the harness's --ref auto, as mlir-cpu's reference. */
int	 iree_reference(struct backend *, int threads, struct trial_result *res,
	    char **err);

#endif
