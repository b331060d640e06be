/*
 * mlir-cpu measurement: run autosched-measure (measure_main.c) pinned, with
 * a timeout, on a kernel or on OpenBLAS, and turn its JSON line or its death
 * into a trial result.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Bounds of the srun command line. */
#define MEASURE_ARGV_MAX	96
#define MEASURE_SARGS_MAX	520
#define MEASURE_SRUN_WORDS	32	/* extra words from slurm_srun_args */
/* Steps tried for one measurement before the job stops (nothing recorded). */
#define MEASURE_SLURM_ATTEMPTS	5
/* Steps a node failed (killed, cancelled) before it is sent no more work. */
#define MEASURE_NODE_FAILS	2
#define MEASURE_NODES_MAX	64

/*
 * Step failures per node, over the life of this process (every op and
 * candidate): a node at MEASURE_NODE_FAILS is given to srun's --exclude.
 */
static struct {
	char	node[64];
	int	fails;
} slurm_nodes[MEASURE_NODES_MAX];
static int slurm_nnodes;

static void
slurm_node_failed(const char *node)
{
	int i;

	if (*node == '\0')
		return;
	for (i = 0; i < slurm_nnodes; i++) {
		if (strcmp(slurm_nodes[i].node, node) == 0) {
			slurm_nodes[i].fails++;
			return;
		}
	}
	if (slurm_nnodes == MEASURE_NODES_MAX)
		return;
	snprintf(slurm_nodes[slurm_nnodes].node, sizeof slurm_nodes[0].node,
	    "%s", node);
	slurm_nodes[slurm_nnodes++].fails = 1;
}

/*
 * "--exclude=n1,n3" of the nodes failed too often, or "-N1" if none (said
 * again, harmless; a second --quiet would hide srun's error lines).
 */
static char *
slurm_exclude(char *buf, size_t len)
{
	size_t n = 0;
	int i, any = 0;

	n = (size_t)snprintf(buf, len, "--exclude=");
	for (i = 0; i < slurm_nnodes; i++) {
		if (slurm_nodes[i].fails < MEASURE_NODE_FAILS ||
		    n + strlen(slurm_nodes[i].node) + 2 >= len)
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", any ? "," : "",
		    slurm_nodes[i].node);
		any = 1;
	}
	return any ? buf : "-N1";
}

enum slurm_outcome {
	SLURM_RESULT,	/* the step ran to the end: parse its stdout */
	SLURM_DONE,	/* the candidate's own failure, res filled */
	SLURM_RETRY,	/* the step failed to start or was killed: again */
	SLURM_STOPPED,	/* we killed srun (stop, cancel, SIGTERM) */
};

/* Seconds the coordinator waits for srun: the step's queueing included. */
static double
slurm_wall(const struct backend *be)
{
	if (be->params.slurm_step_timeout > 0)
		return be->params.slurm_step_timeout;
	return be->params.timeout + 60;
}

/* The job name of this process's steps: what scancel is given. */
static void
slurm_job_name(char *buf, size_t len)
{
	snprintf(buf, len, "autosched-%ld", (long)getpid());
}

/*
 * argv[0..] = srun -n1 -N1 -c<threads> --cpu-bind=cores --job-name=…
 * --time=… [-p partition] [srun_args…] timeout -k 2 <timeout>; the harness
 * and its arguments follow. The step's own timeout (coreutils, on every
 * node) ends a hanging candidate with exit 124 where it runs; --time makes
 * Slurm end the step even if this process dies (kill -9).
 */
