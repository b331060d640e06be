/*
 * `autosched gc`: what runs killed outright (kill -9, a lost machine) left
 * behind, removed on demand: the backends' scratch folders under the work
 * folder (every backend's, IREE's included, whose runs do not sweep them),
 * the hidden temporaries of output files, and the "running" job rows no
 * runner holds. Only this user's things named as autosched names them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "job/job.h"
#include "store/store.h"
#include "util/util.h"

#define GC_DEPTH	4	/* the deepest scratch tree (IREE's dump folder) */
#define GC_DIRS_MAX	256	/* folders searched for output temporaries */

struct gc {
	const char	*db;
	size_t		 removed, skipped, marked;
	char		*dirs[GC_DIRS_MAX];	/* where outputs were written */
	size_t		 ndirs;
};

static void
gc_usage(FILE *f)
{
	fprintf(f,
	    "usage: autosched gc [--db PATH]\n"
	    "Remove what runs killed outright left: scratch folders of dead\n"
	    "processes under the work folder (AUTOSCHED_WORK, else\n"
	    "autosched-cache beside the store), hidden temporaries of output\n"
	    "files beside the store and the jobs' cfgs, and mark the store's\n"
	    "\"running\" jobs that no process runs as failed (abandoned).\n"
	    "Only your own files named as autosched names them are touched;\n"
	    "each removal is printed.\n");
}

/*
 * The pid in a name at s: digits up to the char stop. 1 when it names a
 * process that is gone, 0 when alive, not ours to ask, or not a pid.
 */
