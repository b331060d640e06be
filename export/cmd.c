/*
 * The export commands: `autosched export --format transform|iree-spec` and
 * `autosched annotate`. Exit 0 written, 1 nothing to export, 2 bad usage or
 * input (nothing written).
 */
#include <sys/stat.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "store/store.h"
#include "util/util.h"

struct cmd_opts {
	const char	*db, *op, *out, *format, *syntax, *matcher;
	int64_t		 job;
	int		 untuned;
	struct export_rest rest;	/* build: --rest, --rest-threads, --math, --buffers, --fuse, --rest-fuse */
	int		 rest_given;	/* one of them was given */
};

/* The defaults: the default store; build's rest vectorized, fast math, pooled. */
static void
cmd_opts_init(struct cmd_opts *o)
{
	memset(o, 0, sizeof *o);
	o->db = store_default_path();
	o->rest.mode = EXPORT_REST_VECTOR;
	o->rest.threads = util_ncpus() > 0 ? util_ncpus() : 1;
	o->rest.math = EXPORT_MATH_FAST;
	o->rest.pool = 1;
	o->rest.fuse = 1;
	o->rest.rest_fuse = 1;
}

static const char *const cmd_rest_words[] = { "vector", "loops", NULL };
static const int cmd_rest_vals[] = { EXPORT_REST_VECTOR, EXPORT_REST_LOOPS };
static const char *const cmd_math_words[] = { "fast", "exact", NULL };
static const int cmd_math_vals[] = { EXPORT_MATH_FAST, EXPORT_MATH_EXACT };
static const char *const cmd_buffers_words[] = { "pool", "malloc", NULL };
static const int cmd_buffers_vals[] = { 1, 0 };
static const char *const cmd_fuse_words[] = { "on", "off", NULL };
static const int cmd_fuse_vals[] = { 1, 0 };
static const char *const cmd_matchers[] = { "iree", "upstream", NULL };

/*
 * The options of export (its compiler formats), annotate and build, one
 * table: each command refuses afterwards the ones that are not its own.
 */
static const struct opt_spec cmd_opts_table[] = {
	{ .name = "db", .kind = OPT_STRING, .off = offsetof(struct cmd_opts, db) },
	{ .name = "op", .kind = OPT_STRING, .off = offsetof(struct cmd_opts, op) },
	{ .name = "job", .kind = OPT_JOB, .off = offsetof(struct cmd_opts, job) },
	{ .name = "all", .kind = OPT_UNSET, .off = offsetof(struct cmd_opts, op) },
	{ .name = "format", .kind = OPT_STRING,
	  .off = offsetof(struct cmd_opts, format) },
	{ .name = "iree-syntax", .kind = OPT_STRING,
	  .off = offsetof(struct cmd_opts, syntax) },
	{ .name = "iree-matcher", .kind = OPT_WORD,
	  .off = offsetof(struct cmd_opts, matcher), .words = cmd_matchers,
	  .expect = "expected iree or upstream" },
	{ .name = "output", .letter = 'o', .kind = OPT_STRING,
	  .off = offsetof(struct cmd_opts, out) },
	{ .name = "untuned", .kind = OPT_FLAG,
	  .off = offsetof(struct cmd_opts, untuned), .val = 1 },
	{ .name = "rest", .kind = OPT_CHOICE,
	  .off = offsetof(struct cmd_opts, rest.mode), .words = cmd_rest_words,
	  .vals = cmd_rest_vals, .expect = "expected vector or loops",
	  .given = offsetof(struct cmd_opts, rest_given) },
	{ .name = "rest-threads", .kind = OPT_INT,
	  .off = offsetof(struct cmd_opts, rest.threads), .min = 1, .max = 1024,
	  .expect = "expected a number of threads, 1 to 1024",
	  .given = offsetof(struct cmd_opts, rest_given) },
	{ .name = "math", .kind = OPT_CHOICE,
	  .off = offsetof(struct cmd_opts, rest.math), .words = cmd_math_words,
	  .vals = cmd_math_vals, .expect = "expected fast or exact",
	  .given = offsetof(struct cmd_opts, rest_given) },
	{ .name = "buffers", .kind = OPT_CHOICE,
	  .off = offsetof(struct cmd_opts, rest.pool), .words = cmd_buffers_words,
	  .vals = cmd_buffers_vals, .expect = "expected pool or malloc",
	  .given = offsetof(struct cmd_opts, rest_given) },
	{ .name = "fuse", .kind = OPT_CHOICE,
	  .off = offsetof(struct cmd_opts, rest.fuse), .words = cmd_fuse_words,
	  .vals = cmd_fuse_vals, .expect = "expected on or off",
	  .given = offsetof(struct cmd_opts, rest_given) },
	{ .name = "rest-fuse", .kind = OPT_CHOICE,
	  .off = offsetof(struct cmd_opts, rest.rest_fuse),
	  .words = cmd_fuse_words, .vals = cmd_fuse_vals,
	  .expect = "expected on or off",
	  .given = offsetof(struct cmd_opts, rest_given) },
	{ .name = NULL }
};

