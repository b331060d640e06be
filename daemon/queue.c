/*
 * The queue commands of `autosched`: submit (validate, snapshot, queue, wake
 * the service), status, cancel and log. The queue itself lives in the store.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "analysis/analysis.h"
#include "best/best.h"
#include "cfg/cfg.h"
#include "daemon/daemon.h"
#include "daemon/daemon_int.h"
#include "job/job.h"
#include "generate/generate.h"
#include "store/store.h"
#include "util/util.h"

/* The options a queue command was given. */
struct queue_args {
	const char	*db;
	const char	*arg;		/* the one positional argument */
	long		 priority;
	int		 json;
};

static void
submit_usage(FILE *f)
{
	fprintf(f, "usage: autosched submit CFG [--db PATH] [--priority N]\n");
}

static void
status_usage(FILE *f)
{
	fprintf(f, "usage: autosched status [ID] [--db PATH] [--json]\n");
}

static void
cancel_usage(FILE *f)
{
	fprintf(f, "usage: autosched cancel ID [--db PATH]\n");
}

static void
log_usage(FILE *f)
{
	fprintf(f, "usage: autosched log ID [--db PATH]\n");
}

/*
 * --priority N, a whole number in [-1000000, 1000000]: 0, or -1 after the
 * message and the usage.
 */
static int
submit_priority(void *args, const struct opt_spec *o, const char *v)
{
	struct queue_args *qa = args;
	char *end;

	(void)o;
	errno = 0;
	qa->priority = strtol(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' ||
	    qa->priority < -1000000 || qa->priority > 1000000) {
		fprintf(stderr, "autosched submit: --priority: \"%s\" is not a"
		    " whole number\n", v);
		submit_usage(stderr);
		return -1;
	}
	return 0;
}

static const struct opt_spec submit_opts[] = {
	{ .name = "db", .kind = OPT_STRING,
	  .off = offsetof(struct queue_args, db) },
	{ .name = "priority", .kind = OPT_FN, .has_arg = 1,
	  .fn = submit_priority },
	{ .name = NULL }
};

static const struct opt_spec status_opts[] = {
	{ .name = "db", .kind = OPT_STRING,
	  .off = offsetof(struct queue_args, db) },
	{ .name = "json", .kind = OPT_FLAG,
	  .off = offsetof(struct queue_args, json), .val = 1 },
	{ .name = NULL }
};

/* cancel's and log's. */
static const struct opt_spec id_opts[] = {
	{ .name = "db", .kind = OPT_STRING,
	  .off = offsetof(struct queue_args, db) },
	{ .name = NULL }
};

/* The queue's words for bad usage; --help is the usage on stderr, 2. */
#define QUEUE_FLAGS	(OPTS_HELP_IS_USAGE | OPTS_OWN_WORDS)

static const struct opts_cmd submit_cmd = {
	"autosched submit", submit_opts, submit_usage, 1, 1, QUEUE_FLAGS
};
static const struct opts_cmd status_cmd = {
	"autosched status", status_opts, status_usage, 0, 1, QUEUE_FLAGS
};
static const struct opts_cmd cancel_cmd = {
	"autosched cancel", id_opts, cancel_usage, 1, 1, QUEUE_FLAGS
};
static const struct opts_cmd log_cmd = {
	"autosched log", id_opts, log_usage, 1, 1, QUEUE_FLAGS
};

/* argv by c's table into qa: 0, or 2 after the message and the usage. */
static int
queue_args(const struct opts_cmd *c, int argc, char **argv,
    struct queue_args *qa)
{
	int first;

	memset(qa, 0, sizeof *qa);
	if (util_opts_parse(c, argc, argv, qa, &first) != 0)
		return 2;
	if (first < argc)
		qa->arg = argv[first];
	return 0;
}

/* A job id from the command line, or -1 after a message. */
static int64_t
queue_job_id(const char *cmd, const char *s)
{
	int64_t v;

	if (util_parse_id(s, &v) != 0) {
		fprintf(stderr, "autosched %s: \"%s\" is not a job id\n", cmd, s);
		return -1;
	}
	return v;
}

