/*
 * Unit tests of the search space: exact counts against brute-force
 * enumeration, index <-> config round trips, names, huge spaces.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "search/space.h"
#include "tests/check.h"

static int
vec_budget(const struct op_desc *op, int64_t vm, int64_t vn, int64_t vk)
{
	(void)op;
	return vm * vn <= 64 && vk == 1;
}

/*
 * The constraints, written naively, for the brute force. A ragged register
 * tile need only fit in the cache tile; a ragged cache tile (ragged & 2)
 * need not divide the dimension.
 */
static int
naive_dim_ok(int64_t D, const int64_t *tiles, size_t nt, int64_t t, int64_t v,
    int ragged)
{
	int64_t eff = t < D ? t : D, smallest_ge = -1;
	size_t i;

	if (!(ragged & 2) && D % eff != 0)
		return 0;
	if ((ragged & 1) ? v > eff : eff % v != 0)
		return 0;
	for (i = 0; i < nt; i++) {
		if (tiles[i] >= D && (smallest_ge < 0 || tiles[i] < smallest_ge))
			smallest_ge = tiles[i];
	}
	if (t > D && t != smallest_ge)
		return 0;
	return 1;
}

/* naive_dim_ok's ragged of dim d (0 M, 1 N, 2 K) from a rules mask. */
static int
dim_ragged(uint32_t ragged, int d)
{
	return ((ragged & KNOB_BIT(KNOB_VECTOR_M + d)) != 0) |
	    ((ragged & KNOB_BIT(KNOB_TILE_M + d)) != 0) << 1;
}

/*
 * ragged: the rules' KNOB_BIT(KNOB_VECTOR_*, KNOB_TILE_*) mask. defaults: every list but
 * tile_m's comes from the backend's default candidates, not the cfg (same
 * space expected).
 */
static void
test_bruteforce(int64_t M, int64_t N, int64_t K, uint32_t ragged, int defaults)
{
	int64_t tm[] = { 8, 16, 24, 32, 64, 128, 256 }, tn[] = { 16, 32, 48, 64, 512 };
	int64_t tk[] = { 1, 8, 32, 100, 200 }, vm[] = { 1, 2, 4, 6, 8 };
	int64_t vn[] = { 8, 16, 32 }, vk[] = { 1, 2 }, th[] = { 1, 2 };
	struct knob_values lists[] = {
		{ KNOB_TILE_M, tm, 7 }, { KNOB_TILE_N, tn, 5 }, { KNOB_TILE_K, tk, 5 },
		{ KNOB_VECTOR_M, vm, 5 }, { KNOB_VECTOR_N, vn, 3 },
		{ KNOB_VECTOR_K, vk, 2 }, { KNOB_THREADS, th, 2 },
	};
	struct space_rules rules = { 0 };
	struct op_desc op = { 0 };
	struct space *s = NULL;
	char *err = NULL;
	uint64_t brute = 0, i, n;
	size_t a, b, c, d, e, f, g;
	char *seen;
	int ok = 1;

	op.m = M; op.n = N; op.k = K; op.batch = 1;
	rules.knobs = 0x7f;
	rules.vector_ok = vec_budget;
	rules.ragged = ragged;
	if (defaults) {
		for (i = 1; i < 7; i++) {
			rules.ncand[lists[i].knob] = lists[i].n;
			memcpy(rules.cand[lists[i].knob], lists[i].values,
			    lists[i].n * sizeof lists[i].values[0]);
		}
	}
	CHECK(space_new(&op, lists, defaults ? 1 : 7, &rules, &s, &err) == 0);
	if (s == NULL)
		return;
	for (a = 0; a < 7; a++) for (b = 0; b < 5; b++) for (c = 0; c < 5; c++)
	for (d = 0; d < 5; d++) for (e = 0; e < 3; e++) for (f = 0; f < 2; f++)
	for (g = 0; g < 2; g++) {
		if (naive_dim_ok(M, tm, 7, tm[a], vm[d],
		    dim_ragged(ragged, 0)) &&
		    naive_dim_ok(N, tn, 5, tn[b], vn[e],
		    dim_ragged(ragged, 1)) &&
		    naive_dim_ok(K, tk, 5, tk[c], vk[f],
		    dim_ragged(ragged, 2)) &&
		    vec_budget(&op, vm[d], vn[e], vk[f]))
			brute++;
	}
	n = space_count(s);
	CHECK(n == brute);
	/* Every index gives a distinct valid config that maps back to it. */
	seen = calloc(n ? n : 1, 1);
	for (i = 0; i < n; i++) {
		struct config cf;
		int64_t back;

		space_get(s, i, &cf);
		back = space_index(s, &cf);
		if (back != (int64_t)i || seen[i])
			ok = 0;
		seen[i] = 1;
		if (!naive_dim_ok(M, tm, 7, cf.v[KNOB_TILE_M], cf.v[KNOB_VECTOR_M],
		    dim_ragged(ragged, 0)) ||
		    !naive_dim_ok(N, tn, 5, cf.v[KNOB_TILE_N], cf.v[KNOB_VECTOR_N],
		    dim_ragged(ragged, 1)) ||
		    !naive_dim_ok(K, tk, 5, cf.v[KNOB_TILE_K], cf.v[KNOB_VECTOR_K],
		    dim_ragged(ragged, 2)) ||
		    !vec_budget(&op, cf.v[KNOB_VECTOR_M], cf.v[KNOB_VECTOR_N],
		    cf.v[KNOB_VECTOR_K]))
			ok = 0;
		/* The check of stored configs takes every point of the space. */
		if (space_config_check(&op, &rules, &cf, NULL) != 0)
			ok = 0;
	}
	CHECK(ok);
	free(seen);
	/* An invalid config has no index. */
	{
		struct config bad = { { 24, 16, 8, 16, 8, 1, 1 } };

		CHECK(space_index(s, &bad) == -1);
	}
	space_free(s);
}

