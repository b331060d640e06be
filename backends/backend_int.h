/*
 * What the backends that compile and measure with child processes share
 * (backends/common.c): a compile tool run with a deadline, the trusted
 * compile cache, their helpers and tools found, the executor their
 * measurements go through and the outcome of a measuring child. Private to
 * the backends folder.
 */
#ifndef AUTOSCHED_BACKEND_INT_H
#define AUTOSCHED_BACKEND_INT_H

#include <jansson.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "backends/backend.h"
#include "executors/executor.h"

struct executor_result;

/* Bytes of a tool's stderr kept in res->error (backend_excerpt). */
#define BACKEND_ERROR_TAIL	1500

/*
 * What to keep of a tool's stderr: all of it if short, else its head (the
 * diagnostic; MLIR follows it with an IR dump) and its last lines. Caller
 * frees.
 */
char	*backend_excerpt(const char *);

/*
 * 1 if a tool's stderr says the environment failed rather than the config
 * (no space left, quota, read-only file system, no memory, fd exhaustion,
 * CPU affinity, an untrusted kernel refused by the harness): such a trial
 * is not the candidate's outcome.
 */
int	 backend_env_text(const char *stderr_text);

/*
 * Run one compile step (what names it in messages) with what is left
 * until deadline (params' compile_timeout; niced by compile_nice). 0 if it
 * exited 0, else -1 with res->status and res->error set (what the tool
 * said, that it hung, or that it could not start: an environment failure).
 */
int	 backend_compile_step(const struct backend_params *, const char *what,
	    char *const argv[], double deadline, struct trial_result *res);

/*
 * 0 if the cache folder root is this user's alone (util_trusted); else -1
 * with *err naming it (as backend name's), what is wrong and how to fix it
 * (AUTOSCHED_WORK).
 */
int	 backend_cache_check(const char *name, const char *root, char **err);

/*
 * Whether the cache under root holds entry dir for this user: 1 if dir and
 * its files (NULL-ended paths) are this user's alone (util_trusted), 0 if
 * there is none, or there was an untrusted one, now set aside as
 * dir.untrusted.PID.N (never run nor deleted: someone may want to look at
 * it; the console line names label). -1 with res filled (an environment
 * failure) if root is not ours or the entry cannot be set aside.
 */
int	 backend_cache_lookup(const char *name, const char *root,
	    const char *dir, const char *const files[], const char *label,
	    struct trial_result *res);

/*
 * A name beside dir for one use of this process: dir.KIND.PID.N, N counted
 * per process, so that compiles running at once on several threads (the
 * engine's compile pool) never share a scratch folder, even for one cache
 * entry. The cache entry's own name (its key) is dir's. Caller frees.
 */
char	*backend_side_name(const char *dir, const char *kind);

/*
 * Make tmp, the scratch folder of a cache entry (what remove_fn leaves of
 * an older one first), writable by this user alone whatever the umask: the
 * cache runs what it holds. 0, or -1 with *err (caller frees).
 */
int	 backend_cache_scratch(const char *tmp, void (*remove_fn)(const char *),
	    char **err);
/*
 * Remove (remove_fn) the scratch folders in cache folder root that a run
 * killed mid-compile left: NAME.tmp.PID.N of a process that is gone.
 * Returns how many.
 */
size_t	 backend_cache_sweep(const char *root, void (*remove_fn)(const char *));
/*
 * Move the finished scratch folder tmp into place as the cache entry dir.
 * When another run of ours cached the same entry meanwhile, tmp is removed
 * (remove_fn) and dir taken if backend_cache_lookup trusts it. 0, or -1
 * with res filled (an environment failure).
 */
int	 backend_cache_commit(const char *name, const char *root,
	    const char *tmp, const char *dir, const char *const files[],
	    const char *label, void (*remove_fn)(const char *),
	    struct trial_result *res);

/*
 * Where a helper file of ours is: $env_name, beside the running binary, the
 * install's libexec, the build tree (backends/mlir-cpu). mode as access(2)'s.
 * Caller frees.
 */