static int
slurm_prefix(const struct backend *be, int threads, char **argv, int *argc,
    char *sargs, char buf[4][64], char **err)
{
	const char *extra = be->params.slurm_srun_args;
	char *save, *tok;
	int n = 0, words = 0;
	double wall = slurm_wall(be);

	argv[n++] = "srun";
	argv[n++] = "-N1";	/* mlircpu_measure's slot for --exclude */
	argv[n++] = "--quiet";
	argv[n++] = "-n1";
	argv[n++] = "-N1";
	snprintf(buf[0], 64, "-c%d", threads > 0 ? threads : 1);
	argv[n++] = buf[0];
	argv[n++] = "--cpu-bind=cores";
	slurm_job_name(buf[1] + 11, 64 - 11);
	memcpy(buf[1], "--job-name=", 11);
	argv[n++] = buf[1];
	/* Minutes, rounded up, plus one: a bound for orphans only. */
	snprintf(buf[2], 64, "--time=%d", (int)(wall / 60) + 2);
	argv[n++] = buf[2];
	if (be->params.slurm_partition != NULL &&
	    *be->params.slurm_partition != '\0') {
		argv[n++] = "-p";
		argv[n++] = (char *)be->params.slurm_partition;
	}
	if (extra != NULL) {
		if (strlen(extra) >= MEASURE_SARGS_MAX) {
			util_seterr(err, "mlir-cpu: slurm_srun_args is longer "
			    "than %d characters", MEASURE_SARGS_MAX - 1);
			return -1;
		}
		snprintf(sargs, MEASURE_SARGS_MAX, "%s", extra);
		for (tok = strtok_r(sargs, " \t", &save); tok != NULL;
		    tok = strtok_r(NULL, " \t", &save)) {
			if (++words > MEASURE_SRUN_WORDS) {
				util_seterr(err, "mlir-cpu: slurm_srun_args has "
				    "more than %d words", MEASURE_SRUN_WORDS);
				return -1;
			}
			argv[n++] = tok;
		}
	}
	argv[n++] = "timeout";
	argv[n++] = "-k";
	argv[n++] = "2";
	snprintf(buf[3], 64, "%g", be->params.timeout > 0 ?
	    be->params.timeout : 10);
	argv[n++] = buf[3];
	*argc = n;
	return 0;
}

/* Cancel this process's steps (after a kill of srun: its step lives on). */
static void
slurm_cancel(void)
{
	char name[64], opt[80];
	char *argv[] = { "scancel", "--quiet", opt, NULL };
	struct proc_opts o;
	struct proc_result pr;
	char *perr = NULL;

	slurm_job_name(name, sizeof name);
	snprintf(opt, sizeof opt, "--name=%s", name);
	memset(&o, 0, sizeof o);
	o.timeout = 30;
	if (proc_run(argv, &o, &pr, &perr) != 0)
		free(perr);
	else
		proc_result_free(&pr);
}

/* srun's last error line, for messages. */
static const char *
slurm_why(const struct proc_result *pr)
{
	static char buf[200];
	const char *p = NULL, *q = pr->err;
	size_t n;

	if (pr->timed_out)
		return "no result within slurm_step_timeout: step cancelled";
	if (!pr->exited)
		return "srun killed";
	while ((q = strstr(q, "error: ")) != NULL)
		p = q++;
	if (p == NULL)
		return *pr->err ? pr->err : "srun failed without a message";
	n = strcspn(p, "\n");
	snprintf(buf, sizeof buf, "%.*s", (int)(n < 190 ? n : 190), p);
	return buf;
}

/* The NODE of "srun: error: NODE: task 0: …" (task points at ": task 0"). */
static void
slurm_node(const char *text, const char *task, char *buf, size_t len)
{
	const char *p = task;

	while (p > text && p[-1] != ' ' && p[-1] != '\n')
		p--;
	if ((size_t)(task - p) < len && task > p)
		snprintf(buf, len, "%.*s", (int)(task - p), p);
}

/*
 * What a finished srun means. srun exits with the task's status and reports
 * a task's death on stderr as "srun: error: NODE: task 0: Segmentation
 * fault"; a step that never started says so without a task line.
 */
static enum slurm_outcome
slurm_outcome(const struct backend *be, const struct proc_result *pr,
    struct trial_result *res)
{
	static const char *const crash[] = { "Segmentation fault",
	    "Bus error", "Illegal instruction", "Floating point exception",
	    "Aborted", NULL };
	const char *task = strstr(pr->err, ": task 0: ");
	int i;

