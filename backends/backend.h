/*
 * Backends turn a config of an op into a measured, verified trial result:
 * codegen, compile (child process, timeout), measure (child process, pinned,
 * timeout), verify. Each backend is a const struct backend_ops in the registry.
 */
#ifndef AUTOSCHED_BACKEND_H
#define AUTOSCHED_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "search/space.h"

struct executor;
struct op_desc;

enum trial_status {
	TRIAL_OK = 0,
	TRIAL_COMPILE_FAILED,
	TRIAL_COMPILE_TIMEOUT,
	TRIAL_CRASHED,
	TRIAL_TIMEOUT,
	TRIAL_WRONG_RESULT,
	TRIAL_UNSTABLE,		/* ran and verified, but CV above the limit */
	TRIAL_ERROR,		/* anything else (internal error, missing record, …) */
	TRIAL_STATUS_COUNT
};
/* "ok", "compile_failed", "compile_timeout", "crashed", "timeout",
 * "wrong_result", "unstable", "error". */
const char	*backend_status_name(enum trial_status);
int		 backend_status_lookup(const char *);	/* -1 if unknown */

/*
 * Counters of a measurement (perf_event_open in the measuring child), summed
 * over the timed repetitions that were kept and over every thread of the
 * process. The names are the store's column names.
 */
enum trial_counter {
	TRIAL_CTR_CONTEXT_SWITCHES,	/* voluntary and involuntary */
	TRIAL_CTR_CPU_MIGRATIONS,
	TRIAL_CTR_PAGE_FAULTS,
	TRIAL_CTR_TASK_CLOCK_NS,	/* CPU time of all threads, ns */
	TRIAL_CTR_CYCLES,		/* hardware: only where the PMU is exposed */
	TRIAL_CTR_INSTRUCTIONS,
	TRIAL_CTR_CACHE_MISSES,
	TRIAL_CTR_COUNT
};
/* "context_switches", "cpu_migrations", "page_faults", "task_clock_ns",
 * "cycles", "instructions", "cache_misses"; NULL if out of range. */
const char	*backend_counter_name(enum trial_counter);

struct trial_result {
	enum trial_status status;
	double		 median_ms;	/* runtime: median of timed repetitions */
	double		 min_ms, max_ms;
	double		 cv;		/* coefficient of variation of the repetitions */
	int		 reps;
	double		 gflops;	/* 2·M·N·K·batch / median */
	double		 compile_s;	/* wall time spent compiling (0 if cached) */
	double		 measure_s;	/* wall time spent measuring and verifying */
	int		 verified;	/* 1 checked and right, 0 not checked */
	double		 max_err;	/* largest |got - want| seen when verifying */
	/*
	 * Which reference checked the result and on what data, e.g.
	 * "exact:openblas-dgemm(sparse data)", followed by
	 * "+closed-form(wide-sum data)" where the op has the wide-sum check
	 * (README, "Verification"); "none" when the op cannot be checked
	 * exactly (verified 0: reports say NOT VERIFIED); "" when not checked
	 * at all (verify = 0, reference runs, older records).
	 */
	char		 checked_by[96];
	/*
	 * Reference phase only: the library routine timed ("openblas:sgemm",
	 * "openblas:dgemm", "onednn:matmul_u8s8s32(brg:avx512_core_vnni)")
	 * and whether it computes in the op's own precision (1), so that a
	 * speed ratio against it is like for like, or stands in for one the
	 * libraries lack (0: e.g. sgemm for an f16 op; no ratio should be
	 * printed as "vs OpenBLAS" then).
	 */
	char		 ref_routine[96];
	int		 ref_same_precision;
	/*
	 * Timed repetitions dropped and re-run because the process was
	 * switched out (a context switch or CPU migration counted) during them.
	 */
	int		 reps_dropped;
	int64_t		 counters[TRIAL_CTR_COUNT];
	uint32_t	 counters_have;	/* bit i set: counters[i] was measured */
	char		 artifact[17];	/* hash of the generated code, "" if none */
	/*
	 * The machine that measured: the Slurm node under executor slurm (the
	 * harness's SLURMD_NODENAME, or the node srun launched the step on),
	 * else this host's name; "" if unknown.
	 */
	char		 host[64];
	/*
	 * The GPU that measured (GPU backends; "" and 0 elsewhere): its name
	 * as the driver says it ("NVIDIA H200"), the SM clock, temperature
	 * and power NVML read at the end of the timed samples, the memory
	 * clock at the harness's start; 0: not known (no NVML).
	 */
	char		 gpu[64];
	int		 sm_mhz, mem_mhz, temp_c, power_w;
	/*
	 * Reference phase only: the device's peak for the op's input types
	 * as measured beside the library (a register-only tensor-core loop,
	 * FMA for f32), GFLOP/s, and what was timed ("peak:mma.sync..."); 0
	 * and "": not measured.
	 */
	double		 peak_gflops;
	char		 peak_routine[64];
	char		*error;		/* what went wrong, or NULL; owner frees */
	/*
	 * 1 when the environment failed, not the candidate (no space left, a
	 * tool missing, fork/exec, CPU affinity): the job stops and nothing is
	 * recorded, so the config is measured again later.
	 */
	int		 env_failure;
};
void	 backend_result_clear(struct trial_result *);	/* frees error, zeroes */

