/*
 * mlir-cpu measurement: run autosched-measure (measure_main.c) through the
 * job's executor (here, pinned; or a Slurm step), with a timeout, on a
 * kernel or on OpenBLAS, and turn its JSON line or its death into a trial
 * result.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend_int.h"
#include "backends/mlir-cpu/mlircpu_int.h"
#include "util/util.h"

/* Pick the first n CPUs of the allowed ones into out. Returns how many. */
static int
pick_cpus(const struct backend *be, int n, int *out)
{
	int i, have = be->params.cpus != NULL ? be->params.ncpus : util_ncpus();

	if (n > have)
		n = have;
	for (i = 0; i < n; i++)
		out[i] = be->params.cpus != NULL ? be->params.cpus[i] : i;
	return n;
}

#define MEASURE_ARGV_MAX	48

/*
 * Seconds a measuring child may take beyond the cfg's timeout to make and
 * check its data: 4 s per GiB of operands (the LM head of a 1.5B model,
 * 1536 x 151936 in f32, is 0.9 GiB, copied for the reference and filled
 * twice), so that only the candidate's own time can be a timeout.
 */
static double
measure_setup_s(const struct op_desc *op)
{
	double b = (double)(op->batch > 0 ? op->batch : 1);
	double bytes = b * ((double)op->m * (double)op->k *
	    (double)analysis_elem_size(op->lhs) + (double)op->k *
	    (double)op->n * (double)analysis_elem_size(op->rhs) + 2.0 *
	    (double)op->m * (double)op->n * (double)analysis_elem_size(op->acc));

	return 4.0 * bytes / (1024.0 * 1024.0 * 1024.0);
}

int
mlircpu_begin(struct backend *be, char **err)
{
	char *probe[] = { be->harness, "--target", NULL };

	/* A cache others can write runs their code: the job stops (exit 2). */
	if (backend_cache_check("mlir-cpu", be->params.work_dir, err) != 0 ||
	    backend_cache_check("mlir-cpu", be->work_dir, err) != 0)
		return -1;
	/* What runs killed mid-compile left, gone with them. */
	(void)backend_cache_sweep(be->work_dir, mlircpu_scratch_remove);
	return executor_begin(be->exec, probe, be->cpu, err);
}