/* The options of the table a command refuses (parse_opts' refuse). */
#define CMD_NO_FORMAT	0x1
#define CMD_NO_SYNTAX	0x2
#define CMD_NO_MATCHER	0x4
#define CMD_NO_REST	0x8	/* --rest, --rest-threads, --math, ... */

/*
 * Parse the options the three commands take by c (its usage and operands)
 * into o, then refuse the ones of refuse given (the usage on stderr). -1 to
 * go on, *first the first operand; else the exit code (0 after --help).
 */
static int
parse_opts(const struct opts_cmd *c, unsigned refuse, int argc, char **argv,
    struct cmd_opts *o, int *first)
{
	int r;

	cmd_opts_init(o);
	if ((r = util_opts_parse(c, argc, argv, o, first)) != 0)
		return r == 1 ? 0 : 2;
	if (((refuse & CMD_NO_FORMAT) && o->format != NULL) ||
	    ((refuse & CMD_NO_SYNTAX) && o->syntax != NULL) ||
	    ((refuse & CMD_NO_MATCHER) && o->matcher != NULL) ||
	    ((refuse & CMD_NO_REST) && o->rest_given)) {
		c->usage(stderr);
		return 2;
	}
	return -1;
}

/* Write text to -o (never an input) or stdout. 0 or 2. */
static int
emit(const struct cmd_opts *o, const char *text, const char *input)
{
	char *err = NULL;

	if (o->out == NULL || strcmp(o->out, "-") == 0) {
		(void)util_stdout_put(text);	/* said at the close */
		return 0;
	}
	if (export_write(o->out, text, o->db, input, &err) != 0) {
		fprintf(stderr, "autosched: %s\n", err);
		free(err);
		return 2;
	}
	return 0;
}

/* 1 if syntax is NULL or known, else 0 after naming the valid ones. */
static int
syntax_known(const char *syntax)
{
	const char *const *v = export_iree_syntaxes();
	size_t i;

	if (syntax == NULL)
		return 1;
	for (i = 0; v[i] != NULL; i++) {
		if (strcmp(v[i], syntax) == 0)
			return 1;
	}
	fprintf(stderr, "autosched: --iree-syntax %s: unknown; expected one of",
	    syntax);
	for (i = 0; v[i] != NULL; i++)
		fprintf(stderr, "%s %s", i ? "," : "", v[i]);
	fprintf(stderr, " (newest first)\n");
	return 0;
}

static void
export_usage(FILE *f)
{
	const char *const *v = export_iree_syntaxes();
	size_t i;

	fprintf(f,
	    "usage: autosched export [--db PATH] [--op NAME | --all] [--job ID]\n"
	    "           [--format json|transform|iree-spec] [--iree-syntax V]\n"
	    "           [--iree-matcher iree|upstream] [-o FILE]\n"
	    "The best config of each op tuned on this machine, for a compiler:\n"
	    "  json       knob values per op (the default)\n"
	    "  transform  a transform-dialect library applying the measured\n"
	    "             schedules: mlir-opt P.mlir --transform-preload-library=\n"
	    "             transform-library-paths=FILE --transform-interpreter\n"
	    "  iree-spec  an IREE llvm-cpu tuning spec (@__kernel_config)\n"
	    "  --iree-syntax V  IREE attribute syntax:");
	for (i = 0; v[i] != NULL; i++)
		fprintf(f, " %s%s", v[i], i == 0 ? " (default)" : "");
	fprintf(f, "\n  --iree-matcher M  iree (the default: IREE's contraction "
	    "matcher,\n             exact maps and types) or upstream (upstream "
	    "match ops,\n             which mlir-opt runs; blind to layouts)\n");
	fprintf(f, "  -o FILE    write FILE (via a temp file) instead of stdout\n");
}

