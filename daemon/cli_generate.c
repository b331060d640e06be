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
			if (generate_parse_kind(optarg, &sw.batch_matmul, &err) != 0)
				goto badopt;
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
		    ops[i].d.kind, ops[i].name, ops[i].name);
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
