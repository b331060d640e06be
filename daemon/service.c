/*
 * autoschedd: runs the queued jobs of one store one at a time, highest
 * priority first, with the same engine as `autosched run`. Sleeps on its wake
 * socket and spool folder when idle; signal handlers only set flags.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "cfg/cfg.h"
#include "daemon/daemon.h"
#include "daemon/daemon_int.h"
#include "job/job.h"
#include "store/store.h"
#include "util/util.h"

#define SERVICE_SPOOL_SETTLE	1.0	/* seconds a spooled file must rest */
#define SERVICE_SPOOL_IGNORED	256

static volatile sig_atomic_t service_stop;
static volatile sig_atomic_t service_hup;

struct service {
	char			*conf_path;
	int			 conf_given;	/* -f: must exist */
	struct service_conf	*conf;
	/* The conf the running job points into, and one SIGHUP replaced. */
	const struct service_conf *job_conf;
	struct service_conf	*retired;
	const char		*db_arg;	/* --db */
	char			*db;
	char			*work;		/* the engine's work folder */
	int			 foreground;	/* -d */
	int			 check;		/* -n: check and exit */

	struct store		*st;
	dev_t			 db_dev;	/* the store file served */
	ino_t			 db_ino;
	int			 store_gone;	/* it was deleted or replaced */
	int			 lock_fd;
	int			 wake_fd;

	char			*spool;		/* watched folder, or NULL */
	int			 spool_fd;	/* inotify */
	int			 spool_lock;	/* SPOOL/.autoschedd.lock, or -1 */
	int			 spool_retry;	/* a file was too fresh */
	char			*ignored[SERVICE_SPOOL_IGNORED]; /* unmovable */
	size_t			 nignored;

	int64_t			 job_id;	/* running, 0 when idle */
	uint64_t		 watchdog_usec;
	double			 watchdog_last;
	sigset_t		 sigs;		/* TERM, INT, HUP */
	sigset_t		 oldmask;	/* without them */
};

static void
service_sighandler(int sig)
{
	int saved = errno;

	if (sig == SIGHUP)
		service_hup = 1;
	else {
		__atomic_store_n(&service_stop, 1, __ATOMIC_SEQ_CST);
		/* A measurement may take long: do not wait for it. */
		proc_kill_current();
	}
	errno = saved;
}

static void PRINTFLIKE(1, 2)
service_notify(const char *fmt, ...)
{
#ifdef HAVE_LIBSYSTEMD
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) != -1) {
		sd_notify(0, s);
		free(s);
	}
	va_end(ap);
#else
	(void)fmt;
#endif
}

static void
service_watchdog(struct service *sv, int force)
{
	double now;

	if (sv->watchdog_usec == 0)
		return;
	now = util_now();
	if (force || now - sv->watchdog_last >= sv->watchdog_usec / 4e6) {
		service_notify("WATCHDOG=1");
		sv->watchdog_last = now;
	}
}

static const char *
service_level_name(int prio)
{
	switch (prio) {
	case LOG_EMERG: case LOG_ALERT: case LOG_CRIT: case LOG_ERR:
		return "error";
	case LOG_WARNING:
		return "warning";
	case LOG_DEBUG:
		return "debug";
	default:
		return "info";
	}
}

/*
 * Log a line: "<N>…" for the journal, or plain with -d. With a job_id the
 * line also goes to the job's log in the store.
 */
static void PRINTFLIKE(4, 5)
service_log(struct service *sv, int prio, int64_t job_id, const char *fmt, ...)
{
	va_list ap;
	char *msg, *esc, tbuf[32];
	time_t now;
	struct tm tm;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1) {
		va_end(ap);
		return;
	}
	va_end(ap);
	/* Names come from outside (spooled files): one log line stays one line. */
	esc = util_escape(msg);
	free(msg);
	msg = esc;
	if (job_id != 0 && sv->st != NULL && prio <= LOG_INFO)
		store_log(sv->st, job_id, service_level_name(prio), msg);
	if (sv->conf != NULL && prio > sv->conf->log_level)
		goto out;
	if (sv->foreground) {
		now = time(NULL);
		localtime_r(&now, &tm);
		strftime(tbuf, sizeof tbuf, "%H:%M:%S", &tm);
		fprintf(stderr, "%s autoschedd: %s%s%s\n", tbuf,
		    prio <= LOG_WARNING ? service_level_name(prio) : "",
		    prio <= LOG_WARNING ? ": " : "", msg);
	} else
		fprintf(stderr, "<%d>%s\n", prio, msg);
out:
	free(msg);
}

/*
 * The spool's lease (SPOOL/.autoschedd.lock): two services on one spool
 * would take each other's jobs and measure on the same CPUs at once. 0, or
 * -1 (said in the log) when another service holds it or it cannot be had.
 */
