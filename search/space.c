/*
 * The search space of one op: value lists per knob, constraints applied per
 * factor, and an index over the valid configs that is computed, never
 * materialised: index -> config and config -> index in O(log n).
 *
 * Layout of an index, most significant first:
 *   [register tile triple + cache tiles compatible with it] [threads] [GPU block] [pipeline]
 *   [pack_b, pad_smem] [pack_a]
 * The first factor is a weighted list of valid register tiles (vm, vn, vk);
 * the weight of a triple is the number of cache-tile choices compatible with
 * it, per dimension, so the count is exact without enumerating.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "search/space.h"
#include "util/util.h"

#define SPACE_MAX_POINTS	(1ULL << 40)
#define SPACE_MAX_LIST		4096

static const char *const knob_names[KNOB_COUNT] = {
	"tile_m", "tile_n", "tile_k", "vector_m", "vector_n", "vector_k",
	"threads", "block_dim_x", "block_dim_y", "block_dim_z", "pipeline_depth",
	"pack_b", "pad_smem", "pack_a",
};

/* One of M, N, K: its cache tiles, register tiles, and which go together. */
struct space_dim {
	int64_t		 size;		/* M, N or K */
	int		 ragged;	/* register tile need not divide the cache tile */
	int		 tile_ragged;	/* cache tile need not divide the dimension */
	int64_t		*tiles;
	size_t		 ntiles;
	int64_t		*vecs;
	size_t		 nvecs;
	size_t		*compat;	/* tile indices compatible with vecs[v] ... */
	size_t		*compat_off;	/* ... start at compat[compat_off[v]] */
	size_t		*ncompat;
};

struct space {
	uint32_t	 knobs;
	struct space_dim dim[3];
	size_t		 ntri;
	size_t		(*tri)[3];	/* valid (vm, vn, vk) as indices into vecs */
	uint64_t	*prefix;	/* prefix[t] = sum of weights before tri t */
	int64_t		*tri_of;	/* [ivm][ivn][ivk] -> t, or -1 */
	int64_t		*threads;
	size_t		 nthreads;
	int64_t		*blocks;	/* valid (x, y, z), 3 per entry */
	size_t		 nblocks;
	int64_t		*bx, *by, *bz, *pipe, *pack, *pad;
	size_t		 nbx, nby, nbz, npipe, npack, npad;
	int64_t		*packpad;	/* valid (pack_b, pad_smem), 2 per entry */
	size_t		 npackpad;
	int64_t		*packa;
	size_t		 npacka;
	uint64_t	 inner;		/* nthreads * nblocks * npipe * npackpad * npacka */
	uint64_t	 count;
};

const char *
space_knob_name(enum knob k)
{
	if ((unsigned)k >= KNOB_COUNT)
		return NULL;
	return knob_names[k];
}

int
space_knob_lookup(const char *name)
{
	return util_name_index(knob_names, KNOB_COUNT, name);
}

const char *
space_knob_nearest(const char *name)
{
	size_t best = (size_t)-1, d;
	int k, arg = 0;

	for (k = 0; k < KNOB_COUNT; k++) {
		d = util_edit_distance(name, knob_names[k]);
		if (d < best) {
			best = d;
			arg = k;
		}
	}
	return knob_names[arg];
}

static int
space_cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * The value list of knob k: the cfg's (sorted, unique) if the backend
 * understands k and the cfg lists it; else the backend's default candidates
 * (or its one default value) if it understands k; {0} (not in use)
 * otherwise. Caller frees.
 */
static int64_t *
space_list(enum knob k, const struct knob_values *lists, size_t nlists,
    const struct space_rules *rules, size_t *n)
{
	const int64_t *src;
	int64_t *v;
	size_t i, j, m = 0, ns;

	if ((rules->knobs & KNOB_BIT(k)) == 0 || rules->defaults.v[k] < 0) {
		v = xmalloc(sizeof *v);
		v[0] = 0;
		*n = 1;
		return v;
	}
	src = &rules->defaults.v[k];
	ns = 1;
	if (rules->ncand[k] > 0 && rules->ncand[k] <= SPACE_CANDS_MAX) {
		src = rules->cand[k];
		ns = rules->ncand[k];
	}
	for (i = 0; i < nlists; i++) {
		if (lists[i].knob == k && lists[i].n > 0) {
			src = lists[i].values;
			ns = lists[i].n;
			break;
		}
	}
	v = xcalloc(ns, sizeof *v);
	memcpy(v, src, ns * sizeof *v);
	qsort(v, ns, sizeof *v, space_cmp64);
	for (j = 0; j < ns; j++) {
		if (m == 0 || v[j] != v[m - 1])
			v[m++] = v[j];
	}
	*n = m;
	return v;
}

