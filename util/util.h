/*
 * Small helpers every module uses: allocation that never returns NULL,
 * formatted strings, bounded file reading, hashing, clocks, child processes.
 */
#ifndef AUTOSCHED_UTIL_H
#define AUTOSCHED_UTIL_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
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
/* The same from the open file fd (named path in messages), which it closes. */
int	 util_read_fd(int fd, const char *path, size_t max, char **buf,
	    size_t *len, char **err) WUR;
/*
 * Write a whole file atomically through util_out (a mkostemp temporary
 * beside it, fsync, rename): a symlink, device, FIFO, socket or folder at
 * path is refused, an existing regular file replaced. For work files in
 * folders of our own; outputs a user names go through util_out_write with
 * a guard. 0 or -1 with *err.
 */
int	 util_write_file(const char *path, const char *buf, size_t len,
	    char **err) WUR;
/*
 * The one writer of output files (out.c). What may be at the target:
 * nothing, or a regular file autosched wrote (it starts with one of magic[],
 * or holds marker somewhere); never a symlink, device, FIFO, socket or
 * folder, never a store or its -wal/-shm/-journal, never one of inputs[].
 * Messages read "WHERE: KEY: PATH ...; expected ..." (WHERE omitted when
 * NULL). All strings are borrowed.
 */
#define UTIL_OUT_STORES	4
#define UTIL_OUT_INPUTS	8
#define UTIL_OUT_MAGICS	4
struct util_out_input {
	const char	*path;		/* NULL = unused slot */
	const char	*what;		/* "the input MLIR", "the cfg itself" */
};
struct util_out_guard {
	const char	*where;		/* message prefix (the cfg's path), or NULL */
	const char	*key;		/* option or key naming the file: "-o", "[Env] report_file" */
	const char	*what;		/* what is written: "the CSV report" */
	const char	*stores[UTIL_OUT_STORES];	/* SQLite stores; NULL slots skipped */
	struct util_out_input inputs[UTIL_OUT_INPUTS];
	const char	*magic[UTIL_OUT_MAGICS];	/* first bytes of our own files; NULL slots skipped */
	const char	*marker;	/* or a string anywhere in them (a built .so), or NULL */
	unsigned	 mode;		/* the file's mode; 0 = 0644 */
};

/*
 * 0 if path may be written under g (nothing is written), -1 with *err
 * naming the file, the key and what was expected. g NULL: only the kind
 * of file is checked (a regular file or nothing).
 */
int	 util_out_check(const char *path, const struct util_out_guard *g,
	    char **err) WUR;

/*
 * A file being written: util_out_open checks path (util_out_check) and
 * creates a temporary with an unpredictable name in path's folder;
 * util_out_file is the stream to write (borrowed); util_out_commit checks
 * every write, fsyncs, closes, checks path again and renames over it;
 * util_out_abort unlinks the temporary. Commit and abort free the handle.
 * g is borrowed until then.
 */
struct util_out;
int	 util_out_open(const char *path, const struct util_out_guard *g,
	    struct util_out **out, char **err) WUR;
FILE	*util_out_file(struct util_out *);
int	 util_out_commit(struct util_out *, char **err) WUR;
void	 util_out_abort(struct util_out *);
/* util_out_open + one write + util_out_commit. 0 or -1 with *err. */
int	 util_out_write(const char *path, const char *buf, size_t len,
	    const struct util_out_guard *g, char **err) WUR;
/*
 * 1 if a and b name the same file: the same inode when both exist, else
 * the same real folder and the same last name (a file still to be made).
 */
int	 util_same_path(const char *a, const char *b);
/*
 * Flush and close stdout at the end of a command: 0, or -1 after printing
 * "autosched: stdout: ERROR" when a write to it failed (exit 1 then).
 */
int	 util_stdout_close(void);
/*
 * Write s to stdout, keeping the first write error for util_stdout_close
 * (a large text fills the buffer: the error comes before the close, and
 * with it the errno that says why). 0 or -1.
 */
int	 util_stdout_put(const char *s);
/*
 * Close f, a stream open_memstream(3) opened on *buf: 0 with the text moved
 * to *text (caller frees; *buf NULL), or -1 with *err ("writing WHAT
 * failed") when a write failed, *buf then still the caller's to free.
 */
int	 util_memstream_close(FILE *f, char **buf, char **text,
	    const char *what, char **err) WUR;

/* Create a folder and its parents (mode 0755). 0 or -1 with *err. */
int	 util_mkdirs(const char *path, char **err) WUR;
/*
 * 0 if path is this process's to trust with code it will run: not a
 * symbolic link, a folder (dir 1) or a regular file (dir 0), owned by the
 * effective uid and writable by no one else (no group or other write bit).
 * Else -1 with what is wrong in why (len bytes).
 */
int	 util_trusted(const char *path, int dir, char *why, size_t len) WUR;

/*
 * Where programs are taken from (util/program.c): a folder that is
 * absolute, a folder (after symbolic links), owned by root or the effective
 * uid and writable by no one else. util_program_dir_ok: 0, or -1 with why.
 * util_program_ok: path is an executable file that, and the file its links
 * lead to, pass the same rule, in folders that pass it.
 */
int	 util_program_dir_ok(const char *dir, char *why, size_t len) WUR;
int	 util_program_ok(const char *path, char *why, size_t len) WUR;
/*
 * The first PATH entry dir/name that util_program_ok accepts; one that
 * holds name but is refused is skipped with a warning on stderr naming
 * why. NULL if none (or name has a '/'). Caller frees.
 */
char	*util_program_find(const char *name);