static int
service_spool_lease(struct service *sv, const char *spool)
{
	char *p = util_path_join(spool, ".autoschedd.lock"), *err = NULL;
	char *text = NULL;
	int r;

	if ((r = util_lock(p, 0, &sv->spool_lock, &err)) > 0) {
		if (util_read_file(p, 31, &text, NULL, NULL) == 0)
			text[strspn(text, "0123456789")] = '\0';
		service_log(sv, LOG_WARNING, 0, "spool %s: another autoschedd"
		    " (pid %s) watches it; two services on one spool would take"
		    " each other's jobs and measure on the same CPUs at once:"
		    " not watched by this one (give each service its own spool)",
		    spool, text != NULL && text[0] != '\0' ? text : "?");
		free(text);
	} else if (r < 0) {
		service_log(sv, LOG_ERR, 0, "spool: %s (no spool)", err);
		free(err);
	}
	free(p);
	return r == 0 ? 0 : -1;
}

/* Start, stop or move the watch of the spool folder the conf names. */
static void
service_spool_setup(struct service *sv)
{
	const char *want = sv->conf->spool;
	char *err = NULL, *d;

	if (want != NULL && sv->spool != NULL && strcmp(want, sv->spool) == 0)
		return;
	if (sv->spool_fd != -1)
		close(sv->spool_fd);
	sv->spool_fd = -1;
	if (sv->spool_lock != -1)
		close(sv->spool_lock);
	sv->spool_lock = -1;
	free(sv->spool);
	sv->spool = NULL;
	if (want == NULL)
		return;

	d = util_path_join(want, "done");
	if (util_mkdirs(d, &err) == 0) {
		free(d);
		d = util_path_join(want, "failed");
		if (util_mkdirs(d, &err) != 0)
			goto fail;
	} else
		goto fail;
	free(d);
	d = NULL;
	if (service_spool_lease(sv, want) != 0)
		return;
	sv->spool_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (sv->spool_fd == -1 || inotify_add_watch(sv->spool_fd, want,
	    IN_CLOSE_WRITE | IN_MOVED_TO) == -1) {
		/* The fallback poll still finds what is dropped. */
		service_log(sv, LOG_WARNING, 0, "spool %s: inotify: %s", want,
		    strerror(errno));
	}
	sv->spool = xstrdup(want);
	service_log(sv, LOG_INFO, 0, "spool: watching %s", want);
	return;
fail:
	service_log(sv, LOG_ERR, 0, "spool: %s (no spool)", err);
	free(err);
	free(d);
}

static void
service_spool_drain(struct service *sv)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	if (sv->spool_fd == -1)
		return;
	while (read(sv->spool_fd, buf, sizeof buf) > 0)
		;
}

/* Write path.reason (the reason beside a moved spool file). */
static void
service_spool_reason(struct service *sv, const char *path, const char *reason)
{
	char *rpath = xasprintf("%s.reason", path), *text, *err = NULL;
	struct util_out_guard g;

	/* Never through a link or over a file a spool writer planted there. */
	memset(&g, 0, sizeof g);
	g.key = "the reason file";
	g.what = "the reason of a spooled cfg";
	g.stores[0] = sv->db;
	g.magic[0] = "autosched: ";
	text = xasprintf("autosched: %s\n", reason);
	if (util_out_write(rpath, text, strlen(text), &g, &err) != 0) {
		service_log(sv, LOG_WARNING, 0, "spool: %s", err);
		free(err);
	}
	free(rpath);
	free(text);
}

/*
 * Move path (named name) to spool/sub/ (a fresh name if taken), the reason
 * beside. 0 and *moved (caller frees; may be NULL) the new path, or -1.
 */
static int
service_spool_move(struct service *sv, const char *path, const char *name,
    const char *sub, const char *reason, char **moved)
{
	char *dir = util_path_join(sv->spool, sub), *dst, *src_reason, why[128];
	int i, rc = -1;

	/*
	 * The spool folder may be another account's: it could put a link or a
	 * folder of its own as done/ or failed/. Only ours is written in.
	 */
	if (util_trusted(dir, 1, why, sizeof why) != 0) {
		service_log(sv, LOG_ERR, 0, "spool: %s: not the service's own "
		    "folder (%s): %s left where it is; remove %s and reload",
		    dir, why, name, dir);
		if (sv->nignored < SERVICE_SPOOL_IGNORED)
			sv->ignored[sv->nignored++] = xstrdup(name);
		free(dir);
		return -1;
	}
	dst = util_path_join(dir, name);
	for (i = 1; access(dst, F_OK) == 0 && i < 10000; i++) {
		free(dst);
		dst = xasprintf("%s/%s.%d", dir, name, i);
	}
	/*
	 * The reason first, so that whoever sees the file in sub/ (a script
	 * watching done/) finds its reason beside it.
	 */
	service_spool_reason(sv, dst, reason);
	if (rename(path, dst) != 0) {
		service_log(sv, LOG_ERR, 0, "spool: %s: cannot move to %s: %s",
		    path, dst, strerror(errno));
		src_reason = xasprintf("%s.reason", dst);
		(void)unlink(src_reason);
		free(src_reason);
		/* Never take a file twice. */
		if (unlink(path) != 0 && sv->nignored < SERVICE_SPOOL_IGNORED)
			sv->ignored[sv->nignored++] = xstrdup(name);
		goto out;
	}
	/* A file's reason goes with it: none stays behind where it was. */
	src_reason = xasprintf("%s.reason", path);
	(void)unlink(src_reason);
	free(src_reason);
	if (moved != NULL) {
		*moved = dst;
		dst = NULL;
	}
	rc = 0;
out:
	free(dst);
	free(dir);
	return rc;
}