/* Does register tile v (0 = none) go in an effective cache tile eff? */
static int
space_vec_fits(const struct space_dim *d, int64_t eff, int64_t v)
{
	if (v == 0)
		return 1;
	return d->ragged ? v <= eff : eff % v == 0;
}

/* Can cache tile t go with register tile v on a dimension of size D? */
static int
space_dim_ok(const struct space_dim *d, size_t ti, int64_t v)
{
	int64_t t = d->tiles[ti], eff;

	if (t == 0)
		return space_vec_fits(d, d->size, v);
	eff = t < d->size ? t : d->size;
	if (!d->tile_ragged && d->size % eff != 0)
		return 0;
	/* Of the tiles >= D (all the same config), keep the smallest. */
	if (t > d->size && ti > 0 && d->tiles[ti - 1] >= d->size)
		return 0;
	return space_vec_fits(d, eff, v);
}

static void
space_dim_build(struct space_dim *d)
{
	size_t v, t, total = 0;

	d->compat = xcalloc(d->nvecs * d->ntiles, sizeof *d->compat);
	d->compat_off = xcalloc(d->nvecs, sizeof *d->compat_off);
	d->ncompat = xcalloc(d->nvecs, sizeof *d->ncompat);
	for (v = 0; v < d->nvecs; v++) {
		d->compat_off[v] = total;
		for (t = 0; t < d->ntiles; t++) {
			if (space_dim_ok(d, t, d->vecs[v])) {
				d->compat[total++] = t;
				d->ncompat[v]++;
			}
		}
	}
}

static void
space_dim_free(struct space_dim *d)
{
	free(d->tiles);
	free(d->vecs);
	free(d->compat);
	free(d->compat_off);
	free(d->ncompat);
}

void
space_free(struct space *s)
{
	int i;

	if (s == NULL)
		return;
	for (i = 0; i < 3; i++)
		space_dim_free(&s->dim[i]);
	free(s->tri);
	free(s->prefix);
	free(s->tri_of);
	free(s->threads);
	free(s->blocks);
	free(s->bx);
	free(s->by);
	free(s->bz);
	free(s->pipe);
	free(s->pack);
	free(s->pad);
	free(s->packpad);
	free(s->packa);
	free(s);
}

/* a * b, or 0 with *over set when it passes SPACE_MAX_POINTS. */
static uint64_t
space_mul(uint64_t a, uint64_t b, int *over)
{
	if (a != 0 && b > SPACE_MAX_POINTS / a) {
		*over = 1;
		return 0;
	}
	return a * b;
}

/*
 * The candidate lists of space s, cut to op's sizes and rules: its
 * dimensions' tiles (and their compatible pairs), then the other knobs.
 * 0, or -1 with *err when a list or their product is too large.
 */