static const struct opts_cmd export_cmd = {
	"autosched", cmd_opts_table, export_usage, 0, 0, 0
};

int
export_cmd_export(int argc, char **argv)
{
	struct cmd_opts o;
	struct export_set *s = NULL;
	char *err = NULL, *text = NULL;
	int rc = 2, transform, r, first;

	if ((r = parse_opts(&export_cmd, CMD_NO_REST, argc, argv, &o,
	    &first)) >= 0)
		return r;
	if (o.format == NULL || (strcmp(o.format, "transform") != 0 &&
	    strcmp(o.format, "iree-spec") != 0)) {
		fprintf(stderr, "autosched export: --format %s: expected json, "
		    "transform or iree-spec\n", o.format ? o.format : "");
		return 2;
	}
	transform = strcmp(o.format, "transform") == 0;
	if ((o.syntax != NULL || o.matcher != NULL) && transform) {
		fprintf(stderr, "autosched export: --%s goes with "
		    "--format iree-spec\n", o.syntax != NULL ? "iree-syntax" :
		    "iree-matcher");
		return 2;
	}
	if (!syntax_known(o.syntax))
		goto out;
	if (export_load(o.db, o.op, o.job, transform ? EXPORT_SCHEDULES :
	    EXPORT_IREE, &s, &err) != 0) {
		fprintf(stderr, "autosched: %s\n", err);
		goto out;
	}
	if (export_count(s) == 0) {
		fprintf(stderr, "autosched: %s: no best config to export%s%s\n",
		    o.db, o.op ? " for " : "", o.op ? o.op : "");
		rc = 1;
		goto out;
	}
	if (transform)
		text = export_transform(s);
	else if ((r = export_iree_spec(s, o.syntax, o.matcher != NULL &&
	    strcmp(o.matcher, "upstream") == 0 ? EXPORT_MATCH_UPSTREAM :
	    EXPORT_MATCH_IREE, &text, &err)) != 0) {
		fprintf(stderr, "autosched export: %s\n", err);
		if (r == 1)
			rc = 1;
		goto out;
	}
	rc = emit(&o, text, NULL);
out:
	export_free(s);
	free(text);
	free(err);
	return rc;
}

static void
annotate_usage(FILE *f)
{
	fprintf(f,
	    "usage: autosched annotate PROGRAM.mlir [--db PATH] [--op NAME | --all]\n"
	    "           [--job ID] [--iree-syntax V] [-o OUT]\n"
	    "The program unchanged but for a compilation_info attribute (IREE\n"
	    "llvm-cpu syntax; TileAndFuse for an op tuned for CUDA) on each op\n"
	    "the store has a best config for. -o may\n"
	    "not name the input. Exit 1 if no op of the program was tuned. A\n"
	    "TOSA program is lowered to linalg first (as analyze does) and\n"
	    "written lowered.\n");
}

static const struct opts_cmd annotate_cmd = {
	"autosched", cmd_opts_table, annotate_usage, 1, 1, 0
};

int
export_cmd_annotate(int argc, char **argv)
{
	struct cmd_opts o;
	struct export_set *s = NULL;
	char *err = NULL, *text = NULL;
	const char *prog;
	size_t done = 0;
	int rc = 2, r, first;

	if ((r = parse_opts(&annotate_cmd, CMD_NO_FORMAT | CMD_NO_MATCHER |
	    CMD_NO_REST, argc, argv, &o, &first)) >= 0)
		return r;
	prog = argv[first];
	if (!syntax_known(o.syntax))
		goto out;
	if (export_load(o.db, o.op, o.job, EXPORT_IREE, &s, &err) != 0) {
		fprintf(stderr, "autosched: %s\n", err);
		goto out;
	}
	/* Parse errors and a bad syntax come out here, before anything is written. */
	if (export_annotate(s, prog, o.syntax, &text, &done, &err) != 0) {
		fprintf(stderr, "autosched: %s\n", err);
		goto out;
	}
	if (done == 0) {
		fprintf(stderr, "autosched: %s: the store %s has no best config "
		    "for any op of it\n", prog, o.db);
		rc = 1;
		goto out;
	}
	rc = emit(&o, text, prog);
	if (rc == 0)
		fprintf(stderr, "autosched: %zu op%s annotated\n", done,
		    done == 1 ? "" : "s");
out:
	export_free(s);
	free(text);
	free(err);
	return rc;
}