static void
service_spool_warn(const char *msg, void *arg)
{
	service_log(arg, LOG_WARNING, 0, "spool: %s", msg);
}

/*
 * 1 if the spooled file at path is complete: nobody holds it open for
 * writing (a read lease is granted only then; root or the file's owner may
 * take one). -1 when this cannot be told (the settle time then decides).
 */
static int
service_spool_complete(const char *path)
{
	int fd, rc;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	if (fcntl(fd, F_SETLEASE, F_RDLCK) == 0) {
		(void)fcntl(fd, F_SETLEASE, F_UNLCK);
		rc = 1;
	} else
		rc = errno == EAGAIN || errno == EBUSY ? 0 : -1;
	close(fd);
	return rc;
}

/* 1 if path is inside folder dir (both resolved), else 0. */
static int
service_inside(const char *path, const char *dir)
{
	char *d = util_dirname(path), *rp = realpath(d, NULL),
	    *rd = realpath(dir, NULL);
	size_t n;
	int in = 0;

	if (rp != NULL && rd != NULL) {
		n = strlen(rd);
		in = strncmp(rp, rd, n) == 0 && (rp[n] == '/' || rp[n] == '\0');
	}
	free(d);
	free(rp);
	free(rd);
	return in;
}

/*
 * Where may the service write a job's CSV report? Only inside output_dir;
 * without one, only when it does not run as root (the kernel's permissions
 * bound it then). NULL if allowed, else why not (static text).
 */
static const char *
service_output_refused(struct service *sv, const char *out)
{
	if (sv->conf->output_dir != NULL)
		return service_inside(out, sv->conf->output_dir) ? NULL :
		    "outside the service's output_dir";
	if (geteuid() == 0)
		return "the service runs as root and has no output_dir";
	return NULL;
}

/*
 * Submit one spooled cfg, as `autosched submit` would, on behalf of the
 * file's owner. It is first moved to failed/ (beside a reason saying so):
 * a file that takes the service down is never taken twice.
 */
/*
 * The held spool file read, as checked: a regular file (not followed) of
 * root, the service or the spool folder's owner. 0 and *text (caller
 * frees) and its owner in *sb, or -1 with *err.
 */