char	*backend_find_helper(const char *file, const char *env_name, int mode);
/* The measurement harness, autosched-measure (AUTOSCHED_MEASURE). Caller frees. */
char	*backend_harness(void);

/*
 * The first line of `tool --version` holding a digit, or with tag the text
 * after tag on its line; "unknown" when it says nothing such. Asked once
 * per process, tool and tag (every op's backend asks). Caller frees.
 */
char	*backend_tool_version(const char *tool, const char *tag);

/* The CPU model /proc/cpuinfo names, or "unknown". Caller frees. */
char	*backend_cpu_model(void);

/*
 * The AUTOSCHED_TEST_FAULT=KIND:NAME kind aimed at the config called name:
 * the index of KIND in kinds (n of them; kinds[0] is no fault), 0 if none.
 */
int	 backend_test_fault(const char *name, const char *const kinds[],
	    size_t n);

/*
 * What a compiling backend's supports checks after the op's kind: a static,
 * non-empty shape, then element types the compiling backends take: f32,
 * f64, f16 into f32 or f16, bf16 into f32 (and into bf16 when bf16_acc),
 * i8 x i8 into i32. 1 with *reason NULL, or 0 with *reason the caller's
 * shape_why or types_why (static strings, borrowed).
 */
int	 backend_shape_ok(const struct op_desc *, int bf16_acc,
	    const char *shape_why, const char *types_why, const char **reason);

/*
 * End a failed compile: with env_err (our own scratch files could not be
 * written: the disk, not the config) res is an environment failure
 * (TRIAL_ERROR) saying env_err; either way res->compile_s is the time since
 * t0 and the scratch folder tmp, if any, is removed with remove_fn. env_err
 * and tmp are borrowed.
 */
void	 backend_compile_failed(struct trial_result *, const char *env_err,
	    double t0, const char *tmp, void (*remove_fn)(const char *));

/*
 * Add v to knob k's candidates once (values below 1 are not, but pack_b,
 * pad_smem and pack_a 0).
 */
void	 backend_cand_add(struct space_rules *, enum knob, int64_t v);

/*
 * The executor of params (the job's), or when it has none a local one of
 * the backend's own (*owned set: close it with the backend). 0, or -1 with
 * *err.
 */
int	 backend_executor(const struct backend_params *, struct executor **,
	    int *owned, char **err);

/*
 * What the open of a backend that compiles and measures starts with: op
 * supported (the reason supports gives, else), a work folder in params,
 * the backend's own folder (name) made under it, the measurement harness
 * found and the executor (backend_executor). 0 with them filled (caller
 * frees *work_dir and *harness, and closes *exec when *owned), or -1 with
 * *err and nothing to free.
 */
int	 backend_open_base(const char *name,
	    int (*supports)(const struct op_desc *, const char **),
	    const struct backend_params *, const struct op_desc *,
	    char **work_dir, char **harness, struct executor **exec,
	    int *owned, char **err);

/*
 * A measuring child that did not run to its end, into res: a timeout, a
 * crash (what names the child: "kernel", "iree-run-module"), the
 * environment's failure or our stop. 1 when res is filled, 0 when the
 * child exited (res untouched).
 */
int	 backend_run_failed(const char *what, const struct executor_result *,
	    struct trial_result *res);

/* Number member key of o, 0 when absent or not a number. */
double	 backend_json_num(json_t *o, const char *key);
/* String member key of o into buf (bounded); "" when absent. */
void	 backend_json_str(json_t *o, const char *key, char *buf, size_t len);
/* The last line of text (a harness's JSON result), parsed, or NULL. Caller decrefs. */
json_t	*backend_last_json(const char *text);
/*
 * The figures of the harness's JSON result j (autosched-measure: timed
 * repetitions, the check, the host, the reference routine, the counters)
 * into res, and its GFLOP/s for op. res->status is left to the caller.
 */
void	 backend_harness_result(json_t *j, const struct op_desc *op,
	    struct trial_result *res);

#endif
