/*
 * Unit tests of the replay backend: a small sweep recorded with store_* calls
 * is answered trial by trial, with the simulated clock, the reference, the
 * recorded target, and an error result for a config the sweep lacks.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "backends/backend.h"
#include "store/store.h"
#include "util/util.h"
#include "tests/check.h"

static void
make_op(struct op_desc *op, int64_t m)
{
	memset(op, 0, sizeof *op);
	op->kind = "matmul";
	op->op_name = "linalg.matmul";
	op->name = m == 64 ? "matmul_64x64x64_f32t_f32t_f32t" :
	    "matmul_32x64x64_f32t_f32t_f32t";
	op->function = "";
	op->loc = "";
	op->batch = 1;
	op->m = m;
	op->n = 64;
	op->k = 64;
	op->lhs = op->rhs = op->acc = ELEM_F32;
	op->tunable = 1;
}

static void
make_config(struct config *c, int64_t tm, int64_t tn, int64_t thr)
{
	memset(c, 0, sizeof *c);
	c->v[KNOB_TILE_M] = tm;
	c->v[KNOB_TILE_N] = tn;
	c->v[KNOB_TILE_K] = 64;
	c->v[KNOB_VECTOR_M] = 4;
	c->v[KNOB_VECTOR_N] = 8;
	c->v[KNOB_VECTOR_K] = 1;
	c->v[KNOB_THREADS] = thr;
}

static int64_t
add(struct store *st, int64_t op_id, int64_t target_id, const char *phase,
    const struct config *c, enum trial_status status, double gflops)
{
	struct store_trial t;
	char *err = NULL;
	int64_t id;

	memset(&t, 0, sizeof t);
	t.op_id = op_id;
	t.target_id = target_id;
	t.phase = phase;
	t.config = *c;
	t.result.status = status;
	t.result.gflops = gflops;
	t.result.median_ms = gflops > 0 ? 2 * 64.0 * 64 * 64 / gflops / 1e6 : 0;
	t.result.compile_s = 0.5;
	t.result.measure_s = 0.25;
	t.result.reps = 10;
	t.result.error = status != TRIAL_OK ? "boom" : NULL;
	if ((id = store_trial_add(st, &t, &err)) < 0) {
		fprintf(stderr, "store_trial_add: %s\n", err);
		free(err);
	}
	return id;
}

/* Record: 64x64x64 over tile_m, tile_n in {16,32,64}, threads 1; one failure. */
static int
record(const char *path, const struct op_desc *op, const struct op_desc *other)
{
	static const int64_t t[] = { 16, 32, 64 };
	struct store *st = NULL;
	struct config c;
	char *err = NULL;
	int64_t op_id, other_id, tid, tid2;
	size_t i, j;

	if (store_open(path, &st, &err) != 0) {
		fprintf(stderr, "store_open: %s\n", err);
		free(err);
		return -1;
	}
	tid = store_target(st, "Test CPU", "avx2 fma", "llvm-test", "mlir-cpu",
	    &err);
	tid2 = store_target(st, "Other CPU", "", "llvm-test", "mlir-cpu", &err);
	op_id = store_op(st, op, &err);
	other_id = store_op(st, other, &err);
	if (tid < 0 || tid2 < 0 || op_id < 0 || other_id < 0) {
		fprintf(stderr, "store: %s\n", err);
		free(err);
		store_close(st);
		return -1;
	}
	for (i = 0; i < 3; i++) {
		for (j = 0; j < 3; j++) {
			make_config(&c, t[i], t[j], 1);
			if (t[i] == 64 && t[j] == 64)
				add(st, op_id, tid, "tune", &c,
				    TRIAL_COMPILE_FAILED, 0);
			else
				add(st, op_id, tid, "tune", &c, TRIAL_OK,
				    (double)(t[i] + t[j]));
			/* Other ops and targets must not leak in. */
			add(st, other_id, tid, "tune", &c, TRIAL_OK, 999);
		}
	}
	make_config(&c, 16, 16, 1);
	add(st, op_id, tid2, "tune", &c, TRIAL_OK, 555);
	/* A later tune of the same config wins; confirm never overrides tune. */
	make_config(&c, 32, 32, 1);
	add(st, op_id, tid, "tune", &c, TRIAL_OK, 70);
	add(st, op_id, tid, "confirm", &c, TRIAL_OK, 71);
	/* A config only a baseline measured. */
	make_config(&c, 16, 64, 2);
	add(st, op_id, tid, "baseline", &c, TRIAL_OK, 33);
	add(st, op_id, tid, "reference", &c, TRIAL_OK, 123);
	store_close(st);
	return 0;
}