/* Settings a job passes to a backend. */
struct backend_params {
	const char	*work_dir;	/* scratch and artifact cache folder */
	const char	*iree_bin;
	/*
	 * The NVIDIA GPU the iree backend compiles for ("sm_80", "sm_86",
	 * "sm_89", "sm_90a", or "auto": the GPU here), the cfg's [Env]
	 * gpu_arch; NULL: the CPU (llvm-cpu).
	 */
	const char	*gpu_arch;
	const char	*replay_db;
	double		 min_time;	/* seconds of timed repetitions */
	int		 warmup;
	int		 min_reps, max_reps;
	double		 timeout;	/* measure timeout, seconds */
	double		 compile_timeout;
	double		 cv_max;
	int		 verify;
	const int	*cpus;		/* CPUs measurements may use (NULL = all) */
	int		 ncpus;
	int		 compile_nice;
	uint64_t	 seed;		/* input data seed */
	/*
	 * Where the measuring children run (executors/executor.h): the job's
	 * executor, borrowed; every measurement of the backend goes through
	 * it. With executor slurm they run as job steps on the nodes, their
	 * CPUs chosen by Slurm (cpus above then only apply to compiling), and
	 * every file they read (artifacts, data) must be readable there at
	 * the same path (a shared folder). NULL: a local executor of the
	 * backend's own. Backends without measurement children ignore it.
	 */
	struct executor	*exec;
};

struct backend;		/* one backend instance working on one op */

