/*
 * Small helpers every module uses: allocation, strings, files, hashing,
 * clocks and "did you mean" distances.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

static void
util_oom(void)
{
	fputs("autosched: out of memory\n", stderr);
	abort();
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		util_oom();
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		util_oom();
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		util_oom();
	return p;
}

char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		util_oom();
	return p;
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (p == NULL)
		util_oom();
	return p;
}

static char *
xvasprintf(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		util_oom();
	return s;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

void
util_seterr(char **err, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return;
	free(*err);
	va_start(ap, fmt);
	*err = xvasprintf(fmt, ap);
	va_end(ap);
}

int
util_read_file(const char *path, size_t max, char **buf, size_t *len,
    char **err)
{
	int fd;

	*buf = NULL;
	/* Never block on a FIFO or a device: open without waiting, then check. */
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) == -1) {
		util_seterr(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	return util_read_fd(fd, path, max, buf, len, err);
}

int
util_read_fd(int fd, const char *path, size_t max, char **buf, size_t *len,
    char **err)
{
	struct stat sb;
	FILE *f;
	char *b = NULL;
	size_t n = 0, cap = 0, got;
	int fl;

	*buf = NULL;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		util_seterr(err, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	if ((fl = fcntl(fd, F_GETFL)) != -1)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	if ((f = fdopen(fd, "rb")) == NULL) {
		util_seterr(err, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	for (;;) {
		if (cap - n < 65536) {
			cap = cap ? cap * 2 : 65536;
			b = xrealloc(b, cap + 1);
		}
		got = fread(b + n, 1, cap - n, f);
		n += got;
		if (n > max) {
			util_seterr(err, "%s: larger than %zu bytes", path, max);
			goto fail;
		}
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		util_seterr(err, "%s: %s", path, strerror(errno));
		goto fail;
	}
	fclose(f);
	b[n] = '\0';
	*buf = b;
	if (len != NULL)
		*len = n;
	return 0;
fail:
	fclose(f);
	free(b);
	return -1;
}

int
util_mkdirs(const char *path, char **err)
{
	char *p = xstrdup(path), *s;
	int rc = -1;

	for (s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;

			*s = '\0';
			if (mkdir(p, 0755) != 0 && errno != EEXIST) {
				util_seterr(err, "%s: %s", p, strerror(errno));
				goto out;
			}
			*s = c;
			if (c == '\0')
				break;
		}
	}
	rc = 0;
out:
	free(p);
	return rc;
}

int
util_trusted(const char *path, int dir, char *why, size_t len)
{
	struct stat sb;

	if (lstat(path, &sb) != 0) {
		snprintf(why, len, "%s", strerror(errno));
		return -1;
	}
	if (S_ISLNK(sb.st_mode)) {
		snprintf(why, len, "a symbolic link");
		return -1;
	}
	if (dir ? !S_ISDIR(sb.st_mode) : !S_ISREG(sb.st_mode)) {
		snprintf(why, len, "not a %s", dir ? "folder" : "regular file");
		return -1;
	}
	if (sb.st_uid != geteuid()) {
		snprintf(why, len, "owned by uid %ld, not by this user (uid %ld)",
		    (long)sb.st_uid, (long)geteuid());
		return -1;
	}
	if (sb.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, len, "writable by %s (mode %04o)",
		    (sb.st_mode & S_IWGRP) ? "its group" : "others",
		    (unsigned)(sb.st_mode & 07777));
		return -1;
	}
	return 0;
}

char *
util_path_join(const char *dir, const char *name)
{
	if (name[0] == '/' || dir == NULL || dir[0] == '\0' ||
	    strcmp(dir, ".") == 0)
		return xstrdup(name);
	return xasprintf("%s/%s", dir, name);
}

char *
util_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}

uint64_t
util_hash64(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

void
util_hash_hex(const void *buf, size_t len, char out[17])
{
	snprintf(out, 17, "%016llx", (unsigned long long)util_hash64(buf, len));
}

double
util_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double
util_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int
util_name_index(const char *const *names, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n && names[i] != NULL; i++) {
		if (strcmp(names[i], name) == 0)
			return (int)i;
	}
	return -1;
}

size_t
util_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, *row, prev, tmp, best;

	if (la > 256 || lb > 256)
		return la > lb ? la : lb;
	row = xcalloc(lb + 1, sizeof *row);
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			tmp = row[j];
			best = prev + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = tmp;
		}
	}
	best = row[lb];
	free(row);
	return best;
}

int
util_ncpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof set, &set) == 0)
		return CPU_COUNT(&set);
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

