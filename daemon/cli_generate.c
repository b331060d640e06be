/*
 * `autosched generate`: a shape sweep written out as the dispatch profiler's
 * generator.py does (DIR/linalg/KIND/NAME/NAME.mlir), plus DIR/sweep.cfg, a
 * cfg whose [Problem] section is the same sweep, for `run` and `submit`.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg/cfg.h"
#include "daemon/daemon.h"
#include "generate/generate.h"
#include "util/util.h"

static void
generate_usage(FILE *f)
{
	fprintf(f,
	    "usage: autosched generate --problem-m R --problem-n R --problem-k R\n"
	    "           [--batch R] [--dtype LIST] [--transpose a|b|a,b]\n"
	    "           [--kind matmul|batch_matmul] -o DIR\n"
	    "Write one MLIR program per shape and type of a sweep, named and laid\n"
	    "out as the IREE dispatch profiler does (DIR/linalg/matmul/NAME/\n"
	    "NAME.mlir), and DIR/sweep.cfg, a cfg tuning the whole sweep as one job.\n"
	    "  R           a value (768), a list (64,128) or start:stop:step\n"
	    "              (stop exclusive: 64:1024:128)\n"
	    "  --dtype     f32 (default), f16, f16f32, bf16f32, i8i32, u8i32;\n"
	    "              several separated by commas\n"
	    "  --batch R   batch sizes (batch_matmul; implies --kind batch_matmul)\n"
	    "       autosched generate --kind conv2d --height R --width R\n"
	    "           --channels R --filters R --filter R [--batch R]\n"
	    "           [--stride R] [--padding R] [--dtype LIST] -o DIR\n"
	    "NHWC/HWCF convolutions (DIR/linalg/conv2d/NAME/NAME.mlir): input\n"
	    "--batch (N, default 1) x --height x --width x --channels, --filters\n"
	    "filters of --filter x --filter, --stride (default 1), --padding\n"
	    "zeros on every side (default 0); DIR/sweep.mlir holds them all and\n"
	    "DIR/sweep.cfg tunes it (no u8i32).\n"
	    "At most %d ops per sweep. Exit 2 on bad input, nothing written.\n",
	    GENERATE_OPS_MAX);
}

/* A value list of the sweep; the text as given is kept for the cfg. */
static int
generate_list(const char *opt, const char *arg, int64_t **v, size_t *n,
    char **text)
{
	char *err = NULL;

	free(*v);
	*v = NULL;
	if (cfg_parse_values(arg, v, n, &err) != 0) {
		fprintf(stderr, "autosched generate: %s %s: %s; expected a value, "
		    "a list like 64,128 or start:stop:step (stop exclusive)\n",
		    opt, arg, err);
		free(err);
		return -1;
	}
	free(*text);
	*text = arg[0] != '[' && strchr(arg, ',') != NULL ?
	    xasprintf("[%s]", arg) : xstrdup(arg);
	return 0;
}

/* A conv2d list, by its option's letter. 0 or -1 (said). */
static int
generate_conv_list(struct generate_conv *c, int letter, const char *arg)
{
	static const struct { int letter; const char *opt; } opts[] = {
		{ 'H', "--height" }, { 'W', "--width" }, { 'C', "--channels" },
		{ 'F', "--filters" }, { 'R', "--filter" }, { 'S', "--stride" },
		{ 'P', "--padding" },
	};
	int64_t **v[] = { &c->h, &c->w, &c->c, &c->f, &c->filter, &c->stride,
	    &c->pad };
	size_t *n[] = { &c->nh, &c->nw, &c->nc, &c->nf, &c->nfilter,
	    &c->nstride, &c->npad };
	char *text = NULL;
	size_t i;
	int rc;

	for (i = 0; opts[i].letter != letter; i++)
		;
	if (letter != 'P') {
		rc = generate_list(opts[i].opt, arg, v[i], n[i], &text);
		free(text);
		return rc;
	}
	/* A padding may be 0. */
	free(*v[i]);
	*v[i] = NULL;
	if (cfg_parse_values_from(arg, 0, v[i], n[i], &text) != 0) {
		fprintf(stderr, "autosched generate: --padding %s: %s; expected "
		    "a value, a list like 0,1 or start:stop:step (stop "
		    "exclusive)\n", arg, text);
		free(text);
		return -1;
	}
	return 0;
}

/*
 * A conv2d sweep written: its programs, DIR/sweep.mlir with every conv,
 * DIR/sweep.cfg tuning that file. Everything is checked first. The exit
 * code.
 */