static int
space_build_lists(struct space *s, const struct op_desc *op,
    const struct knob_values *lists, size_t nlists,
    const struct space_rules *rules, char **err)
{
	uint64_t raw = 1;
	size_t i;
	int over = 0;
	int64_t sizes[3] = { op->m, op->n, op->k };

	for (i = 0; i < nlists; i++) {
		if (lists[i].n > SPACE_MAX_LIST) {
			util_seterr(err, "%s: %zu values, at most %d allowed",
			    knob_names[lists[i].knob], lists[i].n, SPACE_MAX_LIST);
			return -1;
		}
	}
	for (i = 0; i < 3; i++) {
		struct space_dim *d = &s->dim[i];

		d->size = sizes[i];
		d->ragged = (rules->ragged & KNOB_BIT(KNOB_VECTOR_M + i)) != 0;
		d->tile_ragged = (rules->ragged & KNOB_BIT(KNOB_TILE_M + i)) != 0;
		d->tiles = space_list(KNOB_TILE_M + i, lists, nlists, rules, &d->ntiles);
		d->vecs = space_list(KNOB_VECTOR_M + i, lists, nlists, rules, &d->nvecs);
		raw = space_mul(raw, space_mul(d->ntiles, d->nvecs, &over), &over);
		space_dim_build(d);
	}
	s->threads = space_list(KNOB_THREADS, lists, nlists, rules, &s->nthreads);
	s->bx = space_list(KNOB_BLOCK_DIM_X, lists, nlists, rules, &s->nbx);
	s->by = space_list(KNOB_BLOCK_DIM_Y, lists, nlists, rules, &s->nby);
	s->bz = space_list(KNOB_BLOCK_DIM_Z, lists, nlists, rules, &s->nbz);
	s->pipe = space_list(KNOB_PIPELINE_DEPTH, lists, nlists, rules, &s->npipe);
	s->pack = space_list(KNOB_PACK_B, lists, nlists, rules, &s->npack);
	s->pad = space_list(KNOB_PAD_SMEM, lists, nlists, rules, &s->npad);
	raw = space_mul(raw, space_mul(s->npack, s->npad, &over), &over);
	s->packa = space_list(KNOB_PACK_A, lists, nlists, rules, &s->npacka);
	raw = space_mul(raw, s->npacka, &over);
	raw = space_mul(raw, s->nthreads, &over);
	raw = space_mul(raw, space_mul(s->nbx * s->nby, s->nbz, &over), &over);
	raw = space_mul(raw, s->npipe, &over);
	if (over) {
		util_seterr(err, "the search space has more than 2^40 points; "
		    "narrow the [SearchSpace] lists");
		return -1;
	}
	return 0;
}

/*
 * The register tiles of space s: the valid (vector_m, vector_n, vector_k)
 * triples and the prefix sums of their weights (how many cache tiles each
 * fits). 0, or -1 with *err when there are too many combinations.
 */
static int
space_build_tri(struct space *s, const struct op_desc *op,
    const struct space_rules *rules, char **err)
{
	size_t a, b, c, nv[3] = { s->dim[0].nvecs, s->dim[1].nvecs,
	    s->dim[2].nvecs };
	uint64_t w;

	if ((uint64_t)nv[0] * nv[1] * nv[2] > (1u << 22)) {
		util_seterr(err, "%zu x %zu x %zu register tiles: too many "
		    "combinations; narrow the vector_m/n/k lists", nv[0], nv[1],
		    nv[2]);
		return -1;
	}
	s->tri = xcalloc(nv[0] * nv[1] * nv[2], sizeof *s->tri);
	s->prefix = xcalloc(nv[0] * nv[1] * nv[2] + 1, sizeof *s->prefix);
	s->tri_of = xcalloc(nv[0] * nv[1] * nv[2], sizeof *s->tri_of);
	for (a = 0; a < nv[0]; a++)
	for (b = 0; b < nv[1]; b++)
	for (c = 0; c < nv[2]; c++) {
		size_t at = (a * nv[1] + b) * nv[2] + c;

		s->tri_of[at] = -1;
		w = (uint64_t)s->dim[0].ncompat[a] * s->dim[1].ncompat[b] *
		    s->dim[2].ncompat[c];
		if (w == 0)
			continue;
		if (rules->vector_ok != NULL && !rules->vector_ok(op,
		    s->dim[0].vecs[a], s->dim[1].vecs[b], s->dim[2].vecs[c]))
			continue;
		s->tri[s->ntri][0] = a;
		s->tri[s->ntri][1] = b;
		s->tri[s->ntri][2] = c;
		s->tri_of[at] = (int64_t)s->ntri;
		s->prefix[s->ntri + 1] = s->prefix[s->ntri] + w;
		s->ntri++;
	}
	return 0;
}

/* The GPU blocks of space s: x·y·z <= 1024 (the seed's rule). */
static void
space_build_blocks(struct space *s)
{
	size_t a, b, c;

	s->blocks = xcalloc(s->nbx * s->nby * s->nbz * 3, sizeof *s->blocks);
	for (a = 0; a < s->nbx; a++)
	for (b = 0; b < s->nby; b++)
	for (c = 0; c < s->nbz; c++) {
		int64_t x = s->bx[a], y = s->by[b], z = s->bz[c];

		if ((x ? x : 1) * (y ? y : 1) * (z ? z : 1) > 1024)
			continue;
		s->blocks[s->nblocks * 3] = x;
		s->blocks[s->nblocks * 3 + 1] = y;
		s->blocks[s->nblocks * 3 + 2] = z;
		s->nblocks++;
	}
}

