/*
 * The search space: knobs, their value lists, constraints, and an index over
 * the valid configs that never materialises the cross product. Also config
 * names and the features cost models learn from.
 */
#ifndef AUTOSCHED_SPACE_H
#define AUTOSCHED_SPACE_H

#include <stddef.h>
#include <stdint.h>

struct op_desc;

enum knob {
	KNOB_TILE_M = 0,	/* cache tile, M */
	KNOB_TILE_N,
	KNOB_TILE_K,
	KNOB_VECTOR_M,		/* register tile, M */
	KNOB_VECTOR_N,
	KNOB_VECTOR_K,
	KNOB_THREADS,
	KNOB_BLOCK_DIM_X,	/* GPU knobs */
	KNOB_BLOCK_DIM_Y,
	KNOB_BLOCK_DIM_Z,
	KNOB_PIPELINE_DEPTH,
	KNOB_PACK_B,		/* 1: B packed into register-tile panels, 0: read in place */
	KNOB_PAD_SMEM,		/* 1: packed tiles' rows padded (bank conflicts), 0: not */
	KNOB_PACK_A,		/* 1: A packed into register-tile panels, 0: read in place */
	KNOB_COUNT
};
#define KNOB_BIT(k)	(1u << (k))

/* "tile_m", …; NULL if out of range. */
const char	*space_knob_name(enum knob);
/* The knob called name, or -1. */
int		 space_knob_lookup(const char *name);
/* The known knob name closest to name (for "did you mean"). */
const char	*space_knob_nearest(const char *name);

/* A point of the space: the value of every knob (0 = knob not in use). */
struct config {
	int64_t	v[KNOB_COUNT];
};

/* A value list for one knob, as the user wrote it. */
struct knob_values {
	enum knob	 knob;
	const int64_t	*values;
	size_t		 n;
};

#define SPACE_CANDS_MAX	16

/*
 * What a backend adds to the space: which knobs it understands, the values
 * searched for those the cfg does not list, and its constraint on the
 * register tile.
 */
struct space_rules {
	uint32_t	 knobs;		/* KNOB_BIT mask */
	struct config	 defaults;	/* the default config's value of each knob */
	/*
	 * The default candidates of a knob the cfg does not list (derived from
	 * the op and the target); ncand[k] == 0 means defaults.v[k] alone.
	 */
	int64_t		 cand[KNOB_COUNT][SPACE_CANDS_MAX];
	size_t		 ncand[KNOB_COUNT];
	/* 1 if the register tile vm×vn×vk is allowed for op; NULL = all. */
	int		(*vector_ok)(const struct op_desc *, int64_t vm, int64_t vn,
			    int64_t vk);
	/*
	 * KNOB_BIT(KNOB_VECTOR_M/N/K) of the register tiles that need only fit
	 * in their cache tile, not divide it, and KNOB_BIT(KNOB_TILE_M/N/K) of
	 * the cache tiles that need not divide their dimension: the backend
	 * handles the rest (mlir-cpu splits it off). 0 = all must divide.
	 */
	uint32_t	 ragged;
	/*
	 * 1: the config whose knobs are all 0 but threads is the backend's
	 * own default (IREE's compiler chooses every tile itself): a valid
	 * config, though no point of the space. The backend's baseline.
	 */
	int		 own_default;
};

/*
 * The threads a default schedule runs on where threads are at hand (a
 * build's --rest-threads, a job's CPUs): as many as get at least
 * SPACE_MIN_THREAD_MACS multiply-adds of op each, at least 1 (a thread
 * fork and join costs microseconds; an op of less work runs on one).
 */
#define SPACE_MIN_THREAD_MACS	(1 << 19)
int	 space_default_threads(const struct op_desc *op, int threads);

/* 1 if c is the backend's own default under rules (own_default). */
int	 space_config_own_default(const struct space_rules *rules,
	    const struct config *c);

