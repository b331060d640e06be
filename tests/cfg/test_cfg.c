/*
 * Unit tests of the cfg reader: the seed's example as written, defaults,
 * value forms, comments, tuner keys, limits, and the corpus of bad cfgs in
 * tests/cfg/bad/ (each opens with "# expect: <part of the error>" lines).
 */
#include <sys/stat.h>

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"
#include "cfg/cfg.h"
#include "tests/check.h"
#include "tuners/tuner.h"
#include "util/util.h"

/* A check whose subject (a registry entry) is missing fails, naming it. */
#define MISSING(what) do {						\
	check_failed++;							\
	fprintf(stderr, "%s:%d: %s is not registered\n", __FILE__,	\
	    __LINE__, what);						\
} while (0)

static char *tmpdir;
static char *cfgpath;	/* tmpdir/t.cfg, rewritten by each case */

static void
put(const char *name, const char *text, size_t len)
{
	char *path = util_path_join(tmpdir, name), *err = NULL;

	if (util_write_file(path, text, len, &err) != 0) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	free(path);
}

/* Load text as tmpdir/t.cfg; NULL (and a failed check) if it is refused. */
static struct cfg *
load_ok(const char *text, int line)
{
	struct cfg *cfg = NULL;
	char *err = NULL;

	put("t.cfg", text, strlen(text));
	if (cfg_load(cfgpath, &cfg, &err) != 0) {
		fprintf(stderr, "test_cfg.c:%d: refused: %s\n", line, err);
		free(err);
		CHECK(!"cfg accepted");
		return NULL;
	}
	CHECK(err == NULL);
	return cfg;
}
#define LOAD_OK(text) load_ok(text, __LINE__)

/* The error of text (length len) through cfg_parse, or NULL if accepted. */
static char *
parse_err(const char *text, size_t len, int check_files)
{
	struct cfg *cfg = (struct cfg *)1;
	char *err = NULL;

	if (cfg_parse(cfgpath, text, len, check_files, &cfg, &err) == 0) {
		cfg_free(cfg);
		return NULL;
	}
	CHECK(cfg == NULL);
	return err;
}

static void
expect_err(const char *text, const char *want, int line)
{
	char *err = parse_err(text, strlen(text), 1);

	if (err == NULL || strstr(err, want) == NULL ||
	    strncmp(err, cfgpath, strlen(cfgpath)) != 0 ||
	    strchr(err, '\n') != NULL) {
		fprintf(stderr, "test_cfg.c:%d: want \"%s\", got \"%s\"\n", line,
		    want, err ? err : "(accepted)");
		CHECK(!"expected error");
	} else
		CHECK(1);
	free(err);
}
#define EXPECT_ERR(text, want) expect_err(text, want, __LINE__)

static const struct cfg_knob *
knob(const struct cfg *cfg, enum knob k)
{
	size_t i;

	for (i = 0; i < cfg->nknobs; i++) {
		if (cfg->knobs[i].knob == k)
			return &cfg->knobs[i];
	}
	return NULL;
}

static int
values_are(const struct cfg_knob *kn, const int64_t *want, size_t n)
{
	size_t i;

	if (kn == NULL || kn->n != n)
		return 0;
	for (i = 0; i < n; i++) {
		if (kn->values[i] != want[i])
			return 0;
	}
	return 1;
}

/* The seed article's example, character for character. */
static const char seed_cfg[] =
    "[Env]\n"
    "iree_bin = xxx/iree_build/tools\n"
    "input_file = matmul.mlir\n"
    "output_file = matmul.csv\n"
    "\n"
    "input_file = matmul.mlir\n"
    "output_file = matmul.csv\n"
    "\n"
    "[SearchSpace]\n"
    "tile_m = [64,128]\n"
    "tile_n = [32,64]\n"
    "tile_k = [32,64,128,256]\n"
    "block_dim_x = [64]\n"
    "block_dim_y = [2]\n"
    "block_dim_z = [1]\n"
    "pipeline_depth = [2]\n"
    "\n"
    "[SearchStrategy]\n"
    "tuner = XGBoostTuner\n"
    "n_trial = 16\n";

