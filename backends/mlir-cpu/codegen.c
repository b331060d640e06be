/*
 * mlir-cpu code generation: fill the transform-dialect schedule templates
 * (templates/NAME.in) for one config of one op.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/mlir-cpu/mlircpu_int.h"
#include "util/util.h"

/* The largest divisor of d not above want (at least 1). */
static int64_t
divisor_below(int64_t d, int64_t want)
{
	int64_t t;

	if (want >= d)
		return d;
	for (t = want; t > 1; t--) {
		if (d % t == 0)
			return t;
	}
	return 1;
}

int
mlircpu_nopack_ok(const struct op_desc *op)
{
	return !op->transpose_b && op->lhs == op->acc && op->rhs == op->acc;
}

int
mlircpu_pack_a_ok(const struct op_desc *op)
{
	return !op->transpose_a && op->lhs == ELEM_F32 && op->rhs == ELEM_F32 &&
	    op->acc == ELEM_F32;
}

void
mlircpu_complete(const struct op_desc *op, const struct config *cfg,
    struct config *out)
{
	/*
	 * The default config follows the CPU (README "The default config"):
	 * a register tile two vectors wide and as many rows as the registers
	 * hold with room to spare (6 of 16, 8 of 32), a cache tile 64 x 256 x
	 * 256 (the K tile of a B panel two vectors wide: 32 KiB in f32 on
	 * AVX-512, 16 KiB on AVX2, inside L1). A skinny op (M at most
	 * MLIRCPU_SKINNY_M) is bound by reading B once: B read in place where
	 * it can be, one cache tile across N and K tiles of a few rows, so
	 * that a register tile walks a few rows of B along N at once.
	 */
	int skinny = op->m <= MLIRCPU_SKINNY_M;
	int64_t defaults[KNOB_COUNT] = {
		[KNOB_TILE_M] = 64, [KNOB_TILE_N] = skinny ? op->n : 256,
		[KNOB_TILE_K] = skinny ? MLIRCPU_SKINNY_TILE_K : 256,
		[KNOB_VECTOR_M] = mlircpu_isa()->vec_regs >= 32 ? 8 : 6,
		[KNOB_VECTOR_N] = (skinny ? 4 : 2) * mlircpu_lanes(op),
		[KNOB_VECTOR_K] = 1, [KNOB_THREADS] = 1,
		[KNOB_PACK_B] = skinny && mlircpu_nopack_ok(op) ? 0 : 1,
	};
	const int64_t dim[3] = { op->m, op->n, op->k };
	int i, given;

	memset(out, 0, sizeof *out);
	for (i = KNOB_TILE_M; i <= KNOB_THREADS; i++)
		out->v[i] = cfg != NULL && cfg->v[i] > 0 ? cfg->v[i] : defaults[i];
	/* 0 is a value of pack_b (B read in place), not "unset". */
	out->v[KNOB_PACK_B] = cfg != NULL ? (cfg->v[KNOB_PACK_B] != 0) :
	    defaults[KNOB_PACK_B];
	/* A read in place unless the cfg packs it (what configs meant before). */
	out->v[KNOB_PACK_A] = cfg != NULL && cfg->v[KNOB_PACK_A] != 0;
	/*
	 * Clamp to the op: tiles to the dimension, register tiles to their
	 * cache tile. A tile need not divide (the schedule splits off the
	 * rest), but a default tile takes the largest divisor of the
	 * dimension below it when that is at least half of it: whole tiles
	 * are cheaper than a rest.
	 */
	for (i = 0; i < 3; i++) {
		int64_t *t = &out->v[KNOB_TILE_M + i];
		int64_t *v = &out->v[KNOB_VECTOR_M + i];
		int64_t d;

		given = cfg != NULL && cfg->v[KNOB_TILE_M + i] > 0;
		if (*t > dim[i])
			*t = dim[i];
		if (!given && dim[i] % *t != 0 &&
		    (d = divisor_below(dim[i], *t)) * 2 >= *t)
			*t = d;
		if (*v > *t)
			*v = *t;
	}
	/* Default register tiles shrink to the registers: N, then M. */
	while (!mlircpu_vector_ok(op, out->v[KNOB_VECTOR_M],
	    out->v[KNOB_VECTOR_N], out->v[KNOB_VECTOR_K])) {
		if (cfg != NULL && cfg->v[KNOB_VECTOR_N] > 0 &&
		    cfg->v[KNOB_VECTOR_M] > 0)
			break;	/* the cfg's own: refused when compiled */
		if ((cfg == NULL || cfg->v[KNOB_VECTOR_N] <= 0) &&
		    out->v[KNOB_VECTOR_N] > mlircpu_lanes(op))
			out->v[KNOB_VECTOR_N] -= mlircpu_lanes(op);
		else if ((cfg == NULL || cfg->v[KNOB_VECTOR_M] <= 0) &&
		    out->v[KNOB_VECTOR_M] > 1)
			out->v[KNOB_VECTOR_M]--;
		else
			break;
	}
}

