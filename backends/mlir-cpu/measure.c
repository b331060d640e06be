/*
 * mlir-cpu measurement: run autosched-measure (measure_main.c) pinned, with
 * a timeout, on a kernel or on OpenBLAS, and turn its JSON line or its death
 * into a trial result.
 */
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
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
 * The nodes this process knows, over its life (every job, op and
 * candidate): step failures per node (at MEASURE_NODE_FAILS it is given to
 * srun's --exclude), and whether the last target check refused it. Several
 * measurements run at once on threads (executor slurm): slurm_mu guards it.
 */
static pthread_mutex_t slurm_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char	node[64];
	int	fails;
	int	refused;	/* its target differs, or it could not be asked */
} slurm_nodes[MEASURE_NODES_MAX];
static int slurm_nnodes;
/* Steps started by this process: the suffix of their job names. */
static unsigned long slurm_seq;

/* The entry of node, added if new; -1 when full. Call with slurm_mu held. */
static int
slurm_node_slot(const char *node)
{
	int i;

	for (i = 0; i < slurm_nnodes; i++) {
		if (strcmp(slurm_nodes[i].node, node) == 0)
			return i;
	}
	if (slurm_nnodes == MEASURE_NODES_MAX || strlen(node) >=
	    sizeof slurm_nodes[0].node)
		return -1;
	memset(&slurm_nodes[slurm_nnodes], 0, sizeof slurm_nodes[0]);
	snprintf(slurm_nodes[slurm_nnodes].node, sizeof slurm_nodes[0].node,
	    "%s", node);
	return slurm_nnodes++;
}

static void
slurm_node_failed(const char *node)
{
	int i;

	if (*node == '\0')
		return;
	pthread_mutex_lock(&slurm_mu);
	if ((i = slurm_node_slot(node)) >= 0 &&
	    ++slurm_nodes[i].fails == MEASURE_NODE_FAILS)
		fprintf(stderr, "autosched: Slurm node %s lost %d steps: it is "
		    "sent no more work\n", node, MEASURE_NODE_FAILS);
	pthread_mutex_unlock(&slurm_mu);
}

/* 1 if node may get work: not refused, not failed too often. */
static int
slurm_node_usable(const char *node)
{
	int i, ok = 1;

	pthread_mutex_lock(&slurm_mu);
	for (i = 0; i < slurm_nnodes; i++) {
		if (strcmp(slurm_nodes[i].node, node) == 0)
			ok = !slurm_nodes[i].refused &&
			    slurm_nodes[i].fails < MEASURE_NODE_FAILS;
	}
	pthread_mutex_unlock(&slurm_mu);
	return ok;
}

/*
 * "--exclude=n1,n3" of the nodes refused or failed too often, or "-N1" if
 * none (said again, harmless; a second --quiet would hide srun's error
 * lines).
 */
static char *
slurm_exclude(char *buf, size_t len)
{
	size_t n = 0;
	int i, any = 0;

	n = (size_t)snprintf(buf, len, "--exclude=");
	pthread_mutex_lock(&slurm_mu);
	for (i = 0; i < slurm_nnodes; i++) {
		if ((slurm_nodes[i].fails < MEASURE_NODE_FAILS &&
		    !slurm_nodes[i].refused) ||
		    n + strlen(slurm_nodes[i].node) + 2 >= len)
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", any ? "," : "",
		    slurm_nodes[i].node);
		any = 1;
	}
	pthread_mutex_unlock(&slurm_mu);
	return any ? buf : "-N1";
}

enum slurm_outcome {
	SLURM_RESULT,	/* the step ran to the end: parse its stdout */
	SLURM_DONE,	/* the candidate's own failure, res filled */
	SLURM_RETRY,	/* the step failed to start or was killed: again */
	SLURM_STOPPED,	/* we killed srun (stop, cancel, SIGTERM) */
};

static double measure_setup_s(const struct op_desc *);

/* Seconds the coordinator waits for srun: the step's queueing included. */
static double
slurm_wall(const struct backend *be)
{
	if (be->params.slurm_step_timeout > 0)
		return be->params.slurm_step_timeout;
	return be->params.timeout + measure_setup_s(&be->op) + 60;
}