static int
generate_convs(const struct generate_sweep *sw, const char *dir)
{
	struct generate_op *ops = NULL;
	struct util_out_guard g, gm;
	struct cfg *check = NULL;
	char *err = NULL, *mlir = NULL, *cfgtext = NULL, *cfgpath, *mpath;
	size_t nops = 0, written = 0, i;
	int rc = 2;

	cfgpath = util_path_join(dir, "sweep.cfg");
	mpath = util_path_join(dir, "sweep.mlir");
	if (generate_ops(sw, &ops, &nops, &err) != 0 ||
	    generate_module(sw, "autosched generate: a conv2d sweep", &mlir,
	    &err) != 0)
		goto bad;
	cfgtext = xasprintf(GENERATE_CFG_MAGIC "a conv2d sweep of %zu op%s.\n"
	    ";   autosched run sweep.cfg   tunes each conv as the matmul of "
	    "its im2col\n"
	    "[Env]\ninput_file = sweep.mlir\noutput_file = sweep.csv\n"
	    "report_file = sweep.html\n\n"
	    "[SearchSpace]\ntile_m = [16,32,64]\ntile_n = [16,32,64]\n"
	    "tile_k = [16,32,64]\nthreads = [1]\n\n"
	    "[SearchStrategy]\ntuner = random\nn_trial = 16\n\n"
	    "[Measure]\nmin_time = 0.1\nconfirm_top = 3\n",
	    nops, nops == 1 ? "" : "s");
	if (cfg_parse(cfgpath, cfgtext, strlen(cfgtext), 0, &check, &err) != 0) {
		fprintf(stderr, "autosched generate: internal error: the sweep's "
		    "cfg does not read back: %s\n", err);
		rc = 1;
		goto out;
	}
	memset(&g, 0, sizeof g);
	g.key = "-o";
	g.what = "the sweep's cfg";
	g.magic[0] = GENERATE_CFG_MAGIC;
	memset(&gm, 0, sizeof gm);
	gm.key = "-o";
	gm.what = "the sweep's program";
	gm.magic[0] = GENERATE_MLIR_MAGIC;
	if (access(dir, F_OK) == 0 && (util_out_check(cfgpath, &g, &err) != 0 ||
	    util_out_check(mpath, &gm, &err) != 0 ||
	    generate_check_outputs(sw, dir, &err) != 0))
		goto bad;
	if (generate_write(sw, dir, &written, &err) != 0 ||
	    util_out_write(mpath, mlir, strlen(mlir), &gm, &err) != 0 ||
	    util_out_write(cfgpath, cfgtext, strlen(cfgtext), &g, &err) != 0) {
		fprintf(stderr, "autosched generate: %s (%zu program%s written)\n",
		    err, written, written == 1 ? "" : "s");
		rc = 1;
		goto out;
	}
	for (i = 0; i < nops; i++)
		printf("[Generating]: %s/linalg/%s/%s/%s.mlir\n", dir,
		    ops[i].family, ops[i].name, ops[i].name);
	printf("%zu program%s, %s and %s written\n", nops, nops == 1 ? "" : "s",
	    mpath, cfgpath);
	rc = 0;
	goto out;
bad:
	fprintf(stderr, "autosched generate: %s\n", err);
out:
	cfg_free(check);
	generate_ops_free(ops, nops);
	free(err);
	free(mlir);
	free(cfgtext);
	free(cfgpath);
	free(mpath);
	return rc;
}

/* The command line of generate: the sweep and its texts as given. */
struct generate_args {
	struct generate_sweep	 sw;
	const char		*dir, *dtype, *transpose;
	char			*tm, *tn, *tk, *tb;	/* the lists as given */
	int			 kind_given;	/* --kind was given */
};

static void
generate_args_clear(struct generate_args *a)
{
	generate_sweep_clear(&a->sw);
	free(a->tm);
	free(a->tn);
	free(a->tk);
	free(a->tb);
}

/* --kind: matmul, batch_matmul or conv2d. 0, or -1 with *err. */
static int
generate_kind(struct generate_sweep *sw, const char *arg, char **err)
{
	sw->conv2d = strcmp(arg, "conv2d") == 0;
	if (!sw->conv2d && generate_parse_kind(arg, &sw->batch_matmul,
	    err) != 0) {
		free(*err);
		*err = xstrdup("expected matmul, batch_matmul or conv2d");
		return -1;
	}
	return 0;
}

/*
 * One option of generate (its row o, o->val telling which) into args: 0, or
 * -1 after the message.
 */
