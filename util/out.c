/*
 * The one writer of output files: the target checked as a file (never a
 * link, a device, a store or an input, never a file autosched did not
 * write), then written through an unpredictable temporary beside it and
 * renamed over it. And the check that stdout took what we printed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

/* How far into a file util_out_check looks for a marker (a built .so). */
#define OUT_MARKER_SCAN	(1u << 30)

struct util_out {
	FILE			*f;
	char			*path;
	char			*tmp;
	const struct util_out_guard *g;
};

int
util_same_path(const char *a, const char *b)
{
	char *da, *db, *ra, *rb;
	const char *ba, *bb;
	int same;

	if (a == NULL || b == NULL)
		return 0;
	if (access(a, F_OK) == 0 && access(b, F_OK) == 0)
		return util_same_file(a, b);
	da = util_dirname(a);
	db = util_dirname(b);
	ra = realpath(da, NULL);
	rb = realpath(db, NULL);
	ba = strrchr(a, '/') ? strrchr(a, '/') + 1 : a;
	bb = strrchr(b, '/') ? strrchr(b, '/') + 1 : b;
	same = ra != NULL && rb != NULL && strcmp(ra, rb) == 0 &&
	    strcmp(ba, bb) == 0;
	free(da);
	free(db);
	free(ra);
	free(rb);
	return same;
}

