/*
 * `autosched watch`: a running job's progress in the terminal, for whoever
 * prefers it to the HTML report: trials done, per op the best so far against
 * the baseline and OpenBLAS, failures by kind, the last log line. Redrawn in
 * place on a terminal, printed when it changes otherwise; ends with the job.
 */
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backends/backend.h"
#include "daemon/daemon.h"
#include "daemon/daemon_int.h"
#include "store/store.h"
#include "util/util.h"

#define WATCH_OPS_MAX	64	/* ops shown; a larger sweep shows a count */

struct watch_op {
	int64_t		 id;
	char		 name[96];
	int64_t		 tune, fails[TRIAL_STATUS_COUNT];
	double		 best, baseline, reference;
};

struct watch {
	int64_t		 job;
	struct watch_op	 ops[WATCH_OPS_MAX];
	size_t		 nops, more;
	int64_t		 trials;
	char		 last_log[256];
};

static volatile sig_atomic_t watch_stop;

static void
watch_on_signal(int sig)
{
	(void)sig;
	watch_stop = 1;
}

static int
watch_trial(const struct store_trial *t, const struct op_desc *op, void *arg)
{
	struct watch *w = arg;
	struct watch_op *o = NULL;
	char *e;
	int valid;
	size_t i;

	if (t->job_id != w->job)
		return 0;
	w->trials++;
	for (i = 0; i < w->nops; i++) {
		if (w->ops[i].id == t->op_id)
			o = &w->ops[i];
	}
	if (o == NULL) {
		if (w->nops == WATCH_OPS_MAX) {
			w->more++;
			return 0;
		}
		o = &w->ops[w->nops++];
		memset(o, 0, sizeof *o);
		o->id = t->op_id;
		e = util_escape(op->name ? op->name : "?");
		snprintf(o->name, sizeof o->name, "%s", e);
		free(e);
	}
	valid = (t->result.status == TRIAL_OK ||
	    t->result.status == TRIAL_UNSTABLE) && t->result.gflops > 0;
	if (strcmp(t->phase, "tune") == 0) {
		o->tune++;
		if (valid && t->result.gflops > o->best)
			o->best = t->result.gflops;
	} else if (strcmp(t->phase, "baseline") == 0 && valid)
		o->baseline = t->result.gflops;
	else if (strcmp(t->phase, "reference") == 0 && valid)
		o->reference = t->result.gflops;
	if (!valid && t->result.status >= 0 &&
	    t->result.status < TRIAL_STATUS_COUNT)
		o->fails[t->result.status]++;
	return 0;
}

static void
watch_log(double when, const char *level, const char *msg, void *arg)
{
	struct watch *w = arg;
	char *e[2] = { NULL, NULL };

	(void)when;
	snprintf(w->last_log, sizeof w->last_log, "%s: %s",
	    daemon_esc(&e[0], level), daemon_esc(&e[1], msg));
	free(e[0]);
	free(e[1]);
}

/* Print one view of job j into f. */
static void
watch_print(FILE *f, const struct store_job *j, const struct watch *w)
{
	double frac = j->n_trial > 0 ? (double)j->trials_done /
	    (double)j->n_trial : 0;
	int bar = (int)(frac * 30 + 0.5), i;
	char *e = NULL;
	size_t k;

	if (bar > 30)
		bar = 30;
	fprintf(f, "job %lld  %-9s [", (long long)j->id, daemon_esc(&e, j->state));
	free(e);
	for (i = 0; i < 30; i++)
		fputc(i < bar ? '#' : '.', f);
	fprintf(f, "] %lld/%lld tune trials", (long long)j->trials_done,
	    (long long)j->n_trial);
	if (j->started > 0)
		fprintf(f, ", %.0f s", (j->finished > 0 ? j->finished :
		    util_wall()) - j->started);
	fprintf(f, "\n  %-40s %6s %10s %9s %9s  %s\n", "op", "trials",
	    "best GF/s", "vs base", "vs BLAS", "failures");
	for (k = 0; k < w->nops; k++) {
		const struct watch_op *o = &w->ops[k];
		char vb[16] = "-", vr[16] = "-", fails[160] = "";
		size_t off = 0;
		int s;

		if (o->best > 0 && o->baseline > 0)
			snprintf(vb, sizeof vb, "%.2fx", o->best / o->baseline);
		if (o->best > 0 && o->reference > 0)
			snprintf(vr, sizeof vr, "%.2fx", o->best / o->reference);
		for (s = 0; s < TRIAL_STATUS_COUNT; s++) {
			if (o->fails[s] > 0 && off < sizeof fails)
				off += (size_t)snprintf(fails + off, sizeof fails -
				    off, "%s%s %lld", off ? ", " : "",
				    trial_status_name(s), (long long)o->fails[s]);
		}
		fprintf(f, "  %-40s %6lld %10.2f %9s %9s  %s\n", o->name,
		    (long long)o->tune, o->best, vb, vr, fails);
	}
	if (w->more > 0)
		fprintf(f, "  … and %zu more ops\n", w->more);
	if (w->last_log[0] != '\0')
		fprintf(f, "  last log: %s\n", w->last_log);
}

static void
watch_usage(FILE *f)
{
	fprintf(f,
	    "usage: autosched watch [ID] [--db PATH] [--interval SECONDS] [--once]\n"
	    "Follow a job's progress in the terminal until it ends (Ctrl-C to\n"
	    "leave). Without ID: the running job, else the newest.\n");
}