static void
test_seed(void)
{
	static const int64_t tk[] = { 32, 64, 128, 256 }, tm[] = { 64, 128 };
	struct cfg *cfg;
	char *want;

	if (tuner_find("XGBoostTuner") == NULL) {
		MISSING("tuner XGBoostTuner (the seed example)");
		return;
	}
	if ((cfg = LOAD_OK(seed_cfg)) == NULL)
		return;
	CHECK(cfg->nwarnings == 2);
	want = xasprintf("%s:6: [Env] input_file repeated (first at line 3); "
	    "the last value is used", cfgpath);
	CHECK_STR(cfg->nwarnings > 0 ? cfg->warnings[0] : NULL, want);
	free(want);
	want = xasprintf("%s:7: [Env] output_file repeated (first at line 4); "
	    "the last value is used", cfgpath);
	CHECK_STR(cfg->nwarnings > 1 ? cfg->warnings[1] : NULL, want);
	free(want);
	want = xasprintf("%s/xxx/iree_build/tools", tmpdir);
	CHECK_STR(cfg->iree_bin, want);
	free(want);
	want = xasprintf("%s/matmul.mlir", tmpdir);
	CHECK_STR(cfg->input_file, want);
	free(want);
	want = xasprintf("%s/matmul.csv", tmpdir);
	CHECK_STR(cfg->output_file, want);
	free(want);
	CHECK(cfg->nknobs == 7);
	CHECK(cfg->nknobs == 7 && cfg->knobs[0].knob == KNOB_TILE_M &&
	    cfg->knobs[6].knob == KNOB_PIPELINE_DEPTH);
	CHECK(values_are(knob(cfg, KNOB_TILE_M), tm, 2));
	CHECK(values_are(knob(cfg, KNOB_TILE_K), tk, 4));
	CHECK(knob(cfg, KNOB_TILE_K) != NULL && knob(cfg, KNOB_TILE_K)->line == 12);
	CHECK_STR(cfg->tuner, "xgboost");
	CHECK(cfg->n_trial == 16);
	CHECK(cfg->text != NULL && strcmp(cfg->text, seed_cfg) == 0);
	cfg_free(cfg);
}

static void
test_defaults(void)
{
	static const char text[] = "[Env]\ninput_file = matmul.mlir\n";
	struct cfg *cfg;

	if ((cfg = LOAD_OK(text)) == NULL)
		return;
	CHECK_STR(cfg->path, cfgpath);
	CHECK_STR(cfg->dir, tmpdir);
	CHECK_STR(cfg->text, text);
	CHECK_STR(cfg->backend, "mlir-cpu");
	CHECK(cfg->output_file == NULL && cfg->database == NULL &&
	    cfg->iree_bin == NULL && cfg->replay_db == NULL);
	CHECK_STR(cfg->tuner, "grid");
	CHECK(cfg->n_trial == 16 && cfg->seed == 42);
	CHECK(cfg->time_limit == 0 && cfg->early_stop == 0);
	CHECK(cfg->min_time == 0.2 && cfg->warmup == 1 && cfg->min_reps == 5 &&
	    cfg->max_reps == 1000);
	CHECK(cfg->timeout == 10 && cfg->compile_timeout == 60 &&
	    cfg->cv_max == 0.05 && cfg->confirm_top == 3 && cfg->verify == 1);
	CHECK(cfg->nknobs == 0 && cfg->nextra == 0 && cfg->nwarnings == 0);
	CHECK(cfg_extra(cfg, "anything") == NULL);
	cfg_free(cfg);
	cfg_free(NULL);
}