char *
mlircpu_fill(const char *tpl, const char *const *kv)
{
	size_t cap = strlen(tpl) + 256, len = 0, n, i;
	char *out = xmalloc(cap);
	const char *p = tpl, *at, *end;

	while ((at = strchr(p, '@')) != NULL) {
		const char *val = NULL;

		end = strchr(at + 1, '@');
		if (end != NULL) {
			for (i = 0; kv[i] != NULL; i += 2) {
				n = strlen(kv[i]);
				if ((size_t)(end - at - 1) == n &&
				    strncmp(at + 1, kv[i], n) == 0) {
					val = kv[i + 1];
					break;
				}
			}
		}
		/* Copy the text before '@', then the value or the '@' itself. */
		n = (size_t)(at - p);
		if (val == NULL)
			n++;
		while (len + n + (val ? strlen(val) : 0) + 1 > cap)
			cap *= 2;
		out = xrealloc(out, cap);
		memcpy(out + len, p, n);
		len += n;
		if (val != NULL) {
			memcpy(out + len, val, strlen(val));
			len += strlen(val);
			p = end + 1;
		} else
			p = at + 1;
	}
	n = strlen(p);
	if (len + n + 1 > cap)
		out = xrealloc(out, len + n + 1);
	memcpy(out + len, p, n + 1);
	return out;
}

/* The dot kernels' panel width: one vector register of f32/i32 lanes. */
#define DOT_LANES	16

/*
 * The per-op schedule is written as a tree of parts: the op (or, with
 * threads, each thread's chunk and the rest no thread takes), split where
 * a cache tile does not divide its dimension into whole tiles and the rest,
 * each part tiled into cache tiles, each cache tile split where an N or K
 * register tile does not divide it, and each leaf packed, tiled into
 * register tiles and marked for vectorization. Every part has static
 * sizes. Handles are named by a suffix per part ("" when the op is one
 * part, as every schedule was before remainders).
 */
struct gen {
	FILE			*f;		/* NULL: count the parts only */
	const struct op_desc	*op;
	const struct config	*c;
	const char		*root;		/* the op's handle: "%mm" */
	int			 batch;		/* iteration dims start with b */
	enum mlircpu_kernel	 kernel;
	int			 group;		/* K summed in a lane (dot) */
	int			 single;	/* one part: suffix "" */
	int			 nparts;	/* suffixes handed out */
	int			 nsplits;
	FILE			*unroll;	/* the dot kernel's unrolls */
	int			 fit;		/* every leaf fits the dot kernel */
	int			 fused;		/* the op's dispatch has its epilogue (build --fuse) */
	int			 mm_kept;	/* no step consumes the op's handle */
	/*
	 * A part reads what another part leaves unwritten (a split along M,
	 * N or the batch, a peeled M tile): the op's zero fill must stay.
	 */
	int			 init_kept;
	int			 peels;		/* leaves with their last M tile peeled */
};

/* Names of the iteration dims from the batch's (-1) on. */
static const char dim_name[4] = { 'B', 'M', 'N', 'K' };

/* A new handle suffix: "" when the op is one part, else "_N". */
static void
gen_suffix(struct gen *g, char *buf, size_t len)
{
	g->nparts++;
	if (g->single)
		buf[0] = '\0';
	else
		snprintf(buf, len, "_%d", g->nparts);
}

static void
gen_fill(struct gen *g, const char *tpl, const char *const *kv)
{
	char *s;

	if (g->f == NULL)
		return;
	s = mlircpu_fill(tpl, kv);
	fputs(s, g->f);
	free(s);
}

/*
 * Split the part in along dim d (0 M, 1 N, 2 K, -1 the batch), of the given
 * size, after `at` elements: writes the two parts' handles into a and b.
 */
static void
gen_split(struct gen *g, const char *in, int d, int64_t size, int64_t at,
    const char *why, char *a, char *b, size_t len)
{
	char out[24], dim[8], sz[24], atv[24], dn[2] = { dim_name[d + 1], 0 };
	const char *const kv[] = { "OUT", out, "IN", in, "DIM", dim,
	    "AT", atv, "SIZE", sz, "DIMNAME", dn, "WHY", why, NULL };

	snprintf(out, sizeof out, "s%d", ++g->nsplits);
	/* The second part's C starts from the first's result. */
	if (d != 2)
		g->init_kept = 1;
	snprintf(dim, sizeof dim, "%d", d + g->batch);
	snprintf(sz, sizeof sz, "%lld", (long long)size);
	snprintf(atv, sizeof atv, "%lld", (long long)at);
	gen_fill(g, mlircpu_tpl_split_mlir, kv);
	snprintf(a, len, "%%%s_a", out);
	snprintf(b, len, "%%%s_b", out);
}

/*
 * Split the part in of sizes w along dim d after `at` elements (gen_split)
 * and go on with each of the two parts: next(g, part, its sizes, from).
 */
static void
gen_cut(struct gen *g, const char *in, const int64_t w[3], int d, int64_t at,
    const char *why, void (*next)(struct gen *, const char *,
    const int64_t[3], int), int from)
{
	int64_t wa[3] = { w[0], w[1], w[2] }, wb[3] = { w[0], w[1], w[2] };
	char a[32], b[32];

	gen_split(g, in, d, w[d], at, why, a, b, sizeof a);
	wa[d] = at;
	wb[d] = w[d] - at;
	next(g, a, wa, from);
	next(g, b, wb, from);
}

/*
 * The pack_transpose (or no-op) step that moves the outer dims of B's
 * packed layout to [batch][n][k] so that a register-tile panel is
 * contiguous along K. It is needed when K is stored before N (B not
 * transposed).
 */
