/*
 * `autosched generate`: a shape sweep written out as the dispatch profiler's
 * generator.py does (DIR/linalg/KIND/NAME/NAME.mlir), plus DIR/sweep.cfg, a
 * cfg whose [Problem] section is the same sweep, for `run` and `submit`.
 */
#include <getopt.h>
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

int
cli_generate(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "problem-m", required_argument, NULL, 'm' },
		{ "problem-n", required_argument, NULL, 'n' },
		{ "problem-k", required_argument, NULL, 'k' },
		{ "batch", required_argument, NULL, 'b' },
		{ "dtype", required_argument, NULL, 'd' },
		{ "transpose", required_argument, NULL, 't' },
		{ "kind", required_argument, NULL, 'K' },
		{ "height", required_argument, NULL, 'H' },
		{ "width", required_argument, NULL, 'W' },
		{ "channels", required_argument, NULL, 'C' },
		{ "filters", required_argument, NULL, 'F' },
		{ "filter", required_argument, NULL, 'R' },
		{ "stride", required_argument, NULL, 'S' },
		{ "padding", required_argument, NULL, 'P' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct generate_sweep sw;
	struct generate_op *ops = NULL;
	struct cfg *check = NULL;
	struct util_out_guard g;
	const char *dir = NULL, *dtype = "f32", *transpose = "none", *opt = "";
	char *tm = NULL, *tn = NULL, *tk = NULL, *tb = NULL, *err = NULL;
	char *cfgtext = NULL, *cfgpath = NULL;
	size_t nops = 0, written = 0, i;
	int ch, rc = 2, kind_given = 0;

	memset(&sw, 0, sizeof sw);
	optind = 1;
	while ((ch = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'm':
			if (generate_list("--problem-m", optarg, &sw.m, &sw.nm,
			    &tm) != 0)
				goto out;
			break;
		case 'n':
			if (generate_list("--problem-n", optarg, &sw.n, &sw.nn,
			    &tn) != 0)
				goto out;
			break;
		case 'k':
			if (generate_list("--problem-k", optarg, &sw.k, &sw.nk,
			    &tk) != 0)
				goto out;
			break;
		case 'b':
			if (generate_list("--batch", optarg, &sw.batch, &sw.nbatch,
			    &tb) != 0)
				goto out;
			if (!kind_given)
				sw.batch_matmul = 1;
			break;
		case 'd':
			opt = "--dtype";
			dtype = optarg;
			if (generate_parse_dtypes(optarg, &sw.dtypes, &err) != 0)
				goto badopt;
			break;
		case 't':
			opt = "--transpose";
			transpose = optarg;
			if (generate_parse_transpose(optarg, &sw.transpose_a,
			    &sw.transpose_b, &err) != 0)
				goto badopt;
			break;
		case 'K':
			opt = "--kind";
			kind_given = 1;
			sw.conv2d = strcmp(optarg, "conv2d") == 0;
			if (!sw.conv2d && generate_parse_kind(optarg,
			    &sw.batch_matmul, &err) != 0) {
				free(err);
				err = xstrdup("expected matmul, batch_matmul or "
				    "conv2d");
				goto badopt;
			}
			break;
		case 'H': case 'W': case 'C': case 'F': case 'R': case 'S':
		case 'P':
			if (generate_conv_list(&sw.conv, ch, optarg) != 0)
				goto out;
			break;
		case 'o':
			dir = optarg;
			break;
		case 'h':
			generate_usage(stdout);
			rc = 0;
			goto out;
		default:
			generate_usage(stderr);
			goto out;
		}
	}
	if (argc != optind || dir == NULL) {
		if (dir == NULL)
			fprintf(stderr, "autosched generate: -o DIR is required\n");
		generate_usage(stderr);
		goto out;
	}
	if (sw.conv2d) {
		/* --batch is the convs' N. */
		sw.conv.n = sw.batch, sw.conv.nn = sw.nbatch;
		sw.batch = NULL, sw.nbatch = 0, sw.batch_matmul = 0;
		rc = generate_convs(&sw, dir);
		goto out;
	}
	if (generate_ops(&sw, &ops, &nops, &err) != 0)
		goto bad;

	/* The sweep's cfg, checked by the cfg reader before anything is written. */
	cfgpath = util_path_join(dir, "sweep.cfg");
	cfgtext = xasprintf(
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
	    nops, nops == 1 ? "" : "s", sw.batch_matmul ? "batch_matmul" :
	    "matmul", tm, tn, tk, tb ? "batch = " : "", tb ? tb : "",
	    tb ? "\n" : "", dtype, transpose);
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
	/* Before any program is written (a new -o folder has nothing to check). */
	if (access(dir, F_OK) == 0 && (util_out_check(cfgpath, &g, &err) != 0 ||
	    generate_check_outputs(&sw, dir, &err) != 0)) {
		fprintf(stderr, "autosched generate: %s\n", err);
		rc = 2;
		goto out;
	}
	if (generate_write(&sw, dir, &written, &err) != 0 ||
	    util_out_write(cfgpath, cfgtext, strlen(cfgtext), &g, &err) != 0) {
		fprintf(stderr, "autosched generate: %s (%zu program%s written)\n",
		    err, written, written == 1 ? "" : "s");
		rc = 1;
		goto out;
	}
	for (i = 0; i < nops; i++)
		printf("[Generating]: %s/linalg/%s/%s/%s.mlir\n", dir,
		    ops[i].family, ops[i].name, ops[i].name);
	printf("%zu program%s and %s written\n", nops, nops == 1 ? "" : "s",
	    cfgpath);
	rc = 0;
	goto out;
badopt:
	fprintf(stderr, "autosched generate: %s %s: %s\n", opt, optarg, err);
	rc = 2;
	goto out;
bad:
	fprintf(stderr, "autosched generate: %s\n", err);
	rc = 2;
out:
	cfg_free(check);
	generate_ops_free(ops, nops);
	generate_sweep_clear(&sw);
	free(tm);
	free(tn);
	free(tk);
	free(tb);
	free(cfgtext);
	free(cfgpath);
	free(err);
	return rc;
}