/* [Env] executor and its slurm_* keys. */
static void
test_executor(void)
{
	static const char text[] = "[Env]\ninput_file = matmul.mlir\n"
	    "executor = slurm\nslurm_partition = gpu2\nslurm_max_steps = 4\n"
	    "slurm_srun_args = --account=perf --qos=low\n"
	    "slurm_step_timeout = 90\ncompile_jobs = 6\nops_at_once = 3\n";
	static const char *const bad[] = {
	    "[Env]\nexecutor = pbs\n", "expected local, slurm or batch",
	    "[Env]\ncompile_jobs = 0\n", "compile_jobs",
	    "[Env]\ncompile_jobs = 2000\n", "compile_jobs",
	    "[Env]\nops_at_once = 0\n", "ops_at_once",
	    "[Env]\nops_at_once = 65\n", "ops_at_once",
	    "[Env]\nslurm_max_steps = 0\n", "slurm_max_steps",
	    "[Env]\nslurm_partition = a b\n", "not a partition name",
	    "[Env]\nslurm_step_timeout = -1\n", "slurm_step_timeout",
	    "[Env]\nexecutor =\n", "no value",
	    /* slurm_srun_args: allowed --opt=value words only, never a command. */
	    "[Env]\nslurm_srun_args = /bin/sh /tmp/evil.sh\n",
	    "t.cfg:2: [Env] slurm_srun_args: '/bin/sh' is not an option "
	    "autosched passes to srun; allowed: --account=, --qos=",
	    "[Env]\nslurm_srun_args = --prolog=/tmp/x\n",
	    "'--prolog=/tmp/x' is not an option autosched passes to srun",
	    "[Env]\nslurm_srun_args = -n 4\n", "'-n' is not an option",
	    "[Env]\nslurm_srun_args = --qos=low -n4\n", "'-n4' is not an option",
	    "[Env]\nslurm_srun_args = --cpu-bind=none\n", "'--cpu-bind=none'",
	    "[Env]\nslurm_srun_args = --nodelist=n1\n", "'--nodelist=n1'",
	    "[Env]\nslurm_srun_args = --uid=0\n", "'--uid=0'",
	    "[Env]\nslurm_srun_args = --account perf\n", "'--account' is not",
	    "[Env]\nslurm_srun_args = --qos=\n", "'--qos=' is not",
	    "[Env]\nslurm_srun_args = --account=a;b\n", "'--account=a;b': expected",
	    "[Env]\nslurm_srun_args = --account=a$(id)\n", "expected --account= a name",
	    "[Env]\nslurm_srun_args = --mem=4X\n", "expected --mem= a size",
	    "[Env]\nslurm_srun_args = --gres=gpu;reboot\n", "'--gres=gpu;reboot': expected",
	    "[Env]\nslurm_srun_args = --account=perf /bin/sh\n", "'/bin/sh' is not",
	};
	struct cfg *cfg;
	char *err;
	size_t i;

	if ((cfg = LOAD_OK("[Env]\ninput_file = matmul.mlir\n")) != NULL) {
		CHECK(cfg->exec.executor == CFG_EXEC_LOCAL && cfg->exec.slurm_max_steps == 0 &&
		    cfg->exec.slurm_partition == NULL && cfg->exec.slurm_srun_args == NULL &&
		    cfg->exec.slurm_step_timeout == 0 && cfg->exec.compile_jobs == 0);
		cfg_free(cfg);
	}
	if ((cfg = LOAD_OK(text)) != NULL) {
		CHECK(cfg->exec.executor == CFG_EXEC_SLURM && cfg->exec.slurm_max_steps == 4 &&
		    cfg->exec.slurm_step_timeout == 90 && cfg->exec.compile_jobs == 6 &&
		    cfg->exec.ops_at_once == 3);
		CHECK_STR(cfg->exec.slurm_partition, "gpu2");
		CHECK_STR(cfg->exec.slurm_srun_args, "--account=perf --qos=low");
		cfg_free(cfg);
	}
	if ((cfg = LOAD_OK("[Env]\ninput_file = matmul.mlir\nexecutor = batch\n"))
	    != NULL) {
		CHECK(cfg->exec.executor == CFG_EXEC_BATCH && cfg->exec.executor_set);
		cfg_free(cfg);
	}
	if ((cfg = LOAD_OK("[Env]\ninput_file = matmul.mlir\nslurm_srun_args ="
	    " --reservation=r1 --constraint=avx512&hbm --comment=tune:v8"
	    " --mem=4G --mem-per-cpu=512M\n")) != NULL)
		cfg_free(cfg);
	/* A GPU partition: the step's GPUs, and nothing that is not a gres. */
	if ((cfg = LOAD_OK("[Env]\ninput_file = matmul.mlir\nslurm_srun_args ="
	    " --gres=gpu:h100:1\n")) != NULL) {
		CHECK_STR(cfg->exec.slurm_srun_args, "--gres=gpu:h100:1");
		cfg_free(cfg);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i += 2) {
		err = parse_err(bad[i], strlen(bad[i]), 0);
		CHECK(err != NULL && strstr(err, bad[i + 1]) != NULL);
		if (err != NULL && strstr(err, bad[i + 1]) == NULL)
			fprintf(stderr, "  got: %s\n", err);
		free(err);
	}
}

/* A submitted cfg (CFG_SUBMITTED) carries no executor key and no program. */
static void
test_submitted(void)
{
	static const char *const bad[] = {
	    "slurm_srun_args = /bin/sh /tmp/evil.sh\n", "slurm_srun_args",
	    "slurm_srun_args = --prolog=/tmp/x\n", "slurm_srun_args",
	    "slurm_srun_args = -n 4\n", "slurm_srun_args",
	    "slurm_srun_args = --qos=low\n", "slurm_srun_args",
	    "executor = slurm\n", "executor",
	    "executor = local\n", "executor",
	    "slurm_partition = p\n", "slurm_partition",
	    "slurm_max_steps = 2\n", "slurm_max_steps",
	    "slurm_step_timeout = 9\n", "slurm_step_timeout",
	    "compile_jobs = 4\n", "compile_jobs",
	    "ops_at_once = 2\n", "ops_at_once",
	};
	struct cfg *cfg;
	char text[256], want[256], *err;
	size_t i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i += 2) {
		snprintf(text, sizeof text, "[Env]\ninput_file = matmul.mlir\n"
		    "%s", bad[i]);
		snprintf(want, sizeof want, "%s:3: [Env] %s: set by the service"
		    " (autoschedd.conf), not by a submitted job", cfgpath,
		    bad[i + 1]);
		cfg = NULL;
		err = NULL;
		CHECK(cfg_parse(cfgpath, text, strlen(text), CFG_SUBMITTED, &cfg,
		    &err) == -1 && cfg == NULL);
		CHECK(err != NULL && strcmp(err, want) == 0);
		if (err != NULL && strcmp(err, want) != 0)
			fprintf(stderr, "  got: %s\n  want: %s\n", err, want);
		free(err);
		err = NULL;
		/* Without CFG_SUBMITTED the same key is the cfg's own. */
		if (cfg_parse(cfgpath, text, strlen(text), 0, &cfg, &err) == 0) {
			CHECK(cfg->service_key != NULL && cfg->service_key_line == 3);
			CHECK(cfg_drop_submitted(cfg) != NULL);
			CHECK(cfg->service_key == NULL && cfg->exec.executor_set == 0 &&
			    cfg->exec.slurm_srun_args == NULL &&
			    cfg->exec.slurm_partition == NULL);
			cfg_free(cfg);
		} else {
			/* Only the allowlist refuses a value here. */
			CHECK(strstr(err, "is not an option") != NULL);
			free(err);
		}
	}
	err = NULL;
	CHECK(cfg_parse(cfgpath, "[Env]\niree_bin = /tmp/x\n", 24, CFG_SUBMITTED,
	    &cfg, &err) == -1);
	CHECK(err != NULL && strstr(err, ":2: [Env] iree_bin: names a program") != NULL);
	free(err);
	err = NULL;
	CHECK(cfg_parse(cfgpath, "[Env]\nreplay_db = s.db\n", 23, CFG_SUBMITTED,
	    &cfg, &err) == -1);
	CHECK(err != NULL && strstr(err, ":2: [Env] replay_db: names a store") != NULL);
	free(err);
	err = NULL;
	/* What a submitted job may set: paths of its input and reports, the backend. */
	CHECK(cfg_parse(cfgpath, "[Env]\ninput_file = matmul.mlir\n"
	    "output_file = o.csv\nreport_file = r.html\nbackend = mlir-cpu\n",
	    91, CFG_SUBMITTED, &cfg, &err) == 0);
	if (cfg != NULL)
		CHECK(cfg->service_key == NULL);
	cfg_free(cfg);
	free(err);
}