int
util_parse_cpus(const char *s, int **cpus, int *n, char **err)
{
	cpu_set_t allowed;
	char *copy = xstrdup(s), *tok, *save = NULL, *dash, *end;
	int *v = NULL, cnt = 0, i, have_mask, rc = -1;
	long a, b, c;

	have_mask = sched_getaffinity(0, sizeof allowed, &allowed) == 0;
	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ' || *tok == '\t')
			tok++;
		if ((dash = strchr(tok, '-')) != NULL)
			*dash++ = '\0';
		errno = 0;
		a = strtol(tok, &end, 10);
		if (errno != 0 || end == tok || *end != '\0' || a < 0 ||
		    a >= UTIL_CPUS_MAX)
			goto bad;
		b = a;
		if (dash != NULL) {
			b = strtol(dash, &end, 10);
			if (errno != 0 || end == dash || *end != '\0' || b < 0 ||
			    b >= UTIL_CPUS_MAX)
				goto bad;
		}
		if (b < a) {
			util_seterr(err, "range %ld-%ld is backwards", a, b);
			goto out;
		}
		for (c = a; c <= b; c++) {
			if (have_mask ? (c >= CPU_SETSIZE ||
			    !CPU_ISSET((int)c, &allowed)) :
			    c >= sysconf(_SC_NPROCESSORS_CONF)) {
				util_seterr(err, "CPU %ld does not exist or is not"
				    " one this process may use (%d usable)", c,
				    util_ncpus());
				goto out;
			}
			for (i = 0; i < cnt; i++) {
				if (v[i] == c) {
					util_seterr(err, "CPU %ld listed twice", c);
					goto out;
				}
			}
			v = xrealloc(v, (size_t)(cnt + 1) * sizeof *v);
			v[cnt++] = (int)c;
		}
	}
	if (cnt == 0) {
		util_seterr(err, "empty list of CPUs");
		goto out;
	}
	*cpus = v;
	*n = cnt;
	v = NULL;
	rc = 0;
	goto out;
bad:
	util_seterr(err, "\"%s\" is not a list of CPUs (expected e.g. 0 or 0,1"
	    " or 2-3)", s);
out:
	free(v);
	free(copy);
	return rc;
}

int
util_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
		return 0;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int
util_lock_file_check(int fd, const char *path, const char *what, char **err)
{
	struct stat sb;
	char buf[33];
	ssize_t n;
	size_t i;

	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		util_seterr(err, "%s: not a regular file; expected %s", path,
		    what);
		return -1;
	}
	/* Never a name of another file, nor a file we did not make. */
	if (sb.st_nlink > 1) {
		util_seterr(err, "%s: has %ld names (a hard link); expected %s:"
		    " move it away", path, (long)sb.st_nlink, what);
		return -1;
	}
	n = sb.st_size < (off_t)sizeof buf ? pread(fd, buf, sizeof buf - 1, 0) :
	    -1;
	for (i = 0; n >= 0 && i < (size_t)n; i++) {
		if (!(buf[i] >= '0' && buf[i] <= '9') && buf[i] != '\n')
			break;
	}
	if (n < 0 || i < (size_t)n) {
		util_seterr(err, "%s: holds something other than a process id;"
		    " expected %s (autosched's, which it truncates): move it"
		    " away", path, what);
		return -1;
	}
	return 0;
}

int
util_lock(const char *path, int wait, int *fd, char **err)
{
	char buf[32];
	int f;

	*fd = -1;
	/* Never block on a FIFO or a device: open without waiting, then check. */
	if ((f = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK | O_NOCTTY, 0666)) == -1) {
		util_seterr(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (util_lock_file_check(f, path, "a lock file", err) != 0) {
		close(f);
		return -1;
	}
	if (flock(f, wait ? LOCK_EX : LOCK_EX | LOCK_NB) != 0) {
		int e = errno;

		close(f);
		if (e == EWOULDBLOCK)
			return 1;
		util_seterr(err, "%s: %s", path, strerror(e));
		return -1;
	}
	snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
	/* The pid is only a hint for people. */
	if (ftruncate(f, 0) == 0 && write(f, buf, strlen(buf)) < 0) {
		/* nothing to do */
	}
	*fd = f;
	return 0;
}

int
util_lock_held(const char *path)
{
	struct stat sb;
	int f, held;

	if ((f = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
	    O_NOCTTY)) == -1)
		return 0;
	if (fstat(f, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(f);
		return 0;
	}
	held = flock(f, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
	close(f);
	return held;
}

char *
util_escape(const char *s)
{
	size_t n = strlen(s), i, o = 0;
	char *out = xmalloc(4 * n + 1);

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
		} else if (c < 0x20 || c == 0x7f) {
			snprintf(out + o, 5, "\\x%02x", c);
			o += 4;
		} else
			out[o++] = (char)c;
	}
	out[o] = '\0';
	return out;
}

int
util_parse_id(const char *s, int64_t *id)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v <= 0 ||
	    !isdigit((unsigned char)s[0]))
		return -1;
	*id = (int64_t)v;
	return 0;
}
