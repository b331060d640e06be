/*
 * RandomTuner: uniform sampling without replacement, reproducible for a
 * given seed.
 */
#include <stdlib.h>

#include "tuners/tuner_int.h"
#include "util/util.h"

struct random_tuner {
	struct tuner_rng	 rng;
	struct tuner_perm	 perm;
};

static int
random_create(const struct tuner_params *p, const struct op_desc *op,
    const struct space *s, void **priv, char **err)
{
	struct random_tuner *r = xcalloc(1, sizeof *r);

	tuner_rng_seed(&r->rng, p->seed);
	tuner_perm_init(&r->perm, space_count(s));
	*priv = r;
	return 0;
}

static size_t
random_propose(void *priv, uint64_t *idx, size_t max)
{
	struct random_tuner *r = priv;
	size_t n = 0;
	int done = 0;

	while (n < max) {
		uint64_t i = tuner_perm_next(&r->perm, &r->rng, &done);

		if (done)
			break;
		idx[n++] = i;
	}
	return n;
}

static void
random_destroy(void *priv)
{
	struct random_tuner *r = priv;

	tuner_perm_free(&r->perm);
	free(r);
}

static const char *const random_keys[] = { NULL };

const struct tuner_ops tuner_random_ops = {
	.name = "random",
	.long_name = "RandomTuner",
	.keys = random_keys,
	.create = random_create,
	.propose = random_propose,
	.destroy = random_destroy,
};
