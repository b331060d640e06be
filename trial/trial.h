/*
 * What one trial of a config gave: its status, its measurement and the
 * counters of it. The types every layer passes (backends fill them, tuners
 * learn from them, the store keeps them); this folder includes nothing.
 */
#ifndef AUTOSCHED_TRIAL_H
#define AUTOSCHED_TRIAL_H

#include <stdint.h>

/*
 * Bounds of a measurement's settings: the cfg's [Measure] keys (cfg/cfg.h)
 * and the measuring harness's options (--warmup, --min-time, --reps,
 * --seed) both take them from here, so a cfg the reader takes is one the
 * harness takes.
 */
#define TRIAL_WARMUP_MAX	1000000			/* warmup runs */
#define TRIAL_REPS_MAX		1000000			/* min_reps, max_reps (a time kept per repetition) */
#define TRIAL_MIN_TIME_MAX	3600.0			/* min_time, seconds */
#define TRIAL_SEED_MAX		INT64_MAX		/* seed */

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
const char	*trial_status_name(enum trial_status);
int		 trial_status_lookup(const char *);	/* -1 if unknown */

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
const char	*trial_counter_name(enum trial_counter);

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
void	 trial_result_clear(struct trial_result *);	/* frees error, zeroes */

#endif
