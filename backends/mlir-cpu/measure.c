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
 * twice), and a conv's direct loop, so that only the candidate's own time
 * can be a timeout.
 */
static double
measure_setup_s(const struct op_desc *op)
{
	double b = (double)(op->batch > 0 ? op->batch : 1);
	double bytes = b * ((double)op->m * (double)op->k *
	    (double)analysis_elem_size(op->lhs) + (double)op->k *
	    (double)op->n * (double)analysis_elem_size(op->rhs) + 2.0 *
	    (double)op->m * (double)op->n * (double)analysis_elem_size(op->acc));

	double s = 4.0 * bytes / (1024.0 * 1024.0 * 1024.0);

	/*
	 * A conv's runs (the reference, a kernel with its im2col) are checked
	 * by the direct loop: its multiply-adds at 50 million a second, well
	 * below what it does here.
	 */
	if (op->conv.layout == CONV_NHWC_HWCF ||
	    op->conv.layout == CONV_NCHW_FCHW)
		s += analysis_op_flops(op) / 2.0 / 5e7;
	return s;
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

/* The strings and CPUs a measuring child's argv and env point into. */
struct measure_args {
	char	 shape[128], types[64], trans[16], thr[16], warm[16], mt[32];
	char	 reps[40], seed[32], verify[8], cpulist[256], omp[32], blas[40];
	char	 conv[256];
	char	*argv[MEASURE_ARGV_MAX], *env[10];
	int	 cpus[256], ncpu;
};

/* The CPUs of a run of threads threads, and their list for --cpus. */
static void
measure_cpus(const struct backend *be, int threads, struct measure_args *a)
{
	size_t len = 0;
	int i;

	a->ncpu = pick_cpus(be, threads < 256 ? threads : 256, a->cpus);
	for (i = 0; i < a->ncpu && len + 12 < sizeof a->cpulist; i++)
		len += (size_t)snprintf(a->cpulist + len,
		    sizeof a->cpulist - len, "%s%d", i ? "," : "", a->cpus[i]);
}

/*
 * --conv's value for a run of an op that came from an f32 NHWC/HWCF or
 * NCHW/FCHW convolution (its geometry as the program has it): the
 * reference run (so NULL) times oneDNN's convolution, a kernel run times
 * the harness's im2col copy with the GEMM and checks it as the conv, so
 * that every phase measures the conv as it runs. A 1x1 stride-1 conv's
 * kernel runs without: it is its matmul, with no im2col to time. "" for
 * other ops.
 */
static void
measure_conv(const struct op_desc *op, const char *so, struct measure_args *a)
{
	const struct op_conv *c = &op->conv;

	a->conv[0] = '\0';
	if ((c->layout != CONV_NHWC_HWCF && c->layout != CONV_NCHW_FCHW) ||
	    op->lhs != ELEM_F32 || op->rhs != ELEM_F32 ||
	    op->acc != ELEM_F32 || c->n < 1 || c->h < 1 || c->w < 1 ||
	    c->c < 1 || c->f < 1 || c->kh < 1 || c->kw < 1)
		return;
	/* The harness takes a kernel's --conv for the conv's own GEMM only. */
	if (so != NULL && (!analysis_conv_im2col(op) || op->batch > 1 ||
	    op->transpose_a || op->transpose_b))
		return;
	snprintf(a->conv, sizeof a->conv, "%s:%lld,%lld,%lld,%lld,%lld,%lld,"
	    "%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld",
	    c->layout == CONV_NCHW_FCHW ? "nchw" : "nhwc", (long long)c->n,
	    (long long)c->h, (long long)c->w, (long long)c->c,
	    (long long)c->f, (long long)c->kh, (long long)c->kw,
	    (long long)c->stride[0], (long long)c->stride[1],
	    (long long)c->dilation[0], (long long)c->dilation[1],
	    (long long)c->pad[0], (long long)c->pad[1], (long long)c->pad[2],
	    (long long)c->pad[3]);
}

/*
 * The options' values for kernel so (NULL: the reference): the op's shape,
 * types and conv, the cfg's timing.
 */
static void
measure_values(const struct backend *be, const char *so, int threads,
    struct measure_args *a)
{
	const struct op_desc *op = &be->op;

	snprintf(a->shape, sizeof a->shape, "%lldx%lldx%lldx%lld",
	    (long long)(op->batch > 0 ? op->batch : 1), (long long)op->m,
	    (long long)op->n, (long long)op->k);
	/* u8 for an operand widened with extui: checked as unsigned. */
	snprintf(a->types, sizeof a->types, "%s,%s,%s",
	    analysis_operand_name(op->lhs, op->lhs_unsigned),
	    analysis_operand_name(op->rhs, op->rhs_unsigned),
	    analysis_elem_name(op->acc));
	snprintf(a->trans, sizeof a->trans, "%d,%d", op->transpose_a != 0,
	    op->transpose_b != 0);
	snprintf(a->thr, sizeof a->thr, "%d", threads);
	snprintf(a->warm, sizeof a->warm, "%d", be->params.warmup);
	snprintf(a->mt, sizeof a->mt, "%g", be->params.min_time);
	snprintf(a->reps, sizeof a->reps, "%d,%d", be->params.min_reps > 0 ?
	    be->params.min_reps : 1, be->params.max_reps > 0 ?
	    be->params.max_reps : 1000);
	snprintf(a->seed, sizeof a->seed, "%llu",
	    (unsigned long long)be->params.seed);
	snprintf(a->verify, sizeof a->verify, "%d", be->params.verify != 0);
	measure_conv(op, so, a);
}

/* The child's environment: its threads, for kernel so (NULL: reference). */
static void
measure_env(const char *so, int threads, struct measure_args *a)
{
	const char *const *isa = mlircpu_isa_env();
	size_t n = 2, i;

	/* The kernel's OpenMP team gets threads; OpenBLAS stays out of its way. */
	snprintf(a->omp, sizeof a->omp, "OMP_NUM_THREADS=%d", threads);
	snprintf(a->blas, sizeof a->blas, "OPENBLAS_NUM_THREADS=%d",
	    so != NULL ? 1 : threads);
	a->env[0] = a->omp;
	a->env[1] = a->blas;
	/*
	 * In sanitizer builds: LeakSanitizer crashes in its tracer when the
	 * OpenMP runtime's threads are alive at exit (a team, or oneDNN's in a
	 * reference run). Inert otherwise.
	 */
	if (threads > 1 || so == NULL)
		a->env[n++] = "ASAN_OPTIONS=detect_leaks=0";
	/* Under an ISA cap, the peers run their code for that ISA too. */
	for (i = 0; isa[i] != NULL && n + 1 < sizeof a->env / sizeof a->env[0];
	    i++)
		a->env[n++] = (char *)isa[i];
	a->env[n] = NULL;
}

/*
 * The child's argv: autosched-measure on kernel so (NULL: the reference),
 * bound to the CPUs unless the executor places it, with a test fault.
 */
static void
measure_argv(const struct backend *be, const char *so,
    enum mlircpu_fault fault, int places, struct measure_args *a)
{
	char **argv = a->argv;
	int argc = 0;

	argv[argc++] = be->harness;
	if (so != NULL) {
		argv[argc++] = "--kernel";
		argv[argc++] = (char *)so;
	} else {
		/* The library routine of the op's precision, else the closest. */
		argv[argc++] = "--ref";
		argv[argc++] = "auto";
	}
	argv[argc++] = "--shape";	argv[argc++] = a->shape;
	argv[argc++] = "--types";	argv[argc++] = a->types;
	argv[argc++] = "--trans";	argv[argc++] = a->trans;
	argv[argc++] = "--threads";	argv[argc++] = a->thr;
	argv[argc++] = "--warmup";	argv[argc++] = a->warm;
	argv[argc++] = "--min-time";	argv[argc++] = a->mt;
	argv[argc++] = "--reps";	argv[argc++] = a->reps;
	argv[argc++] = "--seed";	argv[argc++] = a->seed;
	/* oneDNN's convolution is checked against a direct loop; BLAS not. */
	argv[argc++] = "--verify";
	argv[argc++] = so != NULL || a->conv[0] != '\0' ? a->verify : "0";
	/* A conv: oneDNN's, or the kernel timed and checked with the im2col. */
	if (a->conv[0] != '\0') {
		argv[argc++] = "--conv";
		argv[argc++] = a->conv;
	}
	if (!places) {
		/* An executor that places its children binds them (Slurm). */
		argv[argc++] = "--cpus";
		argv[argc++] = a->cpulist;
	}
	if (so != NULL && analysis_kind_quantized(be->op.kind)) {
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
	    fault == FAULT_NOTHING || fault == FAULT_IM2COL) {
		argv[argc++] = "--fault";
		argv[argc++] = fault == FAULT_CRASH ? "crash" :
		    fault == FAULT_HANG ? "hang" : fault == FAULT_WRONG ?
		    "wrong" : fault == FAULT_SLEEP ? "sleep" :
		    fault == FAULT_IM2COL ? "im2col" : "nothing";
	}
	argv[argc] = NULL;
}

/* The trial result of the finished child x: its death or its JSON line. */
static void
measure_result(const struct backend *be, const struct executor_result *x,
    struct trial_result *res)
{
	json_t *j = NULL;
	const char *status;

	if (backend_run_failed(x->outcome == EXECUTOR_TIMEOUT ? "measurement" :
	    "kernel", x, res))
		goto done;
	/* The JSON is the last line of stdout. */
	if (x->status != 0 || (j = backend_last_json(x->out)) == NULL) {
		res->status = TRIAL_ERROR;
		res->env_failure = backend_env_text(x->err);
		util_seterr(&res->error, "harness exit %d: %s", x->status,
		    *x->err ? x->err : "no result line");
		goto done;
	}
	status = json_string_value(json_object_get(j, "status"));
	backend_harness_result(j, &be->op, res);
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
		snprintf(res->host, sizeof res->host, "%s", x->host);
	json_decref(j);
}

int
mlircpu_measure(struct backend *be, const char *so, int threads,
    enum mlircpu_fault fault, int pinned, struct trial_result *res,
    char **err)
{
	const struct op_desc *op = &be->op;
	struct measure_args a;
	struct executor_run run;
	struct executor_result x;
	int places;
	double t0 = util_now();

	memset(&run, 0, sizeof run);
	memset(&x, 0, sizeof x);
	places = executor_places(be->exec);
	measure_cpus(be, threads, &a);
	measure_values(be, so, threads, &a);
	measure_env(so, threads, &a);
	measure_argv(be, so, fault, places, &a);

	run.argv = a.argv;
	run.env = a.env;
	run.threads = threads;
	run.cpus = a.cpus;
	run.ncpus = a.ncpu;
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
	measure_result(be, &x, res);
	executor_result_free(&x);
	return 0;
}
