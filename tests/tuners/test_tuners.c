/*
 * Unit tests of the tuner registry, the grid and random tuners, and the
 * shared pieces (PRNG, set, lazy permutation, parameter parsing).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "search/space.h"
#include "tests/check.h"
#include "tuners/tuner.h"
#include "tuners/tuner_int.h"

static struct space *
make_space(uint64_t *count)
{
	static int64_t tm[] = { 16, 32, 64, 128 }, tn[] = { 16, 32, 64 };
	static int64_t tk[] = { 8, 16, 32, 64, 128 };
	static struct knob_values lists[] = {
		{ KNOB_TILE_M, tm, 4 }, { KNOB_TILE_N, tn, 3 }, { KNOB_TILE_K, tk, 5 },
	};
	struct space_rules rules = { 0 };
	struct op_desc op = { 0 };
	struct space *s = NULL;
	char *err = NULL;

	op.m = op.n = op.k = 128;
	op.batch = 1;
	rules.knobs = 0x7f;
	rules.defaults.v[KNOB_VECTOR_M] = 1;
	rules.defaults.v[KNOB_VECTOR_N] = 8;
	rules.defaults.v[KNOB_VECTOR_K] = 1;
	rules.defaults.v[KNOB_THREADS] = 1;
	if (space_new(&op, lists, 3, &rules, &s, &err) != 0)
		abort();
	*count = space_count(s);
	return s;
}

static void
test_registry(void)
{
	CHECK(tuner_find("grid") == tuner_find("GridTuner"));
	CHECK(tuner_find("gridtuner") != NULL);
	CHECK(tuner_find("RandomTuner") != NULL);
	CHECK(tuner_find("nope") == NULL);
}

static void
test_grid(void)
{
	uint64_t n, idx[100], seen[64] = { 0 };
	struct space *s = make_space(&n);
	struct tuner_params p = { 0 };
	struct tuner t;
	char *err = NULL;
	size_t got, i;

	CHECK(n == 60);
	p.n_trial = 16;
	CHECK(tuner_create(tuner_find("grid"), &p, NULL, s, &t, &err) == 0);
	got = tuner_propose(&t, idx, 4);
	/* stride 60/16 = 3 */
	CHECK(got == 4 && idx[0] == 0 && idx[1] == 3 && idx[3] == 9);
	got = tuner_propose(&t, idx, 100);
	CHECK(got == 56);
	CHECK(tuner_propose(&t, idx, 10) == 0);
	tuner_destroy(&t);
	/* A full walk visits every index once. */
	CHECK(tuner_create(tuner_find("grid"), &p, NULL, s, &t, &err) == 0);
	for (i = 0; (got = tuner_propose(&t, idx, 7)) > 0; ) {
		size_t j;

		for (j = 0; j < got; j++, i++)
			seen[idx[j]]++;
	}
	CHECK(i == 60);
	for (i = 0; i < 60; i++)
		CHECK(seen[i] == 1);
	tuner_destroy(&t);
	space_free(s);
}

static void
test_random(void)
{
	uint64_t n, a[60], b[60];
	struct space *s = make_space(&n);
	struct tuner_params p = { 0 };
	struct tuner t;
	char seen[60] = { 0 }, *err = NULL;
	size_t i;
	int dup = 0;

	p.seed = 7;
	p.n_trial = 10;
	CHECK(tuner_create(tuner_find("random"), &p, NULL, s, &t, &err) == 0);
	CHECK(tuner_propose(&t, a, 60) == 60);
	CHECK(tuner_propose(&t, a + 59, 1) == 0);
	tuner_destroy(&t);
	for (i = 0; i < 60; i++) {
		if (a[i] >= 60 || seen[a[i]]++)
			dup = 1;
	}
	CHECK(!dup);
	CHECK(tuner_create(tuner_find("random"), &p, NULL, s, &t, &err) == 0);
	CHECK(tuner_propose(&t, b, 60) == 60);
	tuner_destroy(&t);
	CHECK(memcmp(a, b, sizeof a) == 0);	/* same seed, same order */
	p.seed = 8;
	CHECK(tuner_create(tuner_find("random"), &p, NULL, s, &t, &err) == 0);
	CHECK(tuner_propose(&t, b, 60) == 60);
	tuner_destroy(&t);
	CHECK(memcmp(a, b, sizeof a) != 0);
	space_free(s);
}

static void
test_shared(void)
{
	struct tuner_set set;
	struct tuner_rng r;
	struct tuner_params p = { 0 };
	const char *keys[] = { "epsilon", "sa_steps" };
	const char *vals[] = { "0.5", "x" };
	int lines[] = { 12, 13 };
	double d = 0;
	int64_t v = 0;
	char *err = NULL;
	uint64_t i, hits = 0;

	tuner_set_init(&set);
	for (i = 0; i < 1000; i++)
		CHECK(tuner_set_add(&set, i * 7919) == 1);
	CHECK(tuner_set_add(&set, 7919) == 0);
	CHECK(tuner_set_has(&set, 0) && !tuner_set_has(&set, 1));
	tuner_set_free(&set);

	tuner_rng_seed(&r, 1);
	for (i = 0; i < 10000; i++)
		hits += tuner_rng_below(&r, 10) == 3;
	CHECK(hits > 800 && hits < 1200);

	p.extra_keys = keys;
	p.extra_values = vals;
	p.extra_lines = lines;
	p.nextra = 2;
	p.cfg_path = "a.cfg";
	CHECK(tuner_param_double(&p, "epsilon", 0, 1, &d, &err) == 0 && d == 0.5);
	CHECK(tuner_param_int(&p, "sa_steps", 1, 10, &v, &err) == -1);
	CHECK(err != NULL && strstr(err, "a.cfg:13: [SearchStrategy] sa_steps") != NULL);
	free(err);
}

int
main(void)
{
	test_registry();
	test_grid();
	test_random();
	test_shared();
	return check_done();
}