/* A knob the cfg gives one value stays pinned whatever the candidates. */
static void
test_pinned(void)
{
	int64_t one[] = { 64 };
	struct knob_values lists[] = { { KNOB_TILE_M, one, 1 } };
	struct space_rules rules = { 0 };
	struct op_desc op = { 0 };
	struct space *s = NULL;
	char *err = NULL;
	size_t n;

	op.m = op.n = op.k = 256;
	op.batch = 1;
	rules.knobs = KNOB_BIT(KNOB_TILE_M) | KNOB_BIT(KNOB_TILE_N);
	rules.defaults.v[KNOB_TILE_M] = 32;
	rules.defaults.v[KNOB_TILE_N] = 32;
	rules.ncand[KNOB_TILE_M] = 3;
	rules.cand[KNOB_TILE_M][0] = 16;
	rules.cand[KNOB_TILE_M][1] = 32;
	rules.cand[KNOB_TILE_M][2] = 128;
	rules.ncand[KNOB_TILE_N] = 2;
	rules.cand[KNOB_TILE_N][0] = 64;
	rules.cand[KNOB_TILE_N][1] = 256;
	CHECK(space_new(&op, lists, 1, &rules, &s, &err) == 0);
	if (s == NULL)
		return;
	CHECK(space_knob_size(s, KNOB_TILE_M) == 1);
	CHECK(space_knob_list(s, KNOB_TILE_M, &n)[0] == 64 && n == 1);
	CHECK(space_knob_size(s, KNOB_TILE_N) == 2);
	CHECK(space_count(s) == 2);
	space_free(s);
}

static void
test_huge(void)
{
	static int64_t t[1024], v[] = { 1, 2, 4, 8, 16 };
	struct knob_values lists[] = {
		{ KNOB_TILE_M, t, 1024 }, { KNOB_TILE_N, t, 1024 },
		{ KNOB_TILE_K, t, 1024 }, { KNOB_VECTOR_M, v, 5 },
	};
	struct space_rules rules = { 0 };
	struct op_desc op = { 0 };
	struct space *s = NULL;
	char *err = NULL;
	struct config c;
	size_t i;

	for (i = 0; i < 1024; i++)
		t[i] = (int64_t)i + 1;
	op.m = op.n = op.k = 1 << 20;
	op.batch = 1;
	rules.knobs = 0x7f;
	rules.defaults.v[KNOB_VECTOR_N] = 1;
	rules.defaults.v[KNOB_VECTOR_K] = 1;
	rules.defaults.v[KNOB_THREADS] = 1;
	CHECK(space_new(&op, lists, 4, &rules, &s, &err) == 0);
	/* Divisors of 2^20 up to 1024: 11 per dim; over 10^9 raw points. */
	CHECK(space_count(s) > 0);
	space_get(s, space_count(s) - 1, &c);
	CHECK(space_index(s, &c) == (int64_t)space_count(s) - 1);
	space_free(s);

	/* Over 2^40 raw points: refused. */
	{
		static int64_t big[4096];
		struct knob_values l2[] = {
			{ KNOB_TILE_M, big, 4096 }, { KNOB_TILE_N, big, 4096 },
			{ KNOB_TILE_K, big, 4096 }, { KNOB_THREADS, big, 4096 },
		};

		for (i = 0; i < 4096; i++)
			big[i] = (int64_t)i + 1;
		CHECK(space_new(&op, l2, 4, &rules, &s, &err) == -1);
		CHECK(err != NULL && strstr(err, "2^40") != NULL);
		free(err);
	}
}

