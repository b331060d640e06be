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

/* What the engine learnt about one tunable op. */
struct job_op {
	const struct op_desc	*op;
	const char		*backend;
	int64_t			 op_id;
	uint64_t		 space_count;
	int64_t			 trials;	/* tune trials done (measured or resumed) */
	int64_t			 measured;	/* of which measured in this run */
	int64_t			 ok;
	int			 have_best;
	struct config		 best;
	char			 best_name[160];
	double			 best_gflops, best_ms, best_cv;
	double			 baseline_gflops, baseline2_gflops;
	double			 reference_gflops;
	int			 drift;		/* baseline moved more than 3% */
	int			 skipped;	/* not tunable or not supported */
	const char		*skip_reason;
	double			 tuner_s;	/* the tuner's own time */
};

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

#endif