static int
service_spool_read(struct service *sv, const char *held, struct stat *sb,
    char **text, size_t *len, char **err)
{
	struct stat dsb;
	int fd;

	/* failed/ is the service's own: what we check is what we read. */
	if ((fd = open(held, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) == -1 ||
	    fstat(fd, sb) != 0 || !S_ISREG(sb->st_mode)) {
		if (fd != -1)
			close(fd);
		*err = xstrdup("not a regular file");
		return -1;
	}
	if (stat(sv->spool, &dsb) != 0)
		dsb.st_uid = 0;
	if (sb->st_uid != 0 && sb->st_uid != geteuid() &&
	    sb->st_uid != dsb.st_uid) {
		close(fd);
		*err = xasprintf("owned by uid %ld, not root, the service or the"
		    " spool folder's owner", (long)sb->st_uid);
		return -1;
	}
	/* What was checked is what is read, whoever renames what meanwhile. */
	return util_read_fd(fd, held, CFG_TEXT_MAX, text, len, err) != 0 ?
	    -1 : 0;
}

/* The spooled cfg's output_file inside output_dir, or none. 0, or -1 with *err. */
static int
service_spool_output(struct service *sv, const char *path, const char *text,
    size_t len, char **err)
{
	struct cfg *cfg = NULL;
	const char *why;
	int rc = 0;

	if (cfg_parse(path, text, len, 0, &cfg, NULL) == 0 &&
	    cfg->output_file != NULL &&
	    (why = service_output_refused(sv, cfg->output_file)) != NULL) {
		*err = xasprintf("%s: [Env] output_file: %s: %s (output_dir = %s);"
		    " expected a report inside output_dir, or none", path,
		    cfg->output_file, why, sv->conf->output_dir ?
		    sv->conf->output_dir : "unset");
		rc = -1;
	}
	cfg_free(cfg);
	return rc;
}

/* The store did not take the job: the file back in place, taken again later. */
static void
service_spool_put_back(struct service *sv, const char *held, const char *path,
    const char *name, const char *err)
{
	char *reason;

	service_log(sv, LOG_ERR, 0, "spool: %s: %s", name, err);
	if (rename(held, path) != 0) {
		service_log(sv, LOG_ERR, 0, "spool: %s: %s", held,
		    strerror(errno));
		return;
	}
	reason = xasprintf("%s.reason", held);
	unlink(reason);
	free(reason);
}

/*
 * Submit one spooled cfg, as `autosched submit` would, on behalf of the
 * file's owner. It is first moved to failed/ (beside a reason saying so):
 * a file that takes the service down is never taken twice.
 */
static void
service_spool_take(struct service *sv, const char *path, const char *name)
{
	struct store_job j;
	struct stat sb;
	char *err = NULL, *reason, *held = NULL, *text = NULL;
	size_t len;
	int64_t id;

	memset(&j, 0, sizeof j);
	if (lstat(path, &sb) != 0)
		return;
	if (!S_ISREG(sb.st_mode)) {
		service_log(sv, LOG_WARNING, 0, "spool: %s: refused: %s", name,
		    S_ISLNK(sb.st_mode) ? "a symbolic link" : "not a regular file");
		service_spool_move(sv, path, name, "failed", S_ISLNK(sb.st_mode) ?
		    "refused: a symbolic link (drop the cfg itself)" :
		    "refused: not a regular file", NULL);
		return;
	}
	if (service_spool_move(sv, path, name, "failed", "taken; the service"
	    " stopped while reading it (it is never taken again)", &held) != 0)
		return;
	/* Named as dropped: relative paths start from the spool folder. */
	if (service_spool_read(sv, held, &sb, &text, &len, &err) != 0 ||
	    queue_snapshot_as(path, text, len, sb.st_uid, sv->db, 0, &j,
	    service_spool_warn, sv, &err) != 0 ||
	    service_spool_output(sv, path, text, len, &err) != 0) {
		service_log(sv, LOG_WARNING, 0, "spool: %s: refused: %s", name,
		    err);
		reason = xasprintf("refused: %s", err);
		service_spool_reason(sv, held, reason);
		free(reason);
		goto out;
	}
	if ((id = store_job_add(sv->st, &j, &err)) < 0) {
		service_spool_put_back(sv, held, path, name, err);
		goto out;
	}
	service_log(sv, LOG_INFO, id, "spool: %s: queued as job %lld", name,
	    (long long)id);
	reason = xasprintf("queued as job %lld", (long long)id);
	service_spool_move(sv, held, strrchr(held, '/') + 1, "done", reason,
	    NULL);
	free(reason);
out:
	store_job_clear(&j);
	free(held);
	free(text);
	free(err);
}

/* Take every *.cfg in the spool that has been left alone for a moment. */
static void
service_spool_scan(struct service *sv)
{
	struct dirent *de;
	struct stat sb;
	DIR *d;
	size_t len, i;
	double now, mtime;

	if (sv->spool == NULL)
		return;
	service_spool_drain(sv);
	sv->spool_retry = 0;
	if ((d = opendir(sv->spool)) == NULL) {
		service_log(sv, LOG_ERR, 0, "spool: %s: %s", sv->spool,
		    strerror(errno));
		return;
	}
	now = util_wall();
	while ((de = readdir(d)) != NULL) {
		char *path;

		len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len < 5 ||
		    strcmp(de->d_name + len - 4, ".cfg") != 0)
			continue;
		for (i = 0; i < sv->nignored; i++) {
			if (strcmp(sv->ignored[i], de->d_name) == 0)
				break;
		}
		if (i < sv->nignored)
			continue;
		path = util_path_join(sv->spool, de->d_name);
		if (lstat(path, &sb) != 0) {
			free(path);
			continue;
		}
		/*
		 * Still being written, perhaps: look again soon. Complete means
		 * nobody holds it open for writing, and unchanged for a moment.
		 */
		mtime = (double)sb.st_mtim.tv_sec + sb.st_mtim.tv_nsec / 1e9;
		if (S_ISREG(sb.st_mode) && (now - mtime < SERVICE_SPOOL_SETTLE ||
		    service_spool_complete(path) == 0)) {
			sv->spool_retry = 1;
			free(path);
			continue;
		}
		service_spool_take(sv, path, de->d_name);
		free(path);
	}
	closedir(d);
}

/* SIGHUP: read the configuration again; keep the old one if the new is bad. */
static void
service_reload(struct service *sv)
{
	struct service_conf *c, *old;
	const char *a, *b;
	char *err = NULL;

	if (service_conf_load(sv->conf_path, !sv->conf_given, &c, &err) != 0) {
		service_log(sv, LOG_ERR, 0, "reload: %s (keeping the running"
		    " configuration)", err);
		free(err);
		return;
	}
	a = c->database;
	b = sv->conf->database;
	if (sv->db_arg == NULL && ((a == NULL) != (b == NULL) ||
	    (a != NULL && strcmp(a, b) != 0)))
		service_log(sv, LOG_WARNING, 0, "reload: database: a new"
		    " path takes effect at the next start (serving %s)", sv->db);
	old = sv->conf;
	sv->conf = c;
	if (old == sv->job_conf) {
		service_conf_free(sv->retired);
		sv->retired = old;
	} else
		service_conf_free(old);
	service_spool_setup(sv);
	service_log(sv, LOG_INFO, 0, "reload: configuration %s read",
	    sv->conf_path);
}