int
mlircpu_measure(struct backend *be, const char *so, int threads,
    enum mlircpu_fault fault, int pinned, struct trial_result *res,
    char **err)
{
	const struct op_desc *op = &be->op;
	struct executor_run run;
	struct executor_result x;
	char shape[128], types[64], trans[16], thr[16], warm[16], mt[32];
	char reps[40], seed[32], verify[8], cpulist[256], omp[32], blas[40];
	char *argv[MEASURE_ARGV_MAX], *env[4];
	int cpus[256], ncpu, i, argc = 0, rc = -1, places;
	size_t len = 0;
	json_t *j = NULL;
	const char *status;
	double t0 = util_now();

	memset(&run, 0, sizeof run);
	memset(&x, 0, sizeof x);
	places = executor_places(be->exec);
	ncpu = pick_cpus(be, threads < 256 ? threads : 256, cpus);
	for (i = 0; i < ncpu && len + 12 < sizeof cpulist; i++)
		len += (size_t)snprintf(cpulist + len, sizeof cpulist - len,
		    "%s%d", i ? "," : "", cpus[i]);
	snprintf(shape, sizeof shape, "%lldx%lldx%lldx%lld",
	    (long long)(op->batch > 0 ? op->batch : 1), (long long)op->m,
	    (long long)op->n, (long long)op->k);
	/* u8 for an operand widened with extui: checked as unsigned. */
	snprintf(types, sizeof types, "%s,%s,%s",
	    analysis_operand_name(op->lhs, op->lhs_unsigned),
	    analysis_operand_name(op->rhs, op->rhs_unsigned),
	    analysis_elem_name(op->acc));
	snprintf(trans, sizeof trans, "%d,%d", op->transpose_a != 0,
	    op->transpose_b != 0);
	snprintf(thr, sizeof thr, "%d", threads);
	snprintf(warm, sizeof warm, "%d", be->params.warmup);
	snprintf(mt, sizeof mt, "%g", be->params.min_time);
	snprintf(reps, sizeof reps, "%d,%d", be->params.min_reps > 0 ?
	    be->params.min_reps : 1, be->params.max_reps > 0 ?
	    be->params.max_reps : 1000);
	snprintf(seed, sizeof seed, "%llu", (unsigned long long)be->params.seed);
	snprintf(verify, sizeof verify, "%d", be->params.verify != 0);
	/* The kernel's OpenMP team gets threads; OpenBLAS stays out of its way. */
	snprintf(omp, sizeof omp, "OMP_NUM_THREADS=%d", threads);
	snprintf(blas, sizeof blas, "OPENBLAS_NUM_THREADS=%d",
	    so != NULL ? 1 : threads);
	env[0] = omp;
	env[1] = blas;
	/*
	 * In sanitizer builds: LeakSanitizer crashes in its tracer when the
	 * OpenMP runtime's threads are alive at exit (a team, or oneDNN's in a
	 * reference run). Inert otherwise.
	 */
	env[2] = threads > 1 || so == NULL ? "ASAN_OPTIONS=detect_leaks=0" :
	    NULL;
	env[3] = NULL;

	argv[argc++] = be->harness;
	if (so != NULL) {
		argv[argc++] = "--kernel";
		argv[argc++] = (char *)so;
	} else {
		/* The library routine of the op's precision, else the closest. */
		argv[argc++] = "--ref";
		argv[argc++] = "auto";
	}
	argv[argc++] = "--shape";	argv[argc++] = shape;
	argv[argc++] = "--types";	argv[argc++] = types;
	argv[argc++] = "--trans";	argv[argc++] = trans;
	argv[argc++] = "--threads";	argv[argc++] = thr;
	argv[argc++] = "--warmup";	argv[argc++] = warm;
	argv[argc++] = "--min-time";	argv[argc++] = mt;
	argv[argc++] = "--reps";	argv[argc++] = reps;
	argv[argc++] = "--seed";	argv[argc++] = seed;
	argv[argc++] = "--verify";	argv[argc++] = so != NULL ? verify : "0";
	if (!places) {
		/* An executor that places its children binds them (Slurm). */
		argv[argc++] = "--cpus";
		argv[argc++] = cpulist;
	}
	if (so != NULL && analysis_kind_quantized(op->kind)) {
		/*
		 * The kernel takes the zero points as arguments: checked with
		 * two that are not 0 (and not alike), so that a kernel which
		 * drops or swaps a correction is wrong.
		 */
		argv[argc++] = "--zero-points";
		argv[argc++] = MLIRCPU_CHECK_ZERO_POINTS;
	}
	if (fault == FAULT_CRASH || fault == FAULT_HANG ||
	    fault == FAULT_WRONG || fault == FAULT_SLEEP ||
	    fault == FAULT_NOTHING) {
		argv[argc++] = "--fault";
		argv[argc++] = fault == FAULT_CRASH ? "crash" :
		    fault == FAULT_HANG ? "hang" : fault == FAULT_WRONG ?
		    "wrong" : fault == FAULT_SLEEP ? "sleep" : "nothing";
	}
	argv[argc] = NULL;

	run.argv = argv;
	run.env = env;
	run.threads = threads;
	run.cpus = cpus;
	run.ncpus = ncpu;
	run.timeout = be->params.timeout + measure_setup_s(op);
	/* One machine for the rounds compared side by side. */
	run.node = pinned ? be->node : NULL;
	run.label = op->name;
	if (executor_run(be->exec, &run, &x, err) != 0) {
		char *e = xasprintf("mlir-cpu: %s", *err);

		free(*err);
		*err = e;
		return -1;
	}
	res->measure_s = util_now() - t0;
	if (backend_run_failed(x.outcome == EXECUTOR_TIMEOUT ? "measurement" :
	    "kernel", &x, res))
		goto done;
	/* The JSON is the last line of stdout. */
	if (x.status != 0 || (j = backend_last_json(x.out)) == NULL) {
		res->status = TRIAL_ERROR;
		res->env_failure = backend_env_text(x.err);
		util_seterr(&res->error, "harness exit %d: %s", x.status,
		    *x.err ? x.err : "no result line");
		goto done;
	}
	status = json_string_value(json_object_get(j, "status"));
	backend_harness_result(j, op, res);
	if (status != NULL && strcmp(status, "wrong") == 0) {
		res->status = TRIAL_WRONG_RESULT;
		res->verified = 0;
		util_seterr(&res->error, "wrong result: max error %g "
		    "(checked by %s)", res->max_err, res->checked_by);
	} else if (be->params.cv_max > 0 && res->cv > be->params.cv_max) {
		res->status = TRIAL_UNSTABLE;
		util_seterr(&res->error, "unstable: cv %.3f above %.3f",
		    res->cv, be->params.cv_max);
	} else
		res->status = TRIAL_OK;
done:
	if (res->host[0] == '\0')
		snprintf(res->host, sizeof res->host, "%s", x.host);
	rc = 0;
	json_decref(j);
	executor_result_free(&x);
	return rc;
}
