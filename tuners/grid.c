/*
 * GridTuner: walks the space in index order with the seed's stride
 * (space size / n_trial, at least 1), so a small budget still spans the
 * whole space; past one pass it starts again one further along.
 */
#include <stdlib.h>

#include "tuners/tuner_int.h"
#include "util/util.h"

struct grid {
	uint64_t	 count;
	uint64_t	 stride;
	uint64_t	 offset;	/* current pass: offset, offset+stride, … */
	uint64_t	 next;
	uint64_t	 given;
};

static int
grid_create(const struct tuner_params *p, const struct op_desc *op,
    const struct space *s, void **priv, char **err)
{
	struct grid *g = xcalloc(1, sizeof *g);

	g->count = space_count(s);
	g->stride = p->n_trial > 0 ? g->count / (uint64_t)p->n_trial : 1;
	if (g->stride < 1)
		g->stride = 1;
	*priv = g;
	return 0;
}

static size_t
grid_propose(void *priv, uint64_t *idx, size_t max)
{
	struct grid *g = priv;
	size_t n = 0;

	while (n < max && g->given < g->count) {
		if (g->next >= g->count) {
			g->offset++;
			g->next = g->offset;
			continue;
		}
		idx[n++] = g->next;
		g->next += g->stride;
		g->given++;
	}
	return n;
}

static void
grid_destroy(void *priv)
{
	free(priv);
}

static const char *const grid_keys[] = { NULL };

const struct tuner_ops tuner_grid_ops = {
	.name = "grid",
	.long_name = "GridTuner",
	.keys = grid_keys,
	.create = grid_create,
	.propose = grid_propose,
	.destroy = grid_destroy,
};