static int
generate_option(void *args, const struct opt_spec *o, const char *v)
{
	struct generate_args *a = args;
	struct generate_sweep *sw = &a->sw;
	const char *opt = "";
	char *err = NULL;
	int r = 0;

	switch (o->val) {
	case 'm':
		return generate_list("--problem-m", v, &sw->m, &sw->nm, &a->tm);
	case 'n':
		return generate_list("--problem-n", v, &sw->n, &sw->nn, &a->tn);
	case 'k':
		return generate_list("--problem-k", v, &sw->k, &sw->nk, &a->tk);
	case 'b':
		if (generate_list("--batch", v, &sw->batch, &sw->nbatch,
		    &a->tb) != 0)
			return -1;
		if (!a->kind_given)
			sw->batch_matmul = 1;
		return 0;
	case 'd':
		opt = "--dtype";
		a->dtype = v;
		r = generate_parse_dtypes(v, &sw->dtypes, &err);
		break;
	case 't':
		opt = "--transpose";
		a->transpose = v;
		r = generate_parse_transpose(v, &sw->transpose_a,
		    &sw->transpose_b, &err);
		break;
	case 'K':
		opt = "--kind";
		a->kind_given = 1;
		r = generate_kind(sw, v, &err);
		break;
	default:	/* the convolution's: 'H', 'W', 'C', 'F', 'R', 'S', 'P' */
		return generate_conv_list(&sw->conv, o->val, v) != 0 ? -1 : 0;
	}
	if (r == 0)
		return 0;
	fprintf(stderr, "autosched generate: %s %s: %s\n", opt, v, err);
	free(err);
	return -1;
}

/* Each row's val is the letter generate_option (or the conv lists) knows it by. */
static const struct opt_spec generate_opts[] = {
	{ .name = "problem-m", .kind = OPT_FN, .has_arg = 1,
	  .fn = generate_option, .val = 'm' },
	{ .name = "problem-n", .kind = OPT_FN, .has_arg = 1,
	  .fn = generate_option, .val = 'n' },
	{ .name = "problem-k", .kind = OPT_FN, .has_arg = 1,
	  .fn = generate_option, .val = 'k' },
	{ .name = "batch", .kind = OPT_FN, .has_arg = 1,
	  .fn = generate_option, .val = 'b' },
	{ .name = "dtype", .kind = OPT_FN, .has_arg = 1,
	  .fn = generate_option, .val = 'd' },
	{ .name = "transpose", .kind = OPT_FN, .has_arg = 1,
	  .fn = generate_option, .val = 't' },
	{ .name = "kind", .kind = OPT_FN, .has_arg = 1,
	  .fn = generate_option, .val = 'K' },
	{ .name = "height", .kind = OPT_FN, .has_arg = 1,
	  .fn = generate_option, .val = 'H' },
	{ .name = "width", .kind = OPT_FN, .has_arg = 1,
	  .fn = generate_option, .val = 'W' },
	{ .name = "channels", .kind = OPT_FN, .has_arg = 1,
	  .fn = generate_option, .val = 'C' },
	{ .name = "filters", .kind = OPT_FN, .has_arg = 1,
	  .fn = generate_option, .val = 'F' },
	{ .name = "filter", .kind = OPT_FN, .has_arg = 1,
	  .fn = generate_option, .val = 'R' },
	{ .name = "stride", .kind = OPT_FN, .has_arg = 1,
	  .fn = generate_option, .val = 'S' },
	{ .name = "padding", .kind = OPT_FN, .has_arg = 1,
	  .fn = generate_option, .val = 'P' },
	{ .name = "output", .letter = 'o', .kind = OPT_STRING,
	  .off = offsetof(struct generate_args, dir) },
	{ .name = NULL }
};

/* Operands are checked below: a missing -o is said first. */
static const struct opts_cmd generate_cmd = {
	"autosched generate", generate_opts, generate_usage, 0, -1, 0
};

/* The command line into a: 0, 1 after --help, or 2 after the message. */
static int
generate_args(int argc, char **argv, struct generate_args *a)
{
	int rc, first;

	a->dtype = "f32";
	a->transpose = "none";
	if ((rc = util_opts_parse(&generate_cmd, argc, argv, a, &first)) != 0)
		return rc;
	if (argc != first || a->dir == NULL) {
		if (a->dir == NULL)
			fprintf(stderr, "autosched generate: -o DIR is required\n");
		generate_usage(stderr);
		return 2;
	}
	return 0;
}