static void
build_usage(FILE *f)
{
	fprintf(f,
	    "usage: autosched build PROGRAM.mlir [--db PATH] [-o LIB.so] [--untuned]\n"
	    "                       [--rest vector|loops] [--rest-threads N]\n"
	    "                       [--math fast|exact] [--buffers pool|malloc]\n"
	    "                       [--fuse on|off] [--rest-fuse on|off]\n"
	    "Compile the whole program to a shared object with the store's best\n"
	    "schedule for each op tuned on this machine (the default schedule,\n"
	    "with a warning, for the others). Every function is exported with\n"
	    "MLIR's C interface: void _mlir_ciface_NAME(...) taking memref\n"
	    "descriptors (see docs/export.md). --untuned: default schedules only.\n"
	    "--rest: the ops no schedule covers (elementwise, reductions,\n"
	    "transposes, fills) vectorized for this CPU and split across\n"
	    "--rest-threads threads (vector, the default; N defaults to the\n"
	    "CPUs this process may use), or scalar loops on one thread (loops).\n"
	    "Tuned and untuned builds lower them alike.\n"
	    "--math: f32 exp, log, erf, tanh as MLIR's polynomials on whole\n"
	    "vectors (fast, the default: within 6 ulp of libm's double results,\n"
	    "docs/export.md's bounds, and about a tenth faster on MobileBERT), or libm's\n"
	    "functions, one call a lane (exact: the build as it was).\n"
	    "--buffers: the program's intermediates kept in a pool the library\n"
	    "owns, one per thread, reused by the next call (pool, the default:\n"
	    "no page faults after the first call; autosched_pool_release()\n"
	    "frees the calling thread's), or malloc'd and freed every call.\n"
	    "--fuse: a matmul's chain of elementwise consumers (bias add,\n"
	    "scale, activation, residual add) in its dispatch, in place, run\n"
	    "in each step of the matmul's outermost parallel loop on the part\n"
	    "it made (on, the default; bit for bit the results of off), or\n"
	    "each consumer a dispatch and a pass over memory of its own (off).\n"
	    "--rest-fuse: each chain of elementwise ops (each the only user\n"
	    "of the one before) one dispatch and one loop (MLIR's\n"
	    "linalg-fuse-elementwise-ops; on, the default: bit for bit the\n"
	    "results of off), or each op a dispatch and a pass of its own (off).\n"
	    "Default -o: PROGRAM.so in the current folder. Scratch files go to\n"
	    "$TMPDIR (default /tmp). Exit 128+N when signal N (SIGINT, SIGTERM,\n"
	    "SIGHUP) stopped it: its tools killed, nothing written. A TOSA\n"
	    "program is lowered to linalg first (as analyze does).\n");
}

static const struct opts_cmd build_cmd = {
	"autosched", cmd_opts_table, build_usage, 1, 1, 0
};

