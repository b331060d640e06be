/*
 * The foreground commands of `autosched`: run, analyze, space, best, export.
 * Each returns the exit code: 0 success, 1 a job ran but found nothing
 * valid, 2 bad usage or bad input.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "backends/backend.h"
#include "best/best.h"
#include "cfg/cfg.h"
#include "daemon/daemon.h"
#include "daemon/daemon_int.h"
#include "export/export.h"
#include "job/job.h"
#include "measure/batch.h"
#include "search/space.h"
#include "store/store.h"
#include "util/util.h"

static volatile sig_atomic_t cli_stop;

static void
cli_on_signal(int sig)
{
	(void)sig;
	__atomic_store_n(&cli_stop, 1, __ATOMIC_SEQ_CST);
	proc_kill_current();	/* the candidate in flight dies; the job stops at the boundary */
}

char *
daemon_default_db(void)
{
	return xstrdup(store_default_path());
}

int
daemon_isa_env_check(const char *prog)
{
	const char *v = getenv("AUTOSCHED_ISA");
	char why[160];

	if (v == NULL || *v == '\0' ||
	    backend_cpu_isa_check(v, why, sizeof why) == 0)
		return 0;
	fprintf(stderr, "%s: AUTOSCHED_ISA: %s\n", prog, why);
	return -1;
}

static void
cli_print_warnings(const struct cfg *c)
{
	size_t i;

	for (i = 0; i < c->nwarnings; i++)
		fprintf(stderr, "autosched: warning: %s\n", c->warnings[i]);
}

static void
run_usage(FILE *f)
{
	fprintf(f,
	    "usage: autosched run CFG [--db PATH] [--json] [--fresh] [--quiet]\n"
	    "                         [--cpus LIST] [--stage DIR] [--ingest DIR]\n"
	    "Tune every matmul of the cfg's input_file in the foreground.\n"
	    "  --db PATH    the store (default: the cfg's database, $AUTOSCHED_DB,\n"
	    "               or ./autosched.db)\n"
	    "  --json       print the result as one JSON document\n"
	    "  --fresh      measure again what the store already has\n"
	    "  --quiet      no per-candidate blocks, only the summary\n"
	    "  --cpus LIST  CPUs for measurements, e.g. 1 or 0,1 (default: 0,1,…\n"
	    "               as many as the largest threads value needs)\n"
	    "  --stage DIR  executor = batch: compile the next round into DIR for\n"
	    "               autosched-measure --batch DIR on another host; exit 3\n"
	    "  --ingest DIR executor = batch: record DIR's measured results, then\n"
	    "               stage the next round (--stage) or finish\n"
	    "Exit: 0 found a valid config for every op, 1 found nothing valid for\n"
	    "some op, 2 bad usage or input (nothing written), 3 waiting for\n"
	    "measurements (executor = batch).\n");
}

/*
 * `run --ingest DIR`: the folder checked whole (measure_batch_read), made
 * for this cfg and for a job of the store db whose cfg is unchanged; that
 * job runs again on its snapshot of the program (o->job_id, o->mlir_text
 * borrowed from *sj, which the caller clears). 0, or -1 with *err.
 */
static int
cli_ingest_check(const struct cfg *cfg, const char *db, struct job_opts *o,
    struct store_job *sj, char **err)
{
	struct measure_batch *b = NULL;
	struct store *st = NULL;
	char *rp = NULL;
	int rc = -1, r;

	if (measure_batch_read(o->ingest_dir, 1, &b, err) != 0)
		return -1;
	rp = realpath(cfg->path, NULL);
	if (rp == NULL || strcmp(rp, b->cfg) != 0) {
		util_seterr(err, "%s: staged for the cfg %s, not %s; nothing "
		    "recorded", b->manifest, b->cfg, cfg->path);
		goto out;
	}
	if (store_open_readonly(db, &st, err) != 0)
		goto out;
	if ((r = store_job_get(st, b->job, sj, err)) <= 0) {
		if (r == 0)
			util_seterr(err, "%s: job %lld is not in %s; nothing "
			    "recorded", b->manifest, (long long)b->job, db);
		goto out;
	}
	if (sj->cfg_text == NULL || strcmp(sj->cfg_text, cfg->text) != 0 ||
	    sj->mlir_text == NULL) {
		util_seterr(err, "%s: changed since job %lld was staged from it "
		    "(its text differs from the job's): refused, nothing "
		    "recorded; stage again with `run --stage`", cfg->path,
		    (long long)b->job);
		goto out;
	}
	o->job_id = b->job;
	o->mlir_text = sj->mlir_text;
	rc = 0;
out:
	store_close(st);
	measure_batch_free(b);
	free(rp);
	return rc;
}

/* What run was asked: the engine's options, the store, the cfg's path. */
struct run_args {
	struct job_opts	 o;
	const char	*dbarg;		/* --db, or NULL */
	const char	*cfg_path;
	int		*cpus;		/* --cpus, or NULL */
	int		 ncpus;
};

/* --cpus LIST into a->cpus: 0, or -1 after the message. */
static int
run_cpus(void *args, const struct opt_spec *o, const char *v)
{
	struct run_args *a = args;
	char *err = NULL;

	(void)o;
	free(a->cpus);
	a->cpus = NULL;
	if (util_parse_cpus(v, &a->cpus, &a->ncpus, &err) != 0) {
		fprintf(stderr, "autosched run: --cpus %s: %s\n", v, err);
		free(err);
		return -1;
	}
	return 0;
}

