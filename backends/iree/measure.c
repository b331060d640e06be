/*
 * iree backend measurement: the op's data made once by the harness
 * (autosched-measure --npy-inputs: the same verification and timing data
 * the mlir-cpu kernels get), a candidate checked by iree-run-module on the
 * verification data and the harness's exact reference (--npy-check), then
 * timed by iree-benchmark-module the dispatch profiler's way: the dispatch
 * repeated in the module, --batch_size the same count, pinned workers. The
 * IREE tools run through the job's executor (here, or as Slurm steps on
 * the nodes, which read the modules and data by their shared paths); the
 * data is made and the output compared here.
 */
#include <sys/stat.h>

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend_int.h"
#include "backends/iree/iree_int.h"
#include "util/util.h"

#define ARGV_MAX	40

/* The harness's name of an operand's type ("u8" for an unsigned i8). */
static const char *
mtype(enum elem_type t, int uns)
{
	return analysis_operand_name(t, uns);
}

/* "--shape BxMxNxK --types L,R,A --trans TA,TB --batched 0|1 --seed S". */
struct op_args {
	char	 shape[96], types[48], trans[8], batched[4], seed[24];
};

static void
op_args(const struct backend *be, struct op_args *a)
{
	const struct op_desc *op = &be->op;

	snprintf(a->shape, sizeof a->shape, "%lldx%lldx%lldx%lld",
	    (long long)op->batch, (long long)op->m, (long long)op->n,
	    (long long)op->k);
	snprintf(a->types, sizeof a->types, "%s,%s,%s",
	    mtype(op->lhs, op->lhs_unsigned), mtype(op->rhs, op->rhs_unsigned),
	    mtype(op->acc, 0));
	snprintf(a->trans, sizeof a->trans, "%d,%d", op->transpose_a ? 1 : 0,
	    op->transpose_b ? 1 : 0);
	snprintf(a->batched, sizeof a->batched, "%d",
	    strcmp(op->kind, "batch_matmul") == 0);
	snprintf(a->seed, sizeof a->seed, "%llu",
	    (unsigned long long)be->params.seed);
}

/* "1" or "0,1": the first threads CPUs the job may measure on. */
static char *
cpu_list(const struct backend *be, int threads)
{
	char *s = xcalloc((size_t)threads + 1, 12);
	size_t len = 0;
	int i;

	if (be->params.cpus == NULL || be->params.ncpus < 1) {
		for (i = 0; i < threads; i++)
			len += (size_t)sprintf(s + len, "%s%d", i ? "," : "", i);
		return s;
	}
	for (i = 0; i < threads && i < be->params.ncpus; i++)
		len += (size_t)sprintf(s + len, "%s%d", i ? "," : "",
		    be->params.cpus[i]);
	return s;
}

/*
 * Run the harness here in mode ("--npy-inputs" or "--npy-check") on path,
 * with the op's arguments a, verifying or not. 0 with *pr filled (caller
 * frees), or -1 with *err when it could not be run.
 */
static int
harness_run(const struct backend *be, const char *mode, const char *path,
    const struct op_args *a, int verify, struct proc_result *pr, char **err)
{
	struct proc_opts o;
	char *e = NULL;
	char *const argv[] = { be->harness, (char *)mode, (char *)path,
	    "--shape", (char *)a->shape, "--types", (char *)a->types,
	    "--trans", (char *)a->trans, "--batched", (char *)a->batched,
	    "--seed", (char *)a->seed, "--verify", verify ? "1" : "0", NULL };

	memset(&o, 0, sizeof o);
	o.timeout = 600;
	if (proc_run(argv, &o, pr, &e) != 0) {
		util_seterr(err, "iree: %s", e);
		free(e);
		return -1;
	}
	return 0;
}

/* The result line of the data in dir, when dir is trusted and has one. */
static json_t *
data_cached(const char *dir)
{
	char *probe = util_path_join(dir, "result.json"), *text, why[128];
	json_t *j = NULL;

	if (util_trusted(dir, 1, why, sizeof why) == 0 &&
	    util_read_file(probe, 4096, &text, NULL, NULL) == 0) {
		j = json_loads(text, 0, NULL);
		free(text);
	}
	free(probe);
	return j;
}