/*
 * After each trial of a job: status for systemd, and what must not wait
 * for the job's end (SIGHUP, spooled cfgs).
 */
static void
service_progress(const char *line, void *arg)
{
	struct service *sv = arg;
	struct pollfd pfd;

	service_log(sv, LOG_DEBUG, 0, "job %lld: %s", (long long)sv->job_id,
	    line);
	service_notify("STATUS=job %lld: %s", (long long)sv->job_id, line);
	service_watchdog(sv, 0);
	if (sv->wake_fd != -1)
		service_wake_drain(sv->wake_fd);
	if (service_hup) {
		service_hup = 0;
		service_reload(sv);
	}
	if (sv->spool_fd != -1) {
		pfd.fd = sv->spool_fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 0) == 1 || sv->spool_retry)
			service_spool_scan(sv);
	}
}

/* The cfg of a job wants a CSV report: keep it only if we may write there. */
static void
service_job_output(struct service *sv, int64_t id, struct cfg *cfg)
{
	char *dir;

	const char *why;

	if (cfg->output_file == NULL)
		return;
	if ((why = service_output_refused(sv, cfg->output_file)) != NULL) {
		service_log(sv, LOG_WARNING, id, "output_file %s: %s: no CSV"
		    " report; the results are in the store", cfg->output_file,
		    why);
		free(cfg->output_file);
		cfg->output_file = NULL;
		return;
	}
	dir = util_dirname(cfg->output_file);
	if (access(dir, W_OK) != 0) {
		service_log(sv, LOG_WARNING, id, "output_file %s: the service"
		    " cannot write there (%s): no CSV report; the results are"
		    " in the store", cfg->output_file, strerror(errno));
		free(cfg->output_file);
		cfg->output_file = NULL;
	}
	free(dir);
}

/*
 * The claimed job's row checked and its cfg read back with the submitted
 * job's rules (keys a submitted job may not set dropped, logged). 0, or -1
 * with *err.
 */
static int
service_job_cfg(struct service *sv, const struct store_job *j,
    struct cfg **cfg, char **err)
{
	const char *path = j->cfg_path ? j->cfg_path : "job.cfg";

	/* The row is input too: snapshots present, counts in range. */
	if (store_job_check(sv->st, j, err) != 0)
		return -1;
	/* With the submitted-job rules, every time: the store is input. */
	if (cfg_parse(path, j->cfg_text, strlen(j->cfg_text), CFG_STORED, cfg,
	    err) != 0)
		return -1;
	/* Queued before submit refused them, or written into the store. */
	if ((*cfg)->service_key != NULL) {
		int line = (*cfg)->service_key_line;
		const char *key = cfg_drop_submitted(*cfg);

		service_log(sv, LOG_WARNING, j->id, "job %lld: %s:%d: [Env] %s:"
		    " %s: ignored, with every key a submitted job may not set"
		    " (executor, slurm_*, compile_jobs, ops_at_once, iree_bin,"
		    " replay_db)", (long long)j->id, path, line, key,
		    cfg_submitted_why(key));
	}
	return 0;
}

/*
 * The engine's options for job j: the service's store, work folder, CPUs
 * and executor; *cpus and *report hold what the caller frees.
 */
static void
service_job_opts(struct service *sv, const struct store_job *j,
    const struct cfg *cfg, struct job_opts *opts, int **cpus, char **report)
{
	memset(opts, 0, sizeof *opts);
	opts->quiet = 1;
	opts->job_id = j->id;
	opts->mlir_text = j->mlir_text;
	opts->work_dir = sv->work;
	opts->db = sv->db;
	if (sv->conf->cpus != NULL) {
		opts->cpus = sv->conf->cpus;
		opts->ncpus = sv->conf->ncpus;
	} else {
		*cpus = job_default_cpus(cfg, &opts->ncpus);
		opts->cpus = *cpus;
	}
	opts->compile_nice = sv->conf->compile_nice;
	opts->exec_default = &sv->conf->exec;
	/* report_file: the service writes it beside its store, named by job. */
	if (cfg->report_file != NULL) {
		char *dir = util_dirname(sv->db);

		*report = xasprintf("%s/job-%lld.html", dir, (long long)j->id);
		free(dir);
		opts->report_path = *report;
	}
	opts->stop = &service_stop;
	opts->progress = service_progress;
	opts->progress_arg = sv;
}

