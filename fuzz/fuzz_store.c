/*
 * libFuzzer harness of the store as input (issue 31): the input is a list of
 * row edits (any value into any column of any table, rows copied or
 * deleted) applied with SQL to a copy of a real store, as a member of the
 * store's group could; then every read path runs on it in-process: best,
 * the trial walk, resume's find, jobs and their logs, the scheduler's plan,
 * the HTML report, the exports, and the service's pickup of a job (claim,
 * the row's check, its cfg with the stored-job rules, job_prepare on its
 * snapshot). No crash, no hang, and no file opened outside the store's
 * folder (open, openat and fopen are watched while the readers run).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "best/best.h"
#include "cfg/cfg.h"
#include "export/export.h"
#include "html/html.h"
#include "job/job.h"
#include "store/store.h"
#include "util/util.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static char	 dir[64];		/* the store's folder */
static char	 path[96];		/* the store */
static char	*image;			/* the real store's bytes */
static size_t	 image_len;
static int	 guard;			/* watch opens while set */

static const char *const tables[] = {
	"targets", "ops", "jobs", "job_log", "trials", "job_ops",
	"allocations", "choices",
};
#define NTABLES	(sizeof tables / sizeof tables[0])
static char	*cols[NTABLES][64];	/* each table's columns, id first */
static int	 ncols[NTABLES];

static const char mlir[] =
	"func.func @f(%a: tensor<16x8xf32>, %b: tensor<8x32xf32>,"
	" %c: tensor<16x32xf32>) -> tensor<16x32xf32> {\n"
	"  %0 = linalg.matmul ins(%a, %b : tensor<16x8xf32>, tensor<8x32xf32>)"
	" outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>\n"
	"  return %0 : tensor<16x32xf32>\n}\n";
static const char cfgtext[] =
	"[Env]\ninput_file = f.mlir\n[SearchSpace]\ntile_m = [8,16]\n"
	"tile_n = [16,32]\ntile_k = [8]\n[SearchStrategy]\nn_trial = 3\n";

/* Where the readers may open files: the store's folder and the system's. */
static void
watch(const char *p)
{
	static const char *const ok[] = { "/proc/", "/sys/", "/dev/",
	    "/usr/", "/lib", "/etc/localtime", "/etc/ld.so",
	    /* libFuzzer's own artifacts, written as it dies */
	    "./crash-", "./timeout-", "./oom-", "./leak-", "./slow-unit-",
	    NULL };
	int i;

	if (!guard || p == NULL || strncmp(p, dir, strlen(dir)) == 0)
		return;
	for (i = 0; ok[i] != NULL; i++) {
		if (strncmp(p, ok[i], strlen(ok[i])) == 0)
			return;
	}
	fprintf(stderr, "fuzz_store: a reader opened %s, outside the store\n",
	    p);
	abort();
}

int
open(const char *p, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	watch(p);
	if (real == NULL)
		real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	return real(p, flags, mode);
}

int
openat(int fd, const char *p, int flags, ...)
{
	static int (*real)(int, const char *, int, ...);
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	if (p[0] == '/' || fd == AT_FDCWD)
		watch(p);
	if (real == NULL)
		real = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT,
		    "openat");
	return real(fd, p, flags, mode);
}

FILE *
fopen(const char *p, const char *mode)
{
	static FILE *(*real)(const char *, const char *);

	watch(p);
	if (real == NULL)
		real = (FILE *(*)(const char *, const char *))dlsym(RTLD_NEXT,
		    "fopen");
	return real(p, mode);
}

/* Each table's columns, for the edits. */
static void
table_columns(void)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	size_t i;

	if (sqlite3_open(path, &db) != SQLITE_OK)
		abort();
	for (i = 0; i < NTABLES; i++) {
		char *q = xasprintf("SELECT name FROM pragma_table_info('%s')",
		    tables[i]);

		if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK)
			abort();
		while (sqlite3_step(st) == SQLITE_ROW && ncols[i] < 64)
			cols[i][ncols[i]++] = xstrdup((const char *)
			    sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
		free(q);
	}
	sqlite3_close(db);
}