/* What watch was asked: the store, the job (0: pick one), the pace. */
struct watch_args {
	char	*db;
	int64_t	 id;
	double	 interval;
	int	 once;
};

static const struct opt_spec watch_opts[] = {
	{ .name = "db", .kind = OPT_PATH, .off = offsetof(struct watch_args, db) },
	{ .name = "interval", .kind = OPT_REAL,
	  .off = offsetof(struct watch_args, interval), .min = 0.1, .max = 3600,
	  .expect = "expected seconds in [0.1, 3600]" },
	{ .name = "once", .kind = OPT_FLAG,
	  .off = offsetof(struct watch_args, once), .val = 1 },
	{ .name = NULL }
};

static const struct opts_cmd watch_cmd = {
	"autosched watch", watch_opts, watch_usage, 0, 1, 0
};

/* The command line into a: 0, 1 after --help, or 2 after the message. */
static int
watch_args(int argc, char **argv, struct watch_args *a)
{
	int rc, first;

	a->interval = 2;
	if ((rc = util_opts_parse(&watch_cmd, argc, argv, a, &first)) != 0)
		return rc;
	if (first < argc && util_parse_id(argv[first], &a->id) != 0) {
		fprintf(stderr, "autosched watch: %s: expected a job id\n",
		    argv[first]);
		return 2;
	}
	return 0;
}

/*
 * The job to watch when none was named: the running one, else the newest.
 * 0 and *id, or the exit code (said).
 */
static int
watch_pick(struct store *st, const char *db, int64_t *id)
{
	struct store_job *jobs = NULL;
	char *err = NULL;
	size_t n = 0, i;
	int rc = 0;

	if (store_job_list(st, &jobs, &n, &err) != 0) {
		fprintf(stderr, "autosched watch: %s\n", err);
		free(err);
		return 1;
	}
	for (i = 0; i < n && *id == 0; i++) {
		if (strcmp(jobs[i].state, "running") == 0)
			*id = jobs[i].id;
	}
	if (*id == 0 && n > 0)
		*id = jobs[0].id;
	if (*id == 0) {
		fprintf(stderr, "autosched watch: no jobs in %s\n", db);
		rc = 2;
	}
	for (i = 0; i < n; i++)
		store_job_clear(&jobs[i]);
	free(jobs);
	return rc;
}

/*
 * One view of job id into *cur (caller frees), job j read into *j. 0, or
 * the exit code (said).
 */
static int
watch_view(struct store *st, int64_t id, struct store_job *j, struct watch *w,
    char **cur)
{
	char *err = NULL;
	size_t len;
	FILE *mf;
	int found;

	store_job_clear(j);
	if ((found = store_job_get(st, id, j, &err)) <= 0) {
		fprintf(stderr, "autosched watch: %s\n", found < 0 ? err :
		    "no such job");
		free(err);
		return found < 0 ? 1 : 2;
	}
	memset(w, 0, sizeof *w);
	w->job = id;
	if (store_trial_foreach(st, 0, 0, NULL, watch_trial, w, &err) < 0 ||
	    store_log_foreach(st, id, watch_log, w, &err) != 0) {
		fprintf(stderr, "autosched watch: %s\n", err);
		free(err);
		return 1;
	}
	if ((mf = open_memstream(cur, &len)) == NULL)
		return 2;
	watch_print(mf, j, w);
	fclose(mf);
	return 0;
}

/* Views of job id every a->interval seconds until it ends: the exit code. */
static int
watch_loop(struct store *st, int64_t id, const struct watch_args *a)
{
	struct store_job j;
	struct watch *w = xcalloc(1, sizeof *w);
	struct timespec ts;
	char *prev = NULL, *cur = NULL;
	int rc, tty = isatty(STDOUT_FILENO);

	memset(&j, 0, sizeof j);
	for (;;) {
		if ((rc = watch_view(st, id, &j, w, &cur)) != 0)
			break;
		/* Without a terminal, a view is printed only when it changes. */
		if (prev == NULL || strcmp(prev, cur) != 0 || tty) {
			if (tty && !a->once)
				fputs("\033[H\033[2J", stdout);
			fputs(cur, stdout);
			fflush(stdout);
		}
		free(prev);
		prev = cur;
		cur = NULL;
		if (a->once || watch_stop || (strcmp(j.state, "queued") != 0 &&
		    strcmp(j.state, "running") != 0))
			break;
		ts.tv_sec = (time_t)a->interval;
		ts.tv_nsec = (long)((a->interval - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
		if (watch_stop)
			break;
	}
	free(w);
	free(prev);
	free(cur);
	store_job_clear(&j);
	return rc;
}

int
cli_watch(int argc, char **argv)
{
	struct watch_args a;
	static const int watch_signals[] = { SIGINT, SIGTERM };
	struct store *st = NULL;
	char *err = NULL;
	int rc;

	memset(&a, 0, sizeof a);
	if ((rc = watch_args(argc, argv, &a)) != 0) {
		rc = rc == 1 ? 0 : 2;
		goto out;
	}
	rc = 2;
	if (a.db == NULL)
		a.db = daemon_default_db();
	if (cli_store_open("autosched watch", a.db, &st) != 0)
		goto out;
	if (a.id == 0 && (rc = watch_pick(st, a.db, &a.id)) != 0)
		goto out;
	util_signals_catch(watch_signals, 2, watch_on_signal, 0, NULL);
	rc = watch_loop(st, a.id, &a);
out:
	store_close(st);
	free(a.db);
	free(err);
	return rc;
}
