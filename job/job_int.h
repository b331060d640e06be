/*
 * Internals of the job folder: the per-op state the engine keeps and the
 * reporting it does (console blocks, progress line, CSV, JSON, summary).
 */
#ifndef AUTOSCHED_JOB_INT_H
#define AUTOSCHED_JOB_INT_H

#include <stdio.h>

#include "analysis/analysis.h"
#include "backends/backend.h"
#include "search/space.h"

#define JOB_NOISE_MAX	64	/* measurements of the default kept per op */

/* A paired ratio a/b over rounds: geometric mean and its 95% interval. */
struct stats_ratio {
	double	est, lo, hi;
	int	n;		/* rounds with both sides valid */
};

/* Did a series move more than its own noise explains? */
struct stats_drift {
	double	before, after;	/* geometric means of the first and second half */
	double	t, t_crit;	/* Welch's t on logs, and its 99% critical value */
	int	drift;
};

/* What the engine learnt about one tunable op. */
struct job_op {
	const struct op_desc	*op;
	const char		*backend;
	int64_t			 op_id;
	uint64_t		 space_count;
	int64_t			 trials;	/* tune trials done (measured or resumed) */
	int64_t			 measured;	/* of which measured in this run */
	int64_t			 ok;
	struct config		 deflt;		/* the backend's default, at 1 thread */
	int			 have_best;
	struct config		 best;
	char			 best_name[160];
	double			 best_gflops, best_ms, best_cv;	/* after the choice */
	int			 default_best;	/* the chosen config is the default */
	int			 final_rounds;	/* post-choice rounds measured */
	double			 baseline_gflops;	/* the default at 1 thread, first */
	int			 base_threads;	/* the winner's thread count */
	double			 base_thr_gflops;	/* the default at base_threads, after the choice */
	double			 base1_gflops;	/* the default at 1 thread, after the choice */
	struct stats_ratio	 speedup;	/* winner / default at base_threads */
	struct stats_ratio	 speedup1;	/* winner / default at 1 thread */
	double			 reference_gflops;
	char			 reference_name[96];	/* what the reference computed */
	int			 reference_same;	/* it computes the op's own precision */
	double			 noise[JOB_NOISE_MAX];	/* the 1-thread default, in time order */
	int			 nnoise;
	double			 noise_cv;	/* CV of noise[]: this op's noise floor */
	struct stats_drift	 drift;		/* of noise[] over the job */
	int			 skipped;	/* not tunable or not supported */
	const char		*skip_reason;
	double			 tuner_s;	/* the tuner's own time */
};

/* The first bytes of every CSV report: a file starting so may be replaced. */
#define REPORT_CSV_MAGIC	"Provider,op_kind,Operation,"

struct job_report {
	FILE		*csv;
	int		 blocks;	/* print the dispatch profiler's block per trial */
	int		 progress;	/* one-line progress on a terminal */
	const char	*backend;
	uint32_t	 knobs;
};

void	 report_block(struct job_report *, const struct op_desc *,
	    const char *config_name, const char *phase,
	    const struct trial_result *, int cached);
void	 report_csv_header(struct job_report *);
void	 report_csv_row(struct job_report *, const struct op_desc *,
	    const struct config *, const char *config_name, const char *phase,
	    const struct trial_result *);
void	 report_progress(struct job_report *, const char *line);
void	 report_summary(FILE *, const struct job_op *, size_t n);
char	*report_json(int64_t job_id, const struct job_op *, size_t n,
	    int outcome);
/* The median CV of the ops' noise series; 0 when none was measured. */
double	 report_noise_floor(const struct job_op *, size_t n, int *nmeas);

/* stats.c */
double	 stats_t(double df, int level99);	/* Student's t, 97.5% or 99.5% */
double	 stats_median(const double *, int n);
void	 stats_mean_sd(const double *, int n, double *mean, double *sd);
double	 stats_cv(const double *, int n);
/* a[i]/b[i] over n rounds (rounds with a side <= 0 left out). -1 if none. */
int	 stats_ratio_ci(const double *a, const double *b, int n, struct stats_ratio *);
/* Halves of v compared; drift only past min_change too. -1 if n < 4. */
int	 stats_drift(const double *v, int n, double min_change, struct stats_drift *);

#endif