/* Open the store of a queue command; read_only for status and log. */
static int
queue_open(const char *cmd, const struct queue_args *qa, int read_only,
    char **dbp, struct store **st)
{
	char *err = NULL;
	int rc;

	*dbp = qa->db != NULL ? xstrdup(qa->db) : daemon_default_db();
	if (access(*dbp, F_OK) != 0) {
		fprintf(stderr, "autosched %s: %s: no such store (give --db or"
		    " set AUTOSCHED_DB)\n", cmd, *dbp);
		return -1;
	}
	if (read_only)
		rc = store_open_readonly(*dbp, st, &err);
	else
		rc = store_open(*dbp, st, &err);
	if (rc != 0) {
		fprintf(stderr, "autosched %s: %s\n", cmd, err);
		free(err);
		return -1;
	}
	return 0;
}

/* Read job id; 2 and a message when the store has no such job. */
static int
queue_get(const char *cmd, struct store *st, const char *db, int64_t id,
    struct store_job *j)
{
	char *err = NULL;
	int rc;

	memset(j, 0, sizeof *j);
	if ((rc = store_job_get(st, id, j, &err)) == 1)
		return 0;
	if (rc == 0)
		fprintf(stderr, "autosched %s: no job %lld in %s\n", cmd,
		    (long long)id, db);
	else
		fprintf(stderr, "autosched %s: %s\n", cmd, err);
	free(err);
	return 2;
}

/*
 * Run fn on the one job that cancel or log names: argv parsed by c, the
 * store opened (read_only for log), the job read into j (fn may read it
 * again). The exit code: fn's, or 2 after the message.
 */
static int
queue_on_job(const struct opts_cmd *c, const char *cmd, int read_only,
    int argc, char **argv, int (*fn)(struct store *, const char *db,
    int64_t id, struct store_job *j))
{
	struct queue_args qa;
	struct store *st = NULL;
	struct store_job j;
	char *db = NULL;
	int64_t id;
	int rc = 2;

	memset(&j, 0, sizeof j);
	if (queue_args(c, argc, argv, &qa) != 0 ||
	    (id = queue_job_id(cmd, qa.arg)) < 0 ||
	    queue_open(cmd, &qa, read_only, &db, &st) != 0)
		goto out;
	if ((rc = queue_get(cmd, st, db, id, &j)) == 0)
		rc = fn(st, db, id, &j);
out:
	store_job_clear(&j);
	if (st != NULL)
		store_close(st);
	free(db);
	return rc;
}

static void
queue_warn(const char *msg, void *arg)
{
	fprintf(stderr, "autosched submit: warning: %s\n", msg);
}

/* 1 if the account uid (in groups[0..ng)) has permission bit r/w/x (4/2/1) on sb. */
static int
queue_may(const struct stat *sb, uid_t uid, const gid_t *groups, int ng,
    unsigned bit)
{
	int i;

	if (sb->st_uid == uid)
		return (sb->st_mode & (bit << 6)) != 0;
	for (i = 0; i < ng; i++) {
		if (groups[i] == sb->st_gid)
			return (sb->st_mode & (bit << 3)) != 0;
	}
	return (sb->st_mode & bit) != 0;
}

int
queue_may_read(const char *path, uid_t uid)
{
	struct passwd pw, *pwp = NULL;
	struct stat sb;
	gid_t groups[256];
	char buf[4096], *real = NULL, *slash;
	int ng = 256, ok = 0;

	if (stat(path, &sb) != 0)
		return 0;
	if (uid == 0)
		return 1;
	if (getpwuid_r(uid, &pw, buf, sizeof buf, &pwp) != 0 || pwp == NULL ||
	    getgrouplist(pw.pw_name, pw.pw_gid, groups, &ng) == -1)
		ng = 0;
	if (!queue_may(&sb, uid, groups, ng, 4) ||
	    (real = realpath(path, NULL)) == NULL)
		goto out;
	/* And reach it: search permission on every folder on the way. */
	while ((slash = strrchr(real, '/')) != NULL) {
		if (slash == real)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (stat(real, &sb) != 0 || !queue_may(&sb, uid, groups, ng, 1))
			goto out;
		if (slash == real)
			break;
	}
	ok = 1;
out:
	free(real);
	return ok;
}