/* A trial of each phase for op on target in job. 0 or -1. */
static int
add_trials(struct store *s, int64_t job, int64_t opid, int64_t target,
    char **err)
{
	static const char *const phases[] = { "baseline", "tune", "tune",
	    "confirm", "final", "reference" };
	struct store_trial t;
	size_t i;

	for (i = 0; i < sizeof phases / sizeof phases[0]; i++) {
		memset(&t, 0, sizeof t);
		t.job_id = job;
		t.op_id = opid;
		t.target_id = target;
		t.phase = phases[i];
		t.config.v[KNOB_TILE_M] = 8 << (i % 2);
		t.config.v[KNOB_TILE_N] = 16;
		t.config.v[KNOB_TILE_K] = 8;
		t.result.status = TRIAL_OK;
		t.result.median_ms = 0.01 + (double)i;
		t.result.gflops = 10 + (double)i;
		t.result.reps = 5;
		if (store_trial_add(s, &t, err) < 0)
			return -1;
	}
	return 0;
}

/* The plan, the job's op and its choice. 0 or -1. */
static int
add_plan(struct store *s, int64_t job, int64_t opid, int64_t target,
    char **err)
{
	struct store_alloc a;
	struct store_job_op jo;
	struct store_choice ch;

	memset(&a, 0, sizeof a);
	a.job_id = job;
	a.seq = 1;
	a.op_id = opid;
	a.trials = 3;
	a.weight = 1;
	a.reason = "first round";
	memset(&jo, 0, sizeof jo);
	jo.job_id = job;
	jo.op_id = opid;
	jo.occurrences = 1;
	jo.locations = "f.mlir:2:8";
	memset(&ch, 0, sizeof ch);
	ch.job_id = job;
	ch.op_id = opid;
	ch.target_id = target;
	ch.config_name = "tile_8x16x8";
	ch.speedup = 1.5;
	ch.rounds = 5;
	ch.occurrences = 1;
	if (store_alloc_add(s, &a, err) < 0 ||
	    store_job_op_add(s, &jo, err) != 0 ||
	    store_choice_add(s, &ch, err) < 0 ||
	    store_log(s, job, "info", "made by fuzz_store") != 0)
		return -1;
	return 0;
}

/* The real store: a queued job with its snapshots, trials, a plan. */
static void
make_store(void)
{
	struct store *s;
	struct op_desc op;
	struct store_job j;
	char *err = NULL;
	int64_t target, opid, job;

	memset(&op, 0, sizeof op);
	op.name = "matmul_16x32x8";
	op.kind = "matmul";
	op.op_name = "linalg.matmul";
	op.batch = 1;
	op.m = 16;
	op.n = 32;
	op.k = 8;
	op.lhs = op.rhs = op.acc = ELEM_F32;
	op.tunable = 1;
	op.function = "f";
	op.loc = "f.mlir:2:8";
	if (store_open(path, &s, &err) != 0)
		goto fail;
	target = store_target(s, "x86", "", "llvm", "mlir-cpu", &err);
	opid = store_op(s, &op, &err);
	memset(&j, 0, sizeof j);
	j.state = "queued";
	j.cfg_path = "/nonexistent/f.cfg";
	j.cfg_text = (char *)cfgtext;
	j.mlir_path = "/nonexistent/f.mlir";
	j.mlir_text = (char *)mlir;
	j.mlir_hash = "0123456789abcdef";
	j.tuner = "grid";
	j.n_trial = 3;
	if (target < 0 || opid < 0 ||
	    (job = store_job_add(s, &j, &err)) < 0 ||
	    add_trials(s, job, opid, target, &err) != 0 ||
	    add_plan(s, job, opid, target, &err) != 0)
		goto fail;
	store_close(s);
	if (util_read_file(path, 1 << 24, &image, &image_len, &err) != 0)
		goto fail;
	table_columns();
	return;
fail:
	fprintf(stderr, "fuzz_store: making the store: %s\n", err);
	abort();
}