static const struct opt_spec run_opts[] = {
	{ .name = "db", .kind = OPT_STRING,
	  .off = offsetof(struct run_args, dbarg) },
	{ .name = "json", .kind = OPT_FLAG,
	  .off = offsetof(struct run_args, o.json), .val = 1 },
	{ .name = "fresh", .kind = OPT_FLAG,
	  .off = offsetof(struct run_args, o.fresh), .val = 1 },
	{ .name = "quiet", .kind = OPT_FLAG,
	  .off = offsetof(struct run_args, o.quiet), .val = 1 },
	{ .name = "cpus", .kind = OPT_FN, .has_arg = 1, .fn = run_cpus },
	{ .name = "stage", .kind = OPT_STRING,
	  .off = offsetof(struct run_args, o.stage_dir) },
	{ .name = "ingest", .kind = OPT_STRING,
	  .off = offsetof(struct run_args, o.ingest_dir) },
	{ .name = NULL }
};

static const struct opts_cmd run_cmd = {
	"autosched run", run_opts, run_usage, 1, 1, 0
};

/* The command line into a: 0, 1 after --help, or 2 after the message. */
static int
run_args(int argc, char **argv, struct run_args *a)
{
	int rc, arg;

	if ((rc = util_opts_parse(&run_cmd, argc, argv, a, &arg)) != 0)
		return rc;
	a->cfg_path = argv[arg];
	return 0;
}

/* SIGINT, SIGTERM and SIGHUP (unless ignored: nohup) stop the job. */
static void
run_signals(void)
{
	static const int stop[] = { SIGINT, SIGTERM }, hup[] = { SIGHUP };

	util_signals_catch(stop, 2, cli_on_signal, 0, NULL);
	/* The terminal gone: stop the same way, unless ignored (nohup). */
	util_signals_catch(hup, 1, cli_on_signal, 1, NULL);
}

/* The exit code of a job's outcome (said, where it is not the job's). */
static int
run_exit(enum job_outcome out, const struct job_opts *o, const char *err)
{
	switch (out) {
	case JOB_OK:
		return 0;
	case JOB_NOTHING:
		return 1;
	case JOB_STOPPED:
		fprintf(stderr, "autosched: stopped; run it again to resume\n");
		return 1;
	case JOB_STAGED:
		if (o->stage_dir != NULL)
			fprintf(o->json ? stderr : stdout, "waiting for measurements"
			    " in %s\n", o->stage_dir);
		else
			fprintf(stderr, "autosched: %s\n", err);
		return 3;
	case JOB_BAD_INPUT:
		fprintf(stderr, "autosched: %s\n", err ? err : "bad input");
		return 2;
	default:
		fprintf(stderr, "autosched: %s\n", err ? err : "job failed");
		return 1;
	}
}

int
cli_run(int argc, char **argv)
{
	struct run_args a;
	struct store_job sj;
	struct cfg *cfg = NULL;
	struct store *st = NULL;
	struct job *job = NULL;
	enum job_outcome out;
	char *err = NULL, *db = NULL, *dbdir = NULL, *work = NULL;
	int rc;

	memset(&a, 0, sizeof a);
	memset(&sj, 0, sizeof sj);
	if ((rc = run_args(argc, argv, &a)) != 0) {
		free(a.cpus);
		return rc == 1 ? 0 : 2;
	}
	rc = 2;
	if (cfg_load(a.cfg_path, &cfg, &err) != 0) {
		fprintf(stderr, "autosched: %s\n", err);
		goto out;
	}
	cli_print_warnings(cfg);
	if (a.dbarg != NULL)
		db = xstrdup(a.dbarg);
	else if (cfg->database != NULL)
		db = xstrdup(cfg->database);
	else
		db = daemon_default_db();
	if (a.cpus == NULL)
		a.cpus = job_default_cpus(cfg, &a.ncpus);
	dbdir = util_dirname(db);
	work = getenv("AUTOSCHED_WORK") ? xstrdup(getenv("AUTOSCHED_WORK")) :
	    util_path_join(dbdir, "autosched-cache");
	a.o.cpus = a.cpus;
	a.o.ncpus = a.ncpus;
	a.o.work_dir = work;
	a.o.db = db;
	a.o.stop = &cli_stop;
	/*
	 * A measured folder: checked whole, its job's snapshot the input.
	 * Everything about the input is checked before the store is touched.
	 */
	if ((a.o.ingest_dir != NULL && cli_ingest_check(cfg, db, &a.o, &sj,
	    &err) != 0) || job_prepare(cfg, &a.o, &job, &err) != 0 ||
	    store_open(db, &st, &err) != 0) {
		fprintf(stderr, "autosched: %s\n", err);
		goto out;
	}
	run_signals();
	out = job_execute(job, st, &err);
	rc = run_exit(out, &a.o, err);
out:
	job_free(job);
	store_close(st);
	cfg_free(cfg);
	store_job_clear(&sj);
	free(err);
	free(db);
	free(dbdir);
	free(work);
	free(a.cpus);
	return rc;
}

static void
analyze_usage(FILE *f)
{
	fprintf(f,
	    "usage: autosched analyze FILE.mlir [--json] [--emit-dispatch N |\n"
	    "       --emit-program]\n"
	    "List the matmul-like ops of an MLIR file (parsed by MLIR itself).\n"
	    "A file with TOSA ops is lowered to linalg first by upstream passes,\n"
	    "and transposes of a matmul's operands are folded into it (stderr\n"
	    "says so).\n"
	    "  --json             one JSON object {\"file\", \"lowered\", \"folded\",\n"
	    "                     \"ops\": [...], \"distinct\": [{name, count, locations}...]}\n"
	    "  --emit-dispatch N  print op N as a standalone dispatch function\n"
	    "  --emit-program     print the program as autosched reads it (lowered,\n"
	    "                     folded), what the transform library applies to\n");
}