static void
test_names(void)
{
	struct config c = { { 64, 64, 128, 8, 32, 1, 2, 64, 2, 1, 2, 1, 1 } };
	struct config back;
	char buf[128];

	space_config_name(&c, 0x7f, buf, sizeof buf);
	CHECK_STR(buf, "tile_64x64x128_vec_8x32x1_thr_2");
	CHECK(space_config_parse(buf, &back) == 0);
	CHECK(back.v[KNOB_TILE_K] == 128 && back.v[KNOB_THREADS] == 2 &&
	    back.v[KNOB_BLOCK_DIM_X] == 0);
	space_config_name(&c, 0x7ff, buf, sizeof buf);
	CHECK_STR(buf, "tile_64x64x128_vec_8x32x1_thr_2_blk_64x2x1_pipe_2");
	CHECK(space_config_parse(buf, &back) == 0);
	CHECK(memcmp(&back, &c, sizeof c) == 0);
	CHECK(space_config_parse("tile_1x2", &back) == -1);
	/* B read in place is named; B packed (the default) is not. */
	c.v[KNOB_PACK_B] = 0;
	space_config_name(&c, 0xfff, buf, sizeof buf);
	CHECK_STR(buf, "tile_64x64x128_vec_8x32x1_thr_2_nopack_blk_64x2x1_pipe_2");
	CHECK(space_config_parse(buf, &back) == 0);
	CHECK(memcmp(&back, &c, sizeof c) == 0);
	space_config_name(&c, 0x7f | KNOB_BIT(KNOB_PACK_B), buf, sizeof buf);
	CHECK_STR(buf, "tile_64x64x128_vec_8x32x1_thr_2_nopack");
	CHECK(space_config_parse(buf, &back) == 0 && back.v[KNOB_PACK_B] == 0);
	/* Unpadded shared-memory rows are named too, after B's packing. */
	c.v[KNOB_PACK_B] = 1;
	c.v[KNOB_PAD_SMEM] = 0;
	space_config_name(&c, 0x1f | KNOB_BIT(KNOB_PACK_B) |
	    KNOB_BIT(KNOB_PAD_SMEM), buf, sizeof buf);
	CHECK_STR(buf, "tile_64x64x128_vec_8x32x1_thr_2_nopad");
	CHECK(space_config_parse(buf, &back) == 0 &&
	    back.v[KNOB_PAD_SMEM] == 0 && back.v[KNOB_PACK_B] == 1);
	c.v[KNOB_PACK_B] = 0;
	space_config_name(&c, 0x1fff, buf, sizeof buf);
	CHECK_STR(buf, "tile_64x64x128_vec_8x32x1_thr_2_nopack_nopad_blk_64x2x1_"
	    "pipe_2");
	CHECK(space_config_parse(buf, &back) == 0);
	CHECK(memcmp(&back, &c, sizeof c) == 0);
	CHECK(space_config_parse("tile_1x1x1_vec_1x1x1_thr_1_nopad_nopack",
	    &back) == -1);
	CHECK(space_knob_lookup("pad_smem") == KNOB_PAD_SMEM);
	CHECK(space_knob_lookup("tile_n") == KNOB_TILE_N);
	CHECK(space_knob_lookup("tile_q") == -1);
	CHECK_STR(space_knob_nearest("tile_q"), "tile_m");
	CHECK_STR(space_knob_nearest("blockdimx"), "block_dim_x");
}

