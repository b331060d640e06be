/*
 * The local executor: each measuring child runs here, a child of this
 * process (proc_run), pinned to the CPUs the caller names, its timeout
 * enforced by killing its process group.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executors/executor_int.h"
#include "util/util.h"

static int
local_run(struct executor *ex, const struct executor_run *run,
    struct executor_result *res, char **err)
{
	struct proc_opts o;
	struct proc_result pr;
	char *perr = NULL;

	(void)ex;
	memset(&o, 0, sizeof o);
	o.timeout = run->timeout;
	o.cpus = run->cpus;
	o.ncpus = run->cpus != NULL ? run->ncpus : 0;
	o.env = run->env;
	if (proc_run(run->argv, &o, &pr, &perr) != 0) {
		util_seterr(err, "cannot run %s: %s", run->argv[0], perr);
		free(perr);
		return -1;
	}
	executor_hostname(res->host, sizeof res->host);
	if (run->node != NULL && run->node[0] == '\0')
		snprintf(run->node, EXECUTOR_NODE_MAX, "%s", res->host);
	res->seconds = pr.seconds;
	if (pr.timed_out)
		res->outcome = EXECUTOR_TIMEOUT;
	else if (pr.exec_failed) {
		res->outcome = EXECUTOR_ENV_FAILED;
		res->why = xasprintf("cannot run %s", run->argv[0]);
	} else if (!pr.exited) {
		res->outcome = EXECUTOR_SIGNALED;
		res->signal = pr.signal;
	} else {
		res->outcome = EXECUTOR_EXITED;
		res->status = pr.status;
	}
	executor_take_output(&pr, res);
	proc_result_free(&pr);
	return 0;
}

const struct executor_ops executor_local = {
	.name = "local",
	.description = "measuring children run here, pinned to the job's CPUs",
	.places = 0,
	.run = local_run,
};