/* A convolution's geometry: {name, n, h, w, c, f, kh, kw, oh, ow, ...}. */
static json_t *
analyze_conv_json(const struct op_desc *op)
{
	const struct op_conv *c = &op->conv;
	char *name = analysis_conv_name(op);
	json_t *o;

	o = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
	    "s:[I, I], s:[I, I], s:[I, I, I, I]}", "name", name, "n",
	    (json_int_t)c->n, "h", (json_int_t)c->h, "w", (json_int_t)c->w,
	    "c", (json_int_t)c->c, "f", (json_int_t)c->f, "kh",
	    (json_int_t)c->kh, "kw", (json_int_t)c->kw, "oh", (json_int_t)c->oh,
	    "ow", (json_int_t)c->ow, "stride", (json_int_t)c->stride[0],
	    (json_int_t)c->stride[1], "dilation", (json_int_t)c->dilation[0],
	    (json_int_t)c->dilation[1], "padding", (json_int_t)c->pad[0],
	    (json_int_t)c->pad[1], (json_int_t)c->pad[2], (json_int_t)c->pad[3]);
	free(name);
	return o;
}

static json_t *
analyze_op_json(const struct op_desc *op)
{
	json_t *o = json_object();

	json_object_set_new(o, "index", json_integer(op->index));
	json_object_set_new(o, "kind", json_string(op->kind));
	json_object_set_new(o, "op", json_string(op->op_name));
	json_object_set_new(o, "name", json_string(op->name ? op->name : ""));
	json_object_set_new(o, "batch", json_integer(op->batch));
	json_object_set_new(o, "m", json_integer(op->m));
	json_object_set_new(o, "n", json_integer(op->n));
	json_object_set_new(o, "k", json_integer(op->k));
	json_object_set_new(o, "lhs", json_string(analysis_elem_name(op->lhs)));
	json_object_set_new(o, "rhs", json_string(analysis_elem_name(op->rhs)));
	json_object_set_new(o, "acc", json_string(analysis_elem_name(op->acc)));
	json_object_set_new(o, "transpose_a", json_boolean(op->transpose_a));
	json_object_set_new(o, "transpose_b", json_boolean(op->transpose_b));
	json_object_set_new(o, "function", json_string(op->function));
	json_object_set_new(o, "loc", json_string(op->loc));
	json_object_set_new(o, "tunable", json_boolean(op->tunable));
	json_object_set_new(o, "reason", op->reason ? json_string(op->reason) :
	    json_null());
	json_object_set_new(o, "flops", json_real(analysis_op_flops(op)));
	if (op->conv.layout != CONV_NONE)
		json_object_set_new(o, "conv", analyze_conv_json(op));
	return o;
}

/*
 * The program's distinct ops: first[i] is the index of the first op that
 * is the same as op i (analysis_op_same; i itself when none before it),
 * count[first] how many there are.
 */
static void
analyze_distinct(const struct analysis *an, size_t *first, size_t *count)
{
	size_t n = analysis_count(an), i, j;

	for (i = 0; i < n; i++) {
		first[i] = i;
		for (j = 0; j < i; j++) {
			if (first[j] == j && analysis_op_same(analysis_op(an, j),
			    analysis_op(an, i))) {
				first[i] = j;
				break;
			}
		}
		count[first[i]]++;
	}
}

/*
 * The --json document: how the program was lowered first ("lowered", null
 * when it was not), every op ("ops", as found) and the distinct ones
 * ("distinct": name, count, the index and location of each occurrence).
 */
static void
analyze_json(const struct analysis *an, const char *file, const size_t *first,
    const size_t *count)
{
	json_t *root = json_object(), *arr = json_array(), *dis = json_array();
	const struct analysis_lowering *low;
	size_t n = analysis_count(an), i, j, left;
	char *s;

	json_object_set_new(root, "file", json_string(file));
	low = analysis_lowered(an, &left);
	json_object_set_new(root, "lowered", low == NULL ? json_null() :
	    json_pack("{s:s, s:s, s:I}", "from", low->from, "pipeline",
	    low->pipeline, "remaining", (json_int_t)left));
	json_object_set_new(root, "folded",
	    json_integer((json_int_t)analysis_folded(an)));
	for (i = 0; i < n; i++)
		json_array_append_new(arr, analyze_op_json(analysis_op(an, i)));
	json_object_set_new(root, "ops", arr);
	for (i = 0; i < n; i++) {
		const struct op_desc *op = analysis_op(an, i);
		json_t *o, *locs = json_array(), *idx = json_array();

		if (first[i] != i) {
			json_decref(locs);
			json_decref(idx);
			continue;
		}
		for (j = i; j < n; j++) {
			if (first[j] != i)
				continue;
			json_array_append_new(idx, json_integer((json_int_t)j));
			json_array_append_new(locs,
			    json_string(analysis_op(an, j)->loc));
		}
		o = json_object();
		json_object_set_new(o, "name", json_string(op->name ?
		    op->name : ""));
		json_object_set_new(o, "kind", json_string(op->kind));
		json_object_set_new(o, "tunable", json_boolean(op->tunable));
		json_object_set_new(o, "count", json_integer((json_int_t)count[i]));
		json_object_set_new(o, "indices", idx);
		json_object_set_new(o, "locations", locs);
		json_array_append_new(dis, o);
	}
	json_object_set_new(root, "distinct", dis);
	s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	puts(s);
	free(s);
	json_decref(root);
}

/*
 * A convolution's line under its op: its shapes, stride, dilation and
 * padding, and the matmul it is tuned as.
 */