static void
test_values(void)
{
	static const int64_t a[] = { 32, 64, 128 }, r[] = { 32, 64, 96, 128,
	    160, 192, 224, 256 }, one[] = { 64 }, d[] = { 4, 8 },
	    big[] = { 2147483647LL }, sp[] = { 1, 4, 7 };
	struct cfg *cfg;

	cfg = LOAD_OK("[Env]\ninput_file = matmul.mlir\n"
	    "[SearchSpace]\n"
	    "tile_m = [64, 128 ,32]\n"
	    "tile_n = 32:257:32\n"
	    "tile_k = 64\n"
	    "vector_m = [8,8,4,8]\n"
	    "vector_n = [ 2147483647 ]\n"
	    "vector_k = 1 : 10 : 3\n"
	    "TILE_M = [32, 128, 64]\n");
	if (cfg == NULL)
		return;
	CHECK(cfg->nknobs == 6 && cfg->knobs[0].knob == KNOB_TILE_M);
	CHECK(values_are(knob(cfg, KNOB_TILE_M), a, 3));
	CHECK(knob(cfg, KNOB_TILE_M)->line == 10);
	CHECK(values_are(knob(cfg, KNOB_TILE_N), r, 8));
	CHECK(values_are(knob(cfg, KNOB_TILE_K), one, 1));
	CHECK(values_are(knob(cfg, KNOB_VECTOR_M), d, 2));
	CHECK(values_are(knob(cfg, KNOB_VECTOR_N), big, 1));
	CHECK(values_are(knob(cfg, KNOB_VECTOR_K), sp, 3));
	CHECK(cfg->nwarnings == 1 && strstr(cfg->warnings[0],
	    ":10: [SearchSpace] tile_m repeated (first at line 4)") != NULL);
	cfg_free(cfg);

	/* The seed's GPU rules: z is [1], x·y·z at most 1024. */
	cfg = LOAD_OK("[Env]\ninput_file = matmul.mlir\n[SearchSpace]\n"
	    "block_dim_x = [32,512]\nblock_dim_y = [1,2]\nblock_dim_z = 1\n");
	CHECK(cfg != NULL);
	cfg_free(cfg);
	EXPECT_ERR("[Env]\ninput_file = matmul.mlir\n[SearchSpace]\n"
	    "tile_m = 2147483648\n", ":4: [SearchSpace] tile_m: 2147483648 is "
	    "too large (at most 2147483647)");
	EXPECT_ERR("[Env]\ninput_file = matmul.mlir\n[SearchSpace]\n"
	    "block_dim_x = [2048]\n", ":4: [SearchSpace] block_dim_x: largest "
	    "block 2048x1x1");
	EXPECT_ERR("[Env]\ninput_file = matmul.mlir\n[SearchSpace]\n"
	    "block_dim_x = [2147483647]\nblock_dim_y = [2147483647]\n",
	    ":5: [SearchSpace] block_dim_y: largest block");
	EXPECT_ERR("[Env]\ninput_file = matmul.mlir\n[SearchSpace]\n"
	    "block_dim_z = [2]\n", ":4: [SearchSpace] block_dim_z: must be [1] "
	    "(expected workgroup size in z-dim = 1)");
}

