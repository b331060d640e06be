/*
 * mlir-cpu measurement: run autosched-measure (measure_main.c) pinned, with
 * a timeout, on a kernel or on OpenBLAS, and turn its JSON line or its death
 * into a trial result.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static double
num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : 0;
}

/* Copy string member key of o into buf (bounded); "" when absent. */
static void
str(json_t *o, const char *key, char *buf, size_t len)
{
	const char *v = json_string_value(json_object_get(o, key));

	snprintf(buf, len, "%s", v != NULL ? v : "");
}

/* The counters object: a number is measured, null or absent is not. */
static void
counters(json_t *o, struct trial_result *res)
{
	json_t *c = json_object_get(o, "counters"), *v;
	int i;

	for (i = 0; i < TRIAL_CTR_COUNT; i++) {
		v = json_object_get(c, backend_counter_name(i));
		if (json_is_integer(v) && json_integer_value(v) >= 0) {
			res->counters[i] = (int64_t)json_integer_value(v);
			res->counters_have |= 1u << i;
		}
	}
}

int
mlircpu_measure(struct backend *be, const char *so, int threads,
    enum mlircpu_fault fault, struct trial_result *res, char **err)
{
	const struct op_desc *op = &be->op;
	struct proc_opts o;
	struct proc_result pr;
	char shape[128], types[64], trans[16], thr[16], warm[16], mt[32];
	char reps[40], seed[32], verify[8], cpulist[256], omp[32], blas[40];
	char *argv[32], *env[4], *perr = NULL;
	int cpus[256], ncpu, i, argc = 0, rc = -1;
	size_t len = 0;
	json_t *j = NULL;
	json_error_t jerr;
	const char *status, *line;
	double t0 = util_now();

	memset(&o, 0, sizeof o);
	memset(&pr, 0, sizeof pr);
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
	argv[argc++] = "--cpus";	argv[argc++] = cpulist;
	if (fault == FAULT_CRASH || fault == FAULT_HANG ||
	    fault == FAULT_WRONG || fault == FAULT_SLEEP ||
	    fault == FAULT_NOTHING) {
		argv[argc++] = "--fault";
		argv[argc++] = fault == FAULT_CRASH ? "crash" :
		    fault == FAULT_HANG ? "hang" : fault == FAULT_WRONG ?
		    "wrong" : fault == FAULT_SLEEP ? "sleep" : "nothing";
	}
	argv[argc] = NULL;

	o.timeout = be->params.timeout;
	o.cpus = cpus;
	o.ncpus = ncpu;
	o.env = env;
	if (proc_run(argv, &o, &pr, &perr) != 0) {
		util_seterr(err, "mlir-cpu: cannot run %s: %s", be->harness, perr);
		free(perr);
		return -1;
	}
	res->measure_s = util_now() - t0;
	if (pr.timed_out) {
		res->status = TRIAL_TIMEOUT;
		util_seterr(&res->error, "measurement killed after %.1f s "
		    "(timeout)", pr.seconds);
		goto done;
	}
	if (pr.exec_failed) {
		util_seterr(err, "mlir-cpu: cannot run %s", be->harness);
		goto out;
	}
	if (!pr.exited) {
		res->status = TRIAL_CRASHED;
		util_seterr(&res->error, "kernel crashed (signal %d)%s%s",
		    pr.signal, *pr.err ? ": " : "", pr.err);
		goto done;
	}
	/* The JSON is the last line of stdout. */
	line = pr.out;
	while (strchr(line, '\n') != NULL && strchr(line, '\n')[1] != '\0')
		line = strchr(line, '\n') + 1;
	if (pr.status != 0 || (j = json_loads(line, 0, &jerr)) == NULL) {
		res->status = TRIAL_ERROR;
		res->env_failure = mlircpu_env_text(pr.err);
		util_seterr(&res->error, "harness exit %d: %s", pr.status,
		    *pr.err ? pr.err : "no result line");
		goto done;
	}
	status = json_string_value(json_object_get(j, "status"));
	res->verified = (int)num(j, "verified");
	res->max_err = num(j, "max_err");
	res->reps = (int)num(j, "reps");
	res->median_ms = num(j, "median_ms");
	res->min_ms = num(j, "min_ms");
	res->max_ms = num(j, "max_ms");
	res->cv = num(j, "cv");
	res->reps_dropped = (int)num(j, "reps_dropped");
	str(j, "checked_by", res->checked_by, sizeof res->checked_by);
	str(j, "ref_routine", res->ref_routine, sizeof res->ref_routine);
	res->ref_same_precision = (int)num(j, "ref_same_precision");
	counters(j, res);
	if (res->median_ms > 0)
		res->gflops = 2.0 * (double)(op->batch > 0 ? op->batch : 1) *
		    (double)op->m * (double)op->n * (double)op->k /
		    (res->median_ms * 1e6);
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
	rc = 0;
out:
	json_decref(j);
	proc_result_free(&pr);
	return rc;
}