	if (pr->timed_out) {
		/* Never ran, or its node stopped answering. */
		slurm_cancel();
		return SLURM_RETRY;
	}
	if (!pr->exited) {
		/* Only we kill srun: a stop; its step must go too. */
		slurm_cancel();
		return SLURM_STOPPED;
	}
	if (pr->status == 0)
		return SLURM_RESULT;
	if (strstr(pr->err, "execve()") != NULL) {
		res->status = TRIAL_ERROR;
		res->env_failure = 1;
		util_seterr(&res->error, "the Slurm node cannot run %s (it must "
		    "be installed at the same path on every node): %s",
		    be->harness, slurm_why(pr));
		return SLURM_DONE;
	}
	if (task == NULL)
		return SLURM_RETRY;	/* srun failed before the task ran */
	slurm_node(pr->err, task, res->host, sizeof res->host);
	task += strlen(": task 0: ");
	for (i = 0; crash[i] != NULL; i++) {
		if (strncmp(task, crash[i], strlen(crash[i])) == 0) {
			res->status = TRIAL_CRASHED;
			util_seterr(&res->error, "kernel crashed (signal %d) on "
			    "the Slurm step: %s", pr->status > 128 ?
			    pr->status - 128 : 0, slurm_why(pr));
			return SLURM_DONE;
		}
	}
	if (strncmp(task, "Exited with exit code 124", 25) == 0) {
		res->status = TRIAL_TIMEOUT;
		util_seterr(&res->error, "measurement killed after %.1f s "
		    "(timeout, on the Slurm step)", be->params.timeout);
		return SLURM_DONE;
	}
	if (strncmp(task, "Exited with exit code", 21) == 0)
		return SLURM_RESULT;	/* the harness's own failure: as locally */
	/* Killed, Terminated, cancelled: the step, not the candidate. */
	return SLURM_RETRY;
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
	char *argv[MEASURE_ARGV_MAX], *env[4], *perr = NULL;
	char sargs[MEASURE_SARGS_MAX], slurm_buf[4][64], excl[1024];
	int cpus[256], ncpu, i, argc = 0, rc = -1, slurm, attempt = 0;
	size_t len = 0;
	json_t *j = NULL;
	json_error_t jerr;
	const char *status, *line;
	double t0 = util_now();

	memset(&o, 0, sizeof o);
	memset(&pr, 0, sizeof pr);
	slurm = be->params.executor == BACKEND_EXEC_SLURM;
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

	if (slurm && slurm_prefix(be, threads, argv, &argc, sargs,
	    slurm_buf, err) != 0)
		return -1;
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
	if (!slurm) {
		/* Under Slurm the step's binding (--cpu-bind=cores) pins it. */
		argv[argc++] = "--cpus";
		argv[argc++] = cpulist;
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

	o.timeout = be->params.timeout;
	o.cpus = cpus;
	o.ncpus = ncpu;
	o.env = env;
	if (slurm) {
		/* srun waits for the step, Slurm picks its CPUs. */
		o.timeout = slurm_wall(be);
		o.cpus = NULL;
		o.ncpus = 0;
	}
again:
	if (slurm)
		argv[1] = slurm_exclude(excl, sizeof excl);
	if (proc_run(argv, &o, &pr, &perr) != 0) {
		util_seterr(err, "mlir-cpu: cannot run %s: %s", argv[0], perr);
		free(perr);
		return -1;
	}
	res->measure_s = util_now() - t0;
	if (slurm) {
		switch (slurm_outcome(be, &pr, res)) {
		case SLURM_RETRY:
			slurm_node_failed(res->host);
			res->host[0] = '\0';
			if (++attempt < MEASURE_SLURM_ATTEMPTS) {
				proc_result_free(&pr);
				memset(&pr, 0, sizeof pr);
				goto again;
			}
			/* Not the candidate's outcome: nothing recorded. */
			res->status = TRIAL_ERROR;
			res->env_failure = 1;
			util_seterr(&res->error, "%d Slurm steps in a row did not "
			    "run to the end (last: %s)", attempt, slurm_why(&pr));
			goto done;
		case SLURM_STOPPED:
			res->status = TRIAL_ERROR;
			util_seterr(&res->error, "measurement stopped");
			goto done;
		case SLURM_DONE:
			goto done;
		case SLURM_RESULT:
			break;
		}
	}
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
	str(j, "host", res->host, sizeof res->host);
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
