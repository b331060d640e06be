/*
 * Tuners: propose batches of configs (space indices) to measure, learn from
 * the results. Each tuner is a const struct tuner_ops in the registry.
 */
#ifndef AUTOSCHED_TUNER_H
#define AUTOSCHED_TUNER_H

#include <stddef.h>
#include <stdint.h>

#include "search/space.h"
#include "trial/trial.h"

struct op_desc;

/* Settings of a tuner; extra holds its own [SearchStrategy] keys. */
struct tuner_params {
	uint64_t	 seed;
	int64_t		 n_trial;	/* the budget, so a grid can choose its stride */
	const char *const *extra_keys;	/* tuner-specific key/value pairs */
	const char *const *extra_values;
	const int	*extra_lines;	/* cfg line of each, for messages */
	size_t		 nextra;
	const char	*cfg_path;	/* for messages */
};

/* A past measurement, of this op or another (transfer learning). */
struct tuner_record {
	const struct op_desc	*op;
	struct config		 config;
	enum trial_status	 status;
	double			 gflops;
};

struct tuner;

struct tuner_ops {
	const char	*name;		/* short: "grid" */
	const char	*long_name;	/* the seed's: "GridTuner" */
	/* The [SearchStrategy] keys it reads besides the common ones (NULL-ended). */
	const char *const *keys;
	int		(*create)(const struct tuner_params *, const struct op_desc *,
			    const struct space *, void **priv, char **err);
	/*
	 * Propose up to max configs not proposed before; returns how many
	 * (0 = nothing left to try).
	 */
	size_t		(*propose)(void *priv, uint64_t *idx, size_t max);
	/* Results of proposed (or resumed) configs, in any order. */
	void		(*update)(void *priv, const uint64_t *idx,
			    const struct trial_result *res, size_t n);
	/* Past records to learn from before the first proposal; NULL = ignores them. */
	void		(*transfer)(void *priv, const struct tuner_record *, size_t n);
	/* Seconds spent in the tuner's own work since the last call (NULL = 0). */
	double		(*overhead)(void *priv);
	/*
	 * The configs it proposes between two learnings as the settings fix
	 * them (xgboost's batch_size); 0 = its own choice (NULL = always 0).
	 */
	int64_t		(*batch)(const struct tuner_params *);
	void		(*destroy)(void *priv);
};

/* A tuner by either name ("grid" or "GridTuner", case-insensitive); NULL if unknown. */
const struct tuner_ops *tuner_find(const char *name);
const struct tuner_ops *const *tuner_all(size_t *n);

/* A tuner instance: the ops and their private state. */
struct tuner {
	const struct tuner_ops	*ops;
	void			*priv;
};
int	 tuner_create(const struct tuner_ops *, const struct tuner_params *,
	    const struct op_desc *, const struct space *, struct tuner *, char **err)
	    __attribute__((warn_unused_result));
/*
 * Up to max (at most TUNER_PROPOSE_MAX) config indices into idx, which holds
 * that many; returns how many (0 = nothing left to try).
 */
#define TUNER_PROPOSE_MAX	64
size_t	 tuner_propose(struct tuner *, uint64_t *idx, size_t max);
void	 tuner_update(struct tuner *, const uint64_t *idx,
	    const struct trial_result *res, size_t n);
void	 tuner_transfer(struct tuner *, const struct tuner_record *, size_t n);
double	 tuner_overhead(struct tuner *);
/* The ops' batch for p (0 where the settings leave it to the tuner). */
int64_t	 tuner_batch(const struct tuner_ops *, const struct tuner_params *p);
void	 tuner_destroy(struct tuner *);

/* Deterministic PRNG (splitmix64 / xoshiro256**) shared by the tuners. */
struct tuner_rng {
	uint64_t s[4];
};
void	 tuner_rng_seed(struct tuner_rng *, uint64_t seed);
uint64_t tuner_rng_next(struct tuner_rng *);
/* Uniform in [0, n). */
uint64_t tuner_rng_below(struct tuner_rng *, uint64_t n);
double	 tuner_rng_double(struct tuner_rng *);	/* [0, 1) */

#endif
