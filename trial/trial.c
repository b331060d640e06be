/*
 * The names of a trial's statuses and counters (the store's words for them),
 * and clearing a result.
 */
#include <stdlib.h>
#include <string.h>

#include "trial/trial.h"

static const char *const status_names[TRIAL_STATUS_COUNT] = {
	"ok", "compile_failed", "compile_timeout", "crashed", "timeout",
	"wrong_result", "unstable", "error",
};

static const char *const counter_names[TRIAL_CTR_COUNT] = {
	"context_switches", "cpu_migrations", "page_faults", "task_clock_ns",
	"cycles", "instructions", "cache_misses",
};

const char *
trial_counter_name(enum trial_counter c)
{
	return (unsigned)c < TRIAL_CTR_COUNT ? counter_names[c] : NULL;
}

const char *
trial_status_name(enum trial_status s)
{
	if ((unsigned)s >= TRIAL_STATUS_COUNT)
		return "error";
	return status_names[s];
}

int
trial_status_lookup(const char *name)
{
	int i;

	for (i = 0; i < TRIAL_STATUS_COUNT; i++) {
		if (strcmp(status_names[i], name) == 0)
			return i;
	}
	return -1;
}

void
trial_result_clear(struct trial_result *r)
{
	free(r->error);
	memset(r, 0, sizeof *r);
}