static void
test_gpu_blocks(void)
{
	int64_t x[] = { 64, 512 }, y[] = { 1, 2, 4 }, z[] = { 1 };
	struct knob_values lists[] = {
		{ KNOB_BLOCK_DIM_X, x, 2 }, { KNOB_BLOCK_DIM_Y, y, 3 },
		{ KNOB_BLOCK_DIM_Z, z, 1 },
	};
	struct space_rules rules = { 0 };
	struct op_desc op = { 0 };
	struct space *s = NULL;
	char *err = NULL;

	op.m = op.n = op.k = 64;
	rules.knobs = 0x7ff;
	CHECK(space_new(&op, lists, 3, &rules, &s, &err) == 0);
	/* 512x4 = 2048 > 1024 is out: 5 of 6 blocks remain. */
	CHECK(space_count(s) == 5);
	space_free(s);
}

/* The check of a config read back from a store: bounds, then the rules. */
static void
test_config_check(void)
{
	struct space_rules rules = { 0 };
	struct op_desc op = { 0 };
	struct config good = { { 64, 64, 64, 8, 16, 1, 4 } }, c;
	char *err = NULL;
	static const struct {
		enum knob	 k;
		int64_t		 v;
		const char	*want;
	} bad[] = {
		{ KNOB_TILE_M, 0, "tile_m 0: expected 1 to 2147483647" },
		{ KNOB_TILE_N, -16, "tile_n -16: expected 1 to 2147483647" },
		{ KNOB_TILE_K, 2147483648LL, "tile_k 2147483648: expected 1 to "
		    "2147483647" },
		{ KNOB_THREADS, 1000, "threads 1000: expected 1 to 512" },
		{ KNOB_PACK_B, 7, "pack_b 7: expected 0 or 1" },
		{ KNOB_TILE_M, 48, "tile_m 48: does not divide M = 256" },
		{ KNOB_VECTOR_N, 48, "vector_n 48: does not divide the N tile 64" },
		{ KNOB_VECTOR_M, 128, "vector_m 128: does not fit in the M tile 64" },
		{ KNOB_BLOCK_DIM_X, 4, "block_dim_x 4: the backend has no such "
		    "knob; expected 0" },
	};
	size_t i;

	op.m = 256; op.n = 128; op.k = 512; op.batch = 1;
	rules.knobs = (KNOB_BIT(KNOB_THREADS + 1) - 1) | KNOB_BIT(KNOB_PACK_B);
	rules.ragged = KNOB_BIT(KNOB_VECTOR_M);
	good.v[KNOB_PACK_B] = 1;
	CHECK(space_config_check(&op, &rules, &good, &err) == 0 && err == NULL);
	/* A tile at least the dimension is the whole of it. */
	c = good;
	c.v[KNOB_TILE_N] = 1024;
	CHECK(space_config_check(&op, &rules, &c, &err) == 0);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		c = good;
		c.v[bad[i].k] = bad[i].v;
		CHECK(space_config_check(&op, &rules, &c, &err) == -1);
		CHECK(err != NULL && strncmp(err, bad[i].want,
		    strlen(bad[i].want)) == 0);
		if (err != NULL && strncmp(err, bad[i].want,
		    strlen(bad[i].want)) != 0)
			fprintf(stderr, "  got \"%s\"\n", err);
	}
	/* Without the backend's rules: the bounds alone (0 may be a knob it lacks). */
	c = good;
	c.v[KNOB_BLOCK_DIM_X] = 0;
	c.v[KNOB_PIPELINE_DEPTH] = 3;
	CHECK(space_config_check(&op, NULL, &c, &err) == 0);
	c.v[KNOB_THREADS] = 1000;
	CHECK(space_config_check(&op, NULL, &c, &err) == -1);
	/* GPU blocks of more than 1024 threads. */
	memset(&c, 0, sizeof c);
	c.v[KNOB_BLOCK_DIM_X] = 64;
	c.v[KNOB_BLOCK_DIM_Y] = 32;
	c.v[KNOB_BLOCK_DIM_Z] = 1;
	CHECK(space_config_check(&op, NULL, &c, &err) == -1);
	CHECK(err != NULL && strstr(err, "2048: expected at most 1024") != NULL);
	/*
	 * A backend whose own default has no knobs (IREE chooses): that config
	 * is valid, only with every knob 0 but threads, and only when the
	 * rules say so.
	 */
	memset(&c, 0, sizeof c);
	c.v[KNOB_THREADS] = 2;
	rules.own_default = 1;
	CHECK(space_config_own_default(&rules, &c));
	CHECK(space_config_check(&op, &rules, &c, &err) == 0);
	c.v[KNOB_TILE_M] = 16;
	CHECK(!space_config_own_default(&rules, &c));
	CHECK(space_config_check(&op, &rules, &c, &err) == -1);
	c.v[KNOB_TILE_M] = 0;
	c.v[KNOB_THREADS] = 0;
	CHECK(space_config_check(&op, &rules, &c, &err) == -1);
	c.v[KNOB_THREADS] = 1;
	rules.own_default = 0;
	CHECK(space_config_check(&op, &rules, &c, &err) == -1);
	CHECK(!space_config_own_default(NULL, &c));
	free(err);
}

