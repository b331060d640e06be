/*
 * The best configs read back from the store, checked against the rules of
 * the backend that measured them.
 */
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "best/best.h"
#include "search/space.h"
#include "store/store.h"
#include "util/util.h"

/*
 * The one check of a config read back from the store: the space's rules of
 * its op under its backend (space_config_check). -1 with *err naming the
 * store, the op, the config and the knob.
 */
static int
best_config_check(struct store *s, const struct store_best *b, char **err)
{
	const struct backend_ops *be = backend_find(b->backend ? b->backend : "");
	const struct op_desc	*op = &b->op;
	struct space_rules	 rules;
	char			*why = NULL, *on, *cn;
	const char		*reason;
	int			 rc = 0;

	memset(&rules, 0, sizeof rules);
	if (be != NULL && be->supports != NULL && !be->supports(op, &reason)) {
		on = util_escape(op->kind ? op->kind : "");
		why = xasprintf("kind \"%s\", %lldx%lldx%lldx%lld: not an op "
		    "backend %s runs (%s)", on, (long long)op->batch,
		    (long long)op->m, (long long)op->n, (long long)op->k,
		    be->name, reason ? reason : "?");
		free(on);
		rc = -1;
	} else {
		if (be != NULL && be->rules != NULL)
			be->rules(op, &rules);
		rc = space_config_check(op, be != NULL && be->rules != NULL ?
		    &rules : NULL, &b->config, &why);
	}
	if (rc != 0) {
		on = util_escape(b->op_name ? b->op_name : "?");
		cn = util_escape(b->config_name ? b->config_name : "?");
		util_seterr(err, "store %s: op %s: config %s: %s",
		    store_path(s), on, cn, why);
		free(on);
		free(cn);
	}
	free(why);
	return rc;
}

int
best_configs(struct store *s, const char *op_filter, int64_t job_id,
    struct store_best **rows, size_t *n, char **err)
{
	size_t i;

	if (store_best(s, op_filter, job_id, rows, n, err) != 0)
		return -1;
	for (i = 0; i < *n; i++) {
		/* Refused here, no reader of the best configs ever sees it. */
		if (best_config_check(s, &(*rows)[i], err) != 0)
			break;
	}
	if (i == *n)
		return 0;
	for (i = 0; i < *n; i++)
		store_best_clear(&(*rows)[i]);
	free(*rows);
	*rows = NULL;
	*n = 0;
	return -1;
}