/* Remove the scratch folder tmp of data_run: only the files it writes. */
static void
data_scratch_remove(const char *tmp)
{
	static const char *const f[] = { "check_lhs", "check_rhs",
	    "check_acc", "time_lhs", "time_rhs", "time_acc" };
	char *p;
	size_t i;

	for (i = 0; i < sizeof f / sizeof f[0] * 2; i++) {
		p = xasprintf("%s/%s.%s", tmp, f[i / 2], i % 2 ? "bin" : "npy");
		unlink(p);
		free(p);
	}
	p = util_path_join(tmp, "result.json");
	unlink(p);
	free(p);
	rmdir(tmp);
}

/*
 * Make the op's data in the new folder tmp with the harness, its result
 * line kept in tmp/result.json. The line, or NULL with *err.
 */
static json_t *
data_run(struct backend *be, const struct op_args *a, const char *tmp,
    char **err)
{
	struct proc_result pr;
	char *line, *probe;
	json_t *j = NULL;

	if (backend_cache_scratch(tmp, data_scratch_remove, err) != 0)
		return NULL;
	if (harness_run(be, "--npy-inputs", tmp, a, be->params.verify, &pr,
	    err) != 0)
		return NULL;
	if (!pr.exited || pr.status != 0 || (j = backend_last_json(pr.out)) == NULL) {
		util_seterr(err, "iree: %s --npy-inputs failed: %s", be->harness,
		    *pr.err ? pr.err : "no result line");
		proc_result_free(&pr);
		return NULL;
	}
	line = xasprintf("%s\n", pr.out);
	proc_result_free(&pr);
	probe = util_path_join(tmp, "result.json");
	if (util_write_file(probe, line, strlen(line), err) != 0) {
		json_decref(j);
		j = NULL;
	}
	free(line);
	free(probe);
	return j;
}

/*
 * The op's data folder: work_dir/data-HASH holding check_*.npy (when the
 * op can be checked) and time_*.npy, made once by the harness. 0, or -1
 * with *err (an environment failure: the data is ours, not the config's).
 */
static int
data_make(struct backend *be, char **err)
{
	struct op_args a;
	static const char *const none[] = { NULL };
	struct trial_result res;
	char *key, hash[17], *dir, *tmp = NULL;
	json_t *j;
	const char *nv;
	int rc = -1;

	if (be->data_dir != NULL)
		return 0;
	memset(&res, 0, sizeof res);
	op_args(be, &a);
	key = xasprintf("%s %s %s %s %s verify %d", a.shape, a.types, a.trans,
	    a.batched, a.seed, be->params.verify);
	util_hash_hex(key, strlen(key), hash);
	free(key);
	dir = xasprintf("%s/data-%s", be->work_dir, hash);
	if ((j = data_cached(dir)) == NULL) {
		tmp = backend_side_name(dir, "tmp");
		if ((j = data_run(be, &a, tmp, err)) == NULL)
			goto out;
		if (backend_cache_commit("iree", be->work_dir, tmp, dir, none,
		    dir, data_scratch_remove, &res) != 0) {
			util_seterr(err, "iree: %s", res.error);
			trial_result_clear(&res);
			goto out;
		}
	}
	be->data_check = (int)backend_json_num(j, "check");
	if ((nv = json_string_value(json_object_get(j, "not_verified"))) != NULL)
		be->not_verified = xstrdup(nv);
	be->data_dir = dir;
	dir = NULL;
	rc = 0;
out:
	if (tmp != NULL && rc != 0)
		data_scratch_remove(tmp);
	json_decref(j);
	free(tmp);
	free(dir);
	return rc;
}

/* Once per instance, whichever thread asks first (the others wait). */
int
iree_data_make(struct backend *be, char **err)
{
	int rc;

	pthread_mutex_lock(&be->mu);
	rc = data_make(be, err);
	pthread_mutex_unlock(&be->mu);
	return rc;
}

