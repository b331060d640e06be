/*
 * The HTML report: one self-contained file (inline SVG charts, a few lines of
 * inline JS to sort the summary table, no network) describing what the store
 * holds about some jobs and ops, for a reader who never ran autosched.
 */
#ifndef AUTOSCHED_HTML_H
#define AUTOSCHED_HTML_H

#include <stdint.h>

struct store;
struct util_out_guard;

/* How every report starts: util_out recognises an earlier one by it. */
#define HTML_MAGIC	"<!DOCTYPE html>\n<!-- autosched report -->\n"

/* What to report on: one job, the ops matching a name, or everything. */
struct html_opts {
	int64_t		 job_id;	/* 0 = every job */
	const char	*op_filter;	/* op name or signature substring, NULL = all */
	const char	*db_path;	/* shown in the header; may be NULL */
};

/* Upper bound on the trials one report reads (use --job or --op beyond). */
#define HTML_TRIAL_MAX	2000000

/*
 * Write the report on what st holds (filtered by o) to path through
 * util_out under guard g (borrowed; its magic is set to HTML_MAGIC).
 * 0, or -1 with *err (nothing written). A selection that matches no trial
 * still writes a report that says so.
 */
int	 html_report(struct store *st, const struct html_opts *o,
	    const char *path, const struct util_out_guard *g, char **err)
	    __attribute__((warn_unused_result));

/* The same into a buffer the caller frees (*len its length). */
int	 html_report_text(struct store *st, const struct html_opts *o,
	    char **text, size_t *len, char **err)
	    __attribute__((warn_unused_result));

#endif