/* Bind the next value the input says (an integer, a real, text, NULL). */
static void
bind_value(sqlite3_stmt *st, int i, const uint8_t **d, size_t *n)
{
	static const int64_t ints[] = { -1, 0, 1, 64, 65, -5, INT64_MIN,
	    INT64_MAX, INT32_MAX, (int64_t)1 << 40, 1000000 };
	static const double reals[] = { 1e300, -1e300, 1e-300, -0.0, 1e9,
	    3.5, -1 };
	uint8_t kind = *n > 0 ? (*d)[0] : 0;
	int64_t v = 0;
	size_t len;

	if (*n > 0) {
		(*d)++;
		(*n)--;
	}
	switch (kind % 6) {
	case 0:
		sqlite3_bind_int64(st, i, ints[(kind / 6) %
		    (sizeof ints / sizeof ints[0])]);
		break;
	case 1:
		sqlite3_bind_double(st, i, reals[(kind / 6) %
		    (sizeof reals / sizeof reals[0])]);
		break;
	case 2:
		len = *n < 8 ? *n : 8;
		memcpy(&v, *d, len);
		*d += len;
		*n -= len;
		sqlite3_bind_int64(st, i, v);
		break;
	case 3:
		len = *n > 0 ? (*d)[0] % 48 : 0;
		if (*n > 0) {
			(*d)++;
			(*n)--;
		}
		if (len > *n)
			len = *n;
		sqlite3_bind_text(st, i, (const char *)*d, (int)len,
		    SQLITE_TRANSIENT);
		*d += len;
		*n -= len;
		break;
	case 4:
		sqlite3_bind_null(st, i);
		break;
	default:
		sqlite3_bind_text(st, i, kind & 64 ? "queued" : "running", -1,
		    SQLITE_STATIC);
		break;
	}
}

/* One edit: table, what (set a column, copy a row, delete a row), row. */
static void
edit(sqlite3 *db, const uint8_t **d, size_t *n)
{
	size_t t = (*d)[0] % NTABLES, c, k;
	int what = (*d)[1] % 4, row = (*d)[2] % 4 + 1;
	sqlite3_stmt *st = NULL;
	char *q, *list;

	*d += 3;
	*n -= 3;
	c = ncols[t] > 1 ? 1 + (*n > 0 ? (*d)[0] : 0) % (size_t)(ncols[t] - 1) : 0;
	if (*n > 0) {
		(*d)++;
		(*n)--;
	}
	if (what == 3) {
		q = xasprintf("DELETE FROM %s WHERE rowid = %d", tables[t], row);
	} else if (what == 2) {
		list = xstrdup(cols[t][1]);
		for (k = 2; k < (size_t)ncols[t]; k++) {
			char *l = xasprintf("%s, %s", list, cols[t][k]);

			free(list);
			list = l;
		}
		q = xasprintf("INSERT INTO %s (%s) SELECT %s FROM %s WHERE"
		    " rowid = %d", tables[t], list, list, tables[t], row);
		free(list);
	} else
		q = xasprintf("UPDATE %s SET %s = ?1 WHERE rowid = %d",
		    tables[t], cols[t][c], row);
	if (sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK) {
		if (what < 2)
			bind_value(st, 1, d, n);
		(void)sqlite3_step(st);
	}
	sqlite3_finalize(st);
	free(q);
}

static int
walk_fn(const struct store_trial *t, const struct op_desc *op, void *arg)
{
	size_t *sum = arg;

	*sum += strlen(t->phase ? t->phase : "") + strlen(op->name ?
	    op->name : "") + (t->config_name ? strlen(t->config_name) : 0);
	return 0;
}

static void
log_fn(double when, const char *level, const char *msg, void *arg)
{
	size_t *sum = arg;

	(void)when;
	*sum += strlen(level ? level : "") + strlen(msg ? msg : "");
}

/* What best, status, log and resume read, and the report if asked. */
static void
read_store(struct store *s, int report)
{
	struct store_best *b;
	struct store_job *jobs;
	struct store_alloc *a;
	struct store_job_op *jo;
	struct trial_result r;
	struct html_opts ho;
	size_t n, i, sum = 0, len;
	char *err = NULL, *text = NULL;

	if (best_configs(s, NULL, 0, &b, &n, &err) == 0) {
		for (i = 0; i < n; i++)
			store_best_clear(&b[i]);
		free(b);
	}
	free(err);
	err = NULL;
	(void)store_trial_foreach(s, 0, 0, NULL, walk_fn, &sum, &err);
	free(err);
	err = NULL;
	if (store_trial_find(s, 1, 1, "tile_8x16x8", &r, &err) == 1)
		trial_result_clear(&r);
	free(err);
	err = NULL;
	if (store_job_list(s, &jobs, &n, &err) == 0) {
		for (i = 0; i < n; i++) {
			char *e = NULL;

			(void)store_job_check(s, &jobs[i], &e);
			free(e);
			(void)store_log_foreach(s, jobs[i].id, log_fn, &sum, NULL);
			store_job_clear(&jobs[i]);
		}
		free(jobs);
	}
	free(err);
	err = NULL;
	if (store_alloc_list(s, 1, &a, &n, &err) == 0)
		free(a);
	free(err);
	err = NULL;
	if (store_job_op_list(s, 1, &jo, &n, &err) == 0) {
		for (i = 0; i < n; i++)
			free(jo[i].locations);
		free(jo);
	}
	free(err);
	err = NULL;
	if (!report)
		return;
	memset(&ho, 0, sizeof ho);
	ho.db_path = path;
	if (html_report_text(s, &ho, &text, &len, &err) == 0)
		free(text);
	free(err);
}