static int
gc_dead_pid(const char *s, char stop, const char **end)
{
	char *e;
	long pid;

	errno = 0;
	pid = strtol(s, &e, 10);
	*end = e;
	if (errno != 0 || e == s || *e != stop || pid <= 0 ||
	    pid == (long)getpid())
		return 0;
	return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* 1 if s is digits only (and not empty). */
static int
gc_digits(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/*
 * A backend's scratch of a dead process: NAME.tmp.PID.N (a compile's, an
 * input data's) or run.PID.N (an IREE measurement's).
 */
static int
gc_scratch_name(const char *n)
{
	const char *t = strstr(n, ".tmp."), *e;

	if (n[0] == '.')
		return 0;
	if (t != NULL && gc_dead_pid(t + 5, '.', &e))
		return gc_digits(e + 1);
	if (strncmp(n, "run.", 4) == 0 && gc_dead_pid(n + 4, '.', &e))
		return gc_digits(e + 1);
	return 0;
}

/* 1 if sb is this user's; else says so (skipped) and 0. */
static int
gc_ours(struct gc *g, const char *p, const struct stat *sb)
{
	if (sb->st_uid == geteuid())
		return 1;
	fprintf(stderr, "autosched gc: %s: owned by uid %lu, not you: left "
	    "as it is\n", p, (unsigned long)sb->st_uid);
	g->skipped++;
	return 0;
}

/*
 * Remove the tree at p (a folder of ours): its entries of ours, links
 * themselves and never what they point to, at most GC_DEPTH deep. 0 when
 * it is gone.
 */
static int
gc_remove_tree(struct gc *g, const char *p, int depth)
{
	struct dirent *de;
	struct stat sb;
	DIR *d;
	char *q;
	int rc = 0;

	if (depth > GC_DEPTH || (d = opendir(p)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		q = util_path_join(p, de->d_name);
		if (lstat(q, &sb) != 0 || !gc_ours(g, q, &sb))
			rc = -1;
		else if (S_ISDIR(sb.st_mode))
			rc |= gc_remove_tree(g, q, depth + 1);
		else if (unlink(q) != 0)
			rc = -1;
		free(q);
	}
	closedir(d);
	if (rc == 0 && rmdir(p) != 0)
		rc = -1;
	return rc;
}

/*
 * Remove from dir what is_name names, of type (S_IFDIR: a tree, S_IFREG: a
 * file) and ours, saying each as "removed PATH (WHAT)".
 */
static void
gc_sweep(struct gc *g, const char *dir, int (*is_name)(const char *),
    mode_t type, const char *what)
{
	struct dirent *de;
	struct stat sb;
	DIR *d;
	char *p;
	int rc;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (!is_name(de->d_name))
			continue;
		p = util_path_join(dir, de->d_name);
		if (lstat(p, &sb) == 0 && (sb.st_mode & S_IFMT) == type &&
		    gc_ours(g, p, &sb)) {
			rc = type == S_IFDIR ? gc_remove_tree(g, p, 1) :
			    unlink(p);
			if (rc == 0) {
				printf("removed %s (%s)\n", p, what);
				g->removed++;
			} else
				fprintf(stderr, "autosched gc: %s: %s%s\n", p,
				    type == S_IFDIR ? "not all of it could be "
				    "removed: " : "", strerror(errno));
		}
		free(p);
	}
	closedir(d);
}

/* The scratch of dead processes in one backend's folder of the work folder. */
static void
gc_backend_dir(struct gc *g, const char *dir)
{
	gc_sweep(g, dir, gc_scratch_name, S_IFDIR, "scratch of a killed run");
}

/* Every backend's folder under the work folder (this user's only). */
static void
gc_work(struct gc *g, const char *work)
{
	struct dirent *de;
	struct stat sb;
	DIR *d;
	char *p;

	if (lstat(work, &sb) != 0)
		return;
	if (!S_ISDIR(sb.st_mode) || !gc_ours(g, work, &sb))
		return;
	if ((d = opendir(work)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		p = util_path_join(work, de->d_name);
		if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode) &&
		    sb.st_uid == geteuid())
			gc_backend_dir(g, p);
		free(p);
	}
	closedir(d);
}

/*
 * An output file's temporary that its writer (util/out.c) left when
 * killed: .BASE.PID.XXXXXX, a regular file of ours, PID gone.
 */
static int
gc_temp_name(const char *n)
{
	const char *dot = strrchr(n, '.'), *p, *e;
	size_t i;

	if (n[0] != '.' || dot == NULL || dot == n || strlen(dot + 1) != 6)
		return 0;
	for (i = 1; i <= 6; i++)
		if (!((dot[i] >= '0' && dot[i] <= '9') ||
		    (dot[i] >= 'a' && dot[i] <= 'z') ||
		    (dot[i] >= 'A' && dot[i] <= 'Z')))
			return 0;
	/* The pid: the dot-separated field before the suffix. */
	for (p = dot - 1; p > n && *p != '.'; p--)
		;
	if (p <= n + 1)
		return 0;
	return gc_dead_pid(p + 1, '.', &e) && e == dot;
}

/* The temporaries that killed writers left in dir. */
static void
gc_temps(struct gc *g, const char *dir)
{
	gc_sweep(g, dir, gc_temp_name, S_IFREG, "temporary of a killed writer");
}

/* Note dir (owned) as a place where outputs were written, once. */
static void
gc_dir_add(struct gc *g, char *dir)
{
	size_t i;

	for (i = 0; i < g->ndirs; i++) {
		if (strcmp(g->dirs[i], dir) == 0) {
			free(dir);
			return;
		}
	}
	if (g->ndirs == GC_DIRS_MAX) {
		free(dir);
		return;
	}
	g->dirs[g->ndirs++] = dir;
}

/*
 * The store's jobs: "running" ones no runner holds marked failed, and the
 * folders of every job's cfg noted for the temporaries. 0, or -1 (said).
 */
static int
gc_jobs(struct gc *g)
{
	struct store *st = NULL;
	struct store_job *v = NULL;
	char *err = NULL;
	size_t n = 0, i;
	int rc = -1;

	if (store_open(g->db, &st, &err) != 0 ||
	    store_job_list(st, &v, &n, &err) != 0) {
		fprintf(stderr, "autosched gc: %s\n", err);
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (v[i].cfg_path != NULL && v[i].cfg_path[0] == '/')
			gc_dir_add(g, util_dirname(v[i].cfg_path));
		if (strcmp(v[i].state, "running") != 0 ||
		    job_runner_alive(g->db, v[i].id))
			continue;
		if (store_job_set_state(st, v[i].id, "failed", "abandoned: its "
		    "run ended without closing it (killed); marked by "
		    "autosched gc", &err) != 0) {
			fprintf(stderr, "autosched gc: %s\n", err);
			goto out;
		}
		printf("job %lld: marked failed (abandoned: its run was "
		    "killed)\n", (long long)v[i].id);
		g->marked++;
	}
	rc = 0;
out:
	for (i = 0; i < n; i++)
		store_job_clear(&v[i]);
	free(v);
	free(err);
	if (st != NULL)
		store_close(st);
	return rc;
}

/* gc's one option; what it fills. */
struct gc_args {
	char	*db;
};

static const struct opt_spec gc_opts[] = {
	{ .name = "db", .kind = OPT_PATH, .off = offsetof(struct gc_args, db) },
	{ .name = NULL }
};

static const struct opts_cmd gc_cmd = {
	"autosched gc", gc_opts, gc_usage, 0, 0, 0
};

int
cli_gc(int argc, char **argv)
{
	struct gc_args a;
	struct gc g;
	char *db, *work, *err = NULL;
	size_t i;
	int rc = 2, first;

	memset(&g, 0, sizeof g);
	memset(&a, 0, sizeof a);
	if ((rc = util_opts_parse(&gc_cmd, argc, argv, &a, &first)) != 0) {
		free(a.db);
		return rc == 1 ? 0 : 2;
	}
	rc = 2;
	db = a.db;
	if (db == NULL)
		db = daemon_default_db();
	g.db = db;
	if (store_check_path(db, &err) != 0) {
		fprintf(stderr, "autosched gc: %s\n", err);
		goto out;
	}
	gc_dir_add(&g, util_dirname(db));
	if (access(db, F_OK) == 0 && gc_jobs(&g) != 0)
		goto out;
	work = getenv("AUTOSCHED_WORK") ? xstrdup(getenv("AUTOSCHED_WORK")) :
	    util_path_join(g.dirs[0], "autosched-cache");
	gc_work(&g, work);
	free(work);
	for (i = 0; i < g.ndirs; i++)
		gc_temps(&g, g.dirs[i]);
	printf("%zu removed, %zu job%s marked%s\n", g.removed, g.marked,
	    g.marked == 1 ? "" : "s", g.skipped > 0 ?
	    " (some left: not yours, see above)" : "");
	rc = 0;
out:
	for (i = 0; i < g.ndirs; i++)
		free(g.dirs[i]);
	free(err);
	free(db);
	return rc;
}
