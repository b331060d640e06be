/*
 * IREE's tools: where they are (the cfg's iree_bin, PATH, or the venv
 * scripts/deps.sh installs from PyPI) and which release they are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend_int.h"
#include "backends/iree/iree_int.h"
#include "build_config.h"
#include "util/util.h"

static const char *const tool_names[] = {
	"iree-compile", "iree-run-module", "iree-benchmark-module", NULL,
};

char *
iree_venv_bin(void)
{
	const char *v = getenv("AUTOSCHED_IREE_VENV");
	const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (v != NULL && *v != '\0')
		return util_path_join(v, "bin");
	if (cache != NULL && *cache == '/')
		return xasprintf("%s/autosched/iree-%s/bin", cache,
		    AUTOSCHED_IREE_VERSION);
	return xasprintf("%s/.cache/autosched/iree-%s/bin",
	    home != NULL && *home == '/' ? home : "/root", AUTOSCHED_IREE_VERSION);
}

/* 1 if dir holds every tool, executable. */
static int
dir_has_tools(const char *dir)
{
	char *p;
	int i, ok = 1;

	for (i = 0; ok && tool_names[i] != NULL; i++) {
		p = util_path_join(dir, tool_names[i]);
		ok = access(p, X_OK) == 0;
		free(p);
	}
	return ok;
}

/*
 * 0 if dir and every tool in it pass the rule for programs (absolute
 * folders owned by root or this user, writable by no one else:
 * util_program_ok); else -1, why saying which and what is wrong.
 */
static int
dir_trusted(const char *dir, char *why, size_t len)
{
	char *p, w[160];
	int i, rc = 0;

	if (util_program_dir_ok(dir, w, sizeof w) != 0) {
		snprintf(why, len, "%s", w);
		return -1;
	}
	for (i = 0; rc == 0 && tool_names[i] != NULL; i++) {
		p = util_path_join(dir, tool_names[i]);
		if ((rc = util_program_ok(p, w, sizeof w)) != 0)
			snprintf(why, len, "%s: %s", tool_names[i], w);
		free(p);
	}
	return rc;
}

/* Say why a folder holding the tools is passed over. */
static void
tools_skipped(const char *where, const char *dir, const char *why)
{
	char *e = util_escape(dir);

	fprintf(stderr, "autosched: warning: backend iree: %s %s: IREE's tools"
	    " there skipped: %s (programs are taken only from absolute folders"
	    " owned by root or this user, writable by no one else)\n", where,
	    e, why);
	free(e);
}

/*
 * The first folder of PATH that holds every tool and is trusted, or NULL;
 * those holding them but refused are skipped with a warning. Caller frees.
 */
static char *
path_lookup(void)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save, *found = NULL, why[256];

	if (path == NULL)
		return NULL;
	copy = xstrdup(path);
	for (dir = strtok_r(copy, ":", &save); dir != NULL && found == NULL;
	    dir = strtok_r(NULL, ":", &save)) {
		if (*dir == '\0' || !dir_has_tools(dir))
			continue;
		if (dir_trusted(dir, why, sizeof why) == 0)
			found = xstrdup(dir);
		else
			tools_skipped("PATH folder", dir, why);
	}
	free(copy);
	return found;
}

int
iree_tools_find(const char *params_bin, struct iree_tools *t, char **err)
{
	char *dir = NULL, *venv = iree_venv_bin(), why[256];

	memset(t, 0, sizeof *t);
	if (params_bin != NULL) {
		if (dir_has_tools(params_bin) &&
		    dir_trusted(params_bin, why, sizeof why) != 0) {
			util_seterr(err, "backend iree: iree_bin = %s: %s; expected"
			    " a folder owned by root or this user and writable by"
			    " no one else, holding IREE's tools likewise",
			    params_bin, why);
			free(venv);
			return -1;
		}
		if (dir_has_tools(params_bin))
			dir = xstrdup(params_bin);
	} else if ((dir = path_lookup()) == NULL && dir_has_tools(venv)) {
		if (dir_trusted(venv, why, sizeof why) == 0)
			dir = xstrdup(venv);
		else
			tools_skipped("the venv", venv, why);
	}
	if (dir == NULL) {
		char *root = util_dirname(venv);

		util_seterr(err, "backend iree: IREE's tools (iree-compile, "
		    "iree-run-module, iree-benchmark-module) not found %s%s%s%s; "
		    "install IREE %s with `bash scripts/deps.sh` (PyPI "
		    "iree-base-compiler and iree-base-runtime %s into %s), or "
		    "point iree_bin = in [Env] at the folder that holds them",
		    params_bin != NULL ? "in iree_bin = " : "in a trusted PATH"
		    " folder nor in ", params_bin != NULL ? params_bin : venv,
		    params_bin != NULL ? " (set in the cfg)" : "",
		    "", AUTOSCHED_IREE_VERSION, AUTOSCHED_IREE_VERSION, root);
		free(root);
		free(venv);
		return -1;
	}
	t->compile = util_path_join(dir, tool_names[0]);
	t->run = util_path_join(dir, tool_names[1]);
	t->bench = util_path_join(dir, tool_names[2]);
	/* "3.13.0rc20261016 @ 89ece87…" */
	t->version = backend_tool_version(t->compile, "IREE compiler version ");
	free(dir);
	free(venv);
	return 0;
}

void
iree_tools_free(struct iree_tools *t)
{
	free(t->compile);
	free(t->run);
	free(t->bench);
	free(t->version);
	memset(t, 0, sizeof *t);
}
