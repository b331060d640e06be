/*
 * The slurm executor: each measuring child runs as a Slurm job step (srun)
 * on a node of the partition, bound to cores Slurm chooses; what the
 * instance learns about the nodes (steps lost, targets refused) steers
 * where the next steps go.
 */
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "executors/executor_int.h"
#include "util/util.h"

/* Bounds of the srun command line. */
#define SLURM_ARGV_MAX		96
#define SLURM_SARGS_MAX		520
#define SLURM_SRUN_WORDS	32	/* extra words from srun_args */
/* Steps tried for one run before the environment is blamed. */
#define SLURM_ATTEMPTS		5
/* Steps a node failed (killed, cancelled) before it is sent no more work. */
#define SLURM_NODE_FAILS	2
#define SLURM_NODES_MAX		64

/*
 * The nodes this instance knows (every op and candidate of its job): step
 * failures per node (at SLURM_NODE_FAILS it is given to srun's --exclude),
 * and whether the last target check refused it. Several runs go at once on
 * threads: mu guards it.
 */
struct slurm {
	pthread_mutex_t	 mu;
	struct {
		char	node[EXECUTOR_NODE_MAX];
		int	fails;
		int	refused;	/* its target differs, or it could not be asked */
		int	series;		/* series of runs given to it (slurm_series) */
		int	pinned;		/* runs of a series on it now */
	}		 nodes[SLURM_NODES_MAX];
	int		 nnodes;
	unsigned long	 seq;	/* steps started: the suffix of their job names */
};

static int
slurm_open(struct executor *ex, char **err)
{
	struct slurm *s = xcalloc(1, sizeof *s);

	(void)err;
	pthread_mutex_init(&s->mu, NULL);
	ex->state = s;
	return 0;
}

static void
slurm_close(struct executor *ex)
{
	struct slurm *s = ex->state;

	if (s == NULL)
		return;
	pthread_mutex_destroy(&s->mu);
	free(s);
	ex->state = NULL;
}

/* The entry of node, added if new; -1 when full. Call with mu held. */
static int
slurm_node_slot(struct slurm *s, const char *node)
{
	int i;

	for (i = 0; i < s->nnodes; i++) {
		if (strcmp(s->nodes[i].node, node) == 0)
			return i;
	}
	if (s->nnodes == SLURM_NODES_MAX || strlen(node) >=
	    sizeof s->nodes[0].node)
		return -1;
	memset(&s->nodes[s->nnodes], 0, sizeof s->nodes[0]);
	snprintf(s->nodes[s->nnodes].node, sizeof s->nodes[0].node, "%s",
	    node);
	return s->nnodes++;
}

static void
slurm_node_failed(struct slurm *s, const char *node)
{
	int i;

	if (*node == '\0')
		return;
	pthread_mutex_lock(&s->mu);
	if ((i = slurm_node_slot(s, node)) >= 0 &&
	    ++s->nodes[i].fails == SLURM_NODE_FAILS)
		fprintf(stderr, "autosched: Slurm node %s lost %d steps: it is "
		    "sent no more work\n", node, SLURM_NODE_FAILS);
	pthread_mutex_unlock(&s->mu);
}

/* 1 if node may get work: not refused, not failed too often. */
static int
slurm_node_usable(struct slurm *s, const char *node)
{
	int i, ok = 1;

	pthread_mutex_lock(&s->mu);
	for (i = 0; i < s->nnodes; i++) {
		if (strcmp(s->nodes[i].node, node) == 0)
			ok = !s->nodes[i].refused &&
			    s->nodes[i].fails < SLURM_NODE_FAILS;
	}
	pthread_mutex_unlock(&s->mu);
	return ok;
}

/*
 * A node for a new series of runs that must stay on one machine (an op's
 * rounds compared side by side): of the usable nodes, one where no run of a
 * series is measuring now, given the fewest series so far, the first of the
 * partition on a tie, so that the series of ops
 * worked on at once go to different nodes (left to Slurm, two ops' series
 * both took whichever node was free first, and queued there while the
 * other node waited). Fills node; "" when no node is known (Slurm picks).
 */