/* The state a job's outcome leaves it in (logged). */
static const char *
service_job_state(struct service *sv, int64_t id, enum job_outcome outcome,
    const char *err)
{
	switch (outcome) {
	case JOB_OK:
		service_log(sv, LOG_INFO, 0, "job %lld: done", (long long)id);
		return "done";
	case JOB_NOTHING:
		service_log(sv, LOG_WARNING, 0, "job %lld: done, but nothing"
		    " valid found for some op", (long long)id);
		return "done";
	case JOB_STOPPED:
		if (store_job_cancel_requested(sv->st, id) == 1) {
			service_log(sv, LOG_INFO, 0, "job %lld: cancelled",
			    (long long)id);
			return "cancelled";
		}
		/* Stopped by SIGTERM: resumed at the next start. */
		service_log(sv, LOG_INFO, 0, "job %lld: stopped, back in the"
		    " queue", (long long)id);
		return "queued";
	default:
		service_log(sv, LOG_ERR, 0, "job %lld: failed: %s",
		    (long long)id, err ? err : "unknown error");
		return "failed";
	}
}

/* Claim the next job and run it: 1 ran one, 0 queue empty, -1 store error. */
static int
service_run_one(struct service *sv)
{
	struct store_job j;
	struct job_opts opts;
	struct cfg *cfg = NULL;
	enum job_outcome outcome;
	const char *state;
	char *err = NULL, *serr = NULL, *report = NULL;
	int *cpus = NULL, rc;

	memset(&j, 0, sizeof j);
	if ((rc = store_job_claim(sv->st, &j, &err)) != 1) {
		if (rc < 0)
			service_log(sv, LOG_ERR, 0, "claim: %s", err);
		goto out;
	}
	sv->job_id = j.id;
	sv->job_conf = sv->conf;
	service_log(sv, LOG_INFO, j.id, "job %lld: %s %s (%lld of %lld"
	    " trials done)", (long long)j.id, j.trials_done > 0 ? "resuming" :
	    "starting", j.cfg_path ? j.cfg_path : "", (long long)j.trials_done,
	    (long long)j.n_trial);
	service_notify("STATUS=job %lld: starting", (long long)j.id);
	if (service_job_cfg(sv, &j, &cfg, &err) != 0) {
		service_log(sv, LOG_ERR, j.id, "job %lld: %s", (long long)j.id,
		    err);
		state = "failed";
		goto done;
	}
	service_job_output(sv, j.id, cfg);
	service_job_opts(sv, &j, cfg, &opts, &cpus, &report);
	/* Signals reach the handler while the job runs: it kills the child. */
	sigprocmask(SIG_SETMASK, &sv->oldmask, NULL);
	outcome = job_run(cfg, sv->st, &opts, &err);
	sigprocmask(SIG_BLOCK, &sv->sigs, NULL);
	state = service_job_state(sv, j.id, outcome, err);
	/* The engine sets the job's state; we mend one left running. */
	store_job_clear(&j);
	if (store_job_get(sv->st, opts.job_id, &j, &serr) == 1 &&
	    strcmp(j.state, "running") != 0)
		goto idle;
done:
	if (store_job_set_state(sv->st, sv->job_id, state,
	    strcmp(state, "queued") != 0 ? err : NULL, &serr) != 0)
		service_log(sv, LOG_ERR, 0, "job %lld: %s",
		    (long long)sv->job_id, serr);
idle:
	sv->job_id = 0;
	sv->job_conf = NULL;
	service_conf_free(sv->retired);
	sv->retired = NULL;
	service_notify("STATUS=idle");
	rc = 1;
out:
	cfg_free(cfg);
	store_job_clear(&j);
	free(cpus);
	free(report);
	free(serr);
	free(err);
	return rc;
}

/* Sleep until a wake-up, a spool event, a signal or the fallback poll. */
static void
service_wait(struct service *sv)
{
	struct pollfd pfd[2];
	struct timespec ts;
	double timeout = sv->conf->poll;
	nfds_t n = 0;

	if (sv->spool_retry && timeout > SERVICE_SPOOL_SETTLE)
		timeout = SERVICE_SPOOL_SETTLE;
	if (sv->watchdog_usec != 0 && timeout > sv->watchdog_usec / 2e6)
		timeout = sv->watchdog_usec / 2e6;
	if (sv->wake_fd != -1) {
		pfd[n].fd = sv->wake_fd;
		pfd[n++].events = POLLIN;
	}
	if (sv->spool_fd != -1) {
		pfd[n].fd = sv->spool_fd;
		pfd[n++].events = POLLIN;
	}
	ts.tv_sec = (time_t)timeout;
	ts.tv_nsec = (long)((timeout - (double)ts.tv_sec) * 1e9);
	/* The signals are blocked until ppoll atomically lets them in. */
	if (service_stop || service_hup)
		return;
	if (ppoll(pfd, n, &ts, &sv->oldmask) == -1 && errno != EINTR)
		service_log(sv, LOG_ERR, 0, "ppoll: %s", strerror(errno));
	if (sv->wake_fd != -1)
		service_wake_drain(sv->wake_fd);
	service_watchdog(sv, 0);
}