static void
test_comments(void)
{
	static const int64_t a[] = { 64, 128 };
	struct cfg *cfg;

	cfg = LOAD_OK("\xEF\xBB\xBF; a comment\r\n"
	    "# another\r\n"
	    "[Env]   ; the environment\r\n"
	    "  input_file = matmul.mlir ; relative to the cfg\r\n"
	    "output_file = out#1.csv # a '#' needs a space before it\r\n"
	    "[ SearchSpace ] # spaces inside the brackets\r\n"
	    "\ttile_m = [64,128]   # inline\r\n"
	    "tile_n: [64, 128]\r\n"
	    "\n"
	    "[SearchStrategy]\n"
	    "n_trial = 8");
	if (cfg == NULL)
		return;
	CHECK(strstr(cfg->input_file, "/matmul.mlir") != NULL);
	CHECK(strstr(cfg->output_file, "/out#1.csv") != NULL);
	CHECK(values_are(knob(cfg, KNOB_TILE_M), a, 2));
	CHECK(values_are(knob(cfg, KNOB_TILE_N), a, 2));
	CHECK(cfg->n_trial == 8);
	cfg_free(cfg);
}

static void
test_strategy(void)
{
	const struct tuner_ops *const *all;
	const struct tuner_ops *t;
	struct cfg *cfg;
	char *text, *want;
	size_t i, n;

	EXPECT_ERR("[Env]\ninput_file = matmul.mlir\n[SearchStrategy]\n"
	    "tuner = annealing\n", ":4: [SearchStrategy] tuner: unknown tuner "
	    "'annealing'");
	/* An unknown tuner is the error even when keys come before it. */
	EXPECT_ERR("[Env]\ninput_file = matmul.mlir\n[SearchStrategy]\n"
	    "plan_size = 4\ntuner = annealing\n", ":5: [SearchStrategy] tuner: "
	    "unknown tuner");
	EXPECT_ERR("[Env]\ninput_file = matmul.mlir\n[SearchStrategy]\n"
	    "zzzz = 4\n", ":4: [SearchStrategy] zzzz: unknown key; expected "
	    "one of tuner, n_trial");

	cfg = LOAD_OK("[Env]\ninput_file = matmul.mlir\n[SearchStrategy]\n"
	    "n_trial = 1000000000\ntime_limit = 2h\nearly_stopping = 50\n"
	    "seed = 7\n");
	if (cfg != NULL) {
		CHECK(cfg->n_trial == 1000000000 && cfg->time_limit == 7200 &&
		    cfg->early_stop == 50 && cfg->seed == 7);
		cfg_free(cfg);
	}
	cfg = LOAD_OK("[Env]\ninput_file = matmul.mlir\n[SearchStrategy]\n"
	    "time_limit = 90\n[Measure]\nmin_time = 250ms\n");
	CHECK(cfg != NULL && cfg->time_limit == 90 && cfg->min_time == 0.25);
	cfg_free(cfg);

	all = tuner_all(&n);
	if (n == 0)
		MISSING("any tuner");
	for (i = 0; i < n; i++) {
		t = all[i];
		/* Both names, any case, give the short name. */
		text = xasprintf("[Env]\ninput_file = matmul.mlir\n"
		    "[SearchStrategy]\ntuner = %s\n", t->long_name);
		if ((cfg = LOAD_OK(text)) != NULL)
			CHECK_STR(cfg->tuner, t->name);
		cfg_free(cfg);
		free(text);
		if (t->keys == NULL || t->keys[0] == NULL)
			continue;
		/* A tuner key may come before the tuner line. */
		text = xasprintf("[Env]\ninput_file = matmul.mlir\n"
		    "[SearchStrategy]\n%s = 3\n%s = 5\ntuner = %s\n", t->keys[0],
		    t->keys[0], t->name);
		if ((cfg = LOAD_OK(text)) != NULL) {
			CHECK(cfg->nextra == 1 && cfg->extra[0].line == 5);
			CHECK_STR(cfg_extra(cfg, t->keys[0]), "5");
			CHECK(cfg->nwarnings == 1);
		}
		cfg_free(cfg);
		free(text);
		/* A near miss of it is suggested. */
		text = xasprintf("[Env]\ninput_file = matmul.mlir\n"
		    "[SearchStrategy]\ntuner = %s\n%sx = 3\n", t->name, t->keys[0]);
		want = xasprintf(":5: [SearchStrategy] %sx: unknown key (did you "
		    "mean %s?)", t->keys[0], t->keys[0]);
		EXPECT_ERR(text, want);
		free(text);
		free(want);
	}
	/* A key of another tuner than the one in use says so. */
	for (i = 0; i < n; i++) {
		const struct tuner_ops *u;
		size_t j;

		if (all[i]->keys == NULL || all[i]->keys[0] == NULL)
			continue;
		for (j = 0; j < n && (all[j] == all[i] ||
		    (all[j]->keys != NULL && all[j]->keys[0] != NULL)); j++)
			;
		if (j == n)
			continue;
		u = all[j];
		text = xasprintf("[Env]\ninput_file = matmul.mlir\n"
		    "[SearchStrategy]\n%s = 1\ntuner = %s\n", all[i]->keys[0],
		    u->long_name);
		want = xasprintf(":4: [SearchStrategy] %s: read by tuner %s only, "
		    "and this cfg uses tuner %s", all[i]->keys[0], all[i]->name,
		    u->name);
		EXPECT_ERR(text, want);
		free(text);
		free(want);
		break;
	}
	if ((t = tuner_find("grid")) == NULL)
		MISSING("tuner grid");
	else {
		cfg = LOAD_OK("[Env]\ninput_file = matmul.mlir\n"
		    "[SearchStrategy]\ntuner = GRIDTUNER\n");
		CHECK(cfg != NULL && strcmp(cfg->tuner, "grid") == 0);
		cfg_free(cfg);
	}
}

