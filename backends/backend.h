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
#include "trial/trial.h"

struct executor;
struct op_desc;

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
	/*
	 * export_op for the op in a dispatch that holds its elementwise
	 * consumers (analysis_outline_fused, autosched build --fuse on): the
	 * same schedule of the op, its epilogue run inside it where the
	 * schedule allows. NULL: the backend cannot (the build keeps the
	 * consumers in dispatches of their own). Caller frees.
	 */
	char		*(*export_op_fused)(const struct op_desc *,
			    const struct config *, const char *seq_name);
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
	 * The pass (its name, for transform.apply_registered_pass) that folds
	 * a matmul's zero fill into its register tiles after the schedules,
	 * in the dispatches marked autosched.inits (build); *plugin the pass
	 * plugin it is in. NULL (and *plugin NULL) when the backend has none:
	 * the fills stay. Caller frees both.
	 */
	char		*(*export_init_pass)(char **plugin);
	/*
	 * The mlir-opt function pass (its text, for a func.func(...) list)
	 * that lowers the copies left on buffers after bufferization (a
	 * pack's, bufferization's own) as the backend's measured kernels had
	 * them lowered, run in every build before convert-linalg-to-loops;
	 * *plugin the pass plugin it is in. NULL (and *plugin NULL) when the
	 * backend has none: the copies go to loops. Caller frees both.
	 */
	char		*(*export_copy_pass)(char **plugin);
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
/*
 * The x86 vector ISA backend mlir-cpu builds its kernels for, capped below
 * this CPU's ([Env] isa, AUTOSCHED_ISA: "auto", "sse2", "avx2", "avx512").
 * The one check of a value: 0, or -1 with what was expected in why (an
 * unknown name, or one above what this CPU has; the caller names where
 * the value came from).
 */
int		 backend_cpu_isa_check(const char *value, char *why, size_t len)
		    __attribute__((warn_unused_result));
/*
 * Cap the ISA for what follows in this process (a job: its cfg's isa).
 * NULL or "": AUTOSCHED_ISA's, else none; a value the check refuses caps
 * nothing. Not thread-safe: call before compiling.
 */
void		 backend_cpu_isa_set(const char *value);
const struct backend_ops *const *backend_all(size_t *n);
/*
 * The backend that emits whole programs (autosched build): the registry's
 * first with export_op and export_module, the transform library's two
 * parts; NULL when none has them.
 */
const struct backend_ops *backend_emitter(void);

#endif