int
queue_snapshot(const char *cfg_path, const char *db, int priority,
    struct store_job *j, void (*warn)(const char *, void *), void *arg,
    char **err)
{
	return queue_snapshot_as(cfg_path, NULL, 0, (uid_t)-1, db, priority, j,
	    warn, arg, err);
}

/*
 * The cfg's input opened on behalf of reader (uid, or -1: ourselves, and
 * nothing opened): once, and what its owner may read is asked of that
 * open file, which is what is read (a link swapped in meanwhile is not
 * followed). 0 and *fd (-1 when nothing was opened), or -1 with *err.
 */
static int
queue_open_input(const struct cfg *cfg, const char *cfg_path, uid_t reader,
    int *fd, char **err)
{
	char in_path[64];

	*fd = -1;
	if (reader == (uid_t)-1 || cfg->input_file == NULL)
		return 0;
	*fd = open(cfg->input_file, O_RDONLY | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC);
	snprintf(in_path, sizeof in_path, "/proc/self/fd/%d", *fd);
	if (*fd != -1 && queue_may_read(in_path, reader))
		return 0;
	util_seterr(err, "%s: [Env] input_file: %s: the submitter (uid %ld) "
	    "may not read it; expected a file its owner can read", cfg_path,
	    cfg->input_file, (long)reader);
	return -1;
}

/*
 * The program to snapshot: a [Problem] sweep's generated module, the input
 * opened on the reader's behalf (*fd, closed here), or the input file.
 * 0 and *mlir (caller frees), or -1 with *err.
 */
static int
queue_read_program(const struct cfg *cfg, const char *cfg_path, int *fd,
    char **mlir, size_t *len, char **err)
{
	if (cfg->problem != NULL) {
		/* A [Problem] sweep: the generated module is the snapshot. */
		char *note = xasprintf("the [Problem] sweep of %s", cfg_path);
		int bad = generate_module(cfg->problem, note, mlir, err) != 0;

		free(note);
		if (bad)
			return -1;
		*len = strlen(*mlir);
		return 0;
	}
	if (*fd != -1) {
		int bad = util_read_fd(*fd, cfg->input_file, ANALYSIS_INPUT_MAX,
		    mlir, len, err) != 0;

		*fd = -1;	/* closed */
		return bad ? -1 : 0;
	}
	return util_read_file(cfg->input_file, ANALYSIS_INPUT_MAX, mlir, len,
	    err) != 0 ? -1 : 0;
}

/* The tunable ops of mlir under cfg, checked as run checks them. 0/-1. */
static int
queue_tunable(struct cfg *cfg, const char *mlir, const char *db, size_t *n,
    char **err)
{
	struct job *job = NULL;
	struct job_opts o;
	size_t i;

	memset(&o, 0, sizeof o);
	o.json = 1;		/* no warnings on stdout */
	o.mlir_text = mlir;
	o.db = db;
	*n = 0;
	if (job_prepare(cfg, &o, &job, err) != 0)
		return -1;
	for (i = 0; i < job_nops(job); i++) {
		const struct space *sp;
		const char *skipped;

		(void)job_op(job, i, &sp, &skipped);
		if (sp != NULL)
			(*n)++;
	}
	job_free(job);
	return 0;
}