static void
slurm_series(struct slurm *s, char *node)
{
	int i, pick = -1;

	node[0] = '\0';
	pthread_mutex_lock(&s->mu);
	for (i = 0; i < s->nnodes; i++) {
		if (s->nodes[i].refused || s->nodes[i].fails >= SLURM_NODE_FAILS)
			continue;
		if (pick < 0 || s->nodes[i].pinned < s->nodes[pick].pinned ||
		    (s->nodes[i].pinned == s->nodes[pick].pinned &&
		    s->nodes[i].series < s->nodes[pick].series))
			pick = i;
	}
	if (pick >= 0) {
		s->nodes[pick].series++;
		snprintf(node, EXECUTOR_NODE_MAX, "%s", s->nodes[pick].node);
	}
	pthread_mutex_unlock(&s->mu);
}

/* A run of a series starts (+1) or ends (-1) on node (NULL: not a series). */
static void
slurm_pinned(struct slurm *s, const char *node, int d)
{
	int i;

	if (node == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	if ((i = slurm_node_slot(s, node)) >= 0)
		s->nodes[i].pinned += d;
	pthread_mutex_unlock(&s->mu);
}

/*
 * "--exclude=n1,n3" of the nodes refused or failed too often, or "-N1" if
 * none (said again, harmless: the slot must hold a word).
 */
static char *
slurm_exclude(struct slurm *s, char *buf, size_t len)
{
	size_t n = 0;
	int i, any = 0;

	n = (size_t)snprintf(buf, len, "--exclude=");
	pthread_mutex_lock(&s->mu);
	for (i = 0; i < s->nnodes; i++) {
		if ((s->nodes[i].fails < SLURM_NODE_FAILS &&
		    !s->nodes[i].refused) ||
		    n + strlen(s->nodes[i].node) + 2 >= len)
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", any ? "," : "",
		    s->nodes[i].node);
		any = 1;
	}
	pthread_mutex_unlock(&s->mu);
	return any ? buf : "-N1";
}

/* Seconds the coordinator waits for srun: the step's queueing included. */
static double
slurm_wall(const struct executor *ex, double timeout)
{
	if (ex->cfg.step_timeout > 0)
		return ex->cfg.step_timeout;
	return timeout + 60;
}

/*
 * What the job names of this job's steps start with: the engine's name
 * (the same for every run of one job), else autosched-<pid>.
 */
static void
slurm_job_prefix(const struct executor *ex, char *buf, size_t len)
{
	const char *n = ex->cfg.job_name;

	if (n != NULL && *n != '\0')
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "autosched-%ld", (long)getpid());
}

/* "--job-name=PREFIX.SEQ": a name of its own for each step. */
static void
slurm_step_name(struct executor *ex, char *buf, size_t len)
{
	struct slurm *s = ex->state;
	char prefix[80];

	slurm_job_prefix(ex, prefix, sizeof prefix);
	snprintf(buf, len, "--job-name=%s.%lu", prefix,
	    __sync_add_and_fetch(&s->seq, 1));
}

/* The words of srun_args into argv at *n (sargs holds them). */
static int
slurm_extra(const struct executor *ex, char **argv, int *n, char *sargs,
    char **err)
{
	const char *extra = ex->cfg.srun_args;
	char *save, *tok;
	int words = 0;

	if (extra == NULL)
		return 0;
	if (strlen(extra) >= SLURM_SARGS_MAX) {
		util_seterr(err, "executor slurm: slurm_srun_args is longer "
		    "than %d characters", SLURM_SARGS_MAX - 1);
		return -1;
	}
	snprintf(sargs, SLURM_SARGS_MAX, "%s", extra);
	for (tok = strtok_r(sargs, " \t", &save); tok != NULL;
	    tok = strtok_r(NULL, " \t", &save)) {
		if (++words > SLURM_SRUN_WORDS) {
			util_seterr(err, "executor slurm: slurm_srun_args has "
			    "more than %d words", SLURM_SRUN_WORDS);
			return -1;
		}
		/* The cfg reader allows only --opt=value: never a command. */
		if (strncmp(tok, "--", 2) != 0 || strchr(tok, '=') == NULL) {
			util_seterr(err, "executor slurm: slurm_srun_args: '%s' "
			    "is not an --option=value word", tok);
			return -1;
		}
		argv[(*n)++] = tok;
	}
	return 0;
}