static void
analyze_conv_line(const struct op_desc *op)
{
	const struct op_conv *c = &op->conv;

	printf("     conv: N=%lld H=%lld W=%lld C=%lld F=%lld KH=%lld KW=%lld "
	    "-> %lldx%lld, stride %lldx%lld, dilation %lldx%lld, padding "
	    "%lld,%lld,%lld,%lld (top,bottom,left,right), %.3g GFLOP%s\n",
	    (long long)c->n, (long long)c->h, (long long)c->w, (long long)c->c,
	    (long long)c->f, (long long)c->kh, (long long)c->kw,
	    (long long)c->oh, (long long)c->ow, (long long)c->stride[0],
	    (long long)c->stride[1], (long long)c->dilation[0],
	    (long long)c->dilation[1], (long long)c->pad[0],
	    (long long)c->pad[1], (long long)c->pad[2], (long long)c->pad[3],
	    analysis_op_flops(op) / 1e9, strcmp(op->kind, "matmul") != 0 ? "" :
	    analysis_conv_im2col(op) ? "; tuned as the matmul of its im2col" :
	    "; tuned as the matmul it is");
}

/* What analyze was asked: JSON, the op whose dispatch to print (-1: none). */
struct analyze_args {
	int	 json;
	long	 emit;
	int	 program;
};

static const struct opt_spec analyze_opts[] = {
	{ .name = "json", .kind = OPT_FLAG,
	  .off = offsetof(struct analyze_args, json), .val = 1 },
	{ .name = "emit-dispatch", .kind = OPT_LONG,
	  .off = offsetof(struct analyze_args, emit), .min = 0, .max = (double)LONG_MAX,
	  .expect = "expected an op index" },
	{ .name = "emit-program", .kind = OPT_FLAG,
	  .off = offsetof(struct analyze_args, program), .val = 1 },
	{ .name = NULL }
};

static const struct opts_cmd analyze_cmd = {
	"autosched analyze", analyze_opts, analyze_usage, 1, 1, 0
};

/* Op emit's dispatch printed: the exit code (said). */
static int
analyze_emit(const struct analysis *an, const char *path, long emit)
{
	const struct op_desc *op;
	char *text = NULL, *err = NULL;
	size_t n = analysis_count(an);
	int rc = 2;

	if ((size_t)emit >= n) {
		fprintf(stderr, "autosched: %s: no op %ld (%zu listed)\n", path,
		    emit, n);
		return 2;
	}
	op = analysis_op(an, (size_t)emit);
	if (!op->tunable) {
		fprintf(stderr, "autosched: %s: op %ld (%s at %s) is not "
		    "tunable: %s\n", path, emit, op->op_name, op->loc,
		    op->reason);
		return 2;
	}
	if (analysis_emit_dispatch(op, &text, &err) != 0)
		fprintf(stderr, "autosched: %s\n", err);
	else {
		fputs(text, stdout);
		rc = 0;
	}
	free(text);
	free(err);
	return rc;
}

/*
 * The program as the analysis read it (lowered, folded) on stdout, or the
 * file itself where it reads it as written: the exit code (said).
 */
static int
analyze_program(const char *path)
{
	const struct analysis_lowering *how;
	char *text = NULL, *err = NULL, *buf = NULL;
	size_t len;
	int rc = 0;

	if (analysis_lower(path, &text, &how, NULL, &err) != 0 ||
	    (text == NULL && util_read_file(path, ANALYSIS_INPUT_MAX, &buf,
	    &len, &err) != 0)) {
		fprintf(stderr, "autosched: %s\n", err);
		rc = 2;
	} else if (text != NULL)
		fputs(text, stdout);
	else
		fwrite(buf, 1, len, stdout);
	free(text);
	free(buf);
	free(err);
	return rc;
}

/* The distinct ops as a table (first and count: analyze_distinct's). */
static void
analyze_table(const struct analysis *an, const size_t *first,
    const size_t *count)
{
	size_t nd = 0, nt = 0, i, n = analysis_count(an);

	printf("%-4s %-14s %-42s %5s %-7s %-22s %s\n", "#", "kind",
	    "name", "count", "tunable", "function", "loc");
	for (i = 0; i < n; i++) {
		const struct op_desc *op = analysis_op(an, i);

		if (first[i] != i)
			continue;
		nd++;
		nt += op->tunable ? count[i] : 0;
		printf("%-4d %-14s %-42s %5zu %-7s %-22s %s%s\n", op->index,
		    op->kind, op->name ? op->name : "-", count[i],
		    op->tunable ? "yes" : "no", op->function, op->loc,
		    count[i] > 1 ? " (first of them)" : "");
		if (op->conv.layout != CONV_NONE)
			analyze_conv_line(op);
		if (!op->tunable)
			printf("     not tunable: %s\n", op->reason);
	}
	if (n == 0)
		printf("(no matmul-like op found)\n");
	else
		printf("%zu op%s, %zu distinct; %zu tunable (tuned once per "
		    "distinct op; --json lists every location)\n", n,
		    n == 1 ? "" : "s", nd, nt);
}