static void
test_measure(void)
{
	struct cfg *cfg;

	cfg = LOAD_OK("[Env]\ninput_file = matmul.mlir\n[Measure]\n"
	    "min_time = 500ms\nmin_time = 0.5\nwarmup = 0\nmin_reps = 3\n"
	    "max_reps = 3\ntimeout = 1m\ncompile_timeout = 30s\ncv_max = 0.1\n"
	    "confirm_top = 0\nverify = off\n");
	if (cfg == NULL)
		return;
	CHECK(cfg->min_time == 0.5 && cfg->warmup == 0 && cfg->min_reps == 3 &&
	    cfg->max_reps == 3 && cfg->timeout == 60 &&
	    cfg->compile_timeout == 30 && cfg->cv_max == 0.1 &&
	    cfg->confirm_top == 0 && cfg->verify == 0);
	cfg_free(cfg);
	EXPECT_ERR("[Env]\ninput_file = matmul.mlir\n[Measure]\nmin_rep = 3\n",
	    ":4: [Measure] min_rep: unknown key (did you mean min_reps?)");
	EXPECT_ERR("[Env]\ninput_file = matmul.mlir\n[Measure]\nzzz = 3\n",
	    ":4: [Measure] zzz: unknown key; expected one of min_time, ");
	EXPECT_ERR("[Env]\ninput_file = matmul.mlir\n[Measure]\ntimeout = 0\n",
	    ":4: [Measure] timeout: '0' is not a duration");
	EXPECT_ERR("[Env]\ninput_file = matmul.mlir\n[Measure]\ncv_max = nan\n",
	    ":4: [Measure] cv_max: 'nan' is not a number");
	/* The harness's bounds (cfg.h): what the cfg takes, it takes. */
	EXPECT_ERR("[Env]\ninput_file = matmul.mlir\n[Measure]\n"
	    "max_reps = 1000001\n", ":4: [Measure] max_reps: 1000001 is too "
	    "large (at most 1000000)");
	EXPECT_ERR("[Env]\ninput_file = matmul.mlir\n[Measure]\nwarmup = -5\n",
	    ":4: [Measure] warmup: -5 is below 0");
	EXPECT_ERR("[Env]\ninput_file = matmul.mlir\n[Measure]\n"
	    "min_time = nan\n", ":4: [Measure] min_time: 'nan' is not a duration");
}

static void
test_env(void)
{
	struct cfg *cfg;
	char *err;

	EXPECT_ERR("[Env]\ninput_file = matmul.mlir\nbackend = cuda\n",
	    ":3: [Env] backend: unknown backend 'cuda'");
	EXPECT_ERR("[Env]\ninput_file =\n", ":2: [Env] input_file: no value");
	EXPECT_ERR("[env]\ninput_file = matmul.mlir\n",
	    ":1: unknown section [env] (did you mean [Env]?)");
	EXPECT_ERR("[Env]\n= 3\n", ":2: [Env] no key before '='");
	if (backend_find("mlir-cpu") == NULL)
		MISSING("backend mlir-cpu");
	else {
		cfg = LOAD_OK("[Env]\ninput_file = matmul.mlir\n"
		    "backend = mlir-cpu\n");
		CHECK(cfg != NULL && strcmp(cfg->backend, "mlir-cpu") == 0);
		cfg_free(cfg);
	}
	if (backend_find("replay") == NULL)
		MISSING("backend replay");
	else {
		put("old.db", "", 0);
		cfg = LOAD_OK("[Env]\ninput_file = matmul.mlir\n"
		    "backend = replay\nreplay_db = old.db\n");
		CHECK(cfg != NULL && strcmp(cfg->backend, "replay") == 0 &&
		    strlen(cfg->replay_db) > 7 && strcmp(cfg->replay_db +
		    strlen(cfg->replay_db) - 7, "/old.db") == 0);
		cfg_free(cfg);
		/* A replay_db that is missing or not a file is refused up front. */
		EXPECT_ERR("[Env]\ninput_file = matmul.mlir\nbackend = replay\n"
		    "replay_db = gone.db\n", ":4: [Env] replay_db: ");
		EXPECT_ERR("[Env]\ninput_file = matmul.mlir\nbackend = replay\n"
		    "replay_db = .\n", "not a regular file");
	}

	/* Paths start from the cfg's folder; absolute ones are kept. */
	cfg = LOAD_OK("[Env]\ninput_file = ./matmul.mlir\n"
	    "database = /var/lib/autosched/a.db\n");
	if (cfg != NULL) {
		CHECK_STR(cfg->database, "/var/lib/autosched/a.db");
		CHECK(strncmp(cfg->input_file, tmpdir, strlen(tmpdir)) == 0);
	}
	cfg_free(cfg);

	/* A queued job's snapshot: the input need not exist. */
	err = parse_err("[Env]\ninput_file = gone.mlir\n",
	    strlen("[Env]\ninput_file = gone.mlir\n"), 0);
	CHECK(err == NULL);
	free(err);
	EXPECT_ERR("[Env]\ninput_file = gone.mlir\n", "gone.mlir: No such file");
	EXPECT_ERR("[Env]\ninput_file = .\n", ": not a regular file");
}