/*
 * "--input=@DIR/NAME.npy", or for bf16 (no numpy type)
 * "--input=8x64x32xbf16=@DIR/NAME.bin". Caller frees.
 */
static char *
input_arg(const struct backend *be, const char *name, enum elem_type t,
    int64_t d0, int64_t d1)
{
	const struct op_desc *op = &be->op;

	if (t != ELEM_BF16)
		return xasprintf("--input=@%s/%s.npy", be->data_dir, name);
	if (strcmp(op->kind, "batch_matmul") == 0)
		return xasprintf("--input=%lldx%lldx%lldxbf16=@%s/%s.bin",
		    (long long)op->batch, (long long)d0, (long long)d1,
		    be->data_dir, name);
	return xasprintf("--input=%lldx%lldxbf16=@%s/%s.bin", (long long)d0,
	    (long long)d1, be->data_dir, name);
}

/* The three inputs from the data set prefix ("check" or "time"). */
static void
inputs(const struct backend *be, const char *set, const char *acc_set,
    char *arg[3])
{
	const struct op_desc *op = &be->op;
	char name[32];

	snprintf(name, sizeof name, "%s_lhs", set);
	arg[0] = input_arg(be, name, op->lhs, op->transpose_a ? op->k : op->m,
	    op->transpose_a ? op->m : op->k);
	snprintf(name, sizeof name, "%s_rhs", set);
	arg[1] = input_arg(be, name, op->rhs, op->transpose_b ? op->n : op->k,
	    op->transpose_b ? op->k : op->n);
	snprintf(name, sizeof name, "%s_acc", acc_set);
	arg[2] = input_arg(be, name, op->acc, op->m, op->n);
}

/*
 * A run of an IREE tool through the executor: 1 when it failed (res says
 * how: a crash, a timeout, a non-zero exit: the candidate's outcome; or
 * the environment's), 0 when it exited 0.
 */
static int
run_failed(const char *what, const struct executor_result *x,
    struct trial_result *res)
{
	char *e;

	if (backend_run_failed(what, x, res))
		return 1;
	if (x->status == 0)
		return 0;
	e = backend_excerpt(x->err);
	res->status = TRIAL_CRASHED;
	res->env_failure = backend_env_text(x->err);
	util_seterr(&res->error, "%s: exit %d: %s", what, x->status, e);
	free(e);
	if (res->host[0] == '\0')
		snprintf(res->host, sizeof res->host, "%s", x->host);
	return 1;
}

/*
 * Run argv through the executor: threads workers, pinned here to cpus
 * (ncpus of them), on the op's one node when pinned. 0 with *x filled, or
 * -1 with *err (it could not be started: res->env_failure set).
 */
static int
tool_run(struct backend *be, char *const argv[], int threads, const int *cpus,
    int ncpus, int pinned, struct executor_result *x,
    struct trial_result *res, char **err)
{
	struct executor_run run;
	char *e = NULL;

	memset(&run, 0, sizeof run);
	run.argv = argv;
	run.threads = threads;
	run.cpus = cpus;
	run.ncpus = ncpus;
	run.timeout = be->params.timeout;
	run.node = pinned ? be->node : NULL;
	run.label = be->op.name;
	if (executor_run(be->exec, &run, x, &e) != 0) {
		util_seterr(err, "iree: %s", e);
		res->env_failure = 1;
		free(e);
		return -1;
	}
	return 0;
}

/*
 * Compare iree-run-module's output out with the harness's exact reference:
 * res->verified set when it is right, res->status when it is wrong. 0, or
 * -1 with *err when the harness could not be run (res->env_failure set).
 */