/*
 * The (pack_b, pad_smem) pairs of space s: unpadded rows only of packed
 * tiles where the backend has pad_smem (unpacked, there is nothing to pad:
 * the same config as padded).
 */
static void
space_build_packpad(struct space *s)
{
	size_t a, b;

	s->packpad = xcalloc(s->npack * s->npad * 2, sizeof *s->packpad);
	for (a = 0; a < s->npack; a++)
	for (b = 0; b < s->npad; b++) {
		if ((s->knobs & KNOB_BIT(KNOB_PAD_SMEM)) && s->pad[b] == 0 &&
		    s->pack[a] == 0)
			continue;
		s->packpad[s->npackpad * 2] = s->pack[a];
		s->packpad[s->npackpad * 2 + 1] = s->pad[b];
		s->npackpad++;
	}
}

int
space_new(const struct op_desc *op, const struct knob_values *lists,
    size_t nlists, const struct space_rules *rules, struct space **out,
    char **err)
{
	struct space *s = xcalloc(1, sizeof *s);

	*out = NULL;
	s->knobs = rules->knobs;
	if (space_build_lists(s, op, lists, nlists, rules, err) != 0 ||
	    space_build_tri(s, op, rules, err) != 0)
		goto fail;
	space_build_blocks(s);
	space_build_packpad(s);
	s->inner = (uint64_t)s->nthreads * s->nblocks * s->npipe *
	    s->npackpad * s->npacka;
	s->count = s->prefix[s->ntri] * s->inner;
	*out = s;
	return 0;
fail:
	space_free(s);
	return -1;
}

uint64_t
space_count(const struct space *s)
{
	return s->count;
}

uint32_t
space_knobs(const struct space *s)
{
	return s->knobs;
}

void
space_get(const struct space *s, uint64_t i, struct config *out)
{
	uint64_t outer, rest, r;
	size_t lo = 0, hi = s->ntri, t, im, in, ik;
	const size_t *tri;
	const int64_t *blk;
	int d;

	memset(out, 0, sizeof *out);
	if (i >= s->count)
		return;
	outer = i / s->inner;
	rest = i % s->inner;
	out->v[KNOB_PACK_A] = s->packa[rest % s->npacka];
	rest /= s->npacka;
	out->v[KNOB_PACK_B] = s->packpad[(rest % s->npackpad) * 2];
	out->v[KNOB_PAD_SMEM] = s->packpad[(rest % s->npackpad) * 2 + 1];
	rest /= s->npackpad;
	out->v[KNOB_PIPELINE_DEPTH] = s->pipe[rest % s->npipe];
	rest /= s->npipe;
	blk = &s->blocks[(rest % s->nblocks) * 3];
	out->v[KNOB_BLOCK_DIM_X] = blk[0];
	out->v[KNOB_BLOCK_DIM_Y] = blk[1];
	out->v[KNOB_BLOCK_DIM_Z] = blk[2];
	rest /= s->nblocks;
	out->v[KNOB_THREADS] = s->threads[rest];

	/* The triple t with prefix[t] <= outer < prefix[t + 1]. */
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (s->prefix[mid] <= outer)
			lo = mid;
		else
			hi = mid;
	}
	t = lo;
	tri = s->tri[t];
	r = outer - s->prefix[t];
	im = r % s->dim[0].ncompat[tri[0]];
	r /= s->dim[0].ncompat[tri[0]];
	in = r % s->dim[1].ncompat[tri[1]];
	ik = r / s->dim[1].ncompat[tri[1]];
	{
		size_t pick[3] = { im, in, ik };

		for (d = 0; d < 3; d++) {
			const struct space_dim *dm = &s->dim[d];

			out->v[KNOB_VECTOR_M + d] = dm->vecs[tri[d]];
			out->v[KNOB_TILE_M + d] =
			    dm->tiles[dm->compat[dm->compat_off[tri[d]] + pick[d]]];
		}
	}
}

/* Position of v in the sorted list, or -1. */
static int64_t
space_find(const int64_t *list, size_t n, int64_t v)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (list[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo < n && list[lo] == v) ? (int64_t)lo : -1;
}