static void
gen_pack(struct gen *g, const char *in, const char *sfx, const char *sizes)
{
	const char *const kv[] = { "IN", in, "S", sfx, "PACK_SIZES", sizes,
	    "PERM", g->batch ? "0, 2, 1" : "1, 0", NULL };

	if (!g->c->v[KNOB_PACK_B])
		gen_fill(g, mlircpu_tpl_pack_none_mlir, kv);
	else
		gen_fill(g, g->op->transpose_b ? mlircpu_tpl_pack_keep_mlir :
		    mlircpu_tpl_pack_transpose_mlir, kv);
}

/* ", !transform.any_op" n times: the result types of a tiling op. */
static char *
any_ops(int n)
{
	char *s = xcalloc((size_t)n * 20 + 1, 1);
	int i;

	for (i = 0; i < n; i++)
		strcat(s, ", !transform.any_op");
	return s;
}

/*
 * pack_a 1: the steps that copy A's register-tile slices (vm x vk) of the
 * leaf of sizes w with handle suffix sfx and hoist the copies out of its
 * register-tile loops of more than one iteration (those of one are folded
 * first; the batch's always is one), of the main M loop where the last M
 * tile was peeled (the peeled rows read A in place). "" for pack_a 0, where
 * no loop is left, and where the main M loop of a peeled tile is one
 * register tile: canonicalization folds that loop away, and its handle
 * with it; A is read in place there. Caller frees.
 */
static char *
gen_pack_a(const struct gen *g, const char *sfx, const int64_t w[3],
    int64_t vm, int64_t vn, int64_t vk)
{
	const int64_t trips[3] = { w[0] / vm, w[1] / vn, w[2] / vk };
	int m_peeled = w[0] % vm != 0, nloops = 0, i;
	char find[200] = "", target[32], loops[8], sizes[64];
	const char *const kv[] = { "FIND", find, "TARGET", target,
	    "M_DIM", g->batch ? "1" : "0", "LOOPS", loops,
	    "PAD_SIZES", sizes, "S", sfx, NULL };

	for (i = 0; i < 3; i++)
		nloops += trips[i] > 1;
	if (!g->c->v[KNOB_PACK_A] || g->kernel != KERNEL_FMA ||
	    (m_peeled && trips[0] < 2) || nloops == 0)
		return xstrdup("");
	snprintf(loops, sizeof loops, "%d", nloops);
	snprintf(sizes, sizeof sizes, "%s%lld, %lld", g->batch ? "1, " : "",
	    (long long)vm, (long long)vk);
	snprintf(target, sizeof target, "%%t2%s", sfx);
	if (m_peeled) {
		snprintf(target, sizeof target, "%%tm%s", sfx);
		snprintf(find, sizeof find, "    %s = transform.structured.match "
		    "attributes{autosched.tile} in %%ml_main%s : "
		    "(!transform.op<\"scf.for\">) -> !transform.any_op\n",
		    target, sfx);
	}
	return mlircpu_fill(mlircpu_tpl_pack_a_mlir, kv);
}

/*
 * What follows a leaf's register tiling: the peel of its last M tile where
 * vm does not divide w[0] (its M loop the m_loop-th), then the steps of
 * pack_a. Caller frees.
 */
static char *
gen_peel_pack_a(const struct gen *g, const char *sfx, const char *m_loop,
    const int64_t w[3], int64_t vm, int64_t vn, int64_t vk)
{
	const char *const kv[] = { "M_LOOP", m_loop, "S", sfx, NULL };
	char *peel, *pack_a, *out;

	peel = w[0] % vm != 0 ? mlircpu_fill(mlircpu_tpl_peel_m_mlir, kv) :
	    xstrdup("");
	pack_a = gen_pack_a(g, sfx, w, vm, vn, vk);
	out = xasprintf("%s%s", peel, pack_a);
	free(peel);
	free(pack_a);
	return out;
}

/*
 * A leaf: an op of static sizes w (M, N, K of one cache tile, or of its
 * register-tile part) packed, tiled into register tiles (the last M tile
 * peeled when vector_m does not divide w[0]) and marked for vectorization.
 */