static int
check_output(struct backend *be, const char *out, struct trial_result *res,
    char **err)
{
	struct op_args a;
	struct proc_result pr;
	const char *status;
	json_t *j = NULL;

	op_args(be, &a);
	if (harness_run(be, "--npy-check", out, &a, 1, &pr, err) != 0) {
		res->env_failure = 1;
		return -1;
	}
	if (!pr.exited || pr.status != 0 || (j = backend_last_json(pr.out)) ==
	    NULL) {
		/* The output was no result of the op's type and shape. */
		res->status = TRIAL_WRONG_RESULT;
		res->env_failure = backend_env_text(pr.err);
		util_seterr(&res->error, "the output of iree-run-module could "
		    "not be checked: %s", *pr.err ? pr.err : "no result line");
		proc_result_free(&pr);
		return 0;
	}
	proc_result_free(&pr);
	status = json_string_value(json_object_get(j, "status"));
	res->max_err = backend_json_num(j, "max_err");
	backend_json_str(j, "checked_by", res->checked_by,
	    sizeof res->checked_by);
	if (status != NULL && strcmp(status, "ok") == 0)
		res->verified = 1;
	else {
		res->status = TRIAL_WRONG_RESULT;
		util_seterr(&res->error, "wrong result: max error %g (checked "
		    "by %s)", res->max_err, res->checked_by);
	}
	json_decref(j);
	return 0;
}

/*
 * The check: iree-run-module on the verification data (the one-dispatch
 * module, pinned here to the job's first CPU), its output compared by the
 * harness here. 0 with res filled when the candidate is wrong or failed
 * (res->status set) or right (res->status left TRIAL_OK), -1 with *err
 * when the environment failed.
 */
static int
check(struct backend *be, const struct iree_art *art, enum iree_fault fault,
    const int *cpus, int pinned, const char *scratch,
    struct trial_result *res, char **err)
{
	struct executor_result x;
	char *in[3], *mod, *out, *out_arg;
	int rc = -1, i;

	memset(&x, 0, sizeof x);
	inputs(be, "check", fault == IREE_FAULT_WRONG ? "time" : "check", in);
	mod = xasprintf("--module=%s", art->verify);
	out = xasprintf("%s/out.%s", scratch, be->op.acc == ELEM_BF16 ? "bin" :
	    "npy");
	out_arg = xasprintf("--output=@%s", out);
	{
		char *const argv[] = { be->tools.run, mod, "--function=dispatch",
		    "--device=local-sync", in[0], in[1], in[2], out_arg, NULL };

		if (tool_run(be, argv, 1, cpus, 1, pinned, &x, res, err) != 0)
			goto out;
	}
	if (run_failed("iree-run-module", &x, res))
		rc = 0;
	else
		rc = check_output(be, out, res, err);
out:
	if (res->host[0] == '\0')
		snprintf(res->host, sizeof res->host, "%s", x.host);
	executor_result_free(&x);
	unlink(out);
	for (i = 0; i < 3; i++)
		free(in[i]);
	free(mod);
	free(out);
	free(out_arg);
	return rc;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The times of iree-benchmark-module's JSON: each repetition's real time
 * per item (one dispatch: the module repeats it --batch_size times) in ms.
 * 0 and res's figures, or -1 when the output holds none.
 */
static int
bench_parse(const char *text, const struct op_desc *op,
    struct trial_result *res)
{
	json_error_t jerr;
	json_t *root = json_loads(text, 0, &jerr), *b, *it;
	double t[512], sum = 0, sq = 0, mean, scale;
	const char *unit, *rt;
	size_t i;
	int n = 0;