struct backend_ops {
	const char	*name;		/* "mlir-cpu" */
	const char	*description;
	/* The knobs it understands, defaults, register-tile rule (for op). */
	void		(*rules)(const struct op_desc *, struct space_rules *);
	/* The untuned default config of op: the baseline. */
	void		(*baseline)(const struct op_desc *, struct config *);
	/* 1 if the backend can run op; else 0 with *reason (static string). */
	int		(*supports)(const struct op_desc *, const char **reason);
	/*
	 * Open an instance for op, whose standalone dispatch is dispatch_mlir
	 * (analysis_emit_dispatch). -1 with *err on failure.
	 */
	int		(*open)(const struct backend_params *, const struct op_desc *,
			    const char *dispatch_mlir, struct backend **, char **err);
	/*
	 * 0 if the backend can run here with params (its tools found), else
	 * -1 with *err naming what is missing and how to install it. A job
	 * asks before it writes anything. NULL: nothing to check.
	 */
	int		(*available)(const struct backend_params *, char **err);
	/*
	 * A line for `autosched --version` about the backend's own tools
	 * ("IREE 3.13.0 (/path/iree-compile)"), or NULL when it has none or
	 * they are not found. Caller frees. NULL hook: nothing to say.
	 */
	char		*(*about)(void);
	/* Describe the target: CPU model, CPU flags and toolchain versions. Caller frees. */
	void		(*target)(struct backend *, char **cpu, char **flags,
			    char **toolchain);
	/*
	 * Evaluate one config: codegen, compile, measure, verify. Always fills
	 * *res (a failing candidate is a result, not an error); returns -1 only
	 * if the backend itself cannot go on (with *err).
	 */
	int		(*evaluate)(struct backend *, const struct config *,
			    struct trial_result *res, char **err);
	/*
	 * Measuring several configs at once (an executor that places its
	 * children, executor slurm: as many as executor_parallel says).
	 * prepare is evaluate's first half, on the caller's thread:
	 * codegen and compile; it keeps what is to be measured in *art (NULL
	 * when res already holds the candidate's failure). measure is the
	 * second half: it may run on any thread, several at once on one
	 * instance, and the placement is the executor's (any node), where
	 * evaluate and reference measure one after the other on one machine.
	 * release frees art (NULL is fine). All NULL when the backend has no
	 * such split; the engine then calls evaluate one at a time.
	 */
	int		(*prepare)(struct backend *, const struct config *,
			    struct trial_result *res, void **art, char **err);
	int		(*measure)(struct backend *, void *art,
			    struct trial_result *res, char **err);
	void		(*release)(void *art);
	/*
	 * Carry a prepared candidate (prepare's art) to another host: copy
	 * what its measurement needs into the folder dir as name.* and give
	 * the line its measuring program reads for it (*line, caller frees).
	 * The staged batch's way (bench/gpu.sh). 0, or -1 with *err. NULL:
	 * the backend cannot stage.
	 */
	int		(*stage)(struct backend *, void *art, const char *dir,
			    const char *name, char **line, char **err);
	/*
	 * Called once per job, before its first measurement: the backend's
	 * own checks (its compile cache this user's alone) and the executor's
	 * (executor_begin with the harness's --target as the probe: executor
	 * slurm cancels the steps a killed run of this job left and refuses
	 * the nodes whose target differs from this machine's). -1 with *err
	 * when nothing can measure (the job stops as bad input). NULL when
	 * there is nothing to do.
	 */
	int		(*begin)(struct backend *, char **err);
	/*
	 * Time a reference library with this many threads: the routine of
	 * the op's own precision where a library has one, else the closest
	 * (res->ref_routine, res->ref_same_precision say which). NULL if none.
	 */
	int		(*reference)(struct backend *, int threads,
			    struct trial_result *res, char **err);
	/* Simulated clock in seconds for replay-like backends; NULL = real time. */
	double		(*clock)(struct backend *);
	void		(*close)(struct backend *);
	/*
	 * Export (NULL if the backend has none): the transform-dialect text of
	 * its schedule as measured. export_op is a transform.named_sequence
	 * @seq_name(%op: !transform.any_op {transform.consumed}) applying cfg to
	 * op (tiling, packing, vectorization); export_module is @seq_name taking
	 * the module (consumed), run once after every op's part (bufferization,
	 * lowering patterns) for the n ops and configs exported. Caller frees.
	 */
	char		*(*export_op)(const struct op_desc *, const struct config *,
			    const char *seq_name);
	char		*(*export_module)(const char *seq_name,
			    const struct op_desc *const *ops,
			    const struct config *const *cfgs, size_t n);
	/*
	 * The MLIR pass plugin (mlir-opt --load-pass-plugin=PATH) that module
	 * part runs a pass of, or NULL if it needs none. Caller frees.
	 */
	char		*(*export_plugin)(const struct op_desc *const *ops,
			    const struct config *const *cfgs, size_t n);
	/*
	 * The clang flags, beyond -O3 -march=native, the backend compiles its
	 * kernels with, words separated by blanks (e.g.
	 * "-mprefer-vector-width=512 --rtlib=compiler-rt"), for a program built
	 * from the export. Caller frees.
	 */
	char		*(*export_cflags)(void);
	/*
	 * The mlir-opt function pass (its text, for a func.func(...) list)
	 * that vectorizes the linalg ops on memrefs no schedule covered and
	 * splits them across threads, the vector width this CPU's; *plugin
	 * the pass plugin it is in. NULL (and *plugin NULL) when the backend
	 * has none: those ops are left to loops. Caller frees both.
	 */
	char		*(*export_rest_pass)(int threads, char **plugin);
	/*
	 * The mlir-opt function pass (its text, for a func.func(...) list)
	 * that turns the math ops LLVM would run one libm call a lane into
	 * vector code (build --math fast); *plugin the pass plugin it is in.
	 * NULL (and *plugin NULL) when the backend has none. Caller frees both.
	 */
	char		*(*export_math_pass)(char **plugin);
	/*
	 * The IREE compilation_info attribute exactly as the backend compiled
	 * cfg of op (the attribute syntax of the IREE release it measured
	 * with), for `export --format iree-spec` and `annotate`; NULL when cfg
	 * is the backend's own default (IREE's choice: nothing to override).
	 * A NULL hook: the backend does not compile with IREE (export maps its
	 * knobs onto IREE's tiling levels). Caller frees.
	 */
	char		*(*export_iree_attr)(const struct op_desc *,
			    const struct config *);
	/*
	 * The schedule version this build generates, as it appears in the
	 * toolchain string of the targets it measures ("mlir-cpu schedule v6");
	 * NULL if the backend has no versioned schedules.
	 */
	const char	*schedule_tag;
	/*
	 * The oldest schedule version whose code for a 1-thread config of an
	 * op with neither bf16 nor i8 inputs is the same as this build's
	 * ("mlir-cpu schedule v4"): such records made with it still stand for
	 * this build (bench/sweep.c). NULL: only schedule_tag.
	 */
	const char	*schedule_serial_since;
	/*
	 * What a user should know of the knobs on this target, said with the
	 * space (the knobs the backend takes but that change nothing, those
	 * that follow from others); NULL: nothing.
	 */
	const char	*knob_note;
	/*
	 * Set when no IREE tuning spec applies to this backend's rows (IREE
	 * 3.13 reads none for CUDA): `export --format iree-spec` leaves them
	 * out and says this (why, and what the user should do instead); NULL:
	 * its rows go in the spec.
	 */
	const char	*spec_note;
};

/* The registry. */
extern const struct backend_ops mlircpu_backend;	/* backends/mlir-cpu */
extern const struct backend_ops iree_backend;		/* backends/iree */
extern const struct backend_ops iree_cuda_backend;	/* backends/iree, gpu_arch set */
const struct backend_ops *backend_find(const char *name);
/* 1 if name is a gpu_arch value backend iree takes ("auto", "sm_90a", …). */
int		 backend_gpu_arch_known(const char *name);
/* "sm_80, sm_86, sm_89, sm_90a": the arches backend iree compiles for. */
const char	*backend_gpu_arches(void);
const struct backend_ops *const *backend_all(size_t *n);

#endif