static void
gen_leaf(struct gen *g, const char *in, const int64_t w[3])
{
	const struct config *c = g->c;
	const char *b0 = g->batch ? "0, " : "", *b1 = g->batch ? "1, " : "";
	int64_t vm = c->v[KNOB_VECTOR_M] < w[0] ? c->v[KNOB_VECTOR_M] : w[0];
	int64_t vn = c->v[KNOB_VECTOR_N] < w[1] ? c->v[KNOB_VECTOR_N] : w[1];
	int64_t vk = c->v[KNOB_VECTOR_K] < w[2] ? c->v[KNOB_VECTOR_K] : w[2];
	int nreg = g->batch ? 4 : 3, dot = g->kernel != KERNEL_FMA;
	char sfx[16], sizes[64], reg_tile[64], loops[8], m_loop[8];
	char *types, *micro, *peel;

	gen_suffix(g, sfx, sizeof sfx);
	/* A peeled last M tile: autosched-fold-init follows the fill there. */
	g->peels += w[0] % vm != 0;
	if (w[1] % DOT_LANES != 0 || vn % DOT_LANES != 0 ||
	    w[1] % vn != 0 || w[2] % g->group != 0 || w[0] % vm != 0)
		g->fit = 0;
	/*
	 * Pack N only, by the register tile: B's tile becomes panels, C's is
	 * only viewed as [m][n/vn][vn] (no copy) and A is read in place. The
	 * dot kernels pack N by 16 and K by 2 (the VNNI kernel by 4): A's tile
	 * is only viewed as [m][k/2][2], B's becomes [n/16][k/2][16][2]
	 * panels, C's [m][n/16][16].
	 */
	if (dot)
		snprintf(sizes, sizeof sizes, "%s0, %d, %d", b0, DOT_LANES,
		    g->group);
	else
		snprintf(sizes, sizeof sizes, "%s0, %lld, 0", b0, (long long)vn);
	gen_pack(g, in, sfx, sizes);
	/* Register tiles: loops n, m, then k innermost, vector_k per step. */
	if (dot)
		snprintf(reg_tile, sizeof reg_tile, "%s%lld, %lld, 1", b1,
		    (long long)vm, (long long)(vn / DOT_LANES));
	else if (c->v[KNOB_PACK_B])
		snprintf(reg_tile, sizeof reg_tile, "%s%lld, 1, %lld", b1,
		    (long long)vm, (long long)vk);
	else
		snprintf(reg_tile, sizeof reg_tile, "%s%lld, %lld, %lld", b1,
		    (long long)vm, (long long)vn, (long long)vk);
	snprintf(loops, sizeof loops, "%d", nreg);
	snprintf(m_loop, sizeof m_loop, "%d", nreg - 2);
	types = any_ops(nreg);
	if (dot) {
		char um[24], un[24], msz[32], lanes[8], grp[8];
		const char *const kt[] = { "MICRO_TILE_SIZES", msz,
		    "LANES", lanes, "GROUP", grp, "S", sfx, NULL };
		const char *const ku[] = { "UNROLL_M", um, "UNROLL_N", un,
		    "S", sfx, NULL };

		snprintf(msz, sizeof msz, "%s1, 1", b0);
		snprintf(lanes, sizeof lanes, "%d", DOT_LANES);
		snprintf(grp, sizeof grp, "%d", g->group);
		snprintf(um, sizeof um, "%lld", (long long)vm);
		snprintf(un, sizeof un, "%lld", (long long)(vn / DOT_LANES));
		micro = mlircpu_fill(mlircpu_tpl_dot_tile_mlir, kt);
		if (g->f != NULL) {
			char *u = mlircpu_fill(mlircpu_tpl_dot_unroll_mlir, ku);

			fputs(u, g->unroll);
			free(u);
		}
	} else
		micro = xstrdup("");
	peel = gen_peel_pack_a(g, sfx, m_loop, w, vm, vn, vk);
	{
		const char *const kv[] = { "S", sfx, "REG_TILE", reg_tile,
		    "REG_ORDER", g->batch ? "0, 2, 1, 3" : "1, 0, 2",
		    "REG_LOOPS", loops, "REG_TYPES", types,
		    "MICRO_TILE", micro, "TILE", dot ? "t3" : "t2",
		    "PEEL_M", peel, NULL };

		gen_fill(g, mlircpu_tpl_tile_reg_mlir, kv);
	}
	free(types);
	free(micro);
	free(peel);
}

/*
 * The register-tile parts of a cache tile of sizes w (dims d and on, N then
 * K): where the N or K register tile does not divide it, whole register
 * tiles and the rest (with a register tile of its own size).
 */
static void
gen_reg_split(struct gen *g, const char *in, const int64_t w[3], int d)
{
	int64_t v;

	for (; d < 3; d++) {
		v = g->c->v[KNOB_VECTOR_M + d];
		if (d == 0 || v >= w[d] || w[d] % v == 0)
			continue;
		gen_cut(g, in, w, d, w[d] / v * v, "register tiles",
		    gen_reg_split, d + 1);
		return;
	}
	gen_leaf(g, in, w);
}

/* A part of static sizes s whose cache tiles divide it: tile, then split. */
static void
gen_cache(struct gen *g, const char *in, const int64_t s[3])
{
	int64_t w[3];
	char sfx[16], tile[96], t1[32], *types;
	int i;

	for (i = 0; i < 3; i++)
		w[i] = g->c->v[KNOB_TILE_M + i] < s[i] ?
		    g->c->v[KNOB_TILE_M + i] : s[i];
	gen_suffix(g, sfx, sizeof sfx);
	snprintf(tile, sizeof tile, "%s%lld, %lld, %lld", g->batch ? "1, " :
	    "", (long long)w[0], (long long)w[1], (long long)w[2]);
	types = any_ops(g->batch ? 4 : 3);
	{
		const char *const kv[] = { "IN", in, "S", sfx,
		    "CACHE_TILE", tile,
		    "CACHE_ORDER", g->batch ? "0, 2, 3, 1" : "1, 2, 0",
		    "CACHE_LOOPS", g->batch ? "4" : "3", "CACHE_TYPES", types,
		    NULL };

		gen_fill(g, mlircpu_tpl_tile_serial_mlir, kv);
	}
	free(types);
	snprintf(t1, sizeof t1, "%%t1%s", sfx);
	gen_reg_split(g, t1, w, 1);
}