int
queue_snapshot_as(const char *cfg_path, const char *text, size_t tlen,
    uid_t reader, const char *db, int priority, struct store_job *j,
    void (*warn)(const char *, void *), void *arg, char **err)
{
	struct cfg *cfg = NULL;
	char *mlir = NULL, *abs = NULL, *own = NULL, hash[17];
	size_t len, i, ntunable = 0;
	int rc = -1, in_fd = -1;

	memset(j, 0, sizeof *j);
	/* Where and how it measures is the service's, not the submitter's. */
	if (text == NULL) {
		if (util_read_file(cfg_path, CFG_TEXT_MAX, &own, &tlen, err) != 0)
			goto out;
		text = own;
	}
	if (cfg_parse(cfg_path, text, tlen, CFG_CHECK_FILES | CFG_SUBMITTED,
	    &cfg, err) != 0)
		goto out;
	for (i = 0; warn != NULL && i < cfg->nwarnings; i++)
		warn(cfg->warnings[i], arg);
	/* Validate the very text we snapshot (it may change meanwhile), as run does. */
	if (queue_open_input(cfg, cfg_path, reader, &in_fd, err) != 0 ||
	    queue_read_program(cfg, cfg_path, &in_fd, &mlir, &len, err) != 0 ||
	    queue_tunable(cfg, mlir, db, &ntunable, err) != 0)
		goto out;
	util_hash_hex(mlir, len, hash);

	/* The service runs elsewhere: relative paths must not depend on our cwd. */
	if ((abs = realpath(cfg_path, NULL)) == NULL)
		abs = xstrdup(cfg_path);

	j->state = xstrdup("queued");
	j->priority = priority;
	j->cfg_path = abs;
	j->cfg_text = xstrdup(cfg->text);
	if (cfg->input_file == NULL)
		j->mlir_path = xstrdup(abs);
	else if ((j->mlir_path = realpath(cfg->input_file, NULL)) == NULL)
		j->mlir_path = xstrdup(cfg->input_file);
	j->mlir_text = mlir;
	j->mlir_hash = xstrdup(hash);
	j->tuner = xstrdup(cfg->tuner != NULL ? cfg->tuner : "");
	/* The job's budget: n_trial for each tunable op. */
	j->n_trial = cfg->n_trial * (int64_t)ntunable;
	mlir = NULL;
	rc = 0;
out:
	if (in_fd != -1)
		close(in_fd);
	free(own);
	free(mlir);
	cfg_free(cfg);
	return rc;
}

int
queue_submit(int argc, char **argv)
{
	struct queue_args qa;
	struct store_job j;
	struct store *st = NULL;
	char *db = NULL, *err = NULL;
	int64_t id;
	int rc = 2;

	memset(&j, 0, sizeof j);
	if (queue_args(&submit_cmd, argc, argv, &qa) != 0)
		return 2;
	db = qa.db != NULL ? xstrdup(qa.db) : daemon_default_db();
	/* Validate before touching the store: a bad cfg leaves no trace. */
	if (queue_snapshot(qa.arg, db, (int)qa.priority, &j, queue_warn, NULL,
	    &err) != 0) {
		fprintf(stderr, "autosched submit: %s\n", err);
		goto out;
	}
	if (store_open(db, &st, &err) != 0) {
		fprintf(stderr, "autosched submit: %s\n", err);
		goto out;
	}
	if ((id = store_job_add(st, &j, &err)) < 0) {
		fprintf(stderr, "autosched submit: %s\n", err);
		rc = 1;
		goto out;
	}
	printf("%lld\n", (long long)id);
	fflush(stdout);
	if (queue_wake(db) == 0)
		fprintf(stderr, "autosched submit: no autoschedd serves %s yet:"
		    " job %lld waits in the queue\n", db, (long long)id);
	rc = 0;
out:
	if (st != NULL)
		store_close(st);
	store_job_clear(&j);
	free(db);
	free(err);
	return rc;
}

/* "2024-05-01 12:00:05" in local time, or "-" for 0. */
static const char *
queue_time(double t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0 || localtime_r(&tt, &tm) == NULL)
		return "-";
	strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	return buf;
}

/* "1h 02m", "3m 20s", "42s". */
static const char *
queue_duration(double s, char *buf, size_t len)
{
	long v = s < 0 ? 0 : (long)(s + 0.5);

	if (v >= 3600)
		snprintf(buf, len, "%ldh %02ldm", v / 3600, (v % 3600) / 60);
	else if (v >= 60)
		snprintf(buf, len, "%ldm %02lds", v / 60, v % 60);
	else
		snprintf(buf, len, "%lds", v);
	return buf;
}