static const char *
out_kind(mode_t m)
{
	if (S_ISDIR(m))
		return "a folder";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

/* 1 if the open file fd starts with one of g's magics or holds its marker. */
static int
out_ours(int fd, const struct util_out_guard *g)
{
	char head[512], *buf;
	size_t n = 0, i, ml, keep, have = 0, cap;
	ssize_t r;
	int found = 0;

	while (n < sizeof head) {
		r = read(fd, head + n, sizeof head - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	for (i = 0; i < UTIL_OUT_MAGICS; i++) {
		ml = g->magic[i] != NULL ? strlen(g->magic[i]) : 0;
		if (ml > 0 && ml <= n && memcmp(head, g->magic[i], ml) == 0)
			return 1;
	}
	if (g->marker == NULL || (ml = strlen(g->marker)) == 0 ||
	    lseek(fd, 0, SEEK_SET) != 0)
		return 0;
	/* Chunks overlapping by the marker's length less one. */
	cap = 65536 + ml;
	buf = xmalloc(cap);
	for (n = 0; n < OUT_MARKER_SCAN && !found; ) {
		r = read(fd, buf + have, cap - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		have += (size_t)r;
		found = memmem(buf, have, g->marker, ml) != NULL;
		keep = have < ml - 1 ? have : ml - 1;
		memmove(buf, buf + have - keep, keep);
		have = keep;
	}
	free(buf);
	return found;
}

/*
 * 0 if a file can be made in dir (tried: a temporary made and removed), so
 * that a command fails before its work, not after it (build -o
 * /proc/self/x.so compiled first). Else -1 with *err.
 */
static int
out_probe(const char *pre, const char *dir, const char *what, char **err)
{
	char *p = xasprintf("%s/.autosched-probe-XXXXXX", dir);
	int fd = mkstemp(p);

	if (fd == -1) {
		util_seterr(err, "%s: cannot make a file in folder %s (%s);"
		    " expected a folder this user can write for %s", pre, dir,
		    strerror(errno), what);
		free(p);
		return -1;
	}
	close(fd);
	unlink(p);
	free(p);
	return 0;
}

/* Refuses path when it names one of g's stores (or their side files) or inputs. */
static int
out_not_input(const char *pre, const char *path,
    const struct util_out_guard *g, const char *what, char **err)
{
	static const char *const sfx[] = { "", "-wal", "-shm", "-journal" };
	size_t i, j;
	char *p;

	for (i = 0; g != NULL && i < UTIL_OUT_STORES; i++) {
		for (j = 0; g->stores[i] && j < sizeof sfx / sizeof sfx[0]; j++) {
			p = xasprintf("%s%s", g->stores[i], sfx[j]);
			if (util_same_path(path, p)) {
				util_seterr(err, "%s: that is %s %s; expected a"
				    " new file for %s", pre, j == 0 ? "the store" :
				    "a side file of the store", p, what);
				free(p);
				return -1;
			}
			free(p);
		}
	}
	for (i = 0; g != NULL && i < UTIL_OUT_INPUTS; i++) {
		const struct util_out_input *in = &g->inputs[i];

		if (in->path != NULL && util_same_path(path, in->path)) {
			util_seterr(err, "%s: that is %s; expected a new file"
			    " for %s", pre, in->what ? in->what : "an input",
			    what);
			return -1;
		}
	}
	return 0;
}

/*
 * path exists (lstat sb): a regular file, not a link, and (with a guard)
 * one autosched wrote. 0, or -1 with *err.
 */
static int
out_check_existing(const char *pre, const char *path, const struct stat *sb,
    const struct util_out_guard *g, const char *what, char **err)
{
	char link[PATH_MAX];
	struct stat fb;
	ssize_t ln;
	int fd, ours = 0;

	if (S_ISLNK(sb->st_mode)) {
		ln = readlink(path, link, sizeof link - 1);
		link[ln > 0 ? ln : 0] = '\0';
		util_seterr(err, "%s: that is a symbolic link (to %s); expected"
		    " a regular file for %s: name the file itself", pre, link,
		    what);
		return -1;
	}
	if (!S_ISREG(sb->st_mode)) {
		util_seterr(err, "%s: that is %s; expected a regular file for %s",
		    pre, out_kind(sb->st_mode), what);
		return -1;
	}
	if (g == NULL)
		return 0;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC);
	if (fd != -1) {
		if (fstat(fd, &fb) == 0 && fb.st_dev == sb->st_dev &&
		    fb.st_ino == sb->st_ino)
			ours = out_ours(fd, g);
		close(fd);
	}
	if (!ours) {
		util_seterr(err, "%s: exists and is not a file autosched wrote;"
		    " expected a new file (or a previous one of autosched's)"
		    " for %s: move it away or name another", pre, what);
		return -1;
	}
	return 0;
}

int
util_out_check(const char *path, const struct util_out_guard *g, char **err)
{
	const char *what = g != NULL && g->what != NULL ? g->what : "the output";
	char *pre, *dir = NULL;
	struct stat sb, fb;
	int rc = -1;

	/* "WHERE: [Env] output_file: PATH", "-o PATH", "PATH". */
	pre = xasprintf("%s%s%s%s%s", g && g->where ? g->where : "",
	    g && g->where ? ": " : "", g && g->key ? g->key : "",
	    g && g->key ? (g->key[0] == '-' ? " " : ": ") : "", path);
	if (*path == '\0') {
		util_seterr(err, "%s: empty file name; expected a file for %s",
		    pre, what);
		goto out;
	}
	if (out_not_input(pre, path, g, what, err) != 0)
		goto out;
	if (lstat(path, &sb) != 0) {
		if (errno != ENOENT) {
			util_seterr(err, "%s: %s", pre, strerror(errno));
			goto out;
		}
		dir = util_dirname(path);
		if (stat(dir, &fb) != 0 || !S_ISDIR(fb.st_mode)) {
			util_seterr(err, "%s: folder %s does not exist; expected"
			    " an existing folder for %s", pre, dir, what);
			goto out;
		}
		rc = out_probe(pre, dir, what, err);
		goto out;
	}
	rc = out_check_existing(pre, path, &sb, g, what, err);
out:
	free(dir);
	free(pre);
	return rc;
}

/*
 * Remove the temporaries of base in dir that killed writers left
 * (".BASE.PID.XXXXXX", this user's regular files, PID gone).
 */
static void
out_sweep(const char *dir, const char *base)
{
	DIR *d;
	struct dirent *de;
	struct stat sb;
	size_t bl = strlen(base);
	char *end, *p;
	long pid;

	if (bl > 200 || (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		const char *n = de->d_name;

		if (n[0] != '.' || strncmp(n + 1, base, bl) != 0 ||
		    n[1 + bl] != '.')
			continue;
		errno = 0;
		pid = strtol(n + 2 + bl, &end, 10);
		if (errno != 0 || end == n + 2 + bl || *end != '.' ||
		    strlen(end + 1) != 6 || pid <= 0 || pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		p = xasprintf("%s/%s", dir, n);
		if (lstat(p, &sb) == 0 && S_ISREG(sb.st_mode) &&
		    sb.st_uid == geteuid())
			unlink(p);
		free(p);
	}
	closedir(d);
}

int
util_out_open(const char *path, const struct util_out_guard *g,
    struct util_out **out, char **err)
{
	struct util_out *o;
	const char *base;
	char *dir;
	int fd;

	*out = NULL;
	if (util_out_check(path, g, err) != 0)
		return -1;
	dir = util_dirname(path);
	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	o = xcalloc(1, sizeof *o);
	o->path = xstrdup(path);
	o->g = g;
	/*
	 * Unpredictable and O_EXCL: nothing planted is followed. The pid in
	 * the name lets a later writer remove what a killed one left.
	 */
	out_sweep(dir, base);
	o->tmp = xasprintf("%s/.%.200s.%ld.XXXXXX", dir, base, (long)getpid());
	free(dir);
	if ((fd = mkostemp(o->tmp, O_CLOEXEC)) == -1) {
		util_seterr(err, "%s: cannot create a temporary file beside it:"
		    " %s", path, strerror(errno));
		goto fail;
	}
	if (fchmod(fd, g != NULL && g->mode != 0 ? g->mode : 0644) != 0 ||
	    (o->f = fdopen(fd, "w")) == NULL) {
		util_seterr(err, "%s: %s", o->tmp, strerror(errno));
		close(fd);
		unlink(o->tmp);
		goto fail;
	}
	*out = o;
	return 0;
fail:
	free(o->tmp);
	free(o->path);
	free(o);
	return -1;
}

FILE *
util_out_file(struct util_out *o)
{
	return o->f;
}

int
util_out_commit(struct util_out *o, char **err)
{
	char *dir;
	int rc = -1, e, fd;

	errno = 0;
	if (fflush(o->f) != 0 || ferror(o->f)) {
		e = errno ? errno : EIO;
		util_seterr(err, "%s: writing %s: %s", o->path, o->tmp,
		    strerror(e));
		fclose(o->f);
		goto out;
	}
	if (fsync(fileno(o->f)) != 0) {
		util_seterr(err, "%s: fsync %s: %s", o->path, o->tmp,
		    strerror(errno));
		fclose(o->f);
		goto out;
	}
	if (fclose(o->f) != 0) {
		util_seterr(err, "%s: closing %s: %s", o->path, o->tmp,
		    strerror(errno));
		goto out;
	}
	/* Again: what is at the target may have changed while we wrote. */
	if (util_out_check(o->path, o->g, err) != 0)
		goto out;
	if (rename(o->tmp, o->path) != 0) {
		util_seterr(err, "%s: %s", o->path, strerror(errno));
		goto out;
	}
	dir = util_dirname(o->path);
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1) {
		(void)fsync(fd);
		close(fd);
	}
	free(dir);
	rc = 0;
out:
	if (rc != 0)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	free(o);
	return rc;
}

void
util_out_abort(struct util_out *o)
{
	if (o == NULL)
		return;
	fclose(o->f);
	unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	free(o);
}

int
util_out_write(const char *path, const char *buf, size_t len,
    const struct util_out_guard *g, char **err)
{
	struct util_out *o;

	if (util_out_open(path, g, &o, err) != 0)
		return -1;
	if (len > 0 && fwrite(buf, 1, len, o->f) != len) {
		/* util_out_commit reports the stream's error. */
	}
	return util_out_commit(o, err);
}

int
util_write_file(const char *path, const char *buf, size_t len, char **err)
{
	return util_out_write(path, buf, len, NULL, err);
}

/* The errno of the first failed write to stdout, 0 if none. */
static int util_stdout_errno;

int
util_stdout_put(const char *s)
{
	if (fputs(s, stdout) != EOF)
		return 0;
	if (util_stdout_errno == 0)
		util_stdout_errno = errno;
	return -1;
}

int
util_memstream_close(FILE *f, char **buf, char **text, const char *what,
    char **err)
{
	if (fclose(f) != 0) {
		util_seterr(err, "writing %s failed", what);
		return -1;
	}
	*text = *buf;
	*buf = NULL;
	return 0;
}

int
util_stdout_close(void)
{
	int bad = ferror(stdout) != 0, e = util_stdout_errno;

	errno = 0;
	if (fflush(stdout) != 0) {
		bad = 1;
		if (e == 0)
			e = errno;
	}
	if (fclose(stdout) != 0 && !bad && errno != EBADF) {
		bad = 1;
		e = errno;
	}
	if (!bad)
		return 0;
	fprintf(stderr, "autosched: stdout: %s\n", strerror(e ? e : EIO));
	return -1;
}
