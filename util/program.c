/*
 * Programs autosched runs (IREE's tools, srun and the other Slurm commands,
 * anything named without a folder): taken only from trusted places, the
 * compile cache's rule, so that no other user can choose what we run.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

/* 0 if sb is owned by root or the effective uid and writable by no one else. */
static int
program_owner_ok(const struct stat *sb, char *why, size_t len)
{
	if (sb->st_uid != 0 && sb->st_uid != geteuid()) {
		snprintf(why, len, "owned by uid %ld, neither root nor this user"
		    " (uid %ld)", (long)sb->st_uid, (long)geteuid());
		return -1;
	}
	if (sb->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, len, "writable by %s (mode %04o)",
		    (sb->st_mode & S_IWOTH) == 0 ? "its group" :
		    (sb->st_mode & S_IWGRP) ? "its group and others" : "others",
		    (unsigned)(sb->st_mode & 07777));
		return -1;
	}
	return 0;
}

int
util_program_dir_ok(const char *dir, char *why, size_t len)
{
	struct stat sb;

	if (dir[0] != '/') {
		snprintf(why, len, "not an absolute folder");
		return -1;
	}
	if (stat(dir, &sb) != 0) {
		snprintf(why, len, "%s", strerror(errno));
		return -1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		snprintf(why, len, "not a folder");
		return -1;
	}
	return program_owner_ok(&sb, why, len);
}

int
util_program_ok(const char *path, char *why, size_t len)
{
	char real[PATH_MAX], *dir;
	struct stat sb;
	int rc;

	if ((dir = util_dirname(path)) != NULL &&
	    util_program_dir_ok(dir, why, len) != 0) {
		free(dir);
		return -1;
	}
	free(dir);
	/* What runs is the file a link leads to, in its own folder. */
	if (realpath(path, real) == NULL || stat(real, &sb) != 0) {
		snprintf(why, len, "%s", strerror(errno));
		return -1;
	}
	if (!S_ISREG(sb.st_mode) || access(real, X_OK) != 0) {
		snprintf(why, len, "not an executable file");
		return -1;
	}
	if (program_owner_ok(&sb, why, len) != 0)
		return -1;
	dir = util_dirname(real);
	rc = util_program_dir_ok(dir, why, len);
	free(dir);
	return rc;
}

char *
util_program_find(const char *name)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save, *p, *found = NULL, why[160];

	if (path == NULL || strchr(name, '/') != NULL)
		return NULL;
	copy = xstrdup(path);
	for (dir = strtok_r(copy, ":", &save); dir != NULL && found == NULL;
	    dir = strtok_r(NULL, ":", &save)) {
		p = xasprintf("%s/%s", dir, name);
		if (access(p, X_OK) != 0) {
			free(p);
			continue;
		}
		if (util_program_ok(p, why, sizeof why) == 0)
			found = p;
		else {
			char *e = util_escape(dir);

			/* Said each time: the user may not know PATH has it. */
			fprintf(stderr, "autosched: warning: PATH folder %s: %s"
			    " skipped: %s (programs are taken only from absolute"
			    " folders owned by root or this user, writable by no"
			    " one else)\n", e, name, why);
			free(e);
			free(p);
		}
	}
	free(copy);
	return found;
}