/* Seconds left from the rate so far, or -1 when it cannot be told. */
static double
queue_eta(const struct store_job *j)
{
	double elapsed = util_wall() - j->started;

	if (strcmp(j->state, "running") != 0 || j->started <= 0 ||
	    j->trials_done <= 0 || elapsed <= 0)
		return -1;
	if (j->trials_done >= j->n_trial)
		return 0;
	return (double)(j->n_trial - j->trials_done) * elapsed /
	    (double)j->trials_done;
}

/* 1 if the job is "running" but no runner holds its lease (it died). */
static int
queue_abandoned(const char *db, const struct store_job *j)
{
	return strcmp(j->state, "running") == 0 && !job_runner_alive(db, j->id);
}

static json_t *
queue_json_job(const char *db, const struct store_job *j)
{
	json_t *o = json_object();
	double eta = queue_eta(j);

	json_object_set_new(o, "id", json_integer(j->id));
	json_object_set_new(o, "state", json_string(j->state));
	json_object_set_new(o, "priority", json_integer(j->priority));
	json_object_set_new(o, "cfg", json_string(j->cfg_path ?
	    j->cfg_path : ""));
	json_object_set_new(o, "input", json_string(j->mlir_path ?
	    j->mlir_path : ""));
	json_object_set_new(o, "input_hash", json_string(j->mlir_hash ?
	    j->mlir_hash : ""));
	json_object_set_new(o, "tuner", json_string(j->tuner ? j->tuner : ""));
	json_object_set_new(o, "trials_done", json_integer(j->trials_done));
	json_object_set_new(o, "trials_budget", json_integer(j->n_trial));
	json_object_set_new(o, "created", json_real(j->created));
	json_object_set_new(o, "started", j->started > 0 ?
	    json_real(j->started) : json_null());
	json_object_set_new(o, "finished", j->finished > 0 ?
	    json_real(j->finished) : json_null());
	json_object_set_new(o, "eta_s", eta >= 0 ? json_real(eta) : json_null());
	json_object_set_new(o, "cancel_requested",
	    json_boolean(j->cancel_requested));
	json_object_set_new(o, "abandoned", json_boolean(queue_abandoned(db, j)));
	json_object_set_new(o, "error", j->error ? json_string(j->error) :
	    json_null());
	return o;
}

const char *
daemon_esc(char **slot, const char *s)
{
	free(*slot);
	*slot = util_escape(s != NULL ? s : "");
	return *slot;
}

static void
queue_print_list(const char *db, struct store_job *jobs, size_t n)
{
	char tbuf[32], *e[2] = { NULL, NULL };
	size_t i;

	printf("%-6s %-10s %5s %13s  %-19s  %s\n", "ID", "STATE", "PRIO",
	    "TRIALS", "CREATED", "CFG");
	for (i = 0; i < n; i++) {
		struct store_job *j = &jobs[i];
		char trials[32];

		snprintf(trials, sizeof trials, "%lld/%lld",
		    (long long)j->trials_done, (long long)j->n_trial);
		printf("%-6lld %-10s %5d %13s  %-19s  %s\n", (long long)j->id,
		    queue_abandoned(db, j) ? "abandoned" :
		    daemon_esc(&e[0], j->state), j->priority, trials,
		    queue_time(j->created, tbuf, sizeof tbuf),
		    daemon_esc(&e[1], j->cfg_path));
	}
	free(e[0]);
	free(e[1]);
}

