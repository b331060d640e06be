/*
 * Internals of executor batch (batch.c) and of its folder (batch_dir.c):
 * a staged round as read back, its entries and, once measured, their
 * results.
 */
#ifndef AUTOSCHED_BATCH_INT_H
#define AUTOSCHED_BATCH_INT_H

#include <stdint.h>

#include "executors/executor_int.h"

#define BATCH_VERSION		1
#define BATCH_MANIFEST		"manifest"
#define BATCH_RESULTS		"results"
#define BATCH_FILE_MAX		((size_t)256 << 20)	/* a kernel, a manifest */
#define BATCH_ENTRIES_MAX	100000
#define BATCH_ARGS_MAX		64

/* One measurement of a staged round. */
struct batch_entry {
	int64_t			 id;		/* 1… in manifest order */
	int			 line;		/* its manifest line */
	char			 sha[65];	/* sha256 of that line */
	char			*tag;		/* the job's name for it, "#call" added */
	char			*op;		/* what is measured (executor_run.label) */
	char			*harness;	/* "mlir-cpu" or "gpu" */
	char			**argv;		/* after the program, "@/NAME" for DIR's files */
	char			**env;		/* NULL-ended */
	int			 threads;
	double			 timeout;
	/* From the results file, when read with results. */
	int			 have;
	int			 rline;
	struct executor_result	 res;
	int			 served;	/* given to the job in this run */
};

struct batch_dir {
	char			*dir;
	char			*manifest;	/* DIR/manifest */
	char			 msha[65];	/* its sha256 */
	int64_t			 job;
	char			*cfg;
	struct batch_entry	*v;
	size_t			 n;
};

/*
 * Read DIR's manifest (checking every file's sha256) and, with results,
 * its results (every line checked against the manifest). 0, or -1 with
 * *err naming the file and line.
 */
int	 batch_dir_read(const char *dir, int results, struct batch_dir **,
	    char **err);
void	 batch_dir_free(struct batch_dir *);
/* The name executor_result.outcome has in a results line, and back (-1). */
const char *batch_outcome_name(enum executor_outcome);
int	 batch_outcome_lookup(const char *);
/* A NULL-ended copy of a NULL-ended string array; free with batch_strv_free. */
char	**batch_strv_dup(char *const *);
void	 batch_strv_free(char **);

#endif
