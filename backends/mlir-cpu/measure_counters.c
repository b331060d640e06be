/*
 * Per-process counters for autosched-measure: perf_event_open software
 * events (always there on Linux) and hardware events (only where the PMU is
 * exposed; absent on most VMs), counted for every thread of the process.
 */
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/mlir-cpu/measure_int.h"

#define MAX_TASKS	64

const char *const counter_names[CTR_COUNT] = {
	"context_switches", "cpu_migrations", "page_faults", "task_clock_ns",
	"cycles", "instructions", "cache_misses",
};

static const struct {
	uint32_t	type;
	uint64_t	config;
	int		user_only_ok;	/* still means something without the kernel */
} events[CTR_COUNT] = {
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 0 },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 0 },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 1 },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 1 },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 1 },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1 },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, 1 },
};

struct counters {
	int	fd[CTR_COUNT][MAX_TASKS];	/* per thread alive at open; -1 = none */
	int	ntasks;
	int	rusage_ctx;	/* context switches from getrusage instead */
};

/*
 * One counter on thread tid, inherited by the threads it creates later (the
 * OpenMP team starts after this). With perf_event_paranoid >= 2 and no
 * CAP_PERFMON the kernel part is refused: retry user-only where that still
 * means something (a context switch is counted in the kernel: not there).
 */
static int
event_open(int i, pid_t tid)
{
	struct perf_event_attr a;
	int fd, pass;

	for (pass = 0; pass < 2; pass++) {
		memset(&a, 0, sizeof a);
		a.size = sizeof a;
		a.type = events[i].type;
		a.config = events[i].config;
		a.inherit = 1;
		a.exclude_hv = 1;
		a.exclude_kernel = pass;
		fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1,
		    PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0)
			return fd;
		if ((errno != EACCES && errno != EPERM) || !events[i].user_only_ok)
			break;
	}
	return -1;	/* ENOENT/EOPNOTSUPP (no PMU), EACCES, ENOSYS: absent */
}

struct counters *
counters_open(void)
{
	struct counters *c;
	pid_t tids[MAX_TASKS];
	DIR *d;
	struct dirent *e;
	int i, t, n = 0;

	c = calloc(1, sizeof *c);
	if (c == NULL)
		die("out of memory");
	/* Threads already running (a BLAS pool started by a constructor). */
	if ((d = opendir("/proc/self/task")) != NULL) {
		while ((e = readdir(d)) != NULL && n < MAX_TASKS) {
			if (e->d_name[0] != '.')
				tids[n++] = (pid_t)atoi(e->d_name);
		}
		closedir(d);
	}
	if (n == 0)
		tids[n++] = 0;
	c->ntasks = n;
	for (i = 0; i < CTR_COUNT; i++) {
		for (t = 0; t < n; t++) {
			c->fd[i][t] = event_open(i, tids[t]);
			if (c->fd[i][t] < 0) {
				/* All threads or none: a partial sum would lie. */
				while (t-- > 0) {
					close(c->fd[i][t]);
					c->fd[i][t] = -1;
				}
				for (t = 0; t < n; t++)
					c->fd[i][t] = -1;
				break;
			}
		}
	}
	c->rusage_ctx = c->fd[CTR_CONTEXT_SWITCHES][0] < 0;
	return c;
}

void
counters_sample(struct counters *c, uint64_t v[CTR_COUNT], uint32_t *have)
{
	struct rusage ru;
	uint64_t x;
	int i, t, ok;

	*have = 0;
	for (i = 0; i < CTR_COUNT; i++) {
		v[i] = 0;
		if (c->fd[i][0] < 0)
			continue;
		ok = 1;
		for (t = 0; t < c->ntasks; t++) {
			if (read(c->fd[i][t], &x, sizeof x) != (ssize_t)sizeof x)
				ok = 0;
			else
				v[i] += x;
		}
		if (ok)
			*have |= 1u << i;
	}
	if (c->rusage_ctx && getrusage(RUSAGE_SELF, &ru) == 0) {
		/* Voluntary and involuntary, every thread of the process. */
		v[CTR_CONTEXT_SWITCHES] = (uint64_t)ru.ru_nvcsw +
		    (uint64_t)ru.ru_nivcsw;
		*have |= 1u << CTR_CONTEXT_SWITCHES;
	}
}

void
counters_close(struct counters *c)
{
	int i, t;

	if (c == NULL)
		return;
	for (i = 0; i < CTR_COUNT; i++) {
		for (t = 0; t < c->ntasks; t++) {
			if (c->fd[i][t] >= 0)
				close(c->fd[i][t]);
		}
	}
	free(c);
}