static void
queue_print_job(const struct store_job *j, int abandoned,
    const struct store_best *best, size_t nbest)
{
	char tbuf[32], dbuf[32], *e[2] = { NULL, NULL };
	double eta = queue_eta(j);
	size_t i;

	printf("job %lld: %s%s%s\n", (long long)j->id, daemon_esc(&e[0], j->state),
	    j->cancel_requested && strcmp(j->state, "running") == 0 ?
	    " (cancel requested)" : "", abandoned ? " (abandoned: no runner"
	    " holds it; its runner died)" : "");
	printf("  cfg:      %s\n", daemon_esc(&e[0], j->cfg_path));
	printf("  input:    %s", daemon_esc(&e[0], j->mlir_path));
	printf(" (hash %s)\n", daemon_esc(&e[0], j->mlir_hash ? j->mlir_hash :
	    "-"));
	printf("  tuner:    %s, priority %d\n", daemon_esc(&e[0], j->tuner),
	    j->priority);
	printf("  trials:   %lld / %lld\n", (long long)j->trials_done,
	    (long long)j->n_trial);
	printf("  created:  %s\n", queue_time(j->created, tbuf, sizeof tbuf));
	if (j->started > 0)
		printf("  started:  %s\n", queue_time(j->started, tbuf,
		    sizeof tbuf));
	if (j->finished > 0)
		printf("  finished: %s (took %s)\n", queue_time(j->finished,
		    tbuf, sizeof tbuf), queue_duration(j->finished -
		    j->started, dbuf, sizeof dbuf));
	if (eta >= 0)
		printf("  eta:      %s\n", queue_duration(eta, dbuf,
		    sizeof dbuf));
	if (j->error != NULL && *j->error != '\0')
		printf("  error:    %s\n", daemon_esc(&e[0], j->error));
	if (nbest == 0) {
		printf("  best:     none yet\n");
		goto out;
	}
	printf("  best so far:\n");
	printf("    %-40s %-32s %10s %10s %10s\n", "OP", "CONFIG", "GFLOPS",
	    "MS", "BASELINE");
	for (i = 0; i < nbest; i++) {
		char base[32];

		if (best[i].baseline_gflops > 0)
			snprintf(base, sizeof base, "%.2f",
			    best[i].baseline_gflops);
		else
			snprintf(base, sizeof base, "-");
		printf("    %-40s %-32s %10.2f %10.4f %10s\n",
		    daemon_esc(&e[0], best[i].op_name),
		    daemon_esc(&e[1], best[i].config_name),
		    best[i].gflops, best[i].median_ms, base);
	}
out:
	free(e[0]);
	free(e[1]);
}

static json_t *
queue_json_best(const struct store_best *best, size_t nbest)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < nbest; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "op", json_string(best[i].op_name ?
		    best[i].op_name : ""));
		json_object_set_new(o, "signature", json_string(
		    best[i].op_signature ? best[i].op_signature : ""));
		json_object_set_new(o, "config", json_string(
		    best[i].config_name ? best[i].config_name : ""));
		json_object_set_new(o, "gflops", json_real(best[i].gflops));
		json_object_set_new(o, "median_ms", json_real(best[i].median_ms));
		json_object_set_new(o, "cv", json_real(best[i].cv));
		json_object_set_new(o, "baseline_gflops", best[i].baseline_gflops
		    > 0 ? json_real(best[i].baseline_gflops) : json_null());
		json_array_append_new(a, o);
	}
	return a;
}

static void
queue_json_print(json_t *o)
{
	json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(o);
}