/*
 * Bounds of a knob's value: every knob fits a signed 32-bit integer (the
 * loop bounds of the generated code); threads at most SPACE_THREADS_MAX
 * (the cfg reader holds lists to the same).
 */
#define SPACE_VALUE_MAX		(((int64_t)1 << 31) - 1)
#define SPACE_THREADS_MAX	512

/*
 * Check a config read from outside (a store) against the space's rules for
 * op: the knobs rules does not use are 0; the others are 1 to
 * SPACE_VALUE_MAX (threads to SPACE_THREADS_MAX, pack_b, pad_smem and
 * pack_a 0 or 1, pad_smem 1 where pack_b is 0: nothing to pad); each
 * effective cache tile min(tile_d, D) divides D (unless rules->ragged has
 * it), its register tile divides it (fits in it for the dims in
 * rules->ragged); the backend's own default
 * (rules->own_default) is valid as it is; a GPU block has at most
 * 1024 threads. The register-tile rule of the machine (vector_ok) is not
 * applied: a store may come from another one. rules NULL (a backend this
 * build lacks): the bounds alone. 0, or -1 with *err naming the knob, its
 * value and what was expected (the caller says which config).
 */
int	 space_config_check(const struct op_desc *op,
	    const struct space_rules *rules, const struct config *c, char **err)
	    __attribute__((warn_unused_result));

struct space;

/*
 * Build the space of op from the cfg's value lists and the backend's rules.
 * Lists of knobs the backend does not understand are ignored here (the caller
 * reports them). Per dimension d in {m,n,k}: the effective tile is
 * min(tile_d, D); it must divide D (unless rules->ragged has tile_d); the
 * register tile must divide it (or, for the dims in rules->ragged, be at
 * most it); of the tiles ≥ D only the smallest is kept (the others are the
 * same config).
 * GPU blocks: x·y·z ≤ 1024. Where rules has pad_smem, pad_smem 0 only
 * with pack_b 1 (unpacked, nothing is padded). Caller frees with space_free.
 */
int	 space_new(const struct op_desc *op, const struct knob_values *lists,
	    size_t nlists, const struct space_rules *rules, struct space **out,
	    char **err) __attribute__((warn_unused_result));
void	 space_free(struct space *);

/* Number of valid configs (exact, computed without enumeration). */
uint64_t space_count(const struct space *);
/* Knob mask in use (understood by the backend). */
uint32_t space_knobs(const struct space *);
/* The config at index i < space_count. */
void	 space_get(const struct space *, uint64_t i, struct config *out);
/* The index of a config; -1 if it is not a valid point of this space. */
int64_t	 space_index(const struct space *, const struct config *);
/* Number of values knob k takes in this space (1 if fixed). */
size_t	 space_knob_size(const struct space *, enum knob k);
/* The sorted value list of knob k (borrowed). */
const int64_t *space_knob_list(const struct space *, enum knob k, size_t *n);

/*
 * Stable readable name of a config, e.g. "tile_64x64x128_vec_8x32x1_thr_1"
 * (GPU knobs add "_blk_64x2x1_pipe_2"; pack_b 0 "_nopack", pad_smem 0
 * "_nopad", pack_a 1 "_packa", each only where knobs has it). Writes at
 * most len bytes.
 */
void	 space_config_name(const struct config *, uint32_t knobs, char *buf,
	    size_t len);
/*
 * Parse a name made by space_config_name. 0 or -1. pack_b comes back 1
 * (B packed) unless the name says _nopack, pad_smem 1 (rows padded) unless
 * it says _nopad: a backend without those knobs wants them 0. pack_a comes
 * back 0 (A read in place) unless the name says _packa.
 */
int	 space_config_parse(const char *name, struct config *out);

/* Features for cost models: SPACE_NFEATURES floats per config. */
#define SPACE_NFEATURES 47
void	 space_features(const struct op_desc *, const struct config *,
	    float out[SPACE_NFEATURES]);
/* Short names of the features (for dumps and docs). */
const char *space_feature_name(int i);

#endif