/* The sweep's cfg: the same [Problem] as the programs. Caller frees. */
static char *
generate_cfg_text(const struct generate_args *a, size_t nops)
{
	return xasprintf(
	    GENERATE_CFG_MAGIC "a shape sweep of %zu op%s.\n"
	    ";   autosched run sweep.cfg      tunes each op as its own op\n"
	    ";   autosched submit sweep.cfg   the same, as one queued job\n"
	    "; The programs, one per op, are under linalg/ as the dispatch\n"
	    "; profiler lays them out. Ops no [SearchSpace] config fits are\n"
	    "; skipped, with the reason, when the job runs.\n"
	    "[Env]\noutput_file = sweep.csv\nreport_file = sweep.html\n\n"
	    "[Problem]\nkind = %s\nproblem_m = %s\nproblem_n = %s\n"
	    "problem_k = %s\n%s%s%sdtype = %s\ntranspose = %s\n\n"
	    "[SearchSpace]\ntile_m = [16,32,64]\ntile_n = [16,32,64]\n"
	    "tile_k = [16,32,64]\nthreads = [1]\n\n"
	    "[SearchStrategy]\ntuner = random\nn_trial = 16\n\n"
	    "[Measure]\nmin_time = 0.1\nconfirm_top = 3\n",
	    nops, nops == 1 ? "" : "s", a->sw.batch_matmul ? "batch_matmul" :
	    "matmul", a->tm, a->tn, a->tk, a->tb ? "batch = " : "",
	    a->tb ? a->tb : "", a->tb ? "\n" : "", a->dtype, a->transpose);
}

/*
 * The programs and the sweep's cfg written under a->dir, the cfg checked
 * by the cfg reader and the outputs by their writer before anything is
 * written. The exit code (messages said).
 */
static int
generate_emit(const struct generate_args *a, const struct generate_op *ops,
    size_t nops)
{
	struct cfg *check = NULL;
	struct util_out_guard g;
	char *cfgpath = util_path_join(a->dir, "sweep.cfg");
	char *cfgtext = generate_cfg_text(a, nops), *err = NULL;
	size_t written = 0, i;
	int rc = 1;

	if (cfg_parse(cfgpath, cfgtext, strlen(cfgtext), 0, &check, &err) != 0) {
		fprintf(stderr, "autosched generate: internal error: the sweep's "
		    "cfg does not read back: %s\n", err);
		goto out;
	}
	memset(&g, 0, sizeof g);
	g.key = "-o";
	g.what = "the sweep's cfg";
	g.magic[0] = GENERATE_CFG_MAGIC;
	/* Before any program is written (a new -o folder has nothing to check). */
	if (access(a->dir, F_OK) == 0 && (util_out_check(cfgpath, &g, &err) != 0 ||
	    generate_check_outputs(&a->sw, a->dir, &err) != 0)) {
		fprintf(stderr, "autosched generate: %s\n", err);
		rc = 2;
		goto out;
	}
	if (generate_write(&a->sw, a->dir, &written, &err) != 0 ||
	    util_out_write(cfgpath, cfgtext, strlen(cfgtext), &g, &err) != 0) {
		fprintf(stderr, "autosched generate: %s (%zu program%s written)\n",
		    err, written, written == 1 ? "" : "s");
		goto out;
	}
	for (i = 0; i < nops; i++)
		printf("[Generating]: %s/linalg/%s/%s/%s.mlir\n", a->dir,
		    ops[i].family, ops[i].name, ops[i].name);
	printf("%zu program%s and %s written\n", nops, nops == 1 ? "" : "s",
	    cfgpath);
	rc = 0;
out:
	cfg_free(check);
	free(cfgtext);
	free(cfgpath);
	free(err);
	return rc;
}

int
cli_generate(int argc, char **argv)
{
	struct generate_args a;
	struct generate_op *ops = NULL;
	char *err = NULL;
	size_t nops = 0;
	int rc;

	memset(&a, 0, sizeof a);
	if ((rc = generate_args(argc, argv, &a)) != 0) {
		rc = rc == 1 ? 0 : 2;
		goto out;
	}
	if (a.sw.conv2d) {
		/* --batch is the convs' N. */
		a.sw.conv.n = a.sw.batch, a.sw.conv.nn = a.sw.nbatch;
		a.sw.batch = NULL, a.sw.nbatch = 0, a.sw.batch_matmul = 0;
		rc = generate_convs(&a.sw, a.dir);
		goto out;
	}
	if (generate_ops(&a.sw, &ops, &nops, &err) != 0) {
		fprintf(stderr, "autosched generate: %s\n", err);
		rc = 2;
		goto out;
	}
	rc = generate_emit(&a, ops, nops);
out:
	generate_ops_free(ops, nops);
	generate_args_clear(&a);
	free(err);
	return rc;
}
