/*
 * Recorded exhaustive sweeps as lookup tables, and tuner runs replayed over
 * them: how many trials a tuner needs to come within 95% / 99% of the best.
 * Shared by bench/tuners.c and tests/tuners/test_transfer_replay.c.
 */
#ifndef AUTOSCHED_BENCH_SWEEP_H
#define AUTOSCHED_BENCH_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "backends/backend.h"
#include "search/space.h"
#include "tuners/tuner.h"

/* One op's sweep: every valid config of its space, measured once. */
struct sweep {
	char		*path;
	char		*name;		/* file name without folder and ".db" */
	struct op_desc	 op;		/* strings owned */
	struct space	*space;
	uint64_t	 count;
	double		*gflops;	/* per space index; 0 if it failed */
	double		*cost;		/* compile_s + measure_s per index */
	enum trial_status *status;
	double		 best;		/* the best recorded gflops */
	uint64_t	 best_idx;
	char		*cpu, *toolchain;
};

/*
 * Load the "tune" trials of the one op in the store at path. The space is
 * rebuilt from the recorded knob values and the mlir-cpu rules; every one
 * of its configs must be recorded. Caller frees with sweep_free.
 */
int	 sweep_load(const char *path, struct sweep *, char **err)
	    __attribute__((warn_unused_result));
void	 sweep_free(struct sweep *);

/* The records of n sweeps, for tuner_transfer. Caller frees; ops borrowed. */
struct tuner_record *sweep_records(const struct sweep *const *, size_t n,
	    size_t *nrec);

/* What one replayed run found. */
struct sweep_run {
	int64_t	 to95, to99;	/* trials to reach 95% / 99% of the best; -1 never */
	int64_t	 trials;	/* trials run (stops once 99% is reached) */
	double	 tuner_s;	/* the tuner's own seconds (transfer included) */
	double	 replay_s;	/* recorded compile + measure seconds of the trials */
	double	 worst_frac;	/* highest tuner_s / replay_s of one batch */
};

/*
 * Run tuner t (with nextra key/value settings) over sweep s with seed,
 * budget s->count, offering rec (n records, may be 0) for transfer.
 */
int	 sweep_run(const struct sweep *s, const struct tuner_ops *t,
	    uint64_t seed, const char *const *keys, const char *const *values,
	    size_t nextra, const struct tuner_record *rec, size_t nrec,
	    struct sweep_run *out, char **err)
	    __attribute__((warn_unused_result));

#endif