int
cli_analyze(int argc, char **argv)
{
	struct analysis *an = NULL;
	const struct analysis_lowering *low = NULL;
	const char *path;
	char *err = NULL;
	size_t left = 0, n, *first = NULL, *count = NULL;
	struct analyze_args a = { .json = 0, .emit = -1, .program = 0 };
	char *folds;
	int rc, arg;

	if ((rc = util_opts_parse(&analyze_cmd, argc, argv, &a, &arg)) != 0)
		return rc == 1 ? 0 : 2;
	rc = 2;
	path = argv[arg];
	if (analysis_load(path, &an, &err) != 0) {
		fprintf(stderr, "autosched: %s\n", err);
		goto out;
	}
	if ((low = analysis_lowered(an, &left)) != NULL) {
		fprintf(stderr, "autosched: %s: lowered %s to linalg before "
		    "analysis, as mlir-opt --pass-pipeline='%s' does\n", path,
		    low->from, low->pipeline);
		if (left > 0)
			fprintf(stderr, "autosched: warning: %s: %zu %s op%s "
			    "left after lowering (outside a func.func of the top "
			    "module, which the passes do not reach): not "
			    "analysed\n", path, left, low->from,
			    left == 1 ? "" : "s");
	}
	if ((folds = analysis_folded_said(an)) != NULL)
		fprintf(stderr, "autosched: %s: %s\n", path, folds);
	free(folds);
	if (a.emit >= 0 && a.program) {
		fprintf(stderr, "autosched analyze: --emit-dispatch and "
		    "--emit-program: expected one of them\n");
		goto out;
	}
	if (a.program) {
		rc = analyze_program(path);
		goto out;
	}
	if (a.emit >= 0) {
		rc = analyze_emit(an, path, a.emit);
		goto out;
	}
	n = analysis_count(an);
	first = xcalloc(n ? n : 1, sizeof *first);
	count = xcalloc(n ? n : 1, sizeof *count);
	analyze_distinct(an, first, count);
	if (a.json)
		analyze_json(an, path, first, count);
	else
		analyze_table(an, first, count);
	rc = 0;
out:
	free(first);
	free(count);
	free(err);
	analysis_free(an);
	return rc;
}

static void
space_usage(FILE *f)
{
	fprintf(f,
	    "usage: autosched space CFG [--count | --list N] [--json]\n"
	    "The search space of each tunable op after the backend's constraints.\n"
	    "  --count   only the number of valid configs (the default)\n"
	    "  --list N  also the names of the first N configs\n");
}

/*
 * Each knob's values in the space, and where they came from: the cfg's
 * line or the backend's default candidates. Printed, or added to obj.
 */
static void
cli_space_knobs(const struct job *job, const struct space *sp, json_t *obj)
{
	json_t *kn = obj != NULL ? json_object() : NULL;
	const int64_t *v;
	size_t n, i;
	int k, line;

	for (k = 0; k < KNOB_COUNT; k++) {
		char from[32], vals[256] = "";
		size_t len = 0;
		json_t *arr;

		if ((line = job_knob_origin(job, k)) < 0)
			continue;
		v = space_knob_list(sp, (enum knob)k, &n);
		if (line > 0)
			snprintf(from, sizeof from, "cfg line %d", line);
		else
			snprintf(from, sizeof from, "default");
		if (kn != NULL) {
			arr = json_array();
			for (i = 0; i < n; i++)
				json_array_append_new(arr, json_integer(v[i]));
			json_object_set_new(kn, space_knob_name((enum knob)k),
			    json_pack("{s:o, s:s}", "values", arr, "from", from));
			continue;
		}
		for (i = 0; i < n && len < sizeof vals - 24; i++)
			len += (size_t)snprintf(vals + len, sizeof vals - len,
			    "%s%lld", i ? "," : "", (long long)v[i]);
		printf("  %-9s [%s]  (%s)\n", space_knob_name((enum knob)k), vals,
		    from);
	}
	if (kn != NULL)
		json_object_set_new(obj, "knobs", kn);
}

/* What space was asked: configs listed per op (0: the count only), JSON. */
struct space_args {
	long	 list;
	int	 json;
};

/* --count: the sizes only, whatever --list said before. */
static int
space_only_count(void *args, const struct opt_spec *o, const char *v)
{
	(void)o;
	(void)v;
	((struct space_args *)args)->list = 0;
	return 0;
}

static const struct opt_spec space_opts[] = {
	{ .name = "count", .kind = OPT_FN, .fn = space_only_count },
	{ .name = "list", .kind = OPT_LONG,
	  .off = offsetof(struct space_args, list), .min = 0, .max = (double)LONG_MAX,
	  .expect = "expected a count" },
	{ .name = "json", .kind = OPT_FLAG,
	  .off = offsetof(struct space_args, json), .val = 1 },
	{ .name = NULL }
};

static const struct opts_cmd space_cmd = {
	"autosched space", space_opts, space_usage, 1, 1, 0
};

/*
 * Op i of job: its space's size and knobs, and its first list configs;
 * printed, or appended to arr (JSON) when arr is not NULL.
 */
static void
space_op(const struct job *job, size_t i, long list, json_t *arr)
{
	const struct space *sp;
	const char *skipped;
	const struct op_desc *op = job_op(job, i, &sp, &skipped);
	json_t *obj = NULL, *names = NULL;
	char name[160];
	size_t j, uses;

	if (skipped != NULL) {
		if (arr == NULL)
			printf("%s (%s): not tuned: %s\n", op->name ? op->name :
			    op->op_name, op->loc, skipped);
		return;
	}
	uses = job_op_uses(job, i, NULL);
	if (arr != NULL) {
		obj = json_object();
		names = json_array();
		json_object_set_new(obj, "index", json_integer(op->index));
		json_object_set_new(obj, "name", json_string(op->name));
		json_object_set_new(obj, "count",
		    json_integer((json_int_t)space_count(sp)));
		json_object_set_new(obj, "occurrences",
		    json_integer((json_int_t)uses));
	} else if (uses > 1)
		printf("%s x%zu (%s and %zu more): %llu valid configs\n",
		    op->name, uses, op->loc, uses - 1,
		    (unsigned long long)space_count(sp));
	else
		printf("%s (%s): %llu valid configs\n", op->name, op->loc,
		    (unsigned long long)space_count(sp));
	cli_space_knobs(job, sp, obj);
	for (j = 0; j < (size_t)list && j < space_count(sp); j++) {
		struct config c;

		space_get(sp, j, &c);
		space_config_name(&c, job_knobs(job), name, sizeof name);
		if (arr != NULL)
			json_array_append_new(names, json_string(name));
		else
			printf("  %s\n", name);
	}
	if (arr != NULL) {
		if (list > 0)
			json_object_set_new(obj, "configs", names);
		else
			json_decref(names);
		json_array_append_new(arr, obj);
	}
}