int64_t
space_index(const struct space *s, const struct config *c)
{
	int64_t iv[3], t, th, pi, pa, pk = -1, bi = -1;
	size_t pick[3], j, d;
	uint64_t r;

	for (d = 0; d < 3; d++) {
		const struct space_dim *dm = &s->dim[d];
		int64_t it;

		iv[d] = space_find(dm->vecs, dm->nvecs, c->v[KNOB_VECTOR_M + d]);
		it = space_find(dm->tiles, dm->ntiles, c->v[KNOB_TILE_M + d]);
		if (iv[d] < 0 || it < 0)
			return -1;
		pick[d] = (size_t)-1;
		for (j = 0; j < dm->ncompat[iv[d]]; j++) {
			if (dm->compat[dm->compat_off[iv[d]] + j] == (size_t)it)
				pick[d] = j;
		}
		if (pick[d] == (size_t)-1)
			return -1;
	}
	t = s->tri_of[((size_t)iv[0] * s->dim[1].nvecs + (size_t)iv[1]) *
	    s->dim[2].nvecs + (size_t)iv[2]];
	if (t < 0)
		return -1;
	th = space_find(s->threads, s->nthreads, c->v[KNOB_THREADS]);
	pi = space_find(s->pipe, s->npipe, c->v[KNOB_PIPELINE_DEPTH]);
	pa = space_find(s->packa, s->npacka, c->v[KNOB_PACK_A]);
	for (j = 0; j < s->npackpad; j++) {
		if (s->packpad[j * 2] == c->v[KNOB_PACK_B] &&
		    s->packpad[j * 2 + 1] == c->v[KNOB_PAD_SMEM])
			pk = (int64_t)j;
	}
	for (j = 0; j < s->nblocks; j++) {
		if (s->blocks[j * 3] == c->v[KNOB_BLOCK_DIM_X] &&
		    s->blocks[j * 3 + 1] == c->v[KNOB_BLOCK_DIM_Y] &&
		    s->blocks[j * 3 + 2] == c->v[KNOB_BLOCK_DIM_Z])
			bi = (int64_t)j;
	}
	if (th < 0 || pi < 0 || bi < 0 || pk < 0 || pa < 0)
		return -1;
	r = pick[0] + s->dim[0].ncompat[iv[0]] *
	    (pick[1] + s->dim[1].ncompat[iv[1]] * (uint64_t)pick[2]);
	r += s->prefix[t];
	return (int64_t)((r * s->inner) +
	    ((((uint64_t)th * s->nblocks + (uint64_t)bi) * s->npipe +
	    (uint64_t)pi) * s->npackpad + (uint64_t)pk) * s->npacka +
	    (uint64_t)pa);
}

const int64_t *
space_knob_list(const struct space *s, enum knob k, size_t *n)
{
	switch (k) {
	case KNOB_TILE_M:
	case KNOB_TILE_N:
	case KNOB_TILE_K:
		*n = s->dim[k - KNOB_TILE_M].ntiles;
		return s->dim[k - KNOB_TILE_M].tiles;
	case KNOB_VECTOR_M:
	case KNOB_VECTOR_N:
	case KNOB_VECTOR_K:
		*n = s->dim[k - KNOB_VECTOR_M].nvecs;
		return s->dim[k - KNOB_VECTOR_M].vecs;
	case KNOB_THREADS:
		*n = s->nthreads;
		return s->threads;
	case KNOB_BLOCK_DIM_X:
		*n = s->nbx;
		return s->bx;
	case KNOB_BLOCK_DIM_Y:
		*n = s->nby;
		return s->by;
	case KNOB_BLOCK_DIM_Z:
		*n = s->nbz;
		return s->bz;
	case KNOB_PIPELINE_DEPTH:
		*n = s->npipe;
		return s->pipe;
	case KNOB_PACK_B:
		*n = s->npack;
		return s->pack;
	case KNOB_PAD_SMEM:
		*n = s->npad;
		return s->pad;
	case KNOB_PACK_A:
		*n = s->npacka;
		return s->packa;
	default:
		*n = 0;
		return NULL;
	}
}

size_t
space_knob_size(const struct space *s, enum knob k)
{
	size_t n;

	space_knob_list(s, k, &n);
	return n;
}