int
main(void)
{
	const struct backend_ops *rb = backend_find("replay");
	struct backend_params p;
	struct op_desc op, other, missing;
	struct space_rules rules;
	struct trial_result res;
	struct backend *b = NULL;
	struct config c;
	char path[] = "/tmp/autosched-replay-XXXXXX", *db, *err = NULL;
	char *cpu = NULL, *flags = NULL, *tc = NULL;
	int fd;

	CHECK(rb != NULL);
	if (rb == NULL)
		return check_done();
	if ((fd = mkstemp(path)) < 0)
		return 1;
	close(fd);
	unlink(path);
	db = xasprintf("%s.db", path);
	make_op(&op, 64);
	make_op(&other, 32);
	if (record(db, &op, &other) != 0) {
		CHECK(0);
		return check_done();
	}
	memset(&p, 0, sizeof p);
	memset(&res, 0, sizeof res);

	/* No recording named: a clear error. */
	CHECK(rb->open(&p, &op, "", &b, &err) == -1);
	CHECK(err != NULL && strstr(err, "replay_db") != NULL);
	free(err);
	err = NULL;

	/* An op the recording lacks. */
	p.replay_db = db;
	make_op(&missing, 48);
	CHECK(rb->open(&p, &missing, "", &b, &err) == -1);
	CHECK(err != NULL && strstr(err, "no trials of") != NULL);
	free(err);
	err = NULL;

	CHECK(rb->open(&p, &op, "", &b, &err) == 0);
	if (b == NULL) {
		fprintf(stderr, "open: %s\n", err);
		free(err);
		return check_done();
	}
	CHECK(rb->clock(b) == 0);
	make_config(&c, 16, 32, 1);
	CHECK(rb->evaluate(b, &c, &res, &err) == 0);
	CHECK(res.status == TRIAL_OK && res.gflops == 48);
	CHECK(res.compile_s == 0.5 && res.measure_s == 0.25 && res.reps == 10);
	CHECK(fabs(rb->clock(b) - 0.75) < 1e-12);

	make_config(&c, 64, 64, 1);
	CHECK(rb->evaluate(b, &c, &res, &err) == 0);
	CHECK(res.status == TRIAL_COMPILE_FAILED && res.gflops == 0);
	CHECK_STR(res.error, "boom");

	make_config(&c, 32, 32, 1);
	CHECK(rb->evaluate(b, &c, &res, &err) == 0);
	CHECK(res.gflops == 70);

	/* The other target's 555 is not this sweep's. */
	make_config(&c, 16, 16, 1);
	CHECK(rb->evaluate(b, &c, &res, &err) == 0);
	CHECK(res.gflops == 32);

	make_config(&c, 16, 64, 2);
	CHECK(rb->evaluate(b, &c, &res, &err) == 0);
	CHECK(res.gflops == 33);
	CHECK(fabs(rb->clock(b) - 5 * 0.75) < 1e-12);

	/* Not recorded: an error result, no time spent. */
	make_config(&c, 16, 32, 4);
	CHECK(rb->evaluate(b, &c, &res, &err) == 0);
	CHECK(res.status == TRIAL_ERROR);
	CHECK(res.error != NULL && strstr(res.error,
	    "replay: config tile_16x32x64_vec_4x8x1_thr_4 not recorded for op "
	    "matmul_64x64x64_f32t_f32t_f32t") != NULL);
	CHECK(fabs(rb->clock(b) - 5 * 0.75) < 1e-12);

	CHECK(rb->reference(b, 1, &res, &err) == 0);
	CHECK(res.status == TRIAL_OK && res.gflops == 123);

	rb->target(b, &cpu, &flags, &tc);
	CHECK_STR(cpu, "Test CPU");
	CHECK_STR(tc, "llvm-test");
	CHECK(flags != NULL);
	free(cpu);
	free(flags);
	free(tc);

	memset(&rules, 0, sizeof rules);
	rb->rules(&op, &rules);
	CHECK((rules.knobs & 0x7f) == 0x7f);
	rb->baseline(&op, &c);
	CHECK(c.v[KNOB_TILE_M] > 0);

	trial_result_clear(&res);
	rb->close(b);
	unlink(db);
	free(db);
	return check_done();
}
