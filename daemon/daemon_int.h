/*
 * Internals shared by the files of daemon/: the service's own configuration
 * (conf.c), the wake socket and lock beside the store (wake.c), and the one
 * way a cfg becomes a queued job (queue.c), used by submit and the spool.
 */
#ifndef AUTOSCHED_DAEMON_INT_H
#define AUTOSCHED_DAEMON_INT_H

#include <stdint.h>
#include <sys/types.h>

#include "cfg/cfg.h"

struct store_job;

#define SERVICE_CONF_DEFAULT	"/etc/autosched/autoschedd.conf"

/* autoschedd.conf, section [autoschedd]. */
struct service_conf {
	char	*path;		/* the file read; NULL when running on defaults */
	char	*database;	/* NULL = the default store */
	char	*spool;		/* a folder watched for cfgs; NULL = none */
	char	*output_dir;	/* the only folder the service writes reports in; NULL = none */
	int	 log_level;	/* syslog priority: LOG_ERR … LOG_DEBUG */
	int	*cpus;		/* CPUs measurements are pinned to; NULL = the engine's default */
	int	 ncpus;
	int	 compile_nice;	/* niceness added to compiles, 0-19 */
	double	 poll;		/* fallback poll when idle, seconds */
	/*
	 * Where jobs measure when their cfg's [Env] does not say (executor,
	 * slurm_*), key by key.
	 */
	struct cfg_exec	 exec;
};

/*
 * Read autoschedd.conf at path. Relative paths in it start from its folder.
 * With missing_ok a file that does not exist gives the defaults. On error -1
 * and *err names file:line: key and what was expected. Caller frees *out with
 * service_conf_free.
 */
int	 service_conf_load(const char *path, int missing_ok,
	    struct service_conf **out, char **err) __attribute__((warn_unused_result));
int	 service_conf_parse(const char *path, const char *text, size_t len,
	    struct service_conf **out, char **err) __attribute__((warn_unused_result));
void	 service_conf_free(struct service_conf *);
/* "err", "warning", "notice", "info", "debug" → syslog priority, or -1. */
int	 service_conf_level(const char *);

/*
 * s escaped for a terminal (util_escape: control characters as \n, \xNN),
 * kept in *slot until the caller frees it (an earlier value is freed
 * first); NULL gives "". Every string from the store a command prints goes
 * through it.
 */
const char *daemon_esc(char **slot, const char *s);

/*
 * The wake socket (DB.wake, a unix datagram socket beside the store): the
 * service binds it and sleeps on it; submit sends one byte to it.
 */
int	 service_wake_open(const char *db, int *fd, char **err)
	    __attribute__((warn_unused_result));
void	 service_wake_drain(int fd);
void	 service_wake_close(const char *db, int fd);
/* Wake the service of db: 1 if one was listening, 0 if none, -1 on error. */
int	 queue_wake(const char *db);

/*
 * The lock (DB.lock, flock'd and holding the pid) that keeps a second
 * service off a store: 0 and *fd held until exit, or -1 with *err naming the
 * holder.
 */
int	 service_lock(const char *db, int *fd, char **err)
	    __attribute__((warn_unused_result));

/*
 * Validate the cfg at cfg_path and its MLIR with run's own validator
 * (job_prepare, for the store at db) and fill *j with a queued job
 * snapshotting both texts as validated (cfg_path made absolute). Warnings of
 * the cfg reader go to warn (may be NULL). On bad input -1 and *err says
 * why. The caller clears *j (store_job_clear).
 */
int	 queue_snapshot(const char *cfg_path, const char *db, int priority,
	    struct store_job *j, void (*warn)(const char *, void *), void *arg,
	    char **err) __attribute__((warn_unused_result));
/*
 * The same for the spool: the cfg's text as already read (named cfg_path,
 * whose folder relative paths start from), checked on behalf of the account
 * reader: its input must be readable by reader (by the file's mode bits)
 * before the service reads it, so no error echoes what reader may not see.
 */
int	 queue_snapshot_as(const char *cfg_path, const char *text, size_t len,
	    uid_t reader, const char *db, int priority, struct store_job *j,
	    void (*warn)(const char *, void *), void *arg, char **err)
	    __attribute__((warn_unused_result));
/*
 * 1 if the account uid may read path by its mode bits, and reach it (search
 * permission on every folder of its real path); root: always.
 */
int	 queue_may_read(const char *path, uid_t uid);

struct store;
/*
 * A command's store opened read-only: db must exist ("PREFIX: DB: no such
 * store") and open ("PREFIX: why"). 0, or -1 with the message printed.
 */
int	cli_store_open(const char *prefix, const char *db, struct store **st);

#endif
