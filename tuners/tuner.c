/*
 * The tuner registry, the wrappers callers use, and what the tuners share:
 * a PRNG, a set of indices, a lazy permutation, parameter parsing.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tuners/tuner_int.h"
#include "util/util.h"

extern const struct tuner_ops tuner_grid_ops;
extern const struct tuner_ops tuner_random_ops;
extern const struct tuner_ops tuner_xgboost_ops;

/* A new tuner is a file with its ops table and one line here. */
static const struct tuner_ops *const tuner_table[] = {
	&tuner_grid_ops,
	&tuner_random_ops,
	&tuner_xgboost_ops,
	NULL
};

const struct tuner_ops *const *
tuner_all(size_t *n)
{
	*n = sizeof tuner_table / sizeof tuner_table[0] - 1;
	return tuner_table;
}

const struct tuner_ops *
tuner_find(const char *name)
{
	size_t i, n;
	const struct tuner_ops *const *all = tuner_all(&n);

	for (i = 0; i < n; i++) {
		if (strcasecmp(all[i]->name, name) == 0 ||
		    strcasecmp(all[i]->long_name, name) == 0)
			return all[i];
	}
	return NULL;
}

int
tuner_create(const struct tuner_ops *ops, const struct tuner_params *p,
    const struct op_desc *op, const struct space *s, struct tuner *t,
    char **err)
{
	t->ops = ops;
	t->priv = NULL;
	return ops->create(p, op, s, &t->priv, err);
}

size_t
tuner_propose(struct tuner *t, uint64_t *idx, size_t max)
{
	size_t n;

	/* A caller's count from a stored integer never reaches the tuner. */
	if (max > TUNER_PROPOSE_MAX)
		max = TUNER_PROPOSE_MAX;
	n = t->ops->propose(t->priv, idx, max);
	return n < max ? n : max;
}

void
tuner_update(struct tuner *t, const uint64_t *idx,
    const struct trial_result *res, size_t n)
{
	if (t->ops->update != NULL)
		t->ops->update(t->priv, idx, res, n);
}

void
tuner_transfer(struct tuner *t, const struct tuner_record *r, size_t n)
{
	if (t->ops->transfer != NULL)
		t->ops->transfer(t->priv, r, n);
}

double
tuner_overhead(struct tuner *t)
{
	return t->ops->overhead != NULL ? t->ops->overhead(t->priv) : 0;
}

int64_t
tuner_batch(const struct tuner_ops *ops, const struct tuner_params *p)
{
	return ops != NULL && ops->batch != NULL ? ops->batch(p) : 0;
}

void
tuner_destroy(struct tuner *t)
{
	if (t->ops != NULL && t->priv != NULL)
		t->ops->destroy(t->priv);
	t->priv = NULL;
}

/* splitmix64, to seed xoshiro256** from one number. */
static uint64_t
tuner_splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void
tuner_rng_seed(struct tuner_rng *r, uint64_t seed)
{
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = tuner_splitmix(&seed);
}

static uint64_t
tuner_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t
tuner_rng_next(struct tuner_rng *r)
{
	uint64_t *s = r->s, out = tuner_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = tuner_rotl(s[3], 45);
	return out;
}

uint64_t
tuner_rng_below(struct tuner_rng *r, uint64_t n)
{
	uint64_t x, lim;

	if (n <= 1)
		return 0;
	/* Rejection keeps it uniform. */
	lim = UINT64_MAX - UINT64_MAX % n;
	do
		x = tuner_rng_next(r);
	while (x >= lim);
	return x % n;
}

double
tuner_rng_double(struct tuner_rng *r)
{
	return (double)(tuner_rng_next(r) >> 11) * 0x1.0p-53;
}

void
tuner_set_init(struct tuner_set *s)
{
	memset(s, 0, sizeof *s);
}

void
tuner_set_free(struct tuner_set *s)
{
	free(s->keys);
	free(s->vals);
	memset(s, 0, sizeof *s);
}

/* Keys are stored +1 so that 0 marks an empty slot. */
static size_t
tuner_set_slot(const struct tuner_set *s, uint64_t key)
{
	uint64_t h = (key + 1) * 0x9e3779b97f4a7c15ULL;
	size_t i = (size_t)(h >> 7) & (s->cap - 1);

	while (s->keys[i] != 0 && s->keys[i] != key + 1)
		i = (i + 1) & (s->cap - 1);
	return i;
}

