/*
 * The folder a staged round of measurements travels in (executor batch):
 * a manifest (a header line, then one JSON line per measurement naming its
 * harness, arguments, environment, deadline and files with their sha256),
 * the files, and the results the measuring host writes beside them (one
 * line per entry, then an end line; written whole, atomically). Read and
 * checked line by line on both sides of the trip; run here by
 * autosched-measure --batch and autosched-gpu-measure --batch.
 */
#ifndef AUTOSCHED_MEASURE_BATCH_H
#define AUTOSCHED_MEASURE_BATCH_H

#include <stddef.h>
#include <stdint.h>

#define MEASURE_BATCH_VERSION	1
#define MEASURE_BATCH_MANIFEST	"manifest"
#define MEASURE_BATCH_RESULTS	"results"
#define MEASURE_BATCH_FILE_MAX	((size_t)256 << 20)	/* a kernel, a manifest */
#define MEASURE_BATCH_ENTRIES_MAX 100000
#define MEASURE_BATCH_ARGS_MAX	64
#define MEASURE_BATCH_HOST_MAX	64

/* How an entry's run ended (the executors' outcomes, in their order). */
enum measure_batch_outcome {
	MEASURE_BATCH_EXITED = 0,
	MEASURE_BATCH_SIGNALED,
	MEASURE_BATCH_TIMEOUT,
	MEASURE_BATCH_ENV_FAILED,
	MEASURE_BATCH_CANCELLED,
};

/* One measurement of a staged round; strings owned by the folder. */
struct measure_batch_entry {
	int64_t		 id;		/* 1… in manifest order */
	int		 line;		/* its manifest line */
	char		 sha[65];	/* sha256 of that line */
	char		*tag;		/* the job's name for it, "#call" added */
	char		*op;		/* what is measured */
	char		*harness;	/* "mlir-cpu" or "gpu" */
	char		**argv;		/* after the program, "@/NAME" for the folder's files */
	char		**env;		/* NULL-ended */
	int		 threads;
	double		 timeout;
	/* Its result, when read with results (have) or once run here. */
	int		 have;
	int		 rline;		/* its results line */
	enum measure_batch_outcome outcome;
	int		 status, signal;
	double		 seconds;
	char		*out, *err, *why;	/* why: NULL unless env_failed */
	char		 host[MEASURE_BATCH_HOST_MAX];
	int		 served;	/* the reader's own flag (executor batch) */
};

struct measure_batch {
	char			*dir;
	char			*manifest;	/* DIR/manifest */
	char			 msha[65];	/* its sha256 */
	int64_t			 job;		/* the job it was staged for */
	char			*cfg;		/* that job's cfg, by its real path */
	struct measure_batch_entry *v;
	size_t			 n;
};

/*
 * Read DIR's manifest (every entry's environment, arguments and files
 * checked, each file's sha256 too) and, with results, DIR/results (one
 * whole line per entry, made for this manifest, of its op, none twice, the
 * end line last). 0 and *out (free with measure_batch_free), or -1 with
 * *err naming the file and the line.
 */
int	 measure_batch_read(const char *dir, int results,
	    struct measure_batch **out, char **err)
	    __attribute__((warn_unused_result));
void	 measure_batch_free(struct measure_batch *);

/* "exited", "signaled", "timeout", "env_failed", "cancelled"; -1 if unknown. */
const char *measure_batch_outcome_name(enum measure_batch_outcome);
int	 measure_batch_outcome_lookup(const char *);

/* A NULL-ended copy of a NULL-ended string array, and its free. */
char	**measure_batch_strv_dup(char *const *);
void	 measure_batch_strv_free(char **);

/*
 * --batch DIR: run every entry of DIR's manifest here, each with its
 * deadline, by its harness (self when self is that program, else the one
 * beside it, in the build tree or on PATH), and write DIR/results whole.
 * 0, or -1 with *err when the folder is bad or the results cannot be
 * written.
 */
int	 measure_batch_run(const char *dir, const char *self, char **err)
	    __attribute__((warn_unused_result));
/*
 * A harness's --batch DIR: measure_batch_run with this very program as
 * self, what went wrong on stderr after "prog: ". The exit code: 0, or 2.
 */
int	 measure_batch_main(const char *prog, const char *dir);

#endif