/*
 * pack_b x pad_smem: with both knobs, unpadded rows only of packed tiles
 * (unpacked, nothing is padded); a backend without pad_smem keeps it 0.
 */
static void
test_pack_pad(void)
{
	int64_t two[] = { 0, 1 };
	struct knob_values lists[] = {
		{ KNOB_PACK_B, two, 2 }, { KNOB_PAD_SMEM, two, 2 },
	};
	struct space_rules rules = { 0 };
	struct op_desc op = { 0 };
	struct space *s = NULL;
	struct config c;
	char *err = NULL;
	uint64_t i;
	int seen[2][2] = { { 0 } };

	op.m = op.n = op.k = 64;
	op.batch = 1;
	rules.knobs = KNOB_BIT(KNOB_PACK_B) | KNOB_BIT(KNOB_PAD_SMEM);
	CHECK(space_new(&op, lists, 2, &rules, &s, &err) == 0);
	CHECK(s != NULL && space_count(s) == 3);
	for (i = 0; s != NULL && i < space_count(s); i++) {
		space_get(s, i, &c);
		CHECK(space_index(s, &c) == (int64_t)i);
		seen[c.v[KNOB_PACK_B]][c.v[KNOB_PAD_SMEM]]++;
		CHECK(space_config_check(&op, &rules, &c, &err) == 0);
	}
	CHECK(seen[0][0] == 0 && seen[0][1] == 1 && seen[1][0] == 1 &&
	    seen[1][1] == 1);
	memset(&c, 0, sizeof c);
	CHECK(s != NULL && space_index(s, &c) == -1);
	CHECK(space_config_check(&op, &rules, &c, &err) == -1);
	CHECK(err != NULL && strstr(err, "pad_smem 0 with pack_b 0") != NULL);
	space_free(s);
	rules.knobs = KNOB_BIT(KNOB_PACK_B);
	CHECK(space_new(&op, lists, 2, &rules, &s, &err) == 0);
	CHECK(s != NULL && space_count(s) == 2 &&
	    space_knob_size(s, KNOB_PAD_SMEM) == 1);
	for (i = 0; s != NULL && i < space_count(s); i++) {
		space_get(s, i, &c);
		CHECK(c.v[KNOB_PAD_SMEM] == 0);
	}
	c.v[KNOB_PAD_SMEM] = 1;
	CHECK(space_config_check(&op, &rules, &c, &err) == -1);
	CHECK(err != NULL && strstr(err, "pad_smem 1: the backend has no such "
	    "knob; expected 0") != NULL);
	space_free(s);
	free(err);
}

/*
 * pack_a: "_packa" in a name only for 1 (A read in place keeps the names
 * of before), parsed back; both values in a space with the knob, indexed
 * both ways; 0 or 1 only; 0 where the backend lacks it.
 */
