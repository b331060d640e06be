/*
 * The executors' registry, and an instance's life: open, the ops called
 * with their defaults, close.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "executors/executor_int.h"
#include "util/util.h"

/*
 * A new executor is a file with its ops table and one line here, at the end:
 * the cfg keeps an executor as its position (cfg/cfg.h's CFG_EXEC_LOCAL,
 * CFG_EXEC_SLURM); the first is the default.
 */
static const struct executor_ops *const registry[] = {
	&executor_local,
	&executor_slurm,
	&executor_batch,
};

const struct executor_ops *const *
executor_all(size_t *n)
{
	*n = sizeof registry / sizeof registry[0];
	return registry;
}

const struct executor_ops *
executor_find(const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < sizeof registry / sizeof registry[0];
	    i++) {
		if (strcmp(registry[i]->name, name) == 0)
			return registry[i];
	}
	return NULL;
}

static char *
dup_or_null(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

int
executor_open(const struct executor_ops *ops,
    const struct executor_config *cfg, struct executor **out, char **err)
{
	struct executor *ex = xcalloc(1, sizeof *ex);

	ex->ops = ops;
	if (cfg != NULL) {
		ex->cfg = *cfg;
		ex->cfg.partition = dup_or_null(cfg->partition);
		ex->cfg.srun_args = dup_or_null(cfg->srun_args);
		ex->cfg.job_name = dup_or_null(cfg->job_name);
		ex->cfg.stage_dir = dup_or_null(cfg->stage_dir);
		ex->cfg.ingest_dir = dup_or_null(cfg->ingest_dir);
		ex->cfg.batch_cfg = dup_or_null(cfg->batch_cfg);
	}
	if (ops->open != NULL && ops->open(ex, err) != 0) {
		ex->ops = &executor_local;	/* nothing of ops' to close */
		executor_close(ex);
		*out = NULL;
		return -1;
	}
	*out = ex;
	return 0;
}

void
executor_close(struct executor *ex)
{
	if (ex == NULL)
		return;
	if (ex->ops->close != NULL)
		ex->ops->close(ex);
	free((char *)ex->cfg.partition);
	free((char *)ex->cfg.srun_args);
	free((char *)ex->cfg.job_name);
	free((char *)ex->cfg.stage_dir);
	free((char *)ex->cfg.ingest_dir);
	free((char *)ex->cfg.batch_cfg);
	free(ex);
}

const struct executor_ops *
executor_kind(const struct executor *ex)
{
	return ex->ops;
}

int
executor_places(const struct executor *ex)
{
	return ex->ops->places;
}

int
executor_begin(struct executor *ex, char *const probe[], const char *here,
    char **err)
{
	if (ex->ops->begin == NULL)
		return 0;
	return ex->ops->begin(ex, probe, here, err);
}

int
executor_parallel(struct executor *ex)
{
	int n;

	if (ex->ops->parallel == NULL)
		return 1;
	n = ex->ops->parallel(ex);
	return n > 0 ? n : 1;
}

int
executor_node_cpus(struct executor *ex, char **err)
{
	if (ex->ops->node_cpus == NULL)
		return 0;
	return ex->ops->node_cpus(ex, err);
}

int
executor_run(struct executor *ex, const struct executor_run *run,
    struct executor_result *res, char **err)
{
	memset(res, 0, sizeof *res);
	return ex->ops->run(ex, run, res, err);
}

void
executor_result_free(struct executor_result *res)
{
	free(res->out);
	free(res->err);
	free(res->why);
	res->out = res->err = res->why = NULL;
}

void
executor_hostname(char *buf, size_t len)
{
	if (gethostname(buf, len) != 0)
		buf[0] = '\0';
	buf[len - 1] = '\0';
}

void
executor_take_output(struct proc_result *pr, struct executor_result *res)
{
	res->out = pr->out != NULL ? pr->out : xstrdup("");
	res->err = pr->err != NULL ? pr->err : xstrdup("");
	pr->out = pr->err = NULL;
}
