/*
 * The backend registry and the helpers every backend shares.
 */
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"

extern const struct backend_ops replay_backend;	/* backends/replay */

/* A new backend is a folder, its ops table, and one line here. */
static const struct backend_ops *const backend_table[] = {
	&mlircpu_backend,
	&iree_backend,
	&iree_cuda_backend,
	&replay_backend,
	NULL
};

static const char *const status_names[TRIAL_STATUS_COUNT] = {
	"ok", "compile_failed", "compile_timeout", "crashed", "timeout",
	"wrong_result", "unstable", "error",
};

static const char *const counter_names[TRIAL_CTR_COUNT] = {
	"context_switches", "cpu_migrations", "page_faults", "task_clock_ns",
	"cycles", "instructions", "cache_misses",
};

const char *
backend_counter_name(enum trial_counter c)
{
	return (unsigned)c < TRIAL_CTR_COUNT ? counter_names[c] : NULL;
}

const char *
backend_status_name(enum trial_status s)
{
	if ((unsigned)s >= TRIAL_STATUS_COUNT)
		return "error";
	return status_names[s];
}

int
backend_status_lookup(const char *name)
{
	int i;

	for (i = 0; i < TRIAL_STATUS_COUNT; i++) {
		if (strcmp(status_names[i], name) == 0)
			return i;
	}
	return -1;
}

void
backend_result_clear(struct trial_result *r)
{
	free(r->error);
	memset(r, 0, sizeof *r);
}

const struct backend_ops *const *
backend_all(size_t *n)
{
	*n = sizeof backend_table / sizeof backend_table[0] - 1;
	return backend_table;
}

const struct backend_ops *
backend_find(const char *name)
{
	size_t i, n;
	const struct backend_ops *const *all = backend_all(&n);

	for (i = 0; i < n; i++) {
		if (strcmp(all[i]->name, name) == 0)
			return all[i];
	}
	return NULL;
}