/*
 * The cache-tile parts of a part of sizes s (dims taken N, K, M, from the
 * i-th of that order on): where a cache tile does not divide its
 * dimension, whole tiles and the rest.
 */
static void
gen_cache_split(struct gen *g, const char *in, const int64_t s[3], int i)
{
	static const int order[3] = { 1, 2, 0 };
	int64_t t;
	int d;

	for (; i < 3; i++) {
		d = order[i];
		t = g->c->v[KNOB_TILE_M + d];
		if (t >= s[d] || s[d] % t == 0)
			continue;
		gen_cut(g, in, s, d, s[d] / t * t, "cache tiles",
		    gen_cache_split, i + 1);
		return;
	}
	gen_cache(g, in, s);
}

/*
 * The largest divisor of n up to 64 lanes, a multiple of 16 where one
 * divides n: the width of the fused epilogue's vectors.
 */
static int64_t
epi_width(int64_t n)
{
	int64_t w;

	for (w = 64; w >= 16; w -= 16) {
		if (n % w == 0)
			return w;
	}
	return divisor_below(n, 64);
}

/*
 * The fused epilogue (g->fused) at the threads' loop: the last consumer
 * tiled into the chunks par says, the other consumers and the op fused into
 * that forall, the consumers tiled into rows of vectors (n: the chunk's N)
 * and marked for vectorization with the op's register tiles; %tf is the op.
 */
static void
gen_fuse_par(struct gen *g, const char *sfx, const char *par, int64_t n)
{
	char tile[48], loops[8], width[24], *types;
	int nl = g->batch ? 3 : 2;

	snprintf(width, sizeof width, "%lld", (long long)epi_width(n));
	snprintf(tile, sizeof tile, "%s1, %s", g->batch ? "1, " : "", width);
	snprintf(loops, sizeof loops, "%d", nl);
	types = any_ops(nl);
	{
		const char *const kv[] = { "S", sfx, "PAR_TILE", par,
		    "EPI_TILE", tile, "EPI_LOOPS", loops, "EPI_TYPES", types,
		    "EPI_N", width, NULL };

		gen_fill(g, mlircpu_tpl_fuse_parallel_mlir, kv);
	}
	free(types);
}

/*
 * The fused epilogue (g->fused) of an op one thread runs whole (sizes s):
 * along the op's outermost cache loop (the batch, else N when its cache
 * tile divides it into several), the last consumer tiled, the other
 * consumers and the op fused into that loop, the consumers tiled into rows
 * of vectors; then the op's cache tiles inside it as gen_cache_split makes
 * them for one step's sizes. Else (no such loop) the op's schedule alone:
 * the consumers run after it in its dispatch.
 */
static void
gen_fuse_serial(struct gen *g, const int64_t s[3])
{
	int64_t tn = g->c->v[KNOB_TILE_N], ps[3] = { s[0], s[1], s[2] };
	int64_t nb = g->op->batch > 0 ? g->op->batch : 1;
	char sfx[16], outer[48], tile[48], loops[8], width[24], what[64];
	char tf[32], *types;
	int nl = g->batch ? 3 : 2;

	if (g->batch ? nb < 2 : (tn >= s[1] || s[1] % tn != 0)) {
		gen_cache_split(g, g->root, s, 0);
		return;
	}
	if (g->batch) {
		snprintf(outer, sizeof outer, "1, 0, 0");
		snprintf(what, sizeof what, "one matrix of the batch a step");
	} else {
		ps[1] = tn;
		snprintf(outer, sizeof outer, "0, %lld", (long long)tn);
		snprintf(what, sizeof what, "N by its cache tile, %lld",
		    (long long)tn);
	}
	gen_suffix(g, sfx, sizeof sfx);
	snprintf(width, sizeof width, "%lld", (long long)epi_width(ps[1]));
	snprintf(tile, sizeof tile, "%s1, %s", g->batch ? "1, " : "", width);
	snprintf(loops, sizeof loops, "%d", nl);
	types = any_ops(nl);
	{
		const char *const kv[] = { "S", sfx, "OUTER_TILE", outer,
		    "WHAT", what, "EPI_TILE", tile, "EPI_LOOPS", loops,
		    "EPI_TYPES", types, "EPI_N", width, NULL };

		gen_fill(g, mlircpu_tpl_fuse_serial_mlir, kv);
	}
	free(types);
	g->mm_kept = 1;
	snprintf(tf, sizeof tf, "%%tf%s", sfx);
	gen_cache_split(g, tf, ps, 0);
}

/*
 * Threads: one chunk per thread of the batch, else of M, else of N (N
 * first for the dot kernels: each thread then packs only its own columns
 * of B), whichever splits into whole cache tiles evenly. Else the dimension
 * whose chunks of whole register tiles (batch: whole matrices) leave the
 * least for one thread to do after the others. The dimension (-1: the
 * batch), its chunk and what the chunks cover (*main); -2: too small to
 * share.
 */