static void
test_pack_a(void)
{
	int64_t two[] = { 0, 1 };
	struct knob_values lists[] = { { KNOB_PACK_A, two, 2 } };
	struct space_rules rules = { 0 };
	struct op_desc op = { 0 };
	struct space *s = NULL;
	struct config c, back;
	char *err = NULL, buf[128];
	uint64_t i;
	int seen[2] = { 0 };
	/* mlir-cpu's knobs, and pad_smem: the suffixes' order. */
	uint32_t cpu = (KNOB_BIT(KNOB_THREADS) << 1) - 1;
	uint32_t all = cpu | KNOB_BIT(KNOB_PACK_B) | KNOB_BIT(KNOB_PAD_SMEM) |
	    KNOB_BIT(KNOB_PACK_A);

	memset(&c, 0, sizeof c);
	c.v[KNOB_TILE_M] = c.v[KNOB_TILE_N] = 64;
	c.v[KNOB_TILE_K] = 256;
	c.v[KNOB_VECTOR_M] = 6;
	c.v[KNOB_VECTOR_N] = 16;
	c.v[KNOB_VECTOR_K] = c.v[KNOB_THREADS] = c.v[KNOB_PACK_B] = 1;
	c.v[KNOB_PAD_SMEM] = 1;		/* what parse gives a name without _nopad */
	space_config_name(&c, all, buf, sizeof buf);
	CHECK_STR(buf, "tile_64x64x256_vec_6x16x1_thr_1");
	c.v[KNOB_PACK_A] = 1;
	space_config_name(&c, all, buf, sizeof buf);
	CHECK_STR(buf, "tile_64x64x256_vec_6x16x1_thr_1_packa");
	CHECK(space_config_parse(buf, &back) == 0);
	CHECK(memcmp(&back, &c, sizeof c) == 0);
	c.v[KNOB_PACK_B] = c.v[KNOB_PAD_SMEM] = 0;
	space_config_name(&c, all, buf, sizeof buf);
	CHECK_STR(buf, "tile_64x64x256_vec_6x16x1_thr_1_nopack_nopad_packa");
	CHECK(space_config_parse(buf, &back) == 0);
	CHECK(memcmp(&back, &c, sizeof c) == 0);
	space_config_name(&c, cpu | KNOB_BIT(KNOB_PACK_B), buf, sizeof buf);
	CHECK_STR(buf, "tile_64x64x256_vec_6x16x1_thr_1_nopack");
	CHECK(space_knob_lookup("pack_a") == KNOB_PACK_A);

	op.m = op.n = op.k = 64;
	op.batch = 1;
	rules.knobs = KNOB_BIT(KNOB_PACK_A);
	CHECK(space_new(&op, lists, 1, &rules, &s, &err) == 0);
	CHECK(s != NULL && space_count(s) == 2);
	for (i = 0; s != NULL && i < space_count(s); i++) {
		space_get(s, i, &c);
		CHECK(space_index(s, &c) == (int64_t)i);
		seen[c.v[KNOB_PACK_A]]++;
		CHECK(space_config_check(&op, &rules, &c, &err) == 0);
	}
	CHECK(seen[0] == 1 && seen[1] == 1);
	c.v[KNOB_PACK_A] = 2;
	CHECK(space_config_check(&op, &rules, &c, &err) == -1);
	CHECK(err != NULL && strstr(err, "pack_a 2: expected 0 or 1") != NULL);
	free(err);
	err = NULL;
	space_free(s);
	rules.knobs = KNOB_BIT(KNOB_PACK_B);
	CHECK(space_new(&op, lists, 1, &rules, &s, &err) == 0);
	CHECK(s != NULL && space_count(s) == 1 &&
	    space_knob_size(s, KNOB_PACK_A) == 1);
	c.v[KNOB_PACK_A] = 1;
	CHECK(space_config_check(&op, &rules, &c, &err) == -1);
	CHECK(err != NULL && strstr(err, "pack_a 1: the backend has no such "
	    "knob; expected 0") != NULL);
	space_free(s);
	free(err);
}

int
main(void)
{
	int d;

	for (d = 0; d <= 1; d++) {
		test_bruteforce(256, 512, 200, 0, d);
		test_bruteforce(100, 48, 64, 0, d);
		test_bruteforce(24, 16, 1, 0, d);
		/* The register tile may leave a rest of the cache tile (mlir-cpu's M). */
		test_bruteforce(256, 512, 200, KNOB_BIT(KNOB_VECTOR_M), d);
		test_bruteforce(100, 48, 64, KNOB_BIT(KNOB_VECTOR_M) |
		    KNOB_BIT(KNOB_VECTOR_N) | KNOB_BIT(KNOB_VECTOR_K), d);
		test_bruteforce(24, 16, 1, KNOB_BIT(KNOB_VECTOR_K), d);
		/* Cache tiles that need not divide (mlir-cpu splits the rest). */
		test_bruteforce(256, 512, 200, 0x3f, d);
		test_bruteforce(97, 41, 7, 0x3f, d);
		test_bruteforce(1, 2, 1, 0x3f, d);
		test_bruteforce(100, 48, 64, KNOB_BIT(KNOB_TILE_N) |
		    KNOB_BIT(KNOB_VECTOR_M), d);
	}
	test_pinned();
	test_huge();
	test_names();
	test_gpu_blocks();
	test_config_check();
	test_pack_pad();
	test_pack_a();
	return check_done();
}