/* What `build` made, a line a part, on stderr: the library's summary. */
static void
build_summary(const char *out, const struct export_build_info *ip)
{
	fprintf(stderr, "autosched: %s: %zu dispatch%s in %zu piece%s, %d at "
	    "a time; seconds: outline %.1f, mlir-opt %.1f, mlir-translate %.1f, "
	    "split %.1f, clang %.1f, link %.1f\n", out, ip->ndispatches,
	    ip->ndispatches == 1 ? "" : "es", ip->npieces,
	    ip->npieces == 1 ? "" : "s", ip->jobs, ip->outline_s, ip->opt_s,
	    ip->translate_s, ip->split_s, ip->compile_s, ip->link_s);
	fprintf(stderr, "autosched: %s: %zu tuned op%s\n", out, ip->ntuned,
	    ip->ntuned == 1 ? "" : "s");
	if (ip->rest.mode == EXPORT_REST_VECTOR)
		fprintf(stderr, "autosched: %s: the rest vectorized, %d "
		    "thread%s\n", out, ip->rest.threads,
		    ip->rest.threads == 1 ? "" : "s");
	else
		fprintf(stderr, "autosched: %s: the rest as scalar loops\n",
		    out);
	fprintf(stderr, "autosched: %s: math %s, buffers %s\n", out,
	    ip->rest.math == EXPORT_MATH_FAST ? "fast" : "exact",
	    ip->rest.pool ? "pool" : "malloc");
	if (ip->rest.fuse)
		fprintf(stderr, "autosched: %s: %zu consumer%s fused into %zu "
		    "matmul%s; in their matmul's dispatch: %zu zero fill%s, "
		    "%zu input slice%s, %zu result insert%s\n", out,
		    ip->nfused, ip->nfused == 1 ? "" : "s", ip->nfused_ops,
		    ip->nfused_ops == 1 ? "" : "s", ip->ninits,
		    ip->ninits == 1 ? "" : "s", ip->nslices,
		    ip->nslices == 1 ? "" : "s", ip->ninserts,
		    ip->ninserts == 1 ? "" : "s");
	else
		fprintf(stderr, "autosched: %s: fusion off\n", out);
	if (ip->rest.rest_fuse)
		fprintf(stderr, "autosched: %s: %zu elementwise op%s fused into "
		    "%zu loop%s\n", out, ip->nchained, ip->nchained == 1 ?
		    "" : "s", ip->nchains, ip->nchains == 1 ? "" : "s");
	if (ip->nrows > 0)
		fprintf(stderr, "autosched: %s: %zu row-wise ops (softmax, "
		    "norms) in %zu loop%s over rows\n", out, ip->nrowed,
		    ip->nrows, ip->nrows == 1 ? "" : "s");
	if (!ip->rest.rest_fuse)
		fprintf(stderr, "autosched: %s: rest fusion off\n", out);
	if (ip->rest.fuse || ip->rest.rest_fuse)
		fprintf(stderr, "autosched: %s: %zu tensor op%s made "
		    "linalg, unit dims folded: %zu reshape%s fewer\n", out,
		    ip->nconverted, ip->nconverted == 1 ? "" : "s",
		    ip->nreshapes, ip->nreshapes == 1 ? "" : "s");
}

int
export_cmd_build(int argc, char **argv)
{
	struct cmd_opts o;
	struct export_set *s = NULL;
	char *err = NULL, *out = NULL, *base, *dot;
	const char *prog;
	struct export_build_info info;
	int rc = 2, r, first;

	if ((r = parse_opts(&build_cmd, CMD_NO_FORMAT | CMD_NO_SYNTAX |
	    CMD_NO_MATCHER, argc, argv, &o, &first)) >= 0)
		return r;
	prog = argv[first];
	if (o.out != NULL)
		out = xstrdup(o.out);
	else {
		base = strrchr(prog, '/');
		out = xstrdup(base != NULL ? base + 1 : prog);
		if ((dot = strrchr(out, '.')) != NULL && strcmp(dot, ".mlir") == 0)
			*dot = '\0';
		base = xasprintf("%s.so", out);
		free(out);
		out = base;
	}
	if (export_build_check(out, o.db, prog, &err) != 0) {
		fprintf(stderr, "autosched: %s\n", err);
		goto out;
	}
	if (!o.untuned && export_load(o.db, NULL, o.job, EXPORT_SCHEDULES, &s,
	    &err) != 0) {
		fprintf(stderr, "autosched: %s\n", err);
		goto out;
	}
	r = export_build(s, prog, o.untuned, &o.rest, out, o.db, &info, &err);
	if (r != 0) {
		fprintf(stderr, "autosched: %s\n", err);
		rc = r == 1 || r > 128 ? r : 2;
		goto out;
	}
	build_summary(out, &info);
	rc = 0;
out:
	export_free(s);
	free(out);
	free(err);
	return rc;
}