/*
 * A job (or other row) id: a decimal number from 1 to 2^63-1 and nothing
 * else ("", "1x", "-3", "18446744073709551616" are not). 0 or -1.
 */
int	 util_parse_id(const char *s, int64_t *id) WUR;

/*
 * A command's options as data (tmux's cmd_table, curl's option table): one
 * row per option, parsed by util_opts_parse. Every row's value lands at off in
 * the caller's args struct; what a bad value gets is one line,
 * "PREFIX: --NAME VALUE: EXPECT".
 */
enum opt_kind {
	OPT_FLAG,	/* no argument: the int at off becomes val */
	OPT_UNSET,	/* no argument: the const char * at off becomes NULL */
	OPT_STRING,	/* const char * at off: borrowed from argv */
	OPT_PATH,	/* char * at off: a copy (the earlier one freed); caller frees */
	OPT_JOB,	/* int64_t at off: a job id (util_parse_id) */
	OPT_INT,	/* int at off: a decimal number in [min, max] */
	OPT_LONG,	/* long at off: a decimal number in [min, max] */
	OPT_REAL,	/* double at off: a number in [min, max] */
	OPT_WORD,	/* const char * at off: the one of words given */
	OPT_CHOICE,	/* int at off: vals[i] for the words[i] given */
	OPT_FN		/* fn(args, the row, value or NULL): 0, or -1 after its message */
};

struct opt_spec {
	const char	*name;		/* the long name, without "--", or
					   NULL: the letter only */
	int		 letter;	/* the short one, or 0 */
	enum opt_kind	 kind;
	size_t		 off;		/* offsetof the value in args */
	const char	*expect;	/* the message's words: "expected ..." */
	const char *const *words;	/* OPT_WORD, OPT_CHOICE: NULL-ended */
	const int	*vals;		/* OPT_CHOICE: NULL = the index */
	double		 min, max;	/* OPT_INT, OPT_LONG, OPT_REAL */
	int		 val;		/* OPT_FLAG; OPT_FN: for fn to tell rows apart */
	int		 has_arg;	/* OPT_FN: takes a value */
	size_t		 given;		/* offsetof an int set to 1 when given; 0: none */
	int		(*fn)(void *, const struct opt_spec *, const char *);
					/* OPT_FN */
};

/* struct opts_cmd's flags. */
#define OPTS_HELP_IS_USAGE	0x1	/* -h, --help: the usage on stderr, 2 */
#define OPTS_OWN_WORDS		0x2	/* bad usage said as "PREFIX: unknown
					   option X", "X needs a value",
					   "unexpected argument X", "missing
					   argument", not getopt_long's words */

/* A command: how it names itself in messages, its options, its usage. */
struct opts_cmd {
	const char		*prefix;	/* "autosched best" */
	const struct opt_spec	*opts;		/* ended by a row with neither
						   name nor letter */
	void			(*usage)(FILE *);
	int			 min_args, max_args;	/* operands; max -1: unchecked */
	int			 flags;		/* OPTS_* */
};

/*
 * Parse argv (argv[0] the command's name) by c's table into args, with
 * --help and -h added. 0 and *first the index of the first operand; 1 after
 * the usage on stdout (--help; OPTS_HELP_IS_USAGE: 2 after it on stderr);
 * 2 after the one-line message of a bad value, or after the usage on stderr
 * (an unknown option, getopt_long's words or OPTS_OWN_WORDS' first; operands
 * out of [min_args, max_args]). Strings are borrowed from argv.
 */
int	 util_opts_parse(const struct opts_cmd *c, int argc, char **argv,
	    void *args, int *first) WUR;

/* dir/name unless name is absolute. Caller frees. */
char	*util_path_join(const char *dir, const char *name);
/* The folder part of path ("." when none). Caller frees. */
char	*util_dirname(const char *path);

/* FNV-1a 64-bit hash of a buffer, and its 16-hex-digit form in out[17]. */
uint64_t util_hash64(const void *, size_t);
void	 util_hash_hex(const void *, size_t, char out[17]);
/*
 * SHA-256 of a buffer, or of a file of at most max bytes, as 64 hex digits
 * in out[65] (sha256.c). The file's: 0, or -1 with *err.
 */
void	 util_sha256_hex(const void *, size_t, char out[65]);
int	 util_sha256_file(const char *path, size_t max, char out[65],
	    char **err) WUR;

/* Seconds: monotonic clock, and wall clock since the epoch. */
double	 util_now(void);
double	 util_wall(void);

/* Levenshtein distance, for "did you mean" suggestions. */
size_t	 util_edit_distance(const char *, const char *);
/* The index of name in names[0..n) (a NULL entry ends them sooner); -1 if none. */
int	 util_name_index(const char *const *names, size_t n, const char *name);

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
/*
 * 0 if the open file fd (at path) may serve as a lock file we write our pid
 * in: a regular file with one name, empty or holding a process id. Else -1
 * with *err naming path and what was expected.
 */
int	 util_lock_file_check(int fd, const char *path, const char *what,
	    char **err) WUR;
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

/*
 * The one way the CLI and the service catch their stop signals: fn (which
 * only sets flags) for each of sigs[0..n-1], with no mask. With keep_ignored
 * a signal ignored when we started (nohup, a background job) stays ignored.
 * The handlers before go to old (n of them) when old is not NULL, for
 * util_signals_restore.
 */
void	 util_signals_catch(const int *sigs, size_t n, void (*fn)(int),
	    int keep_ignored, struct sigaction *old);
void	 util_signals_restore(const int *sigs, size_t n,
	    const struct sigaction *old);

#endif