static int
par_choose(const struct gen *g, const int64_t s[3], int64_t *chunk,
    int64_t *main)
{
	const struct op_desc *op = g->op;
	const struct config *c = g->c;
	int64_t th = c->v[KNOB_THREADS], nb = op->batch > 0 ? op->batch : 1;
	int64_t d_size, gran, best_size = 1;
	int best = -2, d, order[3] = { -1, 0, 1 }, i, evenly;

	*chunk = *main = 0;
	if (g->kernel != KERNEL_FMA) {
		order[1] = 1;
		order[2] = 0;
	}
	/* Whole cache tiles, evenly (every schedule before remainders). */
	for (i = 0; i < 3 && best == -2; i++) {
		d = order[i];
		if (d < 0 ? (g->batch && nb % th == 0) :
		    (s[d] % c->v[KNOB_TILE_M + d] == 0 &&
		    (s[d] / c->v[KNOB_TILE_M + d]) % th == 0)) {
			best = d;
			*chunk = (d < 0 ? nb : s[d]) / th;
			*main = d < 0 ? nb : s[d];
		}
	}
	evenly = best != -2;
	/* Else whole register tiles, and the rest after the forall. */
	for (i = 0; !evenly && i < 3; i++) {
		d = order[i];
		if (d < 0 && !g->batch)
			continue;
		d_size = d < 0 ? nb : s[d];
		gran = d < 0 ? 1 : c->v[KNOB_VECTOR_M + d] < s[d] ?
		    c->v[KNOB_VECTOR_M + d] : s[d];
		if (d_size / (th * gran) == 0)
			continue;
		if (best == -2 || (d_size / (th * gran)) * th * gran *
		    best_size > *main * d_size) {
			best = d;
			*chunk = d_size / (th * gran) * gran;
			*main = *chunk * th;
			best_size = d_size;
		}
	}
	return best;
}

/*
 * The op split over the threads where par_choose says: the chunks in a
 * forall, each cache-split (with the op's zero fill where the forall holds
 * the whole op); what they leave after it, on one thread.
 */
static void
gen_par(struct gen *g, const int64_t s[3])
{
	int64_t nb = g->op->batch > 0 ? g->op->batch : 1;
	int64_t chunk = 0, best_main = 0, ps[3] = { s[0], s[1], s[2] };
	char par[64], sfx[16], tf[32], a[32], b[32];
	const char *in = g->root;
	int best = -2;

	if (g->c->v[KNOB_THREADS] > 1)
		best = par_choose(g, s, &chunk, &best_main);
	if (best == -2) {
		/* One thread, or too small to share: one thread does it all. */
		if (g->fused)
			gen_fuse_serial(g, s);
		else
			gen_cache_split(g, g->root, s, 0);
		return;
	}
	if (best_main < (best < 0 ? nb : s[best])) {
		gen_split(g, g->root, best, best < 0 ? nb : s[best], best_main,
		    "threads' chunks", a, b, sizeof a);
		in = a;
	}
	if (best < 0)
		snprintf(par, sizeof par, "%lld, 0, 0", (long long)chunk);
	else if (best == 0)
		snprintf(par, sizeof par, "%s%lld, 0", g->batch ? "1, " : "",
		    (long long)chunk);
	else
		snprintf(par, sizeof par, "%s0, %lld", g->batch ? "1, " : "",
		    (long long)chunk);
	gen_suffix(g, sfx, sizeof sfx);
	if (g->fused && in == g->root)
		gen_fuse_par(g, sfx, par, best >= 0 && best == 1 ? chunk :
		    s[1]);
	else {
		const char *const kv[] = { "IN", in, "S", sfx, "PAR_TILE", par,
		    NULL };

		gen_fill(g, mlircpu_tpl_tile_parallel_mlir, kv);
	}
	/* The whole op in the forall: its zero fill (a build's) joins it. */
	if (in == g->root) {
		const char *const kv[] = { "S", sfx, NULL };

		gen_fill(g, mlircpu_tpl_fill_parallel_mlir, kv);
	}
	snprintf(tf, sizeof tf, "%%tf%s", sfx);
	if (best >= 0)
		ps[best] = chunk;
	gen_cache_split(g, tf, ps, 0);
	if (in == a) {
		int64_t rs[3] = { s[0], s[1], s[2] };

		if (best >= 0)
			rs[best] = s[best] - best_main;
		gen_cache_split(g, b, rs, 0);
	}
}
/* Write the parts of op at config c into g->f (NULL: count them). */
static void
gen_parts(struct gen *g)
{
	const int64_t s[3] = { g->op->m, g->op->n, g->op->k };

	g->nparts = 0;
	g->nsplits = 0;
	g->init_kept = 0;
	g->peels = 0;
	g->root = "%mm";
	gen_par(g, s);
	/*
	 * For autosched-fold-init (a build's): a part reads what another
	 * leaves of the zero fill, which must then stay; a peeled M tile's
	 * reads the pass must find, so many.
	 */
	if (g->init_kept && g->f != NULL)
		fputs("    transform.annotate %f0 \"autosched.inits_kept\" : "
		    "!transform.any_op\n", g->f);
	else if (g->peels > 0 && g->f != NULL)
		fprintf(g->f, "    %%peels = transform.param.constant %d : i64 -> "
		    "!transform.param<i64>\n    transform.annotate %%f0 "
		    "\"autosched.inits_peeled\" = %%peels : !transform.any_op, "
		    "!transform.param<i64>\n", g->peels);
}

/*
 * Do the parts of config c of op all fit dot kernel k with a K group of
 * group: every leaf whole 16-lane panels (N and its register tile), K a
 * multiple of group, M a multiple of its register tile (none peeled)?
 */