/*
 * Jobs left "running" whose runner is dead (nobody holds their lease): back
 * in the queue, or cancelled when a cancel was asked. A job a live
 * `autosched run` holds is left alone. The count requeued, or -1.
 */
static int
service_requeue(struct service *sv, char **err)
{
	struct store_job *jobs = NULL;
	size_t n = 0, i;
	int count = 0;

	if (store_job_list(sv->st, &jobs, &n, err) != 0)
		return -1;
	for (i = 0; i < n; i++) {
		const struct store_job *j = &jobs[i];

		if (strcmp(j->state, "running") != 0 ||
		    job_runner_alive(sv->db, j->id))
			continue;
		if (store_job_set_state(sv->st, j->id, j->cancel_requested ?
		    "cancelled" : "queued", NULL, err) != 0) {
			count = -1;
			break;
		}
		if (!j->cancel_requested)
			count++;
	}
	for (i = 0; i < n; i++)
		store_job_clear(&jobs[i]);
	free(jobs);
	return count;
}

/* 1 once the store file served is no longer the one opened. */
static int
service_store_gone(struct service *sv)
{
	struct stat sb;

	if (!sv->store_gone && (stat(sv->db, &sb) != 0 ||
	    sb.st_dev != sv->db_dev || sb.st_ino != sv->db_ino))
		sv->store_gone = 1;
	return sv->store_gone;
}

/* The store: --db, the conf's, systemd's StateDirectory, the default. */
static char *
service_db_path(struct service *sv)
{
	const char *state = getenv("STATE_DIRECTORY");
	char *first, *p;

	if (sv->db_arg != NULL)
		return xstrdup(sv->db_arg);
	if (sv->conf->database != NULL)
		return xstrdup(sv->conf->database);
	if (state != NULL && *state != '\0') {
		first = xstrdup(state);
		if ((p = strchr(first, ':')) != NULL)
			*p = '\0';
		p = util_path_join(first, "autosched.db");
		free(first);
		return p;
	}
	return daemon_default_db();
}

static void
service_usage(FILE *f)
{
	fprintf(f, "usage: autoschedd [-dn] [-f CONF] [--db PATH]\n");
}

static const struct opt_spec service_opts[] = {
	{ .letter = 'd', .kind = OPT_FLAG, .val = 1,
	  .off = offsetof(struct service, foreground) },
	{ .letter = 'n', .kind = OPT_FLAG, .val = 1,
	  .off = offsetof(struct service, check) },
	{ .letter = 'f', .kind = OPT_PATH,
	  .off = offsetof(struct service, conf_path),
	  .given = offsetof(struct service, conf_given) },
	{ .name = "db", .kind = OPT_STRING,
	  .off = offsetof(struct service, db_arg) },
	{ .name = NULL }
};

/* -h and --help are bad usage here: the usage line, exit 2. */
static const struct opts_cmd service_cmd = {
	"autoschedd", service_opts, service_usage, 0, 0, OPTS_HELP_IS_USAGE
};

/*
 * autoschedd -n: the configuration read (by the caller) and the store,
 * part of it, checked when it exists. The exit code.
 */
static int
service_check_only(struct service *sv, char **err)
{
	if (sv->conf->path == NULL)
		fprintf(stderr, "autoschedd: %s: not found, the defaults apply\n",
		    sv->conf_path);
	/* The store is part of the configuration: a corrupt one is reported. */
	sv->db = service_db_path(sv);
	if (access(sv->db, F_OK) == 0) {
		if (store_open_readonly(sv->db, &sv->st, err) != 0 ||
		    store_check(sv->st, err) != 0) {
			fprintf(stderr, "autoschedd: %s\n", *err);
			return 2;
		}
	} else
		fprintf(stderr, "autoschedd: %s: no store yet, it is created at"
		    " start\n", sv->db);
	printf("configuration OK\n");
	return 0;
}

/* Flags only; the mask keeps them for ppoll and the job's run. */
static void
service_signals(struct service *sv)
{
	static const int stop_sigs[] = { SIGTERM, SIGINT, SIGHUP };
	static const int ign_sigs[] = { SIGPIPE };

	util_signals_catch(stop_sigs, 3, service_sighandler, 0, NULL);
	util_signals_catch(ign_sigs, 1, SIG_IGN, 0, NULL);
	sigemptyset(&sv->sigs);
	sigaddset(&sv->sigs, SIGTERM);
	sigaddset(&sv->sigs, SIGINT);
	sigaddset(&sv->sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sv->sigs, &sv->oldmask);
	sigdelset(&sv->oldmask, SIGTERM);
	sigdelset(&sv->oldmask, SIGINT);
	sigdelset(&sv->oldmask, SIGHUP);
}

