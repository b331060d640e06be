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

/* The first folder of PATH that holds every tool, or NULL. Caller frees. */
static char *
path_lookup(void)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save, *found = NULL;

	if (path == NULL)
		return NULL;
	copy = xstrdup(path);
	for (dir = strtok_r(copy, ":", &save); dir != NULL && found == NULL;
	    dir = strtok_r(NULL, ":", &save)) {
		if (*dir != '\0' && dir_has_tools(dir))
			found = xstrdup(dir);
	}
	free(copy);
	return found;
}

int
iree_tools_find(const char *params_bin, struct iree_tools *t, char **err)
{
	char *dir = NULL, *venv = iree_venv_bin();

	memset(t, 0, sizeof *t);
	if (params_bin != NULL) {
		if (dir_has_tools(params_bin))
			dir = xstrdup(params_bin);
	} else if ((dir = path_lookup()) == NULL && dir_has_tools(venv))
		dir = xstrdup(venv);
	if (dir == NULL) {
		char *root = util_dirname(venv);

		util_seterr(err, "backend iree: IREE's tools (iree-compile, "
		    "iree-run-module, iree-benchmark-module) not found %s%s%s%s; "
		    "install IREE %s with `bash scripts/deps.sh` (PyPI "
		    "iree-base-compiler and iree-base-runtime %s into %s), or "
		    "point iree_bin = in [Env] at the folder that holds them",
		    params_bin != NULL ? "in iree_bin = " : "on PATH nor in ",
		    params_bin != NULL ? params_bin : venv,
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