	if (root == NULL || !json_is_array(b = json_object_get(root,
	    "benchmarks"))) {
		json_decref(root);
		return -1;
	}
	json_array_foreach(b, i, it) {
		rt = json_string_value(json_object_get(it, "run_type"));
		unit = json_string_value(json_object_get(it, "time_unit"));
		if (rt == NULL || strcmp(rt, "iteration") != 0 || n == 512)
			continue;
		scale = unit == NULL ? 0 : strcmp(unit, "ms") == 0 ? 1 :
		    strcmp(unit, "us") == 0 ? 1e-3 : strcmp(unit, "ns") == 0 ?
		    1e-6 : strcmp(unit, "s") == 0 ? 1e3 : 0;
		if (scale > 0 && backend_json_num(it, "real_time") > 0)
			t[n++] = backend_json_num(it, "real_time") * scale;
	}
	json_decref(root);
	if (n == 0)
		return -1;
	for (i = 0; i < (size_t)n; i++) {
		sum += t[i];
		sq += t[i] * t[i];
	}
	mean = sum / n;
	qsort(t, (size_t)n, sizeof *t, cmp_double);
	res->reps = n;
	res->median_ms = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
	res->min_ms = t[0];
	res->max_ms = t[n - 1];
	res->cv = n > 1 && mean > 0 ? sqrt(fmax(0, (sq - sum * mean) /
	    (n - 1))) / mean : 0;
	res->gflops = 2.0 * (double)op->batch * (double)op->m * (double)op->n *
	    (double)op->k / (res->median_ms * 1e6);
	return 0;
}

/*
 * The timing run: iree-benchmark-module on the timing module, threads
 * workers pinned to the job's first CPUs, the process pinned there too
 * (an executor that places its children binds the step to its CPUs: the
 * workers are then only counted); repetitions and their length from the
 * job's min_reps and min_time.
 */
static int
timing(struct backend *be, const struct iree_art *art, int threads,
    enum iree_fault fault, const char *cpus, int pinned,
    struct trial_result *res, char **err)
{
	struct executor_result x;
	char *in[3], *mod, *topo, *batch, *reps_arg, *min_arg, *warm_arg;
	char host[EXECUTOR_NODE_MAX];
	int rc = -1, i, reps, *pin, npin = 0;
	double per;

	memset(&x, 0, sizeof x);
	reps = be->params.min_reps > 3 ? be->params.min_reps : 3;
	if (be->params.max_reps > 0 && reps > be->params.max_reps)
		reps = be->params.max_reps;
	if (reps > 100)
		reps = 100;
	per = be->params.min_time / reps;
	if (per < 0.001)
		per = 0.001;
	inputs(be, "time", "time", in);
	mod = xasprintf("--module=%s", art->bench);
	if (executor_places(be->exec))
		topo = xasprintf("--task_topology_group_count=%d", threads);
	else
		topo = xasprintf("--task_topology_cpu_ids=%s", cpus);
	batch = xasprintf("--batch_size=%d", iree_repeat(&be->op));
	reps_arg = xasprintf("--benchmark_repetitions=%d", reps);
	min_arg = xasprintf("--benchmark_min_time=%.4fs", per);
	warm_arg = xasprintf("--benchmark_min_warmup_time=%.4f",
	    be->params.warmup > 0 ? fmin(0.5, 0.02 * be->params.warmup) : 0.0);
	pin = xcalloc((size_t)threads + 1, sizeof *pin);
	for (i = 0; cpus[i] != '\0'; i++) {
		if (i == 0 || cpus[i - 1] == ',')
			pin[npin++] = atoi(cpus + i);
	}
	{
		char *const hang[] = { be->harness, "--hang", NULL };
		char *const argv[] = { be->tools.bench, mod,
		    "--function=dispatch", "--device=local-task", topo, batch,
		    in[0], in[1], in[2], reps_arg, min_arg, warm_arg,
		    "--benchmark_format=json", NULL };

		if (tool_run(be, fault == IREE_FAULT_HANG ? hang : argv,
		    threads, pin, npin, pinned, &x, res, err) != 0)
			goto out;
	}
	/* The machine that timed it is the trial's. */
	snprintf(host, sizeof host, "%s", x.host);
	if (run_failed("iree-benchmark-module", &x, res))
		rc = 0;
	else if (bench_parse(x.out, &be->op, res) != 0) {
		res->status = TRIAL_ERROR;
		util_seterr(&res->error, "iree-benchmark-module printed no "
		    "timing: %s", *x.err ? x.err : x.out);
		rc = 0;
	} else {
		if (be->params.cv_max > 0 && res->cv > be->params.cv_max) {
			res->status = TRIAL_UNSTABLE;
			util_seterr(&res->error, "unstable: cv %.3f above %.3f",
			    res->cv, be->params.cv_max);
		}
		rc = 0;
	}
	if (host[0] != '\0')
		snprintf(res->host, sizeof res->host, "%s", host);
out:
	executor_result_free(&x);
	for (i = 0; i < 3; i++)
		free(in[i]);
	free(mod);
	free(topo);
	free(batch);
	free(reps_arg);
	free(min_arg);
	free(warm_arg);
	free(pin);
	return rc;
}

int
iree_measure(struct backend *be, const struct iree_art *art, int threads,
    enum iree_fault fault, int pinned, struct trial_result *res, char **err)
{
	char *cpus = NULL, *scratch = NULL;
	double t0 = util_now();
	int rc = -1, first;