static void
tuner_set_grow(struct tuner_set *s)
{
	struct tuner_set old = *s;
	size_t i;

	s->cap = old.cap ? old.cap * 2 : 64;
	s->keys = xcalloc(s->cap, sizeof *s->keys);
	s->vals = xcalloc(s->cap, sizeof *s->vals);
	s->n = 0;
	for (i = 0; i < old.cap; i++) {
		if (old.keys[i] != 0) {
			size_t j = tuner_set_slot(s, old.keys[i] - 1);

			s->keys[j] = old.keys[i];
			s->vals[j] = old.vals[i];
			s->n++;
		}
	}
	free(old.keys);
	free(old.vals);
}

void
tuner_set_put(struct tuner_set *s, uint64_t key, uint64_t val)
{
	size_t i;

	if ((s->n + 1) * 2 > s->cap)
		tuner_set_grow(s);
	i = tuner_set_slot(s, key);
	if (s->keys[i] == 0) {
		s->keys[i] = key + 1;
		s->n++;
	}
	s->vals[i] = val;
}

int
tuner_set_add(struct tuner_set *s, uint64_t key)
{
	if (tuner_set_has(s, key))
		return 0;
	tuner_set_put(s, key, 1);
	return 1;
}

int
tuner_set_has(const struct tuner_set *s, uint64_t key)
{
	return s->cap != 0 && s->keys[tuner_set_slot(s, key)] != 0;
}

uint64_t
tuner_set_get(const struct tuner_set *s, uint64_t key, uint64_t def)
{
	size_t i;

	if (s->cap == 0)
		return def;
	i = tuner_set_slot(s, key);
	return s->keys[i] != 0 ? s->vals[i] : def;
}

void
tuner_perm_init(struct tuner_perm *p, uint64_t n)
{
	p->n = n;
	p->drawn = 0;
	tuner_set_init(&p->swapped);
}

void
tuner_perm_free(struct tuner_perm *p)
{
	tuner_set_free(&p->swapped);
}

uint64_t
tuner_perm_next(struct tuner_perm *p, struct tuner_rng *r, int *done)
{
	uint64_t j, vj, vi;

	if (p->drawn >= p->n) {
		*done = 1;
		return 0;
	}
	*done = 0;
	/* Swap position drawn with a random later one; positions never touched hold themselves. */
	j = p->drawn + tuner_rng_below(r, p->n - p->drawn);
	vj = tuner_set_get(&p->swapped, j, j);
	vi = tuner_set_get(&p->swapped, p->drawn, p->drawn);
	tuner_set_put(&p->swapped, j, vi);
	p->drawn++;
	return vj;
}

const char *
tuner_param(const struct tuner_params *p, const char *key, int *line)
{
	size_t i;

	for (i = 0; i < p->nextra; i++) {
		if (strcmp(p->extra_keys[i], key) == 0) {
			if (line != NULL)
				*line = p->extra_lines ? p->extra_lines[i] : 0;
			return p->extra_values[i];
		}
	}
	return NULL;
}

int
tuner_param_double(const struct tuner_params *p, const char *key, double lo,
    double hi, double *out, char **err)
{
	int line = 0;
	const char *s = tuner_param(p, key, &line);
	char *end;
	double v;

	if (s == NULL)
		return 0;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v < lo ||
	    v > hi) {
		util_seterr(err, "%s:%d: [SearchStrategy] %s: expected a number "
		    "in [%g, %g], not \"%s\"", p->cfg_path ? p->cfg_path : "cfg",
		    line, key, lo, hi, s);
		return -1;
	}
	*out = v;
	return 0;
}

int
tuner_param_int(const struct tuner_params *p, const char *key, int64_t lo,
    int64_t hi, int64_t *out, char **err)
{
	int line = 0;
	const char *s = tuner_param(p, key, &line);
	char *end;
	long long v;

	if (s == NULL)
		return 0;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
		util_seterr(err, "%s:%d: [SearchStrategy] %s: expected an integer "
		    "in [%lld, %lld], not \"%s\"", p->cfg_path ? p->cfg_path : "cfg",
		    line, key, (long long)lo, (long long)hi, s);
		return -1;
	}
	*out = v;
	return 0;
}