/*
 * What the job names of this job's steps start with: the engine's name
 * (the same for every run of one job), else autosched-<pid>.
 */
static void
slurm_job_prefix(const struct backend *be, char *buf, size_t len)
{
	const char *n = be->params.slurm_job_name;

	if (n != NULL && *n != '\0')
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "autosched-%ld", (long)getpid());
}

/* "--job-name=PREFIX.SEQ": a name of its own for each step. */
static void
slurm_step_name(const struct backend *be, char *buf, size_t len)
{
	char prefix[80];

	slurm_job_prefix(be, prefix, sizeof prefix);
	snprintf(buf, len, "--job-name=%s.%lu", prefix,
	    __sync_add_and_fetch(&slurm_seq, 1));
}

/* The words of slurm_srun_args into argv at *n (sargs holds them). */
static int
slurm_extra(const struct backend *be, char **argv, int *n, char *sargs,
    char **err)
{
	const char *extra = be->params.slurm_srun_args;
	char *save, *tok;
	int words = 0;

	if (extra == NULL)
		return 0;
	if (strlen(extra) >= MEASURE_SARGS_MAX) {
		util_seterr(err, "mlir-cpu: slurm_srun_args is longer than %d "
		    "characters", MEASURE_SARGS_MAX - 1);
		return -1;
	}
	snprintf(sargs, MEASURE_SARGS_MAX, "%s", extra);
	for (tok = strtok_r(sargs, " \t", &save); tok != NULL;
	    tok = strtok_r(NULL, " \t", &save)) {
		if (++words > MEASURE_SRUN_WORDS) {
			util_seterr(err, "mlir-cpu: slurm_srun_args has more "
			    "than %d words", MEASURE_SRUN_WORDS);
			return -1;
		}
		/* The cfg reader allows only --opt=value: never a command. */
		if (strncmp(tok, "--", 2) != 0 || strchr(tok, '=') == NULL) {
			util_seterr(err, "mlir-cpu: slurm_srun_args: '%s' is "
			    "not an --option=value word", tok);
			return -1;
		}
		argv[(*n)++] = tok;
	}
	return 0;
}

/*
 * argv[0..] = srun -N1 -N1 --quiet -n1 -N1 -c<threads> --cpu-bind=cores
 * --job-name=… --time=… [-p partition] [srun_args…] timeout -k 2
 * <timeout>; the harness and its arguments follow. argv[1] and argv[2] are
 * mlircpu_measure's slots for --exclude and --nodelist. The step's own
 * timeout (coreutils, on every node) ends a hanging candidate with exit 124
 * where it runs; --time makes Slurm end the step even if this process dies
 * (kill -9), and the next run of the job cancels it (slurm_begin).
 */
static int
slurm_prefix(const struct backend *be, int threads, char **argv, int *argc,
    char *sargs, char buf[4][96], char **err)
{
	int n = 0;
	double wall = slurm_wall(be);

	argv[n++] = "srun";
	argv[n++] = "-N1";	/* slot for --exclude */
	argv[n++] = "-N1";	/* slot for --nodelist */
	argv[n++] = "--quiet";
	argv[n++] = "-n1";
	argv[n++] = "-N1";
	snprintf(buf[0], 96, "-c%d", threads > 0 ? threads : 1);
	argv[n++] = buf[0];
	argv[n++] = "--cpu-bind=cores";
	slurm_step_name(be, buf[1], 96);
	argv[n++] = buf[1];
	/* Minutes, rounded up, plus one: a bound for orphans only. */
	snprintf(buf[2], 96, "--time=%d", (int)(wall / 60) + 2);
	argv[n++] = buf[2];
	if (be->params.slurm_partition != NULL &&
	    *be->params.slurm_partition != '\0') {
		argv[n++] = "-p";
		argv[n++] = (char *)be->params.slurm_partition;
	}
	if (slurm_extra(be, argv, &n, sargs, err) != 0)
		return -1;
	argv[n++] = "timeout";
	argv[n++] = "-k";
	argv[n++] = "2";
	snprintf(buf[3], 96, "%g", (be->params.timeout > 0 ?
	    be->params.timeout : 10) + measure_setup_s(&be->op));
	argv[n++] = buf[3];
	*argc = n;
	return 0;
}