/*
 * [Env] isa: auto and the ISAs up to this CPU's, the one check's words for
 * the rest. The CPU is made to look like an AVX2 one (the tests' stand-in),
 * so that a value above it is refused on any x86 host.
 */
static void
test_isa(void)
{
	static const char *const good[] = { "auto", "sse2", "avx2" };
	struct cfg *cfg;
	char text[128], why[160];
	size_t i;

	setenv("AUTOSCHED_TEST_CPU_ISA", "avx2", 1);
	if (backend_cpu_isa_check("avx2", why, sizeof why) != 0) {
		/* A CPU without AVX2: only the names are checked. */
		EXPECT_ERR("[Env]\ninput_file = matmul.mlir\nisa = avx3\n",
		    ":3: [Env] isa: 'avx3': not an ISA; expected auto");
		return;
	}
	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		snprintf(text, sizeof text, "[Env]\ninput_file = matmul.mlir\n"
		    "isa = %s\n", good[i]);
		cfg = LOAD_OK(text);
		CHECK(cfg != NULL && cfg->isa != NULL &&
		    strcmp(cfg->isa, good[i]) == 0);
		cfg_free(cfg);
	}
	cfg = LOAD_OK("[Env]\ninput_file = matmul.mlir\n");
	CHECK(cfg != NULL && cfg->isa == NULL);
	cfg_free(cfg);
	EXPECT_ERR("[Env]\ninput_file = matmul.mlir\nisa = avx512\n",
	    ":3: [Env] isa: 'avx512' is above this CPU's widest ISA (avx2); "
	    "expected auto, sse2 or avx2");
	EXPECT_ERR("[Env]\ninput_file = matmul.mlir\nisa = avx3\n",
	    ":3: [Env] isa: 'avx3': not an ISA; expected auto, sse2 or avx2");
	EXPECT_ERR("[Env]\nisa = AVX2\ninput_file = matmul.mlir\n",
	    ":2: [Env] isa: 'AVX2': not an ISA");
	EXPECT_ERR("[Env]\ninput_file = matmul.mlir\nisa =\n",
	    ":3: [Env] isa: '': not an ISA");
	/* The one check, as AUTOSCHED_ISA is checked by autosched. */
	CHECK(backend_cpu_isa_check("sse2", why, sizeof why) == 0);
	CHECK(backend_cpu_isa_check("avx512", why, sizeof why) == -1 &&
	    strstr(why, "above this CPU's") != NULL);
	unsetenv("AUTOSCHED_TEST_CPU_ISA");
}

static void
test_limits(void)
{
	char *text, *err, *p;
	struct cfg *cfg;
	size_t n, i;

	/* A list of 4096 values is fine, 4097 is not. */
	n = 64 + 4097 * 6;
	text = xmalloc(n);
	p = text + sprintf(text, "[Env]\ninput_file = matmul.mlir\n"
	    "[SearchSpace]\ntile_m = [");
	for (i = 1; i <= 4096; i++)
		p += sprintf(p, "%zu,", i);
	strcpy(p - 1, "]\n");
	if ((cfg = LOAD_OK(text)) != NULL)
		CHECK(cfg->knobs[0].n == 4096);
	cfg_free(cfg);
	strcpy(p - 1, ",4097]\n");
	EXPECT_ERR(text, ":4: [SearchSpace] tile_m: 4097 values, more than 4096");
	free(text);

	/* A line of 64 KiB is fine, one byte more is not. */
	n = 64 * 1024;
	text = xmalloc(n + 64);
	p = text + sprintf(text, "[Env]\ninput_file = matmul.mlir\n;");
	memset(p, 'x', n - 1);
	strcpy(p + n - 1, "\n[Env]\n");
	cfg = LOAD_OK(text);
	CHECK(cfg != NULL);
	cfg_free(cfg);
	memset(p, 'x', n);
	strcpy(p + n, "\n[Env]\n");
	EXPECT_ERR(text, ":3: line longer than 65536 bytes");
	free(text);

	/* A file over 1 MiB. */
	n = 1024 * 1024 + 1;
	text = xmalloc(n);
	memset(text, '\n', n);
	err = parse_err(text, n, 0);
	CHECK(err != NULL && strstr(err, "larger than 1048576 bytes") != NULL);
	free(err);
	put("big.cfg", text, n);
	free(text);
	text = util_path_join(tmpdir, "big.cfg");
	err = NULL;
	CHECK(cfg_load(text, &cfg, &err) == -1 && cfg == NULL);
	CHECK(err != NULL && strstr(err, "larger than") != NULL);
	free(err);
	unlink(text);
	free(text);

	/* NUL bytes, and text without a final newline or a NUL at its end. */
	err = parse_err("[Env]\ninput_file = a\0b\n", 23, 0);
	CHECK(err != NULL && strstr(err, ":2: NUL byte") != NULL);
	free(err);
	err = parse_err("[Env]\ninput_file = abcdef", 21, 0);
	CHECK(err == NULL);
	free(err);
	EXPECT_ERR("[Env]\ninput_file = matmul.mlir\n[SearchStrategy]\n"
	    "seed = 99999999999999999999\n", ":4: [SearchStrategy] seed: "
	    "99999999999999999999 is too large");
	err = parse_err("", 0, 0);
	CHECK(err != NULL && strstr(err, "input_file: missing") != NULL);
	free(err);
}

