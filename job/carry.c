/*
 * The job's side of executor batch (measurements carried to another host
 * in a folder): every run of a batch job runs the same job again from its
 * start, the job's own trials in the store answering what was measured
 * before (not recorded again), the ingested folder what was measured
 * since, and whatever is left is staged for the next trip. Each
 * measurement is named for the executor by op, phase, config and how many
 * times this run asked for it before, the same in every run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executors/executor.h"
#include "job/job.h"
#include "job/job_int.h"
#include "store/store.h"
#include "util/util.h"

/* One trial of this job recorded by an earlier run. */
struct carry_kept {
	char			*key;		/* "op ID PHASE CONFIG" */
	int			 nth;		/* its order among those of key */
	int			 used;
	struct trial_result	 res;
};

/* How many times this run asked for key. */
struct carry_count {
	char			*key;
	int			 n;
};

struct carry {
	struct carry_kept	*kept;
	size_t			 nkept;
	struct carry_count	*count;
	size_t			 ncount;
};

static int *
count_of(struct carry_count **v, size_t *n, const char *key)
{
	size_t i;

	for (i = 0; i < *n; i++) {
		if (strcmp((*v)[i].key, key) == 0)
			return &(*v)[i].n;
	}
	*v = xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[*n].key = xstrdup(key);
	(*v)[*n].n = 0;
	return &(*v)[(*n)++].n;
}

struct carry_load {
	struct job		*c;
	struct carry		*k;
	struct carry_count	*seen;
	size_t			 nseen;
};

static int
carry_load_cb(const struct store_trial *t, const struct op_desc *op, void *arg)
{
	struct carry_load *l = arg;
	struct carry_kept *e;
	char *key;
	int *n;

	(void)op;
	if (t->job_id != l->c->job_id)
		return 0;
	key = xasprintf("op %lld %s %s", (long long)t->op_id, t->phase,
	    t->config_name);
	n = count_of(&l->seen, &l->nseen, key);
	l->k->kept = xrealloc(l->k->kept, (l->k->nkept + 1) *
	    sizeof *l->k->kept);
	e = &l->k->kept[l->k->nkept++];
	memset(e, 0, sizeof *e);
	e->key = key;
	e->nth = (*n)++;
	e->res = t->result;
	e->res.error = t->result.error != NULL ? xstrdup(t->result.error) :
	    NULL;
	return 0;
}

int
carry_load(struct job *c, char **err)
{
	struct carry_load l;
	size_t i;
	int rc;

	if (executor_kind(c->exec) != &executor_batch)
		return 0;
	c->carry = xcalloc(1, sizeof *c->carry);
	if (c->o->job_id <= 0)
		return 0;
	memset(&l, 0, sizeof l);
	l.c = c;
	l.k = c->carry;
	rc = store_trial_foreach(c->st, 0, 0, NULL, carry_load_cb, &l, err);
	for (i = 0; i < l.nseen; i++)
		free(l.seen[i].key);
	free(l.seen);
	if (rc == 0 && c->carry->nkept > 0)
		job_log(c, "info", "%zu trials of this job recorded by its "
		    "earlier runs: taken, not measured again",
		    c->carry->nkept);
	return rc == 0 ? 0 : -1;
}

void
carry_free(struct carry *k)
{
	size_t i;

	if (k == NULL)
		return;
	for (i = 0; i < k->nkept; i++) {
		free(k->kept[i].key);
		trial_result_clear(&k->kept[i].res);
	}
	for (i = 0; i < k->ncount; i++)
		free(k->count[i].key);
	free(k->kept);
	free(k->count);
	free(k);
}

int
carry_begin(struct job *c, const struct job_op *jo, const char *phase,
    const char *name, struct trial_result *res)
{
	struct carry *k = c->carry;
	char *key, *tag;
	size_t i;
	int n;

	if (k == NULL)
		return 0;
	key = xasprintf("op %lld %s %s", (long long)jo->op_id, phase, name);
	n = (*count_of(&k->count, &k->ncount, key))++;
	for (i = 0; i < k->nkept; i++) {
		struct carry_kept *e = &k->kept[i];

		if (!e->used && e->nth == n && strcmp(e->key, key) == 0) {
			e->used = 1;
			*res = e->res;
			res->error = e->res.error ? xstrdup(e->res.error) : NULL;
			free(key);
			return 1;
		}
	}
	tag = xasprintf("%s #%d", key, n);
	executor_tag(c->exec, tag);
	free(tag);
	free(key);
	return 0;
}

int
carry_staged(struct job *c, int64_t since)
{
	if (c->deferred <= since)
		return 0;
	c->stopped = 3;
	return 1;
}