/* Run a Slurm command (squeue, scancel, sinfo) for its output. */
static int
slurm_cmd(char **argv, struct proc_result *pr, char **err)
{
	struct proc_opts o;

	memset(&o, 0, sizeof o);
	o.timeout = 30;
	return proc_run(argv, &o, pr, err);
}

/* Cancel the step called name (its srun gave up waiting for it). */
static void
slurm_cancel_step(const char *name)
{
	char opt[320];
	char *argv[] = { "scancel", "--quiet", opt, NULL };
	struct proc_result pr;
	char *perr = NULL;

	snprintf(opt, sizeof opt, "--name=%s", name);
	if (slurm_cmd(argv, &pr, &perr) != 0)
		free(perr);
	else
		proc_result_free(&pr);
}

/*
 * Cancel every job and step of ours whose name is PREFIX.something: after a
 * stop (srun killed: its step lives on), and at the start of a run, what a
 * killed run of the same job left. Returns how many were cancelled, -1 when
 * squeue failed (*err).
 */
static int
slurm_cancel_all(const struct backend *be, char **err)
{
	char prefix[80], user[32], *ids[260], *line, *save, *name;
	char *sq[] = { "squeue", "-h", "-u", user, "-o", "%i %j", NULL };
	struct proc_result pr, pc;
	char *perr = NULL;
	size_t plen;
	int n = 2, count = 0;

	slurm_job_prefix(be, prefix, sizeof prefix);
	plen = strlen(prefix);
	snprintf(user, sizeof user, "%ld", (long)getuid());
	if (slurm_cmd(sq, &pr, &perr) != 0) {
		util_seterr(err, "squeue: %s", perr);
		free(perr);
		return -1;
	}
	if (!pr.exited || pr.status != 0) {
		util_seterr(err, "squeue failed: %.200s", pr.err);
		proc_result_free(&pr);
		return -1;
	}
	ids[0] = "scancel";
	ids[1] = "--quiet";
	for (line = strtok_r(pr.out, "\n", &save); line != NULL &&
	    n < 258; line = strtok_r(NULL, "\n", &save)) {
		if ((name = strchr(line, ' ')) == NULL)
			continue;
		*name++ = '\0';
		if (strncmp(name, prefix, plen) == 0 && name[plen] == '.')
			ids[n++] = line;
	}
	ids[n] = NULL;
	count = n - 2;
	if (count > 0) {
		if (slurm_cmd(ids, &pc, &perr) != 0) {
			util_seterr(err, "scancel: %s", perr);
			free(perr);
			count = -1;
		} else
			proc_result_free(&pc);
	}
	proc_result_free(&pr);
	return count;
}