/* Only the first error is reported, and nothing is returned. */
static void
test_one_error(void)
{
	EXPECT_ERR("[Env]\ninput_file = matmul.mlir\n[SearchSpace]\n"
	    "tile_m = [0]\ntile_q = 4\n[Nope]\n", ":4: [SearchSpace] tile_m: 0 is "
	    "not positive");
	EXPECT_ERR("[Env]\n[SearchSpace]\ntile_q = 4\n",
	    ":3: [SearchSpace] tile_q: unknown knob");
}

/* Every cfg in tests/cfg/bad fails with the message its "# expect:" lines give. */
static void
test_bad_corpus(void)
{
	struct dirent *de;
	struct cfg *cfg;
	char *path, *text, *err, *line, *nl;
	size_t len, nfiles = 0, nexpect;
	DIR *d;

	if ((d = opendir(CFG_BAD_DIR)) == NULL) {
		CHECK(!"open " CFG_BAD_DIR);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 5 || strcmp(de->d_name + len - 4, ".cfg") != 0)
			continue;
		nfiles++;
		path = util_path_join(CFG_BAD_DIR, de->d_name);
		err = NULL;
		if (util_read_file(path, 1 << 20, &text, &len, &err) != 0) {
			fprintf(stderr, "%s\n", err);
			CHECK(!"read bad cfg");
			free(err);
			free(path);
			continue;
		}
		cfg = (struct cfg *)1;
		CHECK(cfg_load(path, &cfg, &err) == -1 && cfg == NULL);
		nexpect = 0;
		for (line = text; strncmp(line, "# expect: ", 10) == 0;
		    line = nl + 1) {
			if ((nl = strchr(line, '\n')) == NULL)
				break;
			*nl = '\0';
			nexpect++;
			if (err == NULL || strstr(err, line + 10) == NULL) {
				fprintf(stderr, "%s: want \"%s\", got \"%s\"\n",
				    de->d_name, line + 10, err ? err : "(accepted)");
				CHECK(!"bad cfg message");
			} else
				CHECK(1);
		}
		CHECK(nexpect > 0);
		CHECK(err != NULL && strncmp(err, path, strlen(path)) == 0);
		free(err);
		free(text);
		free(path);
	}
	closedir(d);
	CHECK(nfiles >= 30);
}

/* test_cfg FILE...: print what the reader says of each (for writing cases). */
static int
show(int argc, char **argv)
{
	struct cfg *cfg;
	char *err;
	size_t i;
	int a;

	for (a = 1; a < argc; a++) {
		err = NULL;
		if (cfg_load(argv[a], &cfg, &err) != 0) {
			printf("%s\n", err);
			free(err);
			continue;
		}
		printf("%s: OK\n", argv[a]);
		for (i = 0; i < cfg->nwarnings; i++)
			printf("  warning: %s\n", cfg->warnings[i]);
		cfg_free(cfg);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	char tmpl[] = "/tmp/test_cfg.XXXXXX", *p;

	if (argc > 1)
		return show(argc, argv);

	if ((tmpdir = mkdtemp(tmpl)) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	cfgpath = util_path_join(tmpdir, "t.cfg");
	put("matmul.mlir", "func.func @f() { return }\n", 26);

	test_seed();
	test_defaults();
	test_executor();
	test_submitted();
	test_values();
	test_comments();
	test_strategy();
	test_measure();
	test_env();
	test_isa();
	test_limits();
	test_one_error();
	test_bad_corpus();

	unlink(cfgpath);
	p = util_path_join(tmpdir, "matmul.mlir");
	unlink(p);
	free(p);
	rmdir(tmpdir);
	free(cfgpath);
	return check_done();
}