/*
 * argv[0..] = srun -N1 -N1 -v -n1 -N1 -c<threads> --cpu-bind=cores
 * --job-name=… --time=… [-p partition] [srun_args…] timeout -k 2
 * <timeout>; the run's argv follows. argv[1] and argv[2] are slurm_run's
 * slots for --exclude and --nodelist. -v makes srun name the node it
 * launches on (its own lines are left out of the run's stderr). The step's
 * own timeout (coreutils, on every node) ends a hanging child with exit 124
 * where it runs; --time makes Slurm end the step even if this process dies
 * (kill -9), and the next run of the job cancels it (slurm_begin).
 */
static int
slurm_prefix(struct executor *ex, const struct executor_run *run, char **argv,
    int *argc, char *sargs, char buf[4][96], char **err)
{
	int n = 0;
	double wall = slurm_wall(ex, run->timeout);

	argv[n++] = "srun";
	argv[n++] = "-N1";	/* slot for --exclude */
	argv[n++] = "-N1";	/* slot for --nodelist */
	argv[n++] = "-v";
	argv[n++] = "-n1";
	argv[n++] = "-N1";
	snprintf(buf[0], 96, "-c%d", run->threads > 0 ? run->threads : 1);
	argv[n++] = buf[0];
	argv[n++] = "--cpu-bind=cores";
	slurm_step_name(ex, buf[1], 96);
	argv[n++] = buf[1];
	/* Minutes, rounded up, plus one: a bound for orphans only. */
	snprintf(buf[2], 96, "--time=%d", (int)(wall / 60) + 2);
	argv[n++] = buf[2];
	if (ex->cfg.partition != NULL && *ex->cfg.partition != '\0') {
		argv[n++] = "-p";
		argv[n++] = (char *)ex->cfg.partition;
	}
	if (slurm_extra(ex, argv, &n, sargs, err) != 0)
		return -1;
	argv[n++] = "timeout";
	argv[n++] = "-k";
	argv[n++] = "2";
	snprintf(buf[3], 96, "%g", run->timeout > 0 ? run->timeout : 10);
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
slurm_cancel_all(const struct executor *ex, char **err)
{
	char prefix[80], user[32], *ids[260], *line, *save, *name;
	char *sq[] = { "squeue", "-h", "-u", user, "-o", "%i %j", NULL };
	struct proc_result pr, pc;
	char *perr = NULL;
	size_t plen;
	int n = 2, count = 0;

	slurm_job_prefix(ex, prefix, sizeof prefix);
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
slurm_task_node(const char *text, const char *task, char *buf, size_t len)
{
	const char *p = task;

	while (p > text && p[-1] != ' ' && p[-1] != '\n')
		p--;
	if ((size_t)(task - p) < len && task > p)
		snprintf(buf, len, "%.*s", (int)(task - p), p);
}

/* The node of srun -v's "srun: launching StepId=J.S on host NODE, …", or "". */
static void
slurm_launch_node(const char *text, char *buf, size_t len)
{
	const char *p = strstr(text, "srun: launching "), *h;
	size_t n;

	buf[0] = '\0';
	if (p == NULL || (h = strstr(p, " on host ")) == NULL ||
	    h > p + strcspn(p, "\n"))
		return;
	h += strlen(" on host ");
	n = strcspn(h, ", \n");
	if (n > 0 && n < len)
		snprintf(buf, len, "%.*s", (int)n, h);
}

/* Drop srun's own lines ("srun: …") from text, in place. */
static void
slurm_strip(char *text)
{
	char *r = text, *w = text;
	size_t n;

	while (*r != '\0') {
		n = strcspn(r, "\n");
		if (r[n] == '\n')
			n++;
		if (strncmp(r, "srun: ", 6) != 0) {
			memmove(w, r, n);
			w += n;
		}
		r += n;
	}
	*w = '\0';
}

enum slurm_step { SLURM_DONE, SLURM_RETRY };

/*
 * What a finished srun means, into res (SLURM_DONE), or that the step is
 * to be tried again (SLURM_RETRY: it failed to start or was killed; *node
 * names the node a task line blamed). srun exits with the task's status and
 * reports a task's death on stderr as "srun: error: NODE: task 0:
 * Segmentation fault"; a step that never started says so without a task
 * line. step is the step's job name.
 */
static enum slurm_step
slurm_outcome(const struct executor *ex, const struct executor_run *run,
    const struct proc_result *pr, const char *step,
    struct executor_result *res, char *node, size_t nlen)
{
	static const char *const crash[] = { "Segmentation fault",
	    "Bus error", "Illegal instruction", "Floating point exception",
	    "Aborted", NULL };
	const char *task = strstr(pr->err, ": task 0: ");
	char why[200];
	int i;

	node[0] = '\0';
	if (pr->timed_out) {
		/* Never ran, or its node stopped answering. */
		slurm_cancel_step(step);
		return SLURM_RETRY;
	}
	if (!pr->exited) {
		/* Only we kill srun: a stop; its step, and the others, go too. */
		if (slurm_cancel_all(ex, NULL) < 0)
			slurm_cancel_step(step);
		res->outcome = EXECUTOR_CANCELLED;
		res->why = xstrdup("measurement stopped");
		return SLURM_DONE;
	}
	if (task != NULL)
		slurm_task_node(pr->err, task, node, nlen);
	if (node[0] != '\0')
		snprintf(res->host, sizeof res->host, "%s", node);
	else
		slurm_launch_node(pr->err, res->host, sizeof res->host);
	if (pr->status == 0) {
		res->outcome = EXECUTOR_EXITED;
		return SLURM_DONE;
	}
	if (strstr(pr->err, "execve()") != NULL) {
		res->outcome = EXECUTOR_ENV_FAILED;
		res->why = xasprintf("the Slurm node cannot run %s (it must be "
		    "installed at the same path on every node): %s",
		    run->argv[0], slurm_why(pr, why, sizeof why));
		return SLURM_DONE;
	}
	if (task == NULL)
		return SLURM_RETRY;	/* srun failed before the task ran */
	task += strlen(": task 0: ");
	for (i = 0; crash[i] != NULL; i++) {
		if (strncmp(task, crash[i], strlen(crash[i])) == 0) {
			res->outcome = EXECUTOR_SIGNALED;
			res->signal = pr->status > 128 ? pr->status - 128 : 0;
			res->why = xasprintf("on the Slurm step: %s",
			    slurm_why(pr, why, sizeof why));
			return SLURM_DONE;
		}
	}
	if (strncmp(task, "Exited with exit code 124", 25) == 0) {
		res->outcome = EXECUTOR_TIMEOUT;
		res->seconds = run->timeout;
		res->why = xstrdup("on the Slurm step");
		return SLURM_DONE;
	}
	if (strncmp(task, "Exited with exit code", 21) == 0) {
		/* The child's own failure: as locally. */
		res->outcome = EXECUTOR_EXITED;
		res->status = pr->status;
		return SLURM_DONE;
	}
	/* Killed, Terminated, cancelled: the step, not the child. */
	return SLURM_RETRY;
}

static int
slurm_run(struct executor *ex, const struct executor_run *run,
    struct executor_result *res, char **err)
{
	struct slurm *s = ex->state;
	struct proc_opts o;
	struct proc_result pr;
	char *argv[SLURM_ARGV_MAX], sargs[SLURM_SARGS_MAX], buf[4][96];
	char excl[1024], nodelist[96], why[200], node[EXECUTOR_NODE_MAX];
	char *perr = NULL;
	const char *label = run->label != NULL ? run->label : "op";
	int argc = 0, i, attempt = 0;
	double t0 = util_now();

	if (slurm_prefix(ex, run, argv, &argc, sargs, buf, err) != 0)
		return -1;
	for (i = 0; run->argv[i] != NULL; i++) {
		if (argc + 1 >= SLURM_ARGV_MAX) {
			util_seterr(err, "executor slurm: more than %d words "
			    "on the srun line", SLURM_ARGV_MAX - 1);
			return -1;
		}
		argv[argc++] = run->argv[i];
	}
	argv[argc] = NULL;
	memset(&o, 0, sizeof o);
	/* srun waits for the step, Slurm picks its CPUs. */
	o.timeout = slurm_wall(ex, run->timeout);
	o.env = run->env;
again:
	memset(&pr, 0, sizeof pr);
	slurm_step_name(ex, buf[1], sizeof buf[1]);
	argv[1] = slurm_exclude(s, excl, sizeof excl);
	argv[2] = "-N1";
	/* One machine for a series measured one after the other. */
	if (run->node != NULL && run->node[0] != '\0' &&
	    !slurm_node_usable(s, run->node)) {
		fprintf(stderr, "autosched: %s: Slurm node %s is lost; the "
		    "rounds measured one after the other move to another "
		    "node\n", label, run->node);
		run->node[0] = '\0';
	}
	if (run->node != NULL && run->node[0] == '\0')
		slurm_series(s, run->node);
	if (run->node != NULL && run->node[0] != '\0') {
		snprintf(nodelist, sizeof nodelist, "--nodelist=%s", run->node);
		argv[2] = nodelist;
	}
	slurm_pinned(s, argv[2] == nodelist ? run->node : NULL, 1);
	i = proc_run(argv, &o, &pr, &perr);
	slurm_pinned(s, argv[2] == nodelist ? run->node : NULL, -1);
	if (i != 0) {
		util_seterr(err, "cannot run srun: %s", perr);
		free(perr);
		return -1;
	}
	res->seconds = util_now() - t0;
	if (slurm_outcome(ex, run, &pr, buf[1] + strlen("--job-name="), res,
	    node, sizeof node) == SLURM_RETRY) {
		/* A pinned step that never started: its node's fault. */
		slurm_node_failed(s, node[0] == '\0' && argv[2] == nodelist ?
		    run->node : node);
		res->host[0] = '\0';
		if (++attempt < SLURM_ATTEMPTS) {
			proc_result_free(&pr);
			goto again;
		}
		/* Not the child's outcome. */
		res->outcome = EXECUTOR_ENV_FAILED;
		res->why = xasprintf("%d Slurm steps in a row did not run to "
		    "the end (last: %s)", attempt, slurm_why(&pr, why,
		    sizeof why));
	}
	/* The first node that ran a series takes the rest of it. */
	if (run->node != NULL && run->node[0] == '\0' && res->host[0] != '\0')
		snprintf(run->node, EXECUTOR_NODE_MAX, "%s", res->host);
	executor_take_output(&pr, res);
	slurm_strip(res->err);
	proc_result_free(&pr);
	return 0;
}

/* The node list of the partition and their states, from sinfo. */
struct slurm_node_list {
	char	name[SLURM_NODES_MAX][EXECUTOR_NODE_MAX];
	char	state[SLURM_NODES_MAX][16];
	int	n;
};

static int
slurm_list_nodes(const struct executor *ex, struct slurm_node_list *nl,
    char **err)
{
	const char *part = ex->cfg.partition;
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
		if (i < nl->n || nl->n == SLURM_NODES_MAX)
			continue;	/* a node in two partitions, or too many */
		snprintf(nl->name[nl->n], sizeof nl->name[0], "%s", name);
		snprintf(nl->state[nl->n], sizeof nl->state[0], "%s", state);
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

static int
slurm_node_cpus(struct executor *ex, char **err)
{
	char *argv[] = { "scontrol", "-o", "show", "node", NULL };
	struct slurm_node_list nl;
	struct proc_result pr;
	char *perr = NULL, *line, *save, *p, name[64];
	int fewest = 0, n, i;

	if (slurm_list_nodes(ex, &nl, err) != 0)
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
		    "of %s%s (scontrol show node)", ex->cfg.partition ?
		    "partition " : "the default partition",
		    ex->cfg.partition ? ex->cfg.partition : "");
		return -1;
	}
	return fewest;
}

static int
slurm_parallel(struct executor *ex)
{
	struct slurm_node_list nl;
	char *err = NULL;
	int i, n = 0;

	if (ex->cfg.max_steps > 0)
		return ex->cfg.max_steps;
	/* One step per node that may get work. */
	if (slurm_list_nodes(ex, &nl, &err) != 0) {
		free(err);
		return 1;
	}
	for (i = 0; i < nl.n; i++)
		n += slurm_node_usable(ex->state, nl.name[i]);
	return n > 0 ? n : 1;
}

/* One node's answer to the probe, for slurm_begin's threads. */
struct slurm_ask {
	struct executor		*ex;
	char *const		*probe;
	const char		*node;	/* NULL: here */
	char			*out;	/* the JSON line, or NULL */
	char			 why[240];	/* why there is none */
	pthread_t		 th;
	int			 started;
};

/* Run the probe on node (or here when NULL). */
static void *
slurm_ask_node(void *arg)
{
	struct slurm_ask *a = arg;
	struct executor *ex = a->ex;
	char *argv[SLURM_ARGV_MAX], sargs[SLURM_SARGS_MAX], name[96];
	char nodelist[96], why[200], *perr = NULL;
	struct proc_opts o;
	struct proc_result pr;
	int n = 0, i;

	memset(&o, 0, sizeof o);
	o.timeout = 30;
	if (a->node != NULL) {
		argv[n++] = "srun";
		argv[n++] = "--quiet";
		argv[n++] = "-n1";
		argv[n++] = "-N1";
		snprintf(nodelist, sizeof nodelist, "--nodelist=%s", a->node);
		argv[n++] = nodelist;
		slurm_step_name(ex, name, sizeof name);
		argv[n++] = name;
		argv[n++] = "--time=2";
		if (ex->cfg.partition != NULL && *ex->cfg.partition != '\0') {
			argv[n++] = "-p";
			argv[n++] = (char *)ex->cfg.partition;
		}
		if (slurm_extra(ex, argv, &n, sargs, &perr) != 0) {
			snprintf(a->why, sizeof a->why, "%s", perr);
			free(perr);
			return NULL;
		}
		o.timeout = slurm_wall(ex, ex->cfg.timeout);
	}
	for (i = 0; a->probe[i] != NULL && n + 1 < SLURM_ARGV_MAX; i++)
		argv[n++] = a->probe[i];
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
		snprintf(a->why, sizeof a->why, "%s did not answer there: %s",
		    a->probe[0], pr.timed_out ? "no answer within "
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
 * probe JSON lines, into buf; "" when they are the same.
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

/* Every node of nl asked at once for its target line (threads; signals left to the caller's). */
static void
slurm_ask_all(struct executor *ex, char *const probe[],
    const struct slurm_node_list *nl, struct slurm_ask *asks)
{
	sigset_t all, old;
	int i;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < nl->n; i++) {
		asks[i].ex = ex;
		asks[i].probe = probe;
		asks[i].node = nl->name[i];
		if (!slurm_state_ok(nl->state[i]))
			snprintf(asks[i].why, sizeof asks[i].why, "its state "
			    "is %s", nl->state[i]);
		else if (pthread_create(&asks[i].th, NULL, slurm_ask_node,
		    &asks[i]) == 0)
			asks[i].started = 1;
		else
			slurm_ask_node(&asks[i]);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (i = 0; i < nl->n; i++) {
		if (asks[i].started)
			pthread_join(asks[i].th, NULL);
	}
}

/*
 * Each node's answer against the coordinator's target (mine): a node that
 * differs is marked refused, said on stderr and added to refused. The
 * number of nodes that measure for this target.
 */
static int
slurm_judge_nodes(struct executor *ex, const struct slurm_node_list *nl,
    const struct slurm_ask *asks, json_t *mine, char *refused, size_t rlen)
{
	struct slurm *s = ex->state;
	json_error_t jerr;
	json_t *theirs;
	char diff[600];
	int i, k, ok = 0;

	for (i = 0; i < nl->n; i++) {
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
		pthread_mutex_lock(&s->mu);
		if ((k = slurm_node_slot(s, nl->name[i])) >= 0)
			s->nodes[k].refused = diff[0] != '\0';
		pthread_mutex_unlock(&s->mu);
		if (diff[0] != '\0') {
			fprintf(stderr, "autosched: Slurm node %s refused: %s\n",
			    nl->name[i], diff);
			snprintf(refused + strlen(refused), rlen -
			    strlen(refused), "%s%s: %s", *refused ? "; " : "",
			    nl->name[i], diff);
		} else
			ok++;
	}
	return ok;
}

static int
slurm_begin(struct executor *ex, char *const probe[], const char *here_name,
    char **err)
{
	struct slurm_node_list *nl;
	struct slurm_ask *asks, *here;
	char prefix[80], *cerr = NULL, refused[1024] = "";
	json_t *mine = NULL;
	json_error_t jerr;
	int i, n, rc = -1;

	/* What a killed run of this job left (its srun outlived it). */
	slurm_job_prefix(ex, prefix, sizeof prefix);
	if ((n = slurm_cancel_all(ex, &cerr)) > 0)
		fprintf(stderr, "autosched: cancelled %d Slurm job%s a previous "
		    "run of this job left (%s.*)\n", n, n == 1 ? "" : "s",
		    prefix);
	else if (n < 0) {
		util_seterr(err, "executor slurm: %s", cerr);
		free(cerr);
		return -1;
	}
	nl = xcalloc(1, sizeof *nl);
	asks = xcalloc(SLURM_NODES_MAX + 1, sizeof *asks);
	here = &asks[SLURM_NODES_MAX];
	if (slurm_list_nodes(ex, nl, err) != 0)
		goto out;
	here->ex = ex;
	here->probe = probe;
	slurm_ask_node(here);
	if (here->out == NULL || (mine = json_loads(here->out, 0,
	    &jerr)) == NULL) {
		util_seterr(err, "executor slurm: %s here: %s", probe[0],
		    here->why[0] ? here->why : "no target line");
		goto out;
	}
	slurm_ask_all(ex, probe, nl, asks);
	if (slurm_judge_nodes(ex, nl, asks, mine, refused, sizeof refused) == 0) {
		util_seterr(err, "executor slurm: no node of %s%s measures for "
		    "this target (%s, on %s): %s", ex->cfg.partition ?
		    "partition " : "the default partition",
		    ex->cfg.partition ? ex->cfg.partition : "",
		    here_name != NULL ? here_name : "?", "the coordinator",
		    refused);
		goto out;
	}
	rc = 0;
out:
	for (i = 0; i <= SLURM_NODES_MAX; i++)
		free(asks[i].out);
	free(asks);
	free(nl);
	json_decref(mine);
	return rc;
}

const struct executor_ops executor_slurm = {
	.name = "slurm",
	.description = "measuring children run as Slurm job steps (srun) on "
	    "the partition's nodes",
	.places = 1,
	.open = slurm_open,
	.close = slurm_close,
	.begin = slurm_begin,
	.parallel = slurm_parallel,
	.node_cpus = slurm_node_cpus,
	.run = slurm_run,
};
