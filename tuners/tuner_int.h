/*
 * Internals shared by the tuners of this folder (not a door: other folders
 * include tuners/tuner.h only): a set of space indices and a lazy random
 * permutation of [0, n) for sampling without replacement.
 */
#ifndef AUTOSCHED_TUNER_INT_H
#define AUTOSCHED_TUNER_INT_H

#include <stddef.h>
#include <stdint.h>

#include "tuners/tuner.h"

/* Open-addressing set (and map) of uint64 keys. */
struct tuner_set {
	uint64_t	*keys;
	uint64_t	*vals;
	size_t		 cap;		/* power of two */
	size_t		 n;
};
void	 tuner_set_init(struct tuner_set *);
void	 tuner_set_free(struct tuner_set *);
/* 1 if key was added, 0 if it was already there. */
int	 tuner_set_add(struct tuner_set *, uint64_t key);
int	 tuner_set_has(const struct tuner_set *, uint64_t key);
/* Map use: set key's value (adding the key), get it (def if absent). */
void	 tuner_set_put(struct tuner_set *, uint64_t key, uint64_t val);
uint64_t tuner_set_get(const struct tuner_set *, uint64_t key, uint64_t def);

/* Uniform random permutation of [0, n), drawn one element at a time (Fisher-Yates on a sparse map). */
struct tuner_perm {
	uint64_t	 n;
	uint64_t	 drawn;
	struct tuner_set swapped;
};
void	 tuner_perm_init(struct tuner_perm *, uint64_t n);
void	 tuner_perm_free(struct tuner_perm *);
/* The next element; 0 and *done = 1 when all n have been drawn. */
uint64_t tuner_perm_next(struct tuner_perm *, struct tuner_rng *, int *done);

/* Parse tuner-specific keys: "cfg:LINE: [SearchStrategy] key: expected …" on error. */
int	 tuner_param_double(const struct tuner_params *, const char *key,
	    double lo, double hi, double *out, char **err);
int	 tuner_param_int(const struct tuner_params *, const char *key,
	    int64_t lo, int64_t hi, int64_t *out, char **err);
/* The raw string of key, or NULL. */
const char *tuner_param(const struct tuner_params *, const char *key, int *line);

#endif