/* What export reads (a library, a spec). */
static void
read_exports(void)
{
	struct export_set *es = NULL;
	char *err = NULL, *text = NULL;

	if (export_load(path, NULL, 0, EXPORT_SCHEDULES, &es, &err) == 0) {
		free(export_transform(es));
		export_free(es);
	}
	free(err);
	err = NULL;
	if (export_load(path, NULL, 0, EXPORT_IREE, &es, &err) == 0) {
		if (export_iree_spec(es, NULL, EXPORT_MATCH_IREE, &text,
		    &err) >= 0)
			free(text);
		export_free(es);
	}
	free(err);
}

/* The service's pickup of a queued job, as far as it runs in-process. */
static void
pickup(struct store *s)
{
	struct store_job j;
	struct cfg *cfg = NULL;
	struct job_opts o;
	struct job *job = NULL;
	char *err = NULL;

	if (store_job_claim(s, &j, &err) != 1)
		goto out;
	if (store_job_check(s, &j, &err) != 0 ||
	    cfg_parse(j.cfg_path ? j.cfg_path : "job.cfg", j.cfg_text,
	    strlen(j.cfg_text), CFG_STORED, &cfg, &err) != 0)
		goto out;
	(void)cfg_drop_submitted(cfg);
	if (cfg->replay_db != NULL || cfg->iree_bin != NULL)
		abort();	/* a stored cfg names no store and no program */
	memset(&o, 0, sizeof o);
	o.json = 1;
	o.quiet = 1;
	o.job_id = j.id;
	o.mlir_text = j.mlir_text;
	o.db = path;
	if (job_prepare(cfg, &o, &job, &err) == 0)
		job_free(job);
out:
	cfg_free(cfg);
	store_job_clear(&j);
	free(err);
}

/* The store's folder, removed when libFuzzer exits. */
static void
remove_dir(void)
{
	static const char *const files[] = { "s.db", "s.db-wal", "s.db-shm",
	    "s.db-journal", "s.db.ops.lock", NULL };
	char *p;
	int i;

	guard = 0;
	for (i = 0; files[i] != NULL; i++) {
		p = xasprintf("%s/%s", dir, files[i]);
		unlink(p);
		free(p);
	}
	rmdir(dir);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct store *s;
	sqlite3 *db;
	char *err = NULL, *p;
	int i, which = 7;

	if (image == NULL) {
		snprintf(dir, sizeof dir, "/tmp/fuzz_store.XXXXXX");
		if (mkdtemp(dir) == NULL)
			abort();
		snprintf(path, sizeof path, "%s/s.db", dir);
		atexit(remove_dir);
		make_store();
	}
	for (i = 0; i < 3; i++) {
		p = xasprintf("%s%s", path, i == 0 ? "-wal" : i == 1 ?
		    "-shm" : "-journal");
		unlink(p);
		free(p);
	}
	if (util_write_file(path, image, image_len, &err) != 0)
		abort();
	/* The first byte picks the slower readers, so each run stays short. */
	if (size > 0) {
		which = data[0];
		data++;
		size--;
	}
	if (sqlite3_open(path, &db) != SQLITE_OK)
		abort();
	sqlite3_exec(db, "PRAGMA foreign_keys = OFF", NULL, NULL, NULL);
	while (size >= 3)
		edit(db, &data, &size);
	sqlite3_close(db);

	guard = 1;
	if (store_open(path, &s, &err) == 0) {
		read_store(s, which & 1);
		if (which & 2)
			pickup(s);
		store_close(s);
	}
	free(err);
	if (which & 4)
		read_exports();
	guard = 0;
	return 0;
}
