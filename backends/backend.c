/*
 * The backend registry and the helpers every backend shares.
 */
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"

extern const struct backend_ops replay_backend;	/* backends/replay */

/* A new backend is a folder, its ops table, and one line here. */
static const struct backend_ops *const backend_table[] = {
	&mlircpu_backend,
	&iree_backend,
	&iree_cuda_backend,
	&replay_backend,
	NULL
};

const struct backend_ops *const *
backend_all(size_t *n)
{
	*n = sizeof backend_table / sizeof backend_table[0] - 1;
	return backend_table;
}

const struct backend_ops *
backend_find(const char *name)
{
	size_t i, n;
	const struct backend_ops *const *all = backend_all(&n);

	for (i = 0; i < n; i++) {
		if (strcmp(all[i]->name, name) == 0)
			return all[i];
	}
	return NULL;
}

const struct backend_ops *
backend_emitter(void)
{
	size_t i, n;
	const struct backend_ops *const *all = backend_all(&n);

	for (i = 0; i < n; i++) {
		if (all[i]->export_op != NULL && all[i]->export_module != NULL)
			return all[i];
	}
	return NULL;
}