int
cli_space(int argc, char **argv)
{
	struct cfg *cfg = NULL;
	struct job *job = NULL;
	struct job_opts o;
	json_t *root = NULL, *arr = NULL;
	char *err = NULL, *s;
	struct space_args a = { .list = 0, .json = 0 };
	int rc, arg;
	size_t i, n;

	if ((rc = util_opts_parse(&space_cmd, argc, argv, &a, &arg)) != 0)
		return rc == 1 ? 0 : 2;
	rc = 2;
	if (cfg_load(argv[arg], &cfg, &err) != 0) {
		fprintf(stderr, "autosched: %s\n", err);
		goto out;
	}
	cli_print_warnings(cfg);
	/*
	 * The same checks and spaces as `run`, without running anything: its
	 * outputs held apart from the store run would use (one validator).
	 */
	memset(&o, 0, sizeof o);
	o.db = cfg->database != NULL ? cfg->database : store_default_path();
	if (job_prepare(cfg, &o, &job, &err) != 0) {
		fprintf(stderr, "autosched: %s\n", err);
		goto out;
	}
	if (a.json) {
		root = json_object();
		arr = json_array();
		json_object_set_new(root, "cfg", json_string(cfg->path));
		json_object_set_new(root, "backend", json_string(cfg->backend));
	}
	n = job_nops(job);
	for (i = 0; i < n; i++)
		space_op(job, i, a.list, arr);
	if (a.json) {
		json_object_set_new(root, "ops", arr);
		arr = NULL;
		s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		puts(s);
		free(s);
	}
	rc = 0;
out:
	json_decref(arr);
	json_decref(root);
	job_free(job);
	cfg_free(cfg);
	free(err);
	return rc;
}

/*
 * The best rows of the store at db (NULL = the default), filtered as
 * store_best does. The store is closed again before returning. 0, or -1
 * after printing why. Caller frees the rows (store_best_clear each).
 */
int
cli_store_open(const char *prefix, const char *db, struct store **st)
{
	char *err = NULL;

	if (access(db, F_OK) != 0) {
		fprintf(stderr, "%s: %s: no such store\n", prefix, db);
		return -1;
	}
	if (store_open_readonly(db, st, &err) != 0) {
		fprintf(stderr, "%s: %s\n", prefix, err);
		free(err);
		return -1;
	}
	return 0;
}

static int
cli_load_best(const char *db, const char *op, int64_t job,
    struct store_best **rows, size_t *n)
{
	struct store *st = NULL;
	char *def = NULL, *err = NULL;
	int rc = -1;

	if (db == NULL)
		db = def = daemon_default_db();
	if (cli_store_open("autosched", db, &st) != 0)
		goto out;
	if (best_configs(st, op, job, rows, n, &err) != 0) {
		fprintf(stderr, "autosched: %s\n", err);
		goto out;
	}
	rc = 0;
out:
	store_close(st);
	free(def);
	free(err);
	return rc;
}

/* v as JSON, null when 0 (not measured, not known). */
static json_t *
cli_json_num(double v)
{
	return v > 0 ? json_real(v) : json_null();
}

/* A count (a clock, °C) as JSON, null when 0 (not known). */
static json_t *
cli_json_int(int v)
{
	return v > 0 ? json_integer(v) : json_null();
}

/*
 * What a best row adds to its JSON object: the reference's routine, the
 * share of the measured peak, the GPU and its clocks, the job's choice
 * with its interval; null where not measured (CPU rows have no GPU).
 */
static void
cli_best_json_more(json_t *o, const struct store_best *r)
{
	json_t *g = json_null();

	json_object_set_new(o, "reference", r->reference_routine[0] ?
	    json_string(r->reference_routine) : json_null());
	json_object_set_new(o, "vs_reference", cli_json_num(
	    r->reference_gflops > 0 ? r->gflops / r->reference_gflops : 0));
	json_object_set_new(o, "peak", r->peak_routine[0] ?
	    json_string(r->peak_routine) : json_null());
	json_object_set_new(o, "peak_gflops", cli_json_num(r->peak_gflops));
	json_object_set_new(o, "of_peak", cli_json_num(r->peak_gflops > 0 ?
	    r->gflops / r->peak_gflops : 0));
	if (r->gpu[0] != '\0')
		g = json_pack("{s:s, s:o, s:o, s:o}", "name", r->gpu, "sm_mhz",
		    cli_json_int(r->sm_mhz), "mem_mhz", cli_json_int(r->mem_mhz),
		    "temp_c", cli_json_int(r->temp_c));
	json_object_set_new(o, "gpu", g);
	if (r->choice_reason[0] != '\0' && r->speedup_rounds > 0)
		json_object_set_new(o, "vs_default_ci", json_pack("{s:f, s:f, "
		    "s:f, s:i, s:s}", "est", r->speedup, "lo", r->speedup_lo,
		    "hi", r->speedup_hi, "rounds", r->speedup_rounds, "choice",
		    r->choice_reason));
	else
		json_object_set_new(o, "vs_default_ci", json_null());
}

