/*
 * The best configs, as every reader takes them: the store's winners per op
 * and target, each config checked against the space's rules of the backend
 * that measured it. Above both the store (which knows no backend) and the
 * backends (which own the rules).
 */
#ifndef AUTOSCHED_BEST_H
#define AUTOSCHED_BEST_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/*
 * store_best's rows (same filter, job and order), each config checked
 * against its backend's rules (space_config_check; an unknown backend: the
 * space's own). -1 with *err naming the store, the op, the config and the
 * knob of the first refused, and no rows. Caller clears each row
 * (store_best_clear) and frees the array.
 */
int	 best_configs(struct store *, const char *op_filter, int64_t job_id,
	    struct store_best **rows, size_t *n, char **err)
	    __attribute__((warn_unused_result));

#endif