static int
parts_fit(const struct op_desc *op, const struct config *c,
    enum mlircpu_kernel k, int group)
{
	struct gen g;

	memset(&g, 0, sizeof g);
	g.op = op;
	g.c = c;
	g.batch = op->batch > 1 || analysis_kind_batch(op->kind);
	g.kernel = k;
	g.group = group;
	g.fit = 1;
	gen_parts(&g);
	return g.fit;
}

/*
 * Which kernel does config c of op use (README "Micro-kernels")? The dot
 * kernels pack B into [n/16][k/2][16][2] panels (A's pairs of K are already
 * adjacent in its rows) and give each row of the register tile and each
 * 16-lane panel its own contraction over one pair of K per step:
 *   bf16 x bf16 -> f32 on AVX512-BF16: x86vector.avx512.dot (vdpbf16ps);
 *   i8 x i8 -> i32 (signed or unsigned) on AVX-512: the products widened,
 *   their even and odd lanes added (vpmaddwd, fused with the add into
 *   vpdpwssd where AVX512-VNNI is present: 32 multiply-adds an instruction
 *   against 16 for i32 lanes).
 *   s8 x s8, u8 x s8 or s8 x u8 -> i32 on AVX512-VNNI with a K tile of a
 *   multiple of 4: B packed [n/16][k/4][16][4] and each contraction over a
 *   quad of K made vpdpbusd (64 multiply-adds an instruction) by the
 *   autosched-vnni-dot pass of the MLIR plugin (plugin/vnni_dot.cpp; s8 x
 *   s8 with A shifted to u8 and 128 x B's column sums taken back).
 * They need what that layout needs (B packed, A not transposed) in every part
 * of the schedule (parts_fit): whole 16-lane panels, K a multiple of the
 * group, no peeled M tile; vector_k 1 selects them, a larger vector_k the
 * FMA kernel (a cfg listing both has the tuner compare them).
 */
enum mlircpu_kernel
mlircpu_kernel(const struct op_desc *op, const struct config *c)
{
	const struct mlircpu_isa *isa = mlircpu_isa();
	enum mlircpu_kernel k = KERNEL_FMA;

	if (isa->vec_bytes != 64 || op->transpose_a ||
	    c->v[KNOB_PACK_B] != 1 || c->v[KNOB_VECTOR_K] != 1 ||
	    c->v[KNOB_VECTOR_N] % DOT_LANES != 0 || c->v[KNOB_TILE_K] % 2 != 0)
		return KERNEL_FMA;
	if (isa->avx512_bf16 && op->lhs == ELEM_BF16 && op->rhs == ELEM_BF16 &&
	    op->acc == ELEM_F32)
		k = KERNEL_DOT_BF16;
	else if (isa->avx512bw && op->lhs == ELEM_I8 && op->rhs == ELEM_I8 &&
	    op->acc == ELEM_I32)
		k = isa->avx512_vnni && !(op->lhs_unsigned && op->rhs_unsigned) ?
		    KERNEL_DOT_VNNI : KERNEL_DOT_I8;
	if (k == KERNEL_DOT_VNNI && !parts_fit(op, c, k, 4))
		k = KERNEL_DOT_I8;
	if (k != KERNEL_FMA && !parts_fit(op, c, k, 2))
		k = KERNEL_FMA;
	return k;
}

char *
mlircpu_schedule_op(const struct op_desc *op, const struct config *cfg,
    const char *seq_name, int fused)
{
	struct config c;
	struct gen g;
	char name[160], version[16], *leaves = NULL, *unroll = NULL, *out;
	char *cast_away, *pre, *post;
	size_t nl = 0, nu = 0;
	/* Broadcasting reads + multi_reduction -> a vector.contract (with the
	 * inputs' extf folded in for the bf16 dot); the i8 dot keeps the
	 * multi_reduction, the VNNI dot the widening (the plugin's pass reads
	 * which operand is unsigned from it). */
	const char *contract_fma =
	    "\n      transform.apply_patterns.vector.reduction_to_contract";
	const char *contract_bf16 =
	    "\n      transform.apply_patterns.vector.reduction_to_contract"
	    "\n      transform.apply_patterns.vector.fold_arith_extension";

	mlircpu_complete(op, cfg, &c);
	memset(&g, 0, sizeof g);
	g.op = op;
	g.c = &c;
	g.batch = op->batch > 1 || analysis_kind_batch(op->kind);
	g.kernel = mlircpu_kernel(op, &c);
	g.group = g.kernel == KERNEL_DOT_VNNI ? 4 : 2;
	/* Count first: a schedule of one part keeps the plain names. */
	gen_parts(&g);
	g.single = g.nsplits == 0;
	g.fused = fused;
	g.f = open_memstream(&leaves, &nl);
	g.unroll = open_memstream(&unroll, &nu);
	if (g.f == NULL || g.unroll == NULL)
		abort();	/* as xmalloc: out of memory */
	if (fused)
		gen_fill(&g, mlircpu_tpl_fuse_in_place_mlir,
		    (const char *const[]){ NULL });
	gen_parts(&g);
	fclose(g.f);
	fclose(g.unroll);
	space_config_name(&c, ((KNOB_BIT(KNOB_THREADS) << 1) - 1) |
	    KNOB_BIT(KNOB_PACK_B) | KNOB_BIT(KNOB_PACK_A),
	    name, sizeof name);
	snprintf(version, sizeof version, "%d", MLIRCPU_SCHEDULE_VERSION);
	cast_away = mlircpu_fill(mlircpu_tpl_cast_away_mlir,
	    (const char *const[]){ NULL });
	if (g.kernel != KERNEL_FMA) {
		const char *const kp[] = { "CAST_AWAY", cast_away, NULL };

		pre = mlircpu_fill(g.kernel == KERNEL_DOT_BF16 ?
		    mlircpu_tpl_dot_bf16_mlir : g.kernel == KERNEL_DOT_I8 ?
		    mlircpu_tpl_dot_i8_mlir : mlircpu_tpl_dot_vnni_mlir, kp);
		post = mlircpu_fill(mlircpu_tpl_dot_post_hoist_mlir, kp);
	} else {
		pre = xstrdup(cast_away);
		post = xstrdup("");
	}
	{
		const char *const kv[] = {
			"NAME", seq_name, "VERSION", version,
			"MM_EFFECT", g.mm_kept ? "readonly" : "consumed",
			"CONFIG", name, "LEAVES", leaves,
			"UNROLL", unroll, "PRE_HOIST", pre, "POST_HOIST", post,
			"CONTRACT", g.kernel == KERNEL_DOT_BF16 ? contract_bf16 :
			g.kernel == KERNEL_DOT_I8 ? "" : contract_fma,
			NULL,
		};
		out = mlircpu_fill(mlircpu_tpl_schedule_op_mlir, kv);
	}
	free(leaves);
	free(unroll);
	free(pre);
	free(post);
	free(cast_away);
	return out;
}