/* One best row as a JSON object. */
static json_t *
cli_best_json(const struct store_best *r)
{
	json_t *o = json_object(), *kn = json_object();
	int k;

	json_object_set_new(o, "op", json_string(r->op_name));
	json_object_set_new(o, "signature", json_string(r->op_signature));
	json_object_set_new(o, "config", json_string(r->config_name));
	for (k = 0; k < KNOB_COUNT; k++) {
		if (r->config.v[k] != 0)
			json_object_set_new(kn, space_knob_name(k),
			    json_integer(r->config.v[k]));
	}
	json_object_set_new(o, "knobs", kn);
	json_object_set_new(o, "gflops", json_real(r->gflops));
	json_object_set_new(o, "runtime_ms", json_real(r->median_ms));
	json_object_set_new(o, "cv", json_real(r->cv));
	json_object_set_new(o, "baseline_gflops", json_real(r->baseline_gflops));
	json_object_set_new(o, "reference_gflops", json_real(r->reference_gflops));
	json_object_set_new(o, "trials", json_integer(r->trials));
	json_object_set_new(o, "cpu", json_string(r->cpu));
	json_object_set_new(o, "toolchain", json_string(r->toolchain));
	json_object_set_new(o, "backend", json_string(r->backend));
	json_object_set_new(o, "job_id", json_integer(r->job_id));
	cli_best_json_more(o, r);
	return o;
}

static void
best_usage(FILE *f)
{
	fprintf(f,
	    "usage: autosched best [--db PATH] [--op NAME] [--job ID] [--all]\n"
	    "                      [--format table|json|csv]\n"
	    "The best verified config of each op tuned on this machine.\n"
	    "  --op NAME  ops whose name or signature contains NAME\n"
	    "  --all      every op ever tuned (the default when --op is absent)\n");
}