int
space_config_own_default(const struct space_rules *rules,
    const struct config *c)
{
	int k;

	if (rules == NULL || !rules->own_default)
		return 0;
	for (k = 0; k < KNOB_COUNT; k++) {
		if (k != KNOB_THREADS && c->v[k] != 0)
			return 0;
	}
	/* A backend without the threads knob (a GPU's) stores it as 0. */
	if (!(rules->knobs & KNOB_BIT(KNOB_THREADS)))
		return c->v[KNOB_THREADS] == 0 || c->v[KNOB_THREADS] == 1;
	return c->v[KNOB_THREADS] >= 1 &&
	    c->v[KNOB_THREADS] <= SPACE_THREADS_MAX;
}

/* Unpadded rows only of packed tiles, where the backend has pad_smem. */
static int
space_packpad_check(const struct space_rules *rules, const struct config *c,
    char **err)
{
	if (rules == NULL || !(rules->knobs & KNOB_BIT(KNOB_PAD_SMEM)) ||
	    c->v[KNOB_PAD_SMEM] != 0 || c->v[KNOB_PACK_B] != 0)
		return 0;
	util_seterr(err, "pad_smem 0 with pack_b 0: expected pad_smem 1 (no "
	    "packed tiles to pad)");
	return -1;
}

int
space_config_check(const struct op_desc *op, const struct space_rules *rules,
    const struct config *c, char **err)
{
	static const char dimname[3] = { 'M', 'N', 'K' };
	const int64_t size[3] = { op->m, op->n, op->k };
	int64_t v, lo, hi, t, eff, vec, blk = 1;
	int k, d, used, ragged;

	if (space_config_own_default(rules, c))
		return 0;

	for (k = 0; k < KNOB_COUNT; k++) {
		v = c->v[k];
		used = rules == NULL || ((rules->knobs & KNOB_BIT(k)) != 0 &&
		    rules->defaults.v[k] >= 0);
		if (!used) {
			if (v != 0) {
				util_seterr(err, "%s %lld: the backend has no such "
				    "knob; expected 0", knob_names[k],
				    (long long)v);
				return -1;
			}
			continue;
		}
		/* A backend this build lacks: 0 may mean a knob it lacks. */
		lo = rules == NULL ? 0 : 1;
		hi = SPACE_VALUE_MAX;
		if (k == KNOB_THREADS)
			hi = SPACE_THREADS_MAX;
		else if (k == KNOB_PACK_B || k == KNOB_PAD_SMEM ||
		    k == KNOB_PACK_A) {
			lo = 0;
			hi = 1;
		}
		if (v < lo || v > hi) {
			util_seterr(err, "%s %lld: expected %lld %s %lld",
			    knob_names[k], (long long)v, (long long)lo,
			    hi == lo + 1 ? "or" : "to", (long long)hi);
			return -1;
		}
		if (k >= KNOB_BLOCK_DIM_X && k <= KNOB_BLOCK_DIM_Z && v > 0)
			blk *= v;	/* each at most 2^31 - 1: no overflow */
	}
	if (space_packpad_check(rules, c, err) != 0)
		return -1;
	if (blk > 1024) {
		util_seterr(err, "block_dim_x*block_dim_y*block_dim_z %lld: "
		    "expected at most 1024 threads a block", (long long)blk);
		return -1;
	}
	for (d = 0; d < 3; d++) {
		t = c->v[KNOB_TILE_M + d];
		vec = c->v[KNOB_VECTOR_M + d];
		if (size[d] < 1)
			continue;
		eff = t > 0 && t < size[d] ? t : size[d];
		if (size[d] % eff != 0 && (rules == NULL ||
		    (rules->ragged & KNOB_BIT(KNOB_TILE_M + d)) == 0)) {
			util_seterr(err, "%s %lld: does not divide %c = %lld; "
			    "expected a divisor of it or at least it",
			    knob_names[KNOB_TILE_M + d], (long long)t, dimname[d],
			    (long long)size[d]);
			return -1;
		}
		ragged = rules != NULL &&
		    (rules->ragged & KNOB_BIT(KNOB_VECTOR_M + d)) != 0;
		if (vec > 0 && (ragged ? vec > eff : eff % vec != 0)) {
			util_seterr(err, "%s %lld: does not %s the %c tile %lld; "
			    "expected %s", knob_names[KNOB_VECTOR_M + d],
			    (long long)vec, ragged ? "fit in" : "divide",
			    dimname[d], (long long)eff, ragged ? "at most it" :
			    "a divisor of it");
			return -1;
		}
	}
	return 0;
}