char *
mlircpu_schedule_module(const char *seq_name,
    const enum mlircpu_kernel *kernels, size_t n)
{
	char version[16], *flatten, *out;
	const char *module;	/* the module's handle after the VNNI pass */
	int dot = 0, uses_vnni = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		dot |= kernels[i] != KERNEL_FMA;
		uses_vnni |= kernels[i] == KERNEL_DOT_VNNI;
	}
	module = uses_vnni ? "%bv" : "%b";
	snprintf(version, sizeof version, "%d", MLIRCPU_SCHEDULE_VERSION);
	{
		const char *const kv[] = { "MODULE", module, NULL };

		flatten = dot ? mlircpu_fill(mlircpu_tpl_dot_flatten_mlir, kv) :
		    xstrdup("");
	}
	{
		const char *const kv[] = { "NAME", seq_name,
		    "VERSION", version, "DOT_VNNI", uses_vnni ?
		    mlircpu_tpl_dot_vnni_module_mlir : "",
		    "DOT_FLATTEN", flatten, "MODULE", module, NULL };

		out = mlircpu_fill(mlircpu_tpl_schedule_module_mlir, kv);
	}
	free(flatten);
	return out;
}

char *
mlircpu_schedule(const struct op_desc *op, const struct config *cfg,
    enum mlircpu_fault fault)
{
	struct config c;
	char name[160], version[16], *op_part, *mod_part, *out;
	enum mlircpu_kernel kernel;

	mlircpu_complete(op, cfg, &c);
	space_config_name(&c, ((KNOB_BIT(KNOB_THREADS) << 1) - 1) |
	    KNOB_BIT(KNOB_PACK_B) | KNOB_BIT(KNOB_PACK_A),
	    name, sizeof name);
	snprintf(version, sizeof version, "%d", MLIRCPU_SCHEDULE_VERSION);
	op_part = mlircpu_schedule_op(op, &c, "autosched_op", 0);
	kernel = mlircpu_kernel(op, &c);
	mod_part = mlircpu_schedule_module("autosched_module", &kernel, 1);
	{
		int q = analysis_kind_quantized(op->kind);
		const char *const kv[] = {
			"VERSION", version, "CONFIG", name,
			"OP_PART", op_part, "MODULE_PART", mod_part,
			"OP_NAME", "autosched_op",
			"MODULE_NAME", "autosched_module",
			"MATCH", q ? "attributes{autosched.core}" :
			"interface{LinalgOp}", NULL,
		};
		out = mlircpu_fill(mlircpu_tpl_schedule_mlir, kv);
	}
	if (fault == FAULT_COMPILE_FAIL) {
		/* Test-only: a schedule the MLIR parser rejects. */
		char *bad = xasprintf("%s\nthis is not MLIR (AUTOSCHED_TEST_FAULT)\n",
		    out);

		free(out);
		out = bad;
	}
	free(op_part);
	free(mod_part);
	return out;
}

char *
mlircpu_pipeline(const char *schedule_path, int quantized)
{
	const char *const kv[] = { "SCHEDULE", schedule_path,
	    "PRE", quantized ? MLIRCPU_QUANTIZED_PASS "," : "", NULL };
	char *filled, *out, *line, *save;
	size_t len = 0;

	filled = mlircpu_fill(mlircpu_tpl_lower_pipeline, kv);
	out = xcalloc(strlen(filled) + 1, 1);
	/* Join the lines, dropping comments and blanks. */
	for (line = strtok_r(filled, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		while (*line == ' ' || *line == '\t')
			line++;
		if (*line == '#' || *line == '\0')
			continue;
		memcpy(out + len, line, strlen(line));
		len += strlen(line);
	}
	out[len] = '\0';
	free(filled);
	return out;
}
