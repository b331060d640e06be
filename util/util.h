/*
 * Small helpers every module uses: allocation that never returns NULL,
 * formatted strings, bounded file reading, hashing, clocks, child processes.
 */
#ifndef AUTOSCHED_UTIL_H
#define AUTOSCHED_UTIL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define WUR __attribute__((warn_unused_result))
#define PRINTFLIKE(f, a) __attribute__((format(printf, f, a)))

/* Allocation: abort with a message on exhaustion. Caller frees. */
void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xrealloc(void *, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);
char	*xasprintf(const char *, ...) PRINTFLIKE(1, 2);

/* Set *err (if err is not NULL) to a formatted message; frees any old one. */
void	 util_seterr(char **err, const char *, ...) PRINTFLIKE(2, 3);

/*
 * Read a whole file, at most max bytes. Returns 0 and a NUL-terminated buffer
 * the caller frees (*len gets its length), or -1 with *err set.
 */
int	 util_read_file(const char *path, size_t max, char **buf, size_t *len,
	    char **err) WUR;
/* Write a whole file atomically (temp file + rename). 0 or -1 with *err. */
int	 util_write_file(const char *path, const char *buf, size_t len,
	    char **err) WUR;
/* Create a folder and its parents (mode 0755). 0 or -1 with *err. */
int	 util_mkdirs(const char *path, char **err) WUR;

/* dir/name unless name is absolute. Caller frees. */
char	*util_path_join(const char *dir, const char *name);
/* The folder part of path ("." when none). Caller frees. */
char	*util_dirname(const char *path);

/* FNV-1a 64-bit hash of a buffer, and its 16-hex-digit form in out[17]. */
uint64_t util_hash64(const void *, size_t);
void	 util_hash_hex(const void *, size_t, char out[17]);

/* Seconds: monotonic clock, and wall clock since the epoch. */
double	 util_now(void);
double	 util_wall(void);

/* Levenshtein distance, for "did you mean" suggestions. */
size_t	 util_edit_distance(const char *, const char *);

/* Number of CPUs this process may run on. */
int	 util_ncpus(void);

/*
 * The one CPU-list parser ("0", "0,1", "2-3,6"): every CPU must be one this
 * process may run on, none twice. 0 and a list the caller frees, or -1 with
 * *err saying what is wrong (without the key: the caller prefixes it).
 */
#define UTIL_CPUS_MAX	4096
int	 util_parse_cpus(const char *s, int **cpus, int *n, char **err) WUR;

/* 1 if both paths name the same existing file (device and inode), else 0. */
int	 util_same_file(const char *a, const char *b);

/*
 * An advisory lock (flock) on the file at path, created if missing, holding
 * our pid as a hint. The kernel drops it when the process dies. 0 and *fd to
 * keep open while the lock is wanted, 1 when another process holds it (and
 * wait is 0), -1 with *err.
 */
int	 util_lock(const char *path, int wait, int *fd, char **err) WUR;
/* 1 if some process holds the lock at path, 0 if none (or no such file). */
int	 util_lock_held(const char *path);

/* s with newlines and other control characters escaped (\n, \xNN). Caller frees. */
char	*util_escape(const char *s);

/*
 * Child processes (tmux job.c recipe): signals blocked across fork, the child
 * resets handlers and mask, puts itself in its own process group, optionally
 * pins itself to CPUs and lowers its priority, redirects stdin from /dev/null
 * and stdout/stderr to pipes, closes every other fd, execs argv (never a
 * shell). The parent enforces the timeout by killing the whole process group.
 * The child also dies (SIGKILL) when the thread that started it does, so a
 * parent killed outright leaves no orphan.
 */
struct proc_opts {
	double		 timeout;	/* seconds; 0 = none */
	const int	*cpus;		/* CPUs to pin to, or NULL */
	int		 ncpus;
	int		 nice;		/* added niceness, 0 = unchanged */
	const char	*cwd;		/* working folder, or NULL */
	char *const	*env;		/* extra NAME=VALUE strings, NULL-ended, or NULL */
	size_t		 out_max;	/* cap on captured stdout/stderr bytes each (default 1 MiB) */
	/*
	 * A flag a signal handler sets, or NULL: when set the child is not
	 * started (-1, "interrupted"), or its group is killed if it runs.
	 * Checked with signals blocked, so a signal never slips in between.
	 */
	const volatile sig_atomic_t *stop;
};

struct proc_result {
	int		 exited;	/* 1 if the child exited normally */
	int		 status;	/* exit status when exited */
	int		 signal;	/* terminating signal, when not exited */
	int		 timed_out;	/* 1 if we killed it for the timeout */
	int		 exec_failed;	/* 1 if argv[0] could not be run */
	int		 stopped;	/* 1 if we killed it because *stop was set */
	double		 seconds;	/* wall time */
	char		*out;		/* captured stdout, NUL-terminated; caller frees */
	char		*err;		/* captured stderr, NUL-terminated; caller frees */
};

/*
 * Run argv to completion. Returns 0 once the child has been reaped (whatever
 * its outcome, which is in *res), or -1 with *err set if it could not be
 * started at all (or *opts->stop was set). proc_result_free releases the
 * captured output.
 */
int	 proc_run(char *const argv[], const struct proc_opts *,
	    struct proc_result *res, char **err) WUR;
void	 proc_result_free(struct proc_result *);
/* Kill the process groups of the children proc_run runs now, on any thread (signal-safe). */
void	 proc_kill_current(void);

#endif