int
queue_status(int argc, char **argv)
{
	struct queue_args qa;
	struct store *st = NULL;
	struct store_job j, *jobs = NULL;
	struct store_best *best = NULL;
	size_t n = 0, nbest = 0, i;
	char *db = NULL, *err = NULL;
	int64_t id = 0;
	int rc = 2;

	memset(&j, 0, sizeof j);
	if (queue_args(&status_cmd, argc, argv, &qa) != 0)
		return 2;
	if (qa.arg != NULL && (id = queue_job_id("status", qa.arg)) < 0)
		return 2;
	if (queue_open("status", &qa, 1, &db, &st) != 0)
		goto out;

	if (id == 0) {
		if (store_job_list(st, &jobs, &n, &err) != 0) {
			fprintf(stderr, "autosched status: %s\n", err);
			rc = 1;
			goto out;
		}
		if (qa.json) {
			json_t *a = json_array();

			for (i = 0; i < n; i++)
				json_array_append_new(a, queue_json_job(db,
				    &jobs[i]));
			queue_json_print(a);
		} else if (n == 0)
			printf("no jobs in %s\n", db);
		else
			queue_print_list(db, jobs, n);
		rc = 0;
		goto out;
	}

	if ((rc = queue_get("status", st, db, id, &j)) != 0)
		goto out;
	/* A store whose best config is refused is bad input, as for best. */
	if (best_configs(st, NULL, id, &best, &nbest, &err) != 0) {
		fprintf(stderr, "autosched status: %s\n", err);
		rc = 2;
		goto out;
	}
	if (qa.json) {
		json_t *o = queue_json_job(db, &j);

		json_object_set_new(o, "best", queue_json_best(best, nbest));
		queue_json_print(o);
	} else
		queue_print_job(&j, queue_abandoned(db, &j), best, nbest);
	rc = 0;
out:
	for (i = 0; i < nbest; i++)
		store_best_clear(&best[i]);
	free(best);
	for (i = 0; i < n; i++)
		store_job_clear(&jobs[i]);
	free(jobs);
	store_job_clear(&j);
	if (st != NULL)
		store_close(st);
	free(db);
	free(err);
	return rc;
}

/* cancel's work on job id, read into j. The exit code. */
static int
queue_cancel_job(struct store *st, const char *db, int64_t id,
    struct store_job *j)
{
	char *err = NULL;
	int rc;

	if (strcmp(j->state, "queued") != 0 &&
	    strcmp(j->state, "running") != 0) {
		fprintf(stderr, "autosched cancel: job %lld has already ended"
		    " (%s)\n", (long long)id, j->state);
		rc = 2;
		goto out;
	}
	if (queue_abandoned(db, j)) {
		/* Nobody would ever see the request: end it now. */
		if (store_job_set_state(st, id, "cancelled", "abandoned: its"
		    " runner died", &err) != 0) {
			fprintf(stderr, "autosched cancel: %s\n", err);
			rc = 1;
			goto out;
		}
		printf("job %lld: cancelled (its runner had died)\n",
		    (long long)id);
		rc = 0;
		goto out;
	}
	if (store_job_cancel(st, id, &err) != 0) {
		fprintf(stderr, "autosched cancel: %s\n", err);
		rc = 1;
		goto out;
	}
	store_job_clear(j);
	if ((rc = queue_get("cancel", st, db, id, j)) != 0)
		goto out;
	if (strcmp(j->state, "running") == 0)
		printf("job %lld: stops at its next trial boundary\n",
		    (long long)id);
	else {
		char *e = NULL;

		printf("job %lld: %s\n", (long long)id,
		    daemon_esc(&e, j->state));
		free(e);
	}
	rc = 0;
out:
	free(err);
	return rc;
}

int
queue_cancel(int argc, char **argv)
{
	return queue_on_job(&cancel_cmd, "cancel", 0, argc, argv,
	    queue_cancel_job);
}

static void
queue_log_line(double when, const char *level, const char *msg, void *arg)
{
	char tbuf[32], *e[2] = { NULL, NULL };

	(void)arg;
	printf("%s %-7s %s\n", queue_time(when, tbuf, sizeof tbuf),
	    daemon_esc(&e[0], level), daemon_esc(&e[1], msg));
	free(e[0]);
	free(e[1]);
}

/* log's work: job id's log lines. The exit code. */
static int
queue_log_job(struct store *st, const char *db, int64_t id,
    struct store_job *j)
{
	char *err = NULL;

	(void)db;
	(void)j;
	if (store_log_foreach(st, id, queue_log_line, NULL, &err) != 0) {
		fprintf(stderr, "autosched log: %s\n", err);
		free(err);
		return 1;
	}
	return 0;
}

int
queue_log(int argc, char **argv)
{
	return queue_on_job(&log_cmd, "log", 1, argc, argv, queue_log_job);
}