/*
 * The store taken (its path checked, its folder made, its lock held, its
 * crashed jobs queued again), the work folder named, the wake socket and
 * the spool set up. 0, or the exit code (logged).
 */
static int
service_open(struct service *sv, char **err)
{
	struct stat sb;
	char *dir;
	int n;

	sv->db = service_db_path(sv);
	if (store_check_path(sv->db, err) != 0) {
		service_log(sv, LOG_ERR, 0, "%s", *err);
		return 2;
	}
	dir = util_dirname(sv->db);
	sv->work = getenv("AUTOSCHED_WORK") ?
	    xstrdup(getenv("AUTOSCHED_WORK")) :
	    util_path_join(dir, "autosched-cache");
	n = util_mkdirs(dir, err);
	free(dir);
	if (n != 0 || service_lock(sv->db, &sv->lock_fd, err) != 0) {
		service_log(sv, LOG_ERR, 0, "%s", *err);
		return 1;
	}
	if (store_open(sv->db, &sv->st, err) != 0) {
		/* A corrupt store is not mended by restarting: exit 2. */
		service_log(sv, LOG_ERR, 0, "%s", *err);
		return 2;
	}
	if (stat(sv->db, &sb) == 0) {
		sv->db_dev = sb.st_dev;
		sv->db_ino = sb.st_ino;
	}
	if ((n = service_requeue(sv, err)) < 0) {
		service_log(sv, LOG_ERR, 0, "%s", *err);
		return 1;
	}
	if (n > 0)
		service_log(sv, LOG_NOTICE, 0, "%d job%s left running by a"
		    " crash: back in the queue, resumed", n, n == 1 ? "" : "s");
	if (service_wake_open(sv->db, &sv->wake_fd, err) != 0) {
		service_log(sv, LOG_WARNING, 0, "%s: submits wake us only at"
		    " the %.0fs poll", *err, sv->conf->poll);
		free(*err);
		*err = NULL;
	}
	service_spool_setup(sv);
	return 0;
}

/* Serve until a stop or the store's loss: the exit code. */
static int
service_serve(struct service *sv)
{
#ifdef HAVE_LIBSYSTEMD
	if (sd_watchdog_enabled(0, &sv->watchdog_usec) <= 0)
		sv->watchdog_usec = 0;
#endif
	service_log(sv, LOG_INFO, 0, "serving %s (pid %ld)", sv->db,
	    (long)getpid());
	service_notify("READY=1\nSTATUS=idle");
	service_watchdog(sv, 1);
	while (!service_stop && !service_store_gone(sv)) {
		if (service_hup) {
			service_hup = 0;
			service_reload(sv);
		}
		service_spool_scan(sv);
		if (service_stop || service_store_gone(sv))
			break;
		if (service_run_one(sv) == 1)
			continue;
		service_wait(sv);
	}
	service_notify("STOPPING=1\nSTATUS=stopping");
	if (sv->store_gone) {
		service_log(sv, LOG_CRIT, 0, "the store %s was deleted or replaced"
		    " while the service used it: what it recorded since went"
		    " nowhere; stopping (exit 1). Restore the store, or restart"
		    " to serve a new one", sv->db);
		return 1;
	}
	service_log(sv, LOG_INFO, 0, "stopping");
	return 0;
}

static void
service_free(struct service *sv)
{
	size_t i;

	if (sv->spool_fd != -1)
		close(sv->spool_fd);
	if (sv->spool_lock != -1)
		close(sv->spool_lock);
	if (sv->db != NULL)
		service_wake_close(sv->db, sv->wake_fd);
	if (sv->st != NULL)
		store_close(sv->st);
	if (sv->lock_fd != -1)
		close(sv->lock_fd);
	for (i = 0; i < sv->nignored; i++)
		free(sv->ignored[i]);
	free(sv->spool);
	service_conf_free(sv->conf);
	service_conf_free(sv->retired);
	free(sv->conf_path);
	free(sv->db);
	free(sv->work);
}

int
service_main(int argc, char **argv)
{
	struct service sv;
	char *err = NULL;
	int rc, first;

	memset(&sv, 0, sizeof sv);
	sv.lock_fd = sv.wake_fd = sv.spool_fd = sv.spool_lock = -1;
	sv.conf_path = xstrdup(SERVICE_CONF_DEFAULT);
	if ((rc = util_opts_parse(&service_cmd, argc, argv, &sv, &first)) != 0)
		goto out;
	if (service_conf_load(sv.conf_path, !sv.conf_given, &sv.conf,
	    &err) != 0) {
		fprintf(stderr, "autoschedd: %s\n", err);
		rc = 2;
		goto out;
	}
	if (sv.check) {
		rc = service_check_only(&sv, &err);
		goto out;
	}
	service_signals(&sv);
	if ((rc = service_open(&sv, &err)) == 0)
		rc = service_serve(&sv);
out:
	service_free(&sv);
	free(err);
	return rc;
}
