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

void
mlircpu_complete(const struct op_desc *op, const struct config *cfg,
    struct config *out)
{
	/*
	 * The default config follows the CPU (README "The default config"):
	 * a register tile two vectors wide and as many rows as the registers
	 * hold with room to spare (6 of 16, 8 of 32), a cache tile 64 x 256 x
	 * 256 (the K tile of a B panel two vectors wide: 32 KiB in f32 on
	 * AVX-512, 16 KiB on AVX2, inside L1).
	 */
	int64_t defaults[KNOB_COUNT] = {
		[KNOB_TILE_M] = 64, [KNOB_TILE_N] = 256, [KNOB_TILE_K] = 256,
		[KNOB_VECTOR_M] = mlircpu_isa()->vec_regs >= 32 ? 8 : 6,
		[KNOB_VECTOR_N] = 2 * mlircpu_lanes(op), [KNOB_VECTOR_K] = 1,
		[KNOB_THREADS] = 1, [KNOB_PACK_B] = 1,
	};
	const int64_t dim[3] = { op->m, op->n, op->k };
	int i;

	memset(out, 0, sizeof *out);
	for (i = KNOB_TILE_M; i <= KNOB_THREADS; i++)
		out->v[i] = cfg != NULL && cfg->v[i] > 0 ? cfg->v[i] : defaults[i];
	/* 0 is a value of pack_b (B read in place), not "unset". */
	out->v[KNOB_PACK_B] = cfg != NULL ? (cfg->v[KNOB_PACK_B] != 0) :
	    defaults[KNOB_PACK_B];
	/*
	 * Clamp to the op: tiles to the dimension (the space keeps tiles that
	 * divide it), register tiles to the cache tile. Values the cfg gave are
	 * kept when they fit; defaults shrink to a divisor. The M register
	 * tile need not divide the M cache tile (the rest is peeled).
	 */
	for (i = 0; i < 3; i++) {
		int64_t *t = &out->v[KNOB_TILE_M + i];
		int64_t *v = &out->v[KNOB_VECTOR_M + i];

		if (*t > dim[i] || dim[i] % *t != 0)
			*t = divisor_below(dim[i], *t);
		if (*v > *t || (i > 0 && *t % *v != 0))
			*v = divisor_below(*t, *v);
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
 * The pack_transpose (or no-op) step that moves the outer dims of operand
 * opnd's packed layout to [batch][n][k] so that a register-tile panel is
 * contiguous along K. It is needed when K is stored before N (B not
 * transposed).
 */
static char *
pack_step(int opnd, int in, int swap, int batch, const char *sizes)
{
	char o[16], i[16], s[16];
	const char *const kv[] = {
		"OPND", o, "IN", i, "OUT", s, "PACK_SIZES", sizes,
		"PERM", batch ? "0, 2, 1" : "1, 0", NULL,
	};

	snprintf(o, sizeof o, "%d", opnd);
	snprintf(i, sizeof i, "%d", in);
	snprintf(s, sizeof s, "%d", in + 1);
	return mlircpu_fill(swap ? mlircpu_tpl_pack_transpose_mlir :
	    mlircpu_tpl_pack_keep_mlir, kv);
}

/*
 * The forall's tile sizes: one chunk per thread of the batch, else of M,
 * else of N, whichever splits into whole cache tiles evenly (a chunk of
 * another size would give the inner tiles dynamic shapes); else one forall
 * iteration per M x N cache tile. n_first: N before M (the dot kernels:
 * each thread then packs only its own columns of B, where chunks of M would
 * both pack all of it; the packing weighs more against their 2-4x faster
 * inner loops).
 */
static void
par_chunk(const struct op_desc *op, const struct config *c, int batch,
    int n_first, char *buf, size_t len)
{
	int64_t t = c->v[KNOB_THREADS], tm = c->v[KNOB_TILE_M],
	    tn = c->v[KNOB_TILE_N];
	int64_t nb = op->batch > 0 ? op->batch : 1;

	if (batch && nb % t == 0)
		snprintf(buf, len, "%lld, 0, 0", (long long)(nb / t));
	else if (n_first && (op->n / tn) % t == 0)
		snprintf(buf, len, "%s0, %lld", batch ? "1, " : "",
		    (long long)(op->n / t));
	else if ((op->m / tm) % t == 0)
		snprintf(buf, len, "%s%lld, 0", batch ? "1, " : "",
		    (long long)(op->m / t));
	else if ((op->n / tn) % t == 0)
		snprintf(buf, len, "%s0, %lld", batch ? "1, " : "",
		    (long long)(op->n / t));
	else
		snprintf(buf, len, "%s%lld, %lld", batch ? "1, " : "",
		    (long long)tm, (long long)tn);
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
 * They need what that layout needs (B packed, A not transposed, whole 16-lane
 * panels, an even K tile, no peeled M tile); vector_k 1 selects them, a larger
 * vector_k the FMA kernel (a cfg listing both has the tuner compare them).
 */
/* The dot kernels' panel width: one vector register of f32/i32 lanes. */
#define DOT_LANES	16

enum mlircpu_kernel
mlircpu_kernel(const struct op_desc *op, const struct config *c)
{
	const struct mlircpu_isa *isa = mlircpu_isa();

	if (isa->vec_bytes != 64 || op->transpose_a ||
	    c->v[KNOB_PACK_B] != 1 || c->v[KNOB_VECTOR_K] != 1 ||
	    c->v[KNOB_VECTOR_N] % DOT_LANES != 0 || c->v[KNOB_TILE_K] % 2 != 0 ||
	    c->v[KNOB_TILE_M] % c->v[KNOB_VECTOR_M] != 0)
		return KERNEL_FMA;
	if (isa->avx512_bf16 && op->lhs == ELEM_BF16 && op->rhs == ELEM_BF16 &&
	    op->acc == ELEM_F32)
		return KERNEL_DOT_BF16;
	if (isa->avx512bw && op->lhs == ELEM_I8 && op->rhs == ELEM_I8 &&
	    op->acc == ELEM_I32)
		return isa->avx512_vnni &&
		    !(op->lhs_unsigned && op->rhs_unsigned) &&
		    c->v[KNOB_TILE_K] % 4 == 0 ? KERNEL_DOT_VNNI : KERNEL_DOT_I8;
	return KERNEL_FMA;
}

char *
mlircpu_schedule_op(const struct op_desc *op, const struct config *cfg,
    const char *seq_name)
{
	struct config c;
	int batch = op->batch > 1 || strcmp(op->kind, "batch_matmul") == 0;
	const char *b0 = batch ? "0, " : "", *b1 = batch ? "1, " : "";
	char name[160], cache_tile[96], cache_order[32], par_tile[64];
	char k_tile[48], pack_sizes[64], reg_tile[64], reg_order[32];
	char cache_loops[16], reg_loops[16], m_loop[16], version[16];
	char *cache_types, *reg_types, *tiling, *pb, *peel, *out;
	char *micro, *unroll, *pre, *post, *cast_away;
	/* Broadcasting reads + multi_reduction -> a vector.contract (with the
	 * inputs' extf folded in for the bf16 dot); the i8 dot keeps the
	 * multi_reduction, the VNNI dot the widening (the plugin's pass reads
	 * which operand is unsigned from it). */
	const char *contract_fma =
	    "\n      transform.apply_patterns.vector.reduction_to_contract";
	const char *contract_bf16 =
	    "\n      transform.apply_patterns.vector.reduction_to_contract"
	    "\n      transform.apply_patterns.vector.fold_arith_extension";
	int ncache = batch ? 4 : 3, nreg = batch ? 4 : 3, dot, group;
	enum mlircpu_kernel kernel;

	mlircpu_complete(op, cfg, &c);
	kernel = mlircpu_kernel(op, &c);
	dot = kernel != KERNEL_FMA;
	group = kernel == KERNEL_DOT_VNNI ? 4 : 2;	/* K summed in a lane */
	space_config_name(&c, ((KNOB_BIT(KNOB_THREADS) << 1) - 1) |
	    KNOB_BIT(KNOB_PACK_B),
	    name, sizeof name);
	snprintf(version, sizeof version, "%d", MLIRCPU_SCHEDULE_VERSION);
	/* Cache tiles: loops n, k, m (a B panel is reused across the m tiles). */
	snprintf(cache_tile, sizeof cache_tile, "%s%lld, %lld, %lld", b1,
	    (long long)c.v[KNOB_TILE_M], (long long)c.v[KNOB_TILE_N],
	    (long long)c.v[KNOB_TILE_K]);
	snprintf(cache_order, sizeof cache_order, "%s",
	    batch ? "0, 2, 3, 1" : "1, 2, 0");
	par_chunk(op, &c, batch, dot, par_tile, sizeof par_tile);
	snprintf(k_tile, sizeof k_tile, "%s0, 0, %lld", b0,
	    (long long)c.v[KNOB_TILE_K]);
	/*
	 * Pack N only, by the register tile: B's tile becomes panels, C's is
	 * only viewed as [m][n/vn][vn] (no copy) and A is read in place. With
	 * pack_b 0 nothing is packed: the register tile reads B's rows where
	 * they are.
	 */
	snprintf(pack_sizes, sizeof pack_sizes, "%s0, %lld, 0", b0,
	    (long long)c.v[KNOB_VECTOR_N]);
	/*
	 * The dot kernels pack N by 16 and K by 2 (the VNNI kernel by 4): A's
	 * tile is only viewed as [m][k/2][2], B's becomes [n/16][k/2][16][2]
	 * panels, C's [m][n/16][16].
	 */
	if (dot)
		snprintf(pack_sizes, sizeof pack_sizes, "%s0, %d, %d", b0,
		    DOT_LANES, group);
	/* Register tiles: loops n, m, then k innermost, vector_k per step. */
	if (dot)
		snprintf(reg_tile, sizeof reg_tile, "%s%lld, %lld, 1", b1,
		    (long long)c.v[KNOB_VECTOR_M],
		    (long long)(c.v[KNOB_VECTOR_N] / DOT_LANES));
	else if (c.v[KNOB_PACK_B])
		snprintf(reg_tile, sizeof reg_tile, "%s%lld, 1, %lld", b1,
		    (long long)c.v[KNOB_VECTOR_M], (long long)c.v[KNOB_VECTOR_K]);
	else
		snprintf(reg_tile, sizeof reg_tile, "%s%lld, %lld, %lld", b1,
		    (long long)c.v[KNOB_VECTOR_M], (long long)c.v[KNOB_VECTOR_N],
		    (long long)c.v[KNOB_VECTOR_K]);
	snprintf(reg_order, sizeof reg_order, "%s",
	    batch ? "0, 2, 1, 3" : "1, 0, 2");
	snprintf(cache_loops, sizeof cache_loops, "%d", ncache);
	snprintf(reg_loops, sizeof reg_loops, "%d", nreg);
	snprintf(m_loop, sizeof m_loop, "%d", nreg - 2);
	cache_types = any_ops(ncache);
	reg_types = any_ops(nreg);
	{
		const char *const kv[] = {
			"CACHE_TILE", cache_tile, "CACHE_ORDER", cache_order,
			"CACHE_LOOPS", cache_loops, "CACHE_TYPES", cache_types,
			"PAR_TILE", par_tile, "K_TILE", k_tile, NULL,
		};
		tiling = mlircpu_fill(c.v[KNOB_THREADS] > 1 ?
		    mlircpu_tpl_tile_parallel_mlir :
		    mlircpu_tpl_tile_serial_mlir, kv);
	}
	if (c.v[KNOB_PACK_B])
		pb = pack_step(1, 0, !op->transpose_b, batch, pack_sizes);
	else
		pb = mlircpu_fill(mlircpu_tpl_pack_none_mlir, (const char *const[]){
		    NULL });
	cast_away = mlircpu_fill(mlircpu_tpl_cast_away_mlir,
	    (const char *const[]){ NULL });
	if (dot) {
		char um[24], un[24], sizes[32], lanes[8], grp[8];
		const char *const kt[] = { "MICRO_TILE_SIZES", sizes,
		    "LANES", lanes, "GROUP", grp, NULL };
		const char *const ku[] = { "UNROLL_M", um, "UNROLL_N", un, NULL };
		const char *const kp[] = { "CAST_AWAY", cast_away, NULL };

		snprintf(sizes, sizeof sizes, "%s1, 1", b0);
		snprintf(lanes, sizeof lanes, "%d", DOT_LANES);
		snprintf(grp, sizeof grp, "%d", group);
		snprintf(um, sizeof um, "%lld", (long long)c.v[KNOB_VECTOR_M]);
		snprintf(un, sizeof un, "%lld",
		    (long long)(c.v[KNOB_VECTOR_N] / DOT_LANES));
		micro = mlircpu_fill(mlircpu_tpl_dot_tile_mlir, kt);
		unroll = mlircpu_fill(mlircpu_tpl_dot_unroll_mlir, ku);
		pre = mlircpu_fill(kernel == KERNEL_DOT_BF16 ?
		    mlircpu_tpl_dot_bf16_mlir : kernel == KERNEL_DOT_I8 ?
		    mlircpu_tpl_dot_i8_mlir : mlircpu_tpl_dot_vnni_mlir, kp);
		post = mlircpu_fill(mlircpu_tpl_dot_post_hoist_mlir, kp);
	} else {
		micro = xstrdup("");
		unroll = xstrdup("");
		pre = xstrdup(cast_away);
		post = xstrdup("");
	}
	if (c.v[KNOB_TILE_M] % c.v[KNOB_VECTOR_M] != 0) {
		const char *const kv[] = { "M_LOOP", m_loop, NULL };

		peel = mlircpu_fill(mlircpu_tpl_peel_m_mlir, kv);
	} else
		peel = xstrdup("");
	{
		const char *const kv[] = {
			"NAME", seq_name, "VERSION", version,
			"CONFIG", name, "CACHE_TILING", tiling,
			"PACK_B", pb,
			"REG_TILE", reg_tile, "REG_ORDER", reg_order,
			"REG_LOOPS", reg_loops, "REG_TYPES", reg_types,
			"MICRO_TILE", micro, "TILE", dot ? "t3" : "t2",
			"UNROLL", unroll, "PRE_HOIST", pre, "POST_HOIST", post,
			"CONTRACT", kernel == KERNEL_DOT_BF16 ? contract_bf16 :
			kernel == KERNEL_DOT_I8 ? "" : contract_fma,
			"PEEL_M", peel, NULL,
		};
		out = mlircpu_fill(mlircpu_tpl_schedule_op_mlir, kv);
	}
	free(cache_types);
	free(reg_types);
	free(tiling);
	free(pb);
	free(peel);
	free(micro);
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
	    KNOB_BIT(KNOB_PACK_B),
	    name, sizeof name);
	snprintf(version, sizeof version, "%d", MLIRCPU_SCHEDULE_VERSION);
	op_part = mlircpu_schedule_op(op, &c, "autosched_op");
	kernel = mlircpu_kernel(op, &c);
	mod_part = mlircpu_schedule_module("autosched_module", &kernel, 1);
	{
		const char *const kv[] = {
			"VERSION", version, "CONFIG", name,
			"OP_PART", op_part, "MODULE_PART", mod_part,
			"OP_NAME", "autosched_op",
			"MODULE_NAME", "autosched_module", NULL,
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
mlircpu_pipeline(const char *schedule_path)
{
	const char *const kv[] = { "SCHEDULE", schedule_path, NULL };
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
