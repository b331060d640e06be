/*
 * Small helpers every module uses: allocation, strings, files, hashing,
 * clocks and "did you mean" distances.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	FILE *f;
	char *b = NULL;
	size_t n = 0, cap = 0, got;

	*buf = NULL;
	if ((f = fopen(path, "rb")) == NULL) {
		util_seterr(err, "%s: %s", path, strerror(errno));
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
util_write_file(const char *path, const char *buf, size_t len, char **err)
{
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	int fd, rc = -1;
	size_t off = 0;
	ssize_t w;

	if ((fd = open(tmp, O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0644)) == -1) {
		util_seterr(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	while (off < len) {
		w = write(fd, buf + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			util_seterr(err, "%s: %s", tmp, strerror(errno));
			close(fd);
			unlink(tmp);
			goto out;
		}
		off += (size_t)w;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		util_seterr(err, "%s: %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	free(tmp);
	return rc;
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