	if (iree_data_make(be, err) != 0) {
		res->env_failure = 1;
		res->status = TRIAL_ERROR;
		util_seterr(&res->error, "%s", *err);
		return -1;
	}
	cpus = cpu_list(be, threads > 0 ? threads : 1);
	first = atoi(cpus);
	res->status = TRIAL_OK;
	if (be->params.verify && be->data_check) {
		/* A folder of its own: measurements may run at once. */
		scratch = xasprintf("%s/run.%ld.%lu", be->work_dir,
		    (long)getpid(), __sync_add_and_fetch(&be->runs, 1));
		if (util_mkdirs(scratch, err) != 0) {
			res->env_failure = 1;
			goto out;
		}
		if (check(be, art, fault, &first, pinned, scratch, res,
		    err) != 0)
			goto out;
		if (res->status != TRIAL_OK) {
			rc = 0;
			goto out;
		}
	} else if (be->params.verify) {
		snprintf(res->checked_by, sizeof res->checked_by, "none");
		res->verified = 0;
	}
	rc = timing(be, art, threads > 0 ? threads : 1, fault, cpus, pinned,
	    res, err);
out:
	res->measure_s = util_now() - t0;
	if (scratch != NULL)
		rmdir(scratch);
	free(scratch);
	free(cpus);
	return rc;
}

int
iree_reference(struct backend *be, int threads, struct trial_result *res,
    char **err)
{
	struct op_args a;
	struct executor_result x;
	char *cpus = cpu_list(be, threads > 0 ? threads : 1), thr[16];
	char min[32];
	const char *status;
	json_t *j = NULL;
	int rc = -1, n = 0;

	memset(&x, 0, sizeof x);
	op_args(be, &a);
	snprintf(thr, sizeof thr, "%d", threads > 0 ? threads : 1);
	snprintf(min, sizeof min, "%g", be->params.min_time);
	{
		char *argv[24] = { be->harness, "--ref", "auto", "--shape",
		    a.shape, "--types", a.types, "--trans", a.trans,
		    "--threads", thr, "--min-time", min, "--seed", a.seed };

		n = 15;
		/* An executor that places its children binds them (Slurm). */
		if (!executor_places(be->exec)) {
			argv[n++] = "--cpus";
			argv[n++] = cpus;
		}
		argv[n] = NULL;
		if (tool_run(be, argv, threads > 0 ? threads : 1, NULL, 0, 1,
		    &x, res, err) != 0)
			goto out;
	}
	if (x.outcome != EXECUTOR_EXITED || x.status != 0 ||
	    (j = backend_last_json(x.out)) == NULL) {
		res->status = x.outcome == EXECUTOR_TIMEOUT ? TRIAL_TIMEOUT :
		    TRIAL_ERROR;
		res->env_failure = x.outcome == EXECUTOR_ENV_FAILED;
		util_seterr(&res->error, "reference run failed: %s",
		    x.why != NULL ? x.why : *x.err ? x.err : "no result line");
	} else {
		status = json_string_value(json_object_get(j, "status"));
		backend_harness_result(j, &be->op, res);
		res->status = status != NULL && strcmp(status, "ok") == 0 ?
		    TRIAL_OK : TRIAL_ERROR;
	}
	if (res->host[0] == '\0')
		snprintf(res->host, sizeof res->host, "%s", x.host);
	rc = 0;
out:
	executor_result_free(&x);
	json_decref(j);
	free(cpus);
	return rc;
}