/* A CSV field: control characters escaped for the terminal, then quoted. */
static void
best_csv_field(const char *str)
{
	char *e = util_escape(str != NULL ? str : ""), *s = e;

	if (strpbrk(s, ",\"") == NULL) {
		fputs(s, stdout);
		free(e);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
	free(e);
}

/* A CSV figure: empty when 0 (not measured, not known). */
static void
best_csv_num(const char *fmt, double v, int last)
{
	if (v > 0)
		printf(fmt, v);
	putchar(last ? '\n' : ',');
}

/* The columns after job_id: reference, GPU, clocks, peak, the CI. */
static void
best_csv_more(const struct store_best *r)
{
	int ci = r->choice_reason[0] != '\0' && r->speedup_rounds > 1;

	best_csv_field(r->reference_routine);
	putchar(',');
	best_csv_field(r->gpu);
	putchar(',');
	best_csv_num("%.0f", r->sm_mhz, 0);
	best_csv_num("%.0f", r->mem_mhz, 0);
	best_csv_num("%.0f", r->temp_c, 0);
	best_csv_num("%.3f", r->peak_gflops, 0);
	best_csv_num("%.4f", r->peak_gflops > 0 ? r->gflops /
	    r->peak_gflops : 0, 0);
	best_csv_num("%.3f", ci ? r->speedup_lo : 0, 0);
	best_csv_num("%.3f", ci ? r->speedup_hi : 0, 1);
}

/*
 * What best or export --format json was asked: the store, the filters, the
 * form of the output and (export) where it goes.
 */
struct best_args {
	char		*db;
	const char	*op, *format, *outpath;
	int64_t		 job;
};

static const char *const best_formats[] = { "table", "json", "csv", NULL };

static const struct opt_spec best_opts[] = {
	{ .name = "db", .kind = OPT_PATH, .off = offsetof(struct best_args, db) },
	{ .name = "op", .kind = OPT_STRING, .off = offsetof(struct best_args, op) },
	{ .name = "job", .kind = OPT_JOB, .off = offsetof(struct best_args, job) },
	{ .name = "all", .kind = OPT_UNSET, .off = offsetof(struct best_args, op) },
	{ .name = "format", .kind = OPT_WORD,
	  .off = offsetof(struct best_args, format), .words = best_formats,
	  .expect = "expected table, json or csv" },
	{ .name = NULL }
};

static const struct opts_cmd best_cmd = {
	"autosched best", best_opts, best_usage, 0, 0, 0
};

static void
best_print_json(const struct store_best *rows, size_t n)
{
	json_t *arr = json_array();
	char *s;
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(arr, cli_best_json(&rows[i]));
	s = json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	puts(s);
	free(s);
	json_decref(arr);
}

static void
best_print_csv(const struct store_best *rows, size_t n)
{
	size_t i;

	printf("op,signature,config,gflops,runtime_ms,cv,baseline_gflops,"
	    "speedup,reference_gflops,vs_reference,trials,backend,cpu,"
	    "toolchain,job_id,reference,gpu,sm_mhz,mem_mhz,temp_c,"
	    "peak_gflops,of_peak,vs_default_lo,vs_default_hi\n");
	for (i = 0; i < n; i++) {
		const struct store_best *r = &rows[i];

		best_csv_field(r->op_name);
		putchar(',');
		best_csv_field(r->op_signature);
		putchar(',');
		best_csv_field(r->config_name);
		printf(",%.3f,%.6f,%.4f,%.3f,%.3f,%.3f,%.3f,%lld,", r->gflops,
		    r->median_ms, r->cv, r->baseline_gflops,
		    r->baseline_gflops > 0 ? r->gflops / r->baseline_gflops : 0,
		    r->reference_gflops, r->reference_gflops > 0 ?
		    r->gflops / r->reference_gflops : 0, (long long)r->trials);
		best_csv_field(r->backend);
		putchar(',');
		best_csv_field(r->cpu);
		putchar(',');
		best_csv_field(r->toolchain);
		printf(",%lld,", (long long)r->job_id);
		best_csv_more(r);
	}
}

static void
best_print_table(const struct store_best *rows, size_t n, const char *op)
{
	char *e[2] = { NULL, NULL };
	size_t i;

	printf("%-40s %-36s %9s %8s %8s %6s\n", "op", "best config",
	    "GFLOP/s", "vs base", "vs BLAS", "trials");
	for (i = 0; i < n; i++) {
		const struct store_best *r = &rows[i];
		char vb[16] = "-", vr[16] = "-";

		if (r->baseline_gflops > 0)
			snprintf(vb, sizeof vb, "%.2fx",
			    r->gflops / r->baseline_gflops);
		if (r->reference_gflops > 0)
			snprintf(vr, sizeof vr, "%.2fx",
			    r->gflops / r->reference_gflops);
		printf("%-40s %-36s %9.2f %8s %8s %6lld\n",
		    daemon_esc(&e[0], r->op_name),
		    daemon_esc(&e[1], r->config_name), r->gflops, vb, vr,
		    (long long)r->trials);
	}
	if (n == 0)
		printf("(nothing tuned yet%s%s)\n", op ? " for " : "",
		    op ? op : "");
	free(e[0]);
	free(e[1]);
}

/*
 * best's and export's work: argv parsed by c into a (format preset), the
 * best rows asked for loaded, and out(a, rows) saying them. The exit code.
 */
static int
cli_best_rows(const struct opts_cmd *c, int argc, char **argv,
    const char *format, int (*out)(const struct best_args *,
    const struct store_best *, size_t))
{
	struct best_args a;
	struct store_best *rows = NULL;
	size_t n = 0, i;
	int rc, first;

	memset(&a, 0, sizeof a);
	a.format = format;
	if ((rc = util_opts_parse(c, argc, argv, &a, &first)) != 0) {
		rc = rc == 1 ? 0 : 2;
		goto out;
	}
	rc = 2;
	if (cli_load_best(a.db, a.op, a.job, &rows, &n) != 0)
		goto out;
	rc = out(&a, rows, n);
out:
	for (i = 0; rows != NULL && i < n; i++)
		store_best_clear(&rows[i]);
	free(rows);
	free(a.db);
	return rc;
}

/* best's rows in its --format. 0. */
static int
best_out(const struct best_args *a, const struct store_best *rows, size_t n)
{
	if (strcmp(a->format, "json") == 0)
		best_print_json(rows, n);
	else if (strcmp(a->format, "csv") == 0)
		best_print_csv(rows, n);
	else
		best_print_table(rows, n, a->op);
	return 0;
}

int
cli_best(int argc, char **argv)
{
	return cli_best_rows(&best_cmd, argc, argv, "table", best_out);
}

static void
export_usage(FILE *f)
{
	fprintf(f,
	    "usage: autosched export [--db PATH] [--op NAME | --all] [--job ID]\n"
	    "                        [--format json|transform|iree-spec] [-o FILE]\n"
	    "The best config of each op, as input for a compiler: json (one\n"
	    "object per op with its shape, types and knob values), transform (a\n"
	    "transform-dialect library of the measured schedules) or iree-spec\n"
	    "(an IREE llvm-cpu tuning spec); see autosched export --format\n"
	    "transform --help.\n");
}

/* 1 when argv asks for a compiler format (export/'s), not json. */
static int
export_other_format(int argc, char **argv)
{
	const char *f;
	int i;

	for (i = 1; i < argc; i++) {
		f = NULL;
		if (strcmp(argv[i], "--format") == 0 && i + 1 < argc)
			f = argv[i + 1];
		else if (strncmp(argv[i], "--format=", 9) == 0)
			f = argv[i] + 9;
		if (f != NULL && strcmp(f, "json") != 0)
			return 1;
	}
	return 0;
}

/* Only json is parsed here; the compiler formats went to export/ already. */
static const char *const export_formats[] = { "json", NULL };

static const struct opt_spec export_opts[] = {
	{ .name = "db", .kind = OPT_PATH,
	  .off = offsetof(struct best_args, db) },
	{ .name = "op", .kind = OPT_STRING,
	  .off = offsetof(struct best_args, op) },
	{ .name = "job", .kind = OPT_JOB,
	  .off = offsetof(struct best_args, job) },
	{ .name = "all", .kind = OPT_UNSET,
	  .off = offsetof(struct best_args, op) },
	{ .name = "format", .kind = OPT_WORD,
	  .off = offsetof(struct best_args, format), .words = export_formats,
	  .expect = "expected json, transform or iree-spec" },
	{ .name = "output", .letter = 'o', .kind = OPT_STRING,
	  .off = offsetof(struct best_args, outpath) },
	{ .name = NULL }
};

static const struct opts_cmd export_cmd = {
	"autosched export", export_opts, export_usage, 0, 0, 0
};

/* The rows as autosched-configs/1 JSON, to stdout or a->outpath. */
static int
export_json_out(const struct best_args *a, const struct store_best *rows,
    size_t n)
{
	json_t *root = json_object(), *arr = json_array();
	char *s, *def, *text, *err = NULL;
	size_t i;
	int rc = 0;

	json_object_set_new(root, "format", json_string("autosched-configs/1"));
	for (i = 0; i < n; i++)
		json_array_append_new(arr, cli_best_json(&rows[i]));
	json_object_set_new(root, "configs", arr);
	s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (a->outpath == NULL || strcmp(a->outpath, "-") == 0) {
		puts(s);
		free(s);
		return 0;
	}
	def = a->db == NULL ? daemon_default_db() : NULL;
	text = xasprintf("%s\n", s);
	if (export_write(a->outpath, text, a->db != NULL ? a->db : def, NULL,
	    &err) != 0) {
		fprintf(stderr, "autosched: %s\n", err);
		rc = 2;
	}
	free(text);
	free(def);
	free(s);
	free(err);
	return rc;
}

int
cli_export(int argc, char **argv)
{
	/* The compiler formats live in export/. */
	if (export_other_format(argc, argv))
		return export_cmd_export(argc, argv);
	return cli_best_rows(&export_cmd, argc, argv, NULL, export_json_out);
}