void
space_config_name(const struct config *c, uint32_t knobs, char *buf,
    size_t len)
{
	const int64_t *v = c->v;
	int n = 0;

	/* The CPU groups always appear, so names stay stable across backends. */
	n = snprintf(buf, len, "tile_%lldx%lldx%lld_vec_%lldx%lldx%lld_thr_%lld",
	    (long long)v[KNOB_TILE_M], (long long)v[KNOB_TILE_N],
	    (long long)v[KNOB_TILE_K], (long long)v[KNOB_VECTOR_M],
	    (long long)v[KNOB_VECTOR_N], (long long)v[KNOB_VECTOR_K],
	    (long long)v[KNOB_THREADS]);
	if (n < 0 || (size_t)n >= len)
		return;
	/* B packed, rows padded: the defaults keep the names of before. */
	if ((knobs & KNOB_BIT(KNOB_PACK_B)) && v[KNOB_PACK_B] == 0) {
		n += snprintf(buf + n, len - (size_t)n, "_nopack");
		if ((size_t)n >= len)
			return;
	}
	if ((knobs & KNOB_BIT(KNOB_PAD_SMEM)) && v[KNOB_PAD_SMEM] == 0) {
		n += snprintf(buf + n, len - (size_t)n, "_nopad");
		if ((size_t)n >= len)
			return;
	}
	/* A read in place is the default: only packed A says so. */
	if ((knobs & KNOB_BIT(KNOB_PACK_A)) && v[KNOB_PACK_A] == 1) {
		n += snprintf(buf + n, len - (size_t)n, "_packa");
		if ((size_t)n >= len)
			return;
	}
	if (knobs & (KNOB_BIT(KNOB_BLOCK_DIM_X) | KNOB_BIT(KNOB_BLOCK_DIM_Y) |
	    KNOB_BIT(KNOB_BLOCK_DIM_Z) | KNOB_BIT(KNOB_PIPELINE_DEPTH)))
		snprintf(buf + n, len - (size_t)n, "_blk_%lldx%lldx%lld_pipe_%lld",
		    (long long)v[KNOB_BLOCK_DIM_X], (long long)v[KNOB_BLOCK_DIM_Y],
		    (long long)v[KNOB_BLOCK_DIM_Z],
		    (long long)v[KNOB_PIPELINE_DEPTH]);
}

int
space_config_parse(const char *name, struct config *out)
{
	long long v[11];
	int used = 0, n;

	memset(out, 0, sizeof *out);
	n = sscanf(name, "tile_%lldx%lldx%lld_vec_%lldx%lldx%lld_thr_%lld%n",
	    &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &used);
	if (n != 7)
		return -1;
	for (n = 0; n < 7; n++)
		out->v[n] = v[n];
	name += used;
	out->v[KNOB_PACK_B] = 1;
	if (strncmp(name, "_nopack", 7) == 0) {
		out->v[KNOB_PACK_B] = 0;
		name += 7;
	}
	out->v[KNOB_PAD_SMEM] = 1;
	if (strncmp(name, "_nopad", 6) == 0) {
		out->v[KNOB_PAD_SMEM] = 0;
		name += 6;
	}
	if (strncmp(name, "_packa", 6) == 0) {
		out->v[KNOB_PACK_A] = 1;
		name += 6;
	}
	if (*name == '\0')
		return 0;
	used = 0;
	n = sscanf(name, "_blk_%lldx%lldx%lld_pipe_%lld%n", &v[7], &v[8], &v[9],
	    &v[10], &used);
	if (n != 4 || name[used] != '\0')
		return -1;
	for (n = 7; n < 11; n++)
		out->v[n] = v[n];
	return 0;
}

int
space_default_threads(const struct op_desc *op, int threads)
{
	double macs = (double)(op->batch > 0 ? op->batch : 1) *
	    (double)op->m * (double)op->n * (double)op->k;

	while (threads > 1 && macs / threads < SPACE_MIN_THREAD_MACS)
		threads--;
	return threads > 1 ? threads : 1;
}