/* srun's last error line, for messages, into buf. */
static const char *
slurm_why(const struct proc_result *pr, char *buf, size_t len)
{
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
	snprintf(buf, len, "%.*s", (int)(n < len - 10 ? n : len - 10), p);
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
 * fault"; a step that never started says so without a task line. step is
 * the step's job name.
 */
static enum slurm_outcome
slurm_outcome(const struct backend *be, const struct proc_result *pr,
    const char *step, struct trial_result *res)
{
	static const char *const crash[] = { "Segmentation fault",
	    "Bus error", "Illegal instruction", "Floating point exception",
	    "Aborted", NULL };
	const char *task = strstr(pr->err, ": task 0: ");
	char why[200];
	int i;

	if (pr->timed_out) {
		/* Never ran, or its node stopped answering. */
		slurm_cancel_step(step);
		return SLURM_RETRY;
	}
	if (!pr->exited) {
		/* Only we kill srun: a stop; its step, and the others, go too. */
		if (slurm_cancel_all(be, NULL) < 0)
			slurm_cancel_step(step);
		return SLURM_STOPPED;
	}
	if (pr->status == 0)
		return SLURM_RESULT;
	if (strstr(pr->err, "execve()") != NULL) {
		res->status = TRIAL_ERROR;
		res->env_failure = 1;
		util_seterr(&res->error, "the Slurm node cannot run %s (it must "
		    "be installed at the same path on every node): %s",
		    be->harness, slurm_why(pr, why, sizeof why));
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
			    pr->status - 128 : 0, slurm_why(pr, why, sizeof why));
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

/* The node list of the partition and their states, from sinfo. */
struct slurm_node_list {
	char	name[MEASURE_NODES_MAX][64];
	char	state[MEASURE_NODES_MAX][16];
	int	n;
};

static int
slurm_list_nodes(const struct backend_params *params, struct slurm_node_list *nl,
    char **err)
{
	const char *part = params->slurm_partition;
	char *argv[] = { "sinfo", "-h", "-N", "-o", "%N %t", NULL, NULL, NULL };
	struct proc_result pr;
	char *perr = NULL, *line, *save, name[64], state[16];
	int i;

	memset(nl, 0, sizeof *nl);
	if (part != NULL && *part != '\0') {
		argv[5] = "-p";
		argv[6] = (char *)part;
	}
	if (slurm_cmd(argv, &pr, &perr) != 0) {
		util_seterr(err, "executor slurm: cannot run sinfo: %s", perr);
		free(perr);
		return -1;
	}
	if (!pr.exited || pr.status != 0) {
		util_seterr(err, "executor slurm: sinfo failed: %.300s",
		    *pr.err ? pr.err : "no message");
		proc_result_free(&pr);
		return -1;
	}
	for (line = strtok_r(pr.out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%63s %15s", name, state) != 2)
			continue;
		for (i = 0; i < nl->n && strcmp(nl->name[i], name) != 0; i++)
			;
		if (i < nl->n || nl->n == MEASURE_NODES_MAX)
			continue;	/* a node in two partitions, or too many */
		snprintf(nl->name[nl->n], 64, "%s", name);
		snprintf(nl->state[nl->n], 16, "%s", state);
		nl->n++;
	}
	proc_result_free(&pr);
	if (nl->n == 0) {
		util_seterr(err, "executor slurm: no node in %s%s (sinfo)",
		    part != NULL ? "partition " : "the default partition",
		    part != NULL ? part : "");
		return -1;
	}
	return 0;
}

int
mlircpu_executor_cpus(const struct backend_params *params, char **err)
{
	char *argv[] = { "scontrol", "-o", "show", "node", NULL };
	struct slurm_node_list nl;
	struct proc_result pr;
	char *perr = NULL, *line, *save, *p, name[64];
	int fewest = 0, n, i;

	if (params->executor != BACKEND_EXEC_SLURM)
		return 0;
	if (slurm_list_nodes(params, &nl, err) != 0)
		return -1;
	if (slurm_cmd(argv, &pr, &perr) != 0) {
		util_seterr(err, "executor slurm: cannot run scontrol: %s",
		    perr);
		free(perr);
		return -1;
	}
	if (!pr.exited || pr.status != 0) {
		util_seterr(err, "executor slurm: scontrol show node failed: "
		    "%.300s", *pr.err ? pr.err : "no message");
		proc_result_free(&pr);
		return -1;
	}
	/*
	 * A node's CPUs a step may use: CPUEfctv (its CPUs less those kept
	 * for the system, CpuSpecList), else CPUTot.
	 */
	for (line = strtok_r(pr.out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "NodeName=%63s", name) != 1)
			continue;
		for (i = 0; i < nl.n && strcmp(nl.name[i], name) != 0; i++)
			;
		if (i == nl.n)
			continue;	/* not in the partition */
		if ((p = strstr(line, "CPUEfctv=")) != NULL)
			n = atoi(p + 9);
		else if ((p = strstr(line, "CPUTot=")) != NULL)
			n = atoi(p + 7);
		else
			continue;
		if (n > 0 && (fewest == 0 || n < fewest))
			fewest = n;
	}
	proc_result_free(&pr);
	if (fewest == 0) {
		util_seterr(err, "executor slurm: no CPU count for the nodes "
		    "of %s%s (scontrol show node)", params->slurm_partition ?
		    "partition " : "the default partition",
		    params->slurm_partition ? params->slurm_partition : "");
		return -1;
	}
	return fewest;
}

int
mlircpu_parallel(struct backend *be)
{
	struct slurm_node_list nl;
	char *err = NULL;
	int i, n = 0;

	if (be->params.executor != BACKEND_EXEC_SLURM)
		return 1;
	if (be->params.slurm_max_steps > 0)
		return be->params.slurm_max_steps;
	/* One step per node that may get work. */
	if (slurm_list_nodes(&be->params, &nl, &err) != 0) {
		free(err);
		return 1;
	}
	for (i = 0; i < nl.n; i++)
		n += slurm_node_usable(nl.name[i]);
	return n > 0 ? n : 1;
}

/* One node's answer to --target, for slurm_begin's threads. */
struct slurm_ask {
	const struct backend	*be;
	const char		*node;
	char			*out;	/* the JSON line, or NULL */
	char			 why[240];	/* why there is none */
	pthread_t		 th;
	int			 started;
};

/* Run autosched-measure --target on node (or here when NULL). */
static void *
slurm_ask_node(void *arg)
{
	struct slurm_ask *a = arg;
	const struct backend *be = a->be;
	char *argv[MEASURE_ARGV_MAX], sargs[MEASURE_SARGS_MAX], name[96];
	char nodelist[96], why[200], *perr = NULL;
	struct proc_opts o;
	struct proc_result pr;
	int n = 0;

	memset(&o, 0, sizeof o);
	o.timeout = 30;
	if (a->node != NULL) {
		argv[n++] = "srun";
		argv[n++] = "--quiet";
		argv[n++] = "-n1";
		argv[n++] = "-N1";
		snprintf(nodelist, sizeof nodelist, "--nodelist=%s", a->node);
		argv[n++] = nodelist;
		slurm_step_name(be, name, sizeof name);
		argv[n++] = name;
		argv[n++] = "--time=2";
		if (be->params.slurm_partition != NULL &&
		    *be->params.slurm_partition != '\0') {
			argv[n++] = "-p";
			argv[n++] = (char *)be->params.slurm_partition;
		}
		if (slurm_extra(be, argv, &n, sargs, &perr) != 0) {
			snprintf(a->why, sizeof a->why, "%s", perr);
			free(perr);
			return NULL;
		}
		o.timeout = slurm_wall(be);
	}
	argv[n++] = be->harness;
	argv[n++] = "--target";
	argv[n] = NULL;
	if (proc_run(argv, &o, &pr, &perr) != 0) {
		snprintf(a->why, sizeof a->why, "%s", perr);
		free(perr);
		return NULL;
	}
	if (pr.timed_out && a->node != NULL)
		slurm_cancel_step(name + strlen("--job-name="));
	if (pr.exited && pr.status == 0 && strchr(pr.out, '{') != NULL) {
		a->out = xstrdup(strchr(pr.out, '{'));
		a->out[strcspn(a->out, "\n")] = '\0';
	} else
		snprintf(a->why, sizeof a->why, "%s --target did not answer "
		    "there: %s", be->harness, pr.timed_out ? "no answer within "
		    "slurm_step_timeout" : slurm_why(&pr, why, sizeof why));
	proc_result_free(&pr);
	return NULL;
}

/* 1 if word is one of the blank-separated words of list. */
static int
slurm_has_word(const char *list, const char *word, size_t len)
{
	const char *p = list;

	while (*p != '\0') {
		size_t n;

		p += strspn(p, " ");
		n = strcspn(p, " ");
		if (n == len && strncmp(p, word, len) == 0)
			return 1;
		p += n;
	}
	return 0;
}

/* The flags of a and missing from b, "x,y" into buf (bounded). */
static void
slurm_flags_missing(const char *a, const char *b, char *buf, size_t len)
{
	const char *p = a;
	size_t used = 0;

	*buf = '\0';
	while (*p != '\0') {
		size_t n;

		p += strspn(p, " ");
		n = strcspn(p, " ");
		if (n > 0 && !slurm_has_word(b, p, n) && used + n + 5 < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%.*s",
			    used ? "," : "", (int)n, p);
		p += n;
	}
}

/*
 * What differs between the target here (mine) and a node's (theirs), both
 * --target JSON lines, into buf; "" when they are the same.
 */
static void
slurm_target_diff(json_t *mine, json_t *theirs, char *buf, size_t len)
{
	const char *keys[] = { "cpu", "libraries" };
	const char *a, *b;
	char miss[256], extra[256];
	size_t used = 0, i;

	*buf = '\0';
	for (i = 0; i < 2; i++) {
		a = json_string_value(json_object_get(mine, keys[i]));
		b = json_string_value(json_object_get(theirs, keys[i]));
		if (a == NULL || b == NULL || strcmp(a, b) != 0)
			used += (size_t)snprintf(buf + used, len - used,
			    "%s%s '%s' there, '%s' here", used ? "; " : "",
			    keys[i], b ? b : "?", a ? a : "?");
		if (used >= len)
			return;
	}
	a = json_string_value(json_object_get(mine, "flags"));
	b = json_string_value(json_object_get(theirs, "flags"));
	slurm_flags_missing(a ? a : "", b ? b : "", miss, sizeof miss);
	slurm_flags_missing(b ? b : "", a ? a : "", extra, sizeof extra);
	if (*miss || *extra)
		snprintf(buf + used, len - used, "%sCPU flags:%s%s%s%s",
		    used ? "; " : "", *miss ? " missing there " : "", miss,
		    *extra ? " only there " : "", extra);
}

/* Node states sinfo gives that can take a step now. */
static int
slurm_state_ok(const char *st)
{
	static const char *const ok[] = { "idle", "mix", "alloc", "comp",
	    "resv", "plnd", NULL };
	int i;

	for (i = 0; ok[i] != NULL; i++) {
		if (strcmp(st, ok[i]) == 0)
			return 1;
	}
	return 0;
}

int
mlircpu_begin(struct backend *be, char **err)
{
	static struct slurm_node_list nl;
	static struct slurm_ask asks[MEASURE_NODES_MAX + 1];
	struct slurm_ask *here = &asks[MEASURE_NODES_MAX];
	char prefix[80], diff[600], *cerr = NULL, refused[1024] = "";
	json_t *mine = NULL, *theirs;
	json_error_t jerr;
	sigset_t all, old;
	int i, k, n, ok = 0, rc = -1;

	/* A cache others can write runs their code: the job stops (exit 2). */
	if (mlircpu_cache_check(be->params.work_dir, err) != 0 ||
	    mlircpu_cache_check(be->work_dir, err) != 0)
		return -1;
	if (be->params.executor != BACKEND_EXEC_SLURM)
		return 0;
	/* What a killed run of this job left (its srun outlived it). */
	slurm_job_prefix(be, prefix, sizeof prefix);
	if ((n = slurm_cancel_all(be, &cerr)) > 0)
		fprintf(stderr, "autosched: cancelled %d Slurm job%s a previous "
		    "run of this job left (%s.*)\n", n, n == 1 ? "" : "s",
		    prefix);
	else if (n < 0) {
		util_seterr(err, "executor slurm: %s", cerr);
		free(cerr);
		return -1;
	}
	if (slurm_list_nodes(&be->params, &nl, err) != 0)
		return -1;
	/* Ask every node at once (threads, signals left to the caller's). */
	memset(asks, 0, sizeof asks);
	here->be = be;
	slurm_ask_node(here);
	if (here->out == NULL || (mine = json_loads(here->out, 0,
	    &jerr)) == NULL) {
		util_seterr(err, "executor slurm: %s here: %s", be->harness,
		    here->why[0] ? here->why : "no target line");
		goto out;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < nl.n; i++) {
		asks[i].be = be;
		asks[i].node = nl.name[i];
		if (!slurm_state_ok(nl.state[i]))
			snprintf(asks[i].why, sizeof asks[i].why, "its state "
			    "is %s", nl.state[i]);
		else if (pthread_create(&asks[i].th, NULL, slurm_ask_node,
		    &asks[i]) == 0)
			asks[i].started = 1;
		else
			slurm_ask_node(&asks[i]);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (i = 0; i < nl.n; i++) {
		if (asks[i].started)
			pthread_join(asks[i].th, NULL);
	}
	for (i = 0; i < nl.n; i++) {
		diff[0] = '\0';
		if (asks[i].out == NULL)
			snprintf(diff, sizeof diff, "not asked: %s", asks[i].why);
		else if ((theirs = json_loads(asks[i].out, 0, &jerr)) == NULL)
			snprintf(diff, sizeof diff, "its --target line is not "
			    "JSON");
		else {
			slurm_target_diff(mine, theirs, diff, sizeof diff);
			json_decref(theirs);
		}
		pthread_mutex_lock(&slurm_mu);
		if ((k = slurm_node_slot(nl.name[i])) >= 0)
			slurm_nodes[k].refused = diff[0] != '\0';
		pthread_mutex_unlock(&slurm_mu);
		if (diff[0] != '\0') {
			fprintf(stderr, "autosched: Slurm node %s refused: %s\n",
			    nl.name[i], diff);
			snprintf(refused + strlen(refused), sizeof refused -
			    strlen(refused), "%s%s: %s", *refused ? "; " : "",
			    nl.name[i], diff);
		} else
			ok++;
	}
	if (ok == 0) {
		util_seterr(err, "executor slurm: no node of %s%s measures for "
		    "this target (%s, on %s): %s", be->params.slurm_partition ?
		    "partition " : "the default partition",
		    be->params.slurm_partition ? be->params.slurm_partition : "",
		    be->cpu, "the coordinator", refused);
		goto out;
	}
	rc = 0;
out:
	for (i = 0; i <= MEASURE_NODES_MAX; i++)
		free(asks[i].out);
	json_decref(mine);
	return rc;
}

int
mlircpu_measure(struct backend *be, const char *so, int threads,
    enum mlircpu_fault fault, int pinned, struct trial_result *res,
    char **err)
{
	const struct op_desc *op = &be->op;
	struct proc_opts o;
	struct proc_result pr;
	char shape[128], types[64], trans[16], thr[16], warm[16], mt[32];
	char reps[40], seed[32], verify[8], cpulist[256], omp[32], blas[40];
	char *argv[MEASURE_ARGV_MAX], *env[4], *perr = NULL;
	char sargs[MEASURE_SARGS_MAX], slurm_buf[4][96], excl[1024];
	char nodelist[96], why[200];
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

	o.timeout = be->params.timeout + measure_setup_s(op);
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
	if (slurm) {
		slurm_step_name(be, slurm_buf[1], sizeof slurm_buf[1]);
		argv[1] = slurm_exclude(excl, sizeof excl);
		argv[2] = "-N1";
		/* One machine for the rounds compared side by side. */
		if (pinned && be->slurm_pin[0] != '\0' &&
		    !slurm_node_usable(be->slurm_pin)) {
			fprintf(stderr, "autosched: %s: Slurm node %s is lost; "
			    "the rounds measured one after the other move to "
			    "another node\n", op->name ? op->name : "op",
			    be->slurm_pin);
			be->slurm_pin[0] = '\0';
		}
		if (pinned && be->slurm_pin[0] != '\0') {
			snprintf(nodelist, sizeof nodelist, "--nodelist=%s",
			    be->slurm_pin);
			argv[2] = nodelist;
		}
	}
	if (proc_run(argv, &o, &pr, &perr) != 0) {
		util_seterr(err, "mlir-cpu: cannot run %s: %s", argv[0], perr);
		free(perr);
		return -1;
	}
	res->measure_s = util_now() - t0;
	if (slurm) {
		switch (slurm_outcome(be, &pr, slurm_buf[1] +
		    strlen("--job-name="), res)) {
		case SLURM_RETRY:
			/* A pinned step that never started: its node's fault. */
			slurm_node_failed(res->host[0] == '\0' && argv[2] ==
			    nodelist ? be->slurm_pin : res->host);
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
			    "run to the end (last: %s)", attempt,
			    slurm_why(&pr, why, sizeof why));
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
	/* The first node that measured takes the rounds measured in turn. */
	if (slurm && pinned && be->slurm_pin[0] == '\0' && res->host[0] != '\0')
		snprintf(be->slurm_pin, sizeof be->slurm_pin, "%s", res->host);
	rc = 0;
out:
	json_decref(j);
	proc_result_free(&pr);
	return rc;
}
