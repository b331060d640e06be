/*
 * Tests of the mlir-cpu backend on small real matmuls: compile, run, verify
 * (several layouts and types), the test-only fault switch for every failure
 * kind, the reference routines, the artifact cache and the ISA detection.
 * Run as: test_mlircpu eval|types|reference|faults|cache|isa|split|dot|
 * space|ragged.
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "backends/backend.h"
#include "backends/mlir-cpu/mlircpu_int.h"
#include "search/space.h"
#include "tests/check.h"
#include "util/util.h"

static char work_dir[] = "/tmp/autosched-test-mlircpu-XXXXXX";

static void
params_init(struct backend_params *p)
{
	memset(p, 0, sizeof *p);
	p->work_dir = work_dir;
	p->min_time = 0.01;
	p->warmup = 1;
	p->min_reps = 3;
	p->max_reps = 50;
	p->timeout = 60;
	p->compile_timeout = 120;
	p->cv_max = 0;		/* no stability verdict: tests must not depend on load */
	p->verify = 1;
	p->seed = 42;
}

static void
op_init(struct op_desc *op, const char *kind, int64_t b, int64_t m, int64_t n,
    int64_t k, enum elem_type in, enum elem_type acc, int ta, int tb)
{
	memset(op, 0, sizeof *op);
	op->kind = kind;
	op->op_name = "linalg.generic";
	op->name = "test_op";
	op->batch = b;
	op->m = m;
	op->n = n;
	op->k = k;
	op->lhs = op->rhs = in;
	op->acc = acc;
	op->transpose_a = ta;
	op->transpose_b = tb;
	op->function = "";
	op->loc = "test";
	op->tunable = 1;
}

/* A dispatch written by hand: a linalg.generic contraction, casts in the body. */
static char *
generic_dispatch(const struct op_desc *op)
{
	int batch = strcmp(op->kind, "batch_matmul") == 0;
	char bp[32] = "", lt[96], rt[96], at[96], body[512];
	const char *in = analysis_elem_name(op->lhs), *acc = analysis_elem_name(op->acc);
	const char *dims = batch ? "b, m, n, k" : "m, n, k", *b = batch ? "b, " : "";
	int flt = op->acc != ELEM_I32;

	if (batch)
		snprintf(bp, sizeof bp, "%lldx", (long long)op->batch);
	snprintf(lt, sizeof lt, "tensor<%s%lldx%lldx%s>", bp,
	    (long long)(op->transpose_a ? op->k : op->m),
	    (long long)(op->transpose_a ? op->m : op->k), in);
	snprintf(rt, sizeof rt, "tensor<%s%lldx%lldx%s>", bp,
	    (long long)(op->transpose_b ? op->n : op->k),
	    (long long)(op->transpose_b ? op->k : op->n), in);
	snprintf(at, sizeof at, "tensor<%s%lldx%lldx%s>", bp, (long long)op->m,
	    (long long)op->n, acc);
	if (op->lhs != op->acc)
		snprintf(body, sizeof body,
		    "      %%a1 = %s %%a : %s to %s\n"
		    "      %%b1 = %s %%b : %s to %s\n"
		    "      %%p = %s %%a1, %%b1 : %s\n",
		    flt ? "arith.extf" : op->lhs_unsigned ? "arith.extui" :
		    "arith.extsi", in, acc,
		    flt ? "arith.extf" : op->rhs_unsigned ? "arith.extui" :
		    "arith.extsi", in, acc,
		    flt ? "arith.mulf" : "arith.muli", acc);
	else
		snprintf(body, sizeof body, "      %%p = %s %%a, %%b : %s\n",
		    flt ? "arith.mulf" : "arith.muli", acc);
	return xasprintf(
	    "module {\n"
	    "  func.func @dispatch(%%lhs: %s, %%rhs: %s, %%acc: %s) -> %s {\n"
	    "    %%0 = linalg.generic {indexing_maps = [\n"
	    "        affine_map<(%s) -> (%s%s)>,\n"
	    "        affine_map<(%s) -> (%s%s)>,\n"
	    "        affine_map<(%s) -> (%sm, n)>],\n"
	    "        iterator_types = [%s\"parallel\", \"parallel\", \"reduction\"]}\n"
	    "        ins(%%lhs, %%rhs : %s, %s) outs(%%acc : %s) {\n"
	    "    ^bb0(%%a: %s, %%b: %s, %%c: %s):\n"
	    "%s"
	    "      %%s = %s %%c, %%p : %s\n"
	    "      linalg.yield %%s : %s\n"
	    "    } -> %s\n"
	    "    return %%0 : %s\n"
	    "  }\n"
	    "}\n",
	    lt, rt, at, at,
	    dims, b, op->transpose_a ? "k, m" : "m, k",
	    dims, b, op->transpose_b ? "n, k" : "k, n",
	    dims, b, batch ? "\"parallel\", " : "", lt, rt, at, in, in, acc,
	    body, flt ? "arith.addf" : "arith.addi", acc, acc, at, at);
}

/* A quantized op's dispatch: the named op, its zero points arguments. */
static char *
quantized_dispatch(const struct op_desc *op)
{
	int batch = strcmp(op->kind, "quantized_batch_matmul") == 0;
	char bp[32] = "";

	if (batch)
		snprintf(bp, sizeof bp, "%lldx", (long long)op->batch);
	return xasprintf(
	    "func.func @dispatch(%%lhs: tensor<%s%lldx%lldxi8>, "
	    "%%rhs: tensor<%s%lldx%lldxi8>, %%acc: tensor<%s%lldx%lldxi32>, "
	    "%%za: i32, %%zb: i32) -> tensor<%s%lldx%lldxi32> {\n"
	    "  %%0 = linalg.%s ins(%%lhs, %%rhs, %%za, %%zb : "
	    "tensor<%s%lldx%lldxi8>, tensor<%s%lldx%lldxi8>, i32, i32) "
	    "outs(%%acc : tensor<%s%lldx%lldxi32>) -> tensor<%s%lldx%lldxi32>\n"
	    "  return %%0 : tensor<%s%lldx%lldxi32>\n}\n",
	    bp, (long long)op->m, (long long)op->k, bp, (long long)op->k,
	    (long long)op->n, bp, (long long)op->m, (long long)op->n, bp,
	    (long long)op->m, (long long)op->n, op->kind, bp, (long long)op->m,
	    (long long)op->k, bp, (long long)op->k, (long long)op->n, bp,
	    (long long)op->m, (long long)op->n, bp, (long long)op->m,
	    (long long)op->n, bp, (long long)op->m, (long long)op->n);
}

/* The named-op form, as a user would write it. */
static char *
named_dispatch(const struct op_desc *op)
{
	return xasprintf(
	    "func.func @dispatch(%%lhs: tensor<%lldx%lldxf32>, %%rhs: tensor<%lldx%lldxf32>,"
	    " %%acc: tensor<%lldx%lldxf32>) -> tensor<%lldx%lldxf32> {\n"
	    "  %%0 = linalg.matmul ins(%%lhs, %%rhs : tensor<%lldx%lldxf32>, tensor<%lldx%lldxf32>)"
	    " outs(%%acc : tensor<%lldx%lldxf32>) -> tensor<%lldx%lldxf32>\n"
	    "  return %%0 : tensor<%lldx%lldxf32>\n"
	    "}\n",
	    (long long)op->m, (long long)op->k, (long long)op->k, (long long)op->n,
	    (long long)op->m, (long long)op->n, (long long)op->m, (long long)op->n,
	    (long long)op->m, (long long)op->k, (long long)op->k, (long long)op->n,
	    (long long)op->m, (long long)op->n, (long long)op->m, (long long)op->n,
	    (long long)op->m, (long long)op->n);
}

static void
cfg_set(struct config *c, int tm, int tn, int tk, int vm, int vn, int vk, int thr)
{
	memset(c, 0, sizeof *c);
	c->v[KNOB_TILE_M] = tm;
	c->v[KNOB_TILE_N] = tn;
	c->v[KNOB_TILE_K] = tk;
	c->v[KNOB_VECTOR_M] = vm;
	c->v[KNOB_VECTOR_N] = vn;
	c->v[KNOB_VECTOR_K] = vk;
	c->v[KNOB_THREADS] = thr;
	c->v[KNOB_PACK_B] = 1;
}

/* Open a backend for op/dispatch, evaluate cfg, check the status; returns it. */
static enum trial_status
run_one(const struct backend_params *p, const struct op_desc *op,
    const char *dispatch, const struct config *cfg, enum trial_status want,
    struct trial_result *res)
{
	const struct backend_ops *ops = backend_find("mlir-cpu");
	struct backend *be = NULL;
	char *err = NULL, name[160];
	int rc;

	space_config_name(cfg, 0x7f, name, sizeof name);
	CHECK(ops != NULL);
	if (ops == NULL)
		return TRIAL_ERROR;
	rc = ops->open(p, op, dispatch, &be, &err);
	CHECK(rc == 0);
	if (rc != 0) {
		fprintf(stderr, "open: %s\n", err);
		free(err);
		return TRIAL_ERROR;
	}
	rc = ops->evaluate(be, cfg, res, &err);
	CHECK(rc == 0);
	if (rc != 0)
		fprintf(stderr, "evaluate: %s\n", err);
	fprintf(stderr, "%s %s: %s %.1f GFLOP/s compile %.2fs verified %d%s%s\n",
	    op->name, name, trial_status_name(res->status), res->gflops,
	    res->compile_s, res->verified, res->error ? " -- " : "",
	    res->error ? res->error : "");
	CHECK(res->status == want);
	if (want == TRIAL_OK) {
		CHECK(res->verified == 1);
		CHECK(strncmp(res->checked_by, "exact:", 6) == 0);
		/* Narrowed accumulation checked too, but for bf16 (none narrower). */
		CHECK(op->acc == ELEM_BF16 || strstr(res->checked_by,
		    "+closed-form(wide-sum data)") != NULL);
		CHECK(res->counters_have &
		    (1u << TRIAL_CTR_CONTEXT_SWITCHES));
		CHECK(res->gflops > 0);
		CHECK(res->reps >= 3);
		CHECK(res->artifact[0] != '\0');
	}
	ops->close(be);
	free(err);
	return res->status;
}

/* op's generic_dispatch through run_one: the status must be want. */
static void
run_generic(const struct backend_params *p, const struct op_desc *op,
    const struct config *cfg, enum trial_status want)
{
	struct trial_result r;
	char *d = generic_dispatch(op);

	memset(&r, 0, sizeof r);
	run_one(p, op, d, cfg, want, &r);
	trial_result_clear(&r);
	free(d);
}

static void
test_eval(void)
{
	struct backend_params p;
	struct op_desc op;
	struct config c;
	struct trial_result r;
	const struct backend_ops *ops = backend_find("mlir-cpu");
	struct backend *be = NULL;
	char *d, *err = NULL, *cpu, *flags, *tc;
	const char *reason;

	memset(&r, 0, sizeof r);
	params_init(&p);
	op_init(&op, "matmul", 1, 64, 48, 32, ELEM_F32, ELEM_F32, 0, 0);
	op.name = "matmul_64x48x32_f32";

	/* Named op, serial, then the generic form with two threads. */
	d = named_dispatch(&op);
	cfg_set(&c, 32, 48, 32, 4, 16, 1, 1);
	run_one(&p, &op, d, &c, TRIAL_OK, &r);
	trial_result_clear(&r);
	free(d);
	d = generic_dispatch(&op);
	cfg_set(&c, 32, 16, 16, 8, 8, 2, 2);
	run_one(&p, &op, d, &c, TRIAL_OK, &r);
	trial_result_clear(&r);

	/* The reference and the target description. */
	CHECK(ops->open(&p, &op, d, &be, &err) == 0);
	if (be != NULL) {
		CHECK(ops->reference(be, 1, &r, &err) == 0);
		CHECK(r.status == TRIAL_OK && r.gflops > 0);
		/* f32: sgemm is the routine of the op's own precision. */
		CHECK(strncmp(r.ref_routine, "openblas:sgemm[", 15) == 0);
		CHECK(r.ref_same_precision == 1);
		CHECK(r.counters_have & (1u << TRIAL_CTR_TASK_CLOCK_NS));
		trial_result_clear(&r);
		ops->target(be, &cpu, &flags, &tc);
		fprintf(stderr, "target: %s | %s | %s\n", cpu, flags, tc);
		CHECK(*cpu != '\0' && strstr(tc, "mlir-opt") != NULL);
		free(cpu);
		free(flags);
		free(tc);
		ops->close(be);
	}
	free(d);

	/* Transposed operands. */
	op_init(&op, "matmul", 1, 64, 48, 32, ELEM_F32, ELEM_F32, 0, 1);
	op.name = "matmul_transpose_b";
	cfg_set(&c, 64, 48, 32, 4, 16, 1, 1);
	run_generic(&p, &op, &c, TRIAL_OK);
	op_init(&op, "matmul", 1, 64, 48, 32, ELEM_F32, ELEM_F32, 1, 0);
	op.name = "matmul_transpose_a";
	run_generic(&p, &op, &c, TRIAL_OK);

	/* Batch. */
	op_init(&op, "batch_matmul", 3, 32, 48, 16, ELEM_F32, ELEM_F32, 0, 0);
	op.name = "batch_matmul_3x32x48x16";
	cfg_set(&c, 16, 48, 16, 4, 16, 1, 1);
	run_generic(&p, &op, &c, TRIAL_OK);

	/*
	 * An M register tile that does not divide the M cache tile: the last
	 * tile of each cache tile is peeled (32 = 5 x 6 + 2, 16 = 2 x 6 + 4),
	 * with transposed operands, a batch, and threads.
	 */
	op_init(&op, "matmul", 1, 64, 48, 32, ELEM_F32, ELEM_F32, 1, 1);
	op.name = "matmul_ragged_m_transposed";
	d = generic_dispatch(&op);
	cfg_set(&c, 32, 48, 32, 6, 16, 1, 1);
	run_one(&p, &op, d, &c, TRIAL_OK, &r);
	trial_result_clear(&r);
	cfg_set(&c, 32, 16, 16, 6, 16, 2, 2);
	run_one(&p, &op, d, &c, TRIAL_OK, &r);
	trial_result_clear(&r);
	free(d);
	op_init(&op, "batch_matmul", 3, 32, 48, 16, ELEM_F32, ELEM_F32, 0, 0);
	op.name = "batch_matmul_ragged_m";
	cfg_set(&c, 16, 48, 16, 6, 16, 1, 1);
	run_generic(&p, &op, &c, TRIAL_OK);

	/* Rules: register budget and SIMD width. */
	op_init(&op, "matmul", 1, 64, 48, 32, ELEM_F32, ELEM_F32, 0, 0);
	{
		struct space_rules rules;

		/* f32 lanes of this CPU's vectors, and how many rows fit. */
		int64_t lanes = mlircpu_isa()->vec_bytes / 4;
		int64_t rows2 = (mlircpu_isa()->vec_regs - 3) / 2;

		ops->rules(&op, &rules);
		CHECK(rules.vector_ok(&op, 4, lanes, 1));
		CHECK(rules.vector_ok(&op, 6, lanes, 1));
		/* Two vectors a row: rows·2 accumulators + 2 of B + 1 of A. */
		CHECK(rules.vector_ok(&op, rows2, 2 * lanes, 1));
		CHECK(!rules.vector_ok(&op, rows2 + 1, 2 * lanes, 1));
		CHECK(!rules.vector_ok(&op, 4, 12, 1));
		/* The default candidates span register tiles and cache tiles. */
		CHECK(rules.ncand[KNOB_VECTOR_M] > 1 && rules.ncand[KNOB_VECTOR_N] > 1);
		CHECK(rules.ncand[KNOB_TILE_M] >= 1 && rules.ncand[KNOB_TILE_K] >= 1);
		CHECK(rules.defaults.v[KNOB_THREADS] == 1);
		/* Remainders are split off: no tile need divide. */
		CHECK(rules.ragged == (KNOB_BIT(KNOB_TILE_M) |
		    KNOB_BIT(KNOB_TILE_N) | KNOB_BIT(KNOB_TILE_K) |
		    KNOB_BIT(KNOB_VECTOR_M) | KNOB_BIT(KNOB_VECTOR_N) |
		    KNOB_BIT(KNOB_VECTOR_K)));
		CHECK(op.n % rules.defaults.v[KNOB_TILE_N] == 0);
	}
	op.kind = "conv_2d";
	CHECK(!ops->supports(&op, &reason) && reason != NULL);
	op_init(&op, "matmul", 1, 64, 48, 32, ELEM_I8, ELEM_F32, 0, 0);
	CHECK(!ops->supports(&op, &reason));
}

static void
test_types(void)
{
	struct backend_params p;
	struct op_desc op;
	struct config c;
	struct trial_result r;
	char *d;

	memset(&r, 0, sizeof r);
	params_init(&p);
	cfg_set(&c, 32, 48, 32, 4, 16, 1, 1);
	op_init(&op, "matmul", 1, 64, 48, 32, ELEM_F16, ELEM_F32, 0, 0);
	op.name = "matmul_f16_f32";
	run_generic(&p, &op, &c, TRIAL_OK);
	op_init(&op, "matmul", 1, 64, 48, 32, ELEM_I8, ELEM_I32, 0, 1);
	op.name = "matmul_i8_i32_tb";
	run_generic(&p, &op, &c, TRIAL_OK);
	cfg_set(&c, 32, 48, 32, 6, 16, 1, 1);
	op_init(&op, "matmul", 1, 64, 48, 32, ELEM_I8, ELEM_I32, 1, 0);
	op.name = "matmul_i8_i32_ta_ragged_m";
	run_generic(&p, &op, &c, TRIAL_OK);
	op_init(&op, "matmul", 1, 64, 48, 32, ELEM_F16, ELEM_F16, 0, 0);
	op.name = "matmul_f16_f16_ragged_m";
	run_generic(&p, &op, &c, TRIAL_OK);
	/*
	 * Unsigned operands (extui) are checked as unsigned: data with the
	 * high bit set, which a signed reading would get wrong.
	 */
	cfg_set(&c, 32, 48, 32, 4, 16, 1, 1);
	op_init(&op, "matmul", 1, 64, 48, 32, ELEM_I8, ELEM_I32, 0, 0);
	op.lhs_unsigned = op.rhs_unsigned = 1;
	op.name = "matmul_u8_u8_i32";
	run_generic(&p, &op, &c, TRIAL_OK);
	op_init(&op, "matmul", 1, 64, 48, 32, ELEM_I8, ELEM_I32, 0, 1);
	op.lhs_unsigned = 1;
	op.name = "matmul_u8_i8_i32_tb";
	run_generic(&p, &op, &c, TRIAL_OK);
	/* Long K in 16-bit accumulators: checked exactly (sparse data). */
	cfg_set(&c, 32, 48, 256, 4, 16, 1, 1);
	op_init(&op, "matmul", 1, 64, 48, 1024, ELEM_BF16, ELEM_BF16, 0, 0);
	op.name = "matmul_bf16_bf16_k1024";
	d = generic_dispatch(&op);
	run_one(&p, &op, d, &c, TRIAL_OK, &r);
	CHECK(strstr(r.checked_by, "sparse") != NULL);
	trial_result_clear(&r);
	free(d);
	op_init(&op, "matmul", 1, 64, 48, 2048, ELEM_F16, ELEM_F16, 0, 1);
	op.name = "matmul_f16_f16_k2048_tb";
	run_generic(&p, &op, &c, TRIAL_OK);
	op_init(&op, "matmul", 1, 64, 48, 32, ELEM_F64, ELEM_F64, 0, 0);
	op.name = "matmul_f64";
	cfg_set(&c, 32, 48, 32, 4, 8, 1, 1);
	run_generic(&p, &op, &c, TRIAL_OK);
}

/* The forall's tile sizes in op's schedule for c: "[...]" after tile_sizes. */
static int
split_is(const struct op_desc *op, const struct config *c, const char *want)
{
	char *s = mlircpu_schedule_op(op, c, "t", 0), *at;
	int ok;

	at = strstr(s, "tile_using_forall");
	ok = at != NULL && strstr(at, want) != NULL &&
	    strstr(at, want) < strchr(at, '\n');
	if (!ok)
		fprintf(stderr, "split_is: want %s in:\n%s\n", want,
		    at != NULL ? at : s);
	free(s);
	return ok;
}

/*
 * Odd shapes through every way threads share the work, at 1 and 2
 * threads, for every element type the backend accepts: prime M, N and K, K
 * below the K tile a default would pick, M below the register tile; with 2
 * threads one chunk of the batch, of M or of N per thread, or (nothing
 * splits evenly into cache tiles) chunks of register tiles and the rest
 * after them. Every run verifies.
 */
static void
test_split(void)
{
	static const struct {
		enum elem_type in, acc;
		int vn;			/* a register tile width for the type */
	} types[] = {
		{ ELEM_F32, ELEM_F32, 16 }, { ELEM_F64, ELEM_F64, 8 },
		{ ELEM_F16, ELEM_F32, 16 }, { ELEM_F16, ELEM_F16, 16 },
		{ ELEM_BF16, ELEM_F32, 16 }, { ELEM_BF16, ELEM_BF16, 16 },
		{ ELEM_I8, ELEM_I32, 16 },
	};
	struct backend_params p;
	struct op_desc op;
	struct config c;
	struct trial_result r;
	char *d;
	size_t t;
	int thr;

	memset(&r, 0, sizeof r);
	params_init(&p);
	/* Which split each shape gets (the text of the schedule). */
	op_init(&op, "matmul", 1, 74, 29, 13, ELEM_F32, ELEM_F32, 0, 0);
	cfg_set(&c, 37, 29, 13, 6, 29, 1, 2);
	CHECK(split_is(&op, &c, "[37, 0]"));		/* M: 2 tiles of 37 */
	op_init(&op, "matmul", 1, 37, 58, 13, ELEM_F32, ELEM_F32, 0, 0);
	cfg_set(&c, 37, 29, 13, 6, 29, 1, 2);
	CHECK(split_is(&op, &c, "[0, 29]"));		/* N: 2 tiles of 29 */
	op_init(&op, "matmul", 1, 37, 29, 13, ELEM_F32, ELEM_F32, 0, 0);
	cfg_set(&c, 37, 29, 13, 6, 29, 1, 2);
	/* Neither: chunks of 3 register tiles of M, the last row after. */
	CHECK(split_is(&op, &c, "[18, 0]"));
	{
		char *sc = mlircpu_schedule_op(&op, &c, "t", 0);

		CHECK(strstr(sc, "split %mm after 36 {dimension = 0}") != NULL);
		free(sc);
	}
	op_init(&op, "batch_matmul", 2, 37, 29, 13, ELEM_F32, ELEM_F32, 0, 0);
	CHECK(split_is(&op, &c, "[1, 0, 0]"));		/* the batch */
	op_init(&op, "batch_matmul", 3, 74, 29, 13, ELEM_F32, ELEM_F32, 0, 0);
	CHECK(split_is(&op, &c, "[1, 37, 0]"));		/* odd batch: M */
	/* Both split evenly: M for the FMA kernel, N for a dot kernel. */
	op_init(&op, "matmul", 1, 64, 64, 64, ELEM_F32, ELEM_F32, 0, 0);
	cfg_set(&c, 32, 32, 64, 8, 32, 1, 2);
	CHECK(split_is(&op, &c, "[32, 0]"));
	op.lhs = op.rhs = ELEM_I8;
	op.acc = ELEM_I32;
	if (mlircpu_kernel(&op, &c) != KERNEL_FMA)
		CHECK(split_is(&op, &c, "[0, 32]"));

	for (t = 0; t < sizeof types / sizeof types[0]; t++) {
		int vn = types[t].vn;
		int same = types[t].in == types[t].acc;

		for (thr = 1; thr <= 2; thr++) {
			/* M chunks; vector_m 8 > the 5 rows of a peeled tile. */
			op_init(&op, "matmul", 1, 74, 2 * vn, 13, types[t].in,
			    types[t].acc, 0, 0);
			op.name = "split_m";
			cfg_set(&c, 37, vn, 16, 8, vn, 1, thr);
			run_generic(&p, &op, &c, TRIAL_OK);
			/* N chunks, B transposed, M (3) below the register tile. */
			op_init(&op, "matmul", 1, 3, 2 * vn, 13, types[t].in,
			    types[t].acc, 0, 1);
			op.name = "split_n";
			cfg_set(&c, 3, vn, 13, 6, vn, 1, thr);
			run_generic(&p, &op, &c, TRIAL_OK);
			/* Prime N (the whole N as the register tile), per tile. */
			op_init(&op, "matmul", 1, 37, 29, 13, types[t].in,
			    types[t].acc, 1, 0);
			op.name = "split_none";
			cfg_set(&c, 37, 29, 13, 6, 29, 1, thr);
			run_generic(&p, &op, &c, TRIAL_OK);
			/*
			 * B read in place (pack_b 0): ragged M, a batch; for
			 * an op that converts its inputs, refused.
			 */
			op_init(&op, "matmul", 1, 74, 2 * vn, 13, types[t].in,
			    types[t].acc, 0, 0);
			op.name = "nopack";
			d = generic_dispatch(&op);
			cfg_set(&c, 37, vn, 13, 6, vn, 1, thr);
			c.v[KNOB_PACK_B] = 0;
			{
				char *sc = mlircpu_schedule_op(&op, &c, "t", 0);

				CHECK(strstr(sc, "structured.pack ") == NULL &&
				    strstr(sc, "generalize") != NULL);
				free(sc);
			}
			run_one(&p, &op, d, &c, same ? TRIAL_OK :
			    TRIAL_COMPILE_FAILED, &r);
			trial_result_clear(&r);
			free(d);
			op_init(&op, "batch_matmul", 2, 16, vn, 7, types[t].in,
			    types[t].acc, 0, 0);
			op.name = "nopack_batch";
			d = generic_dispatch(&op);
			cfg_set(&c, 16, vn, 7, 6, vn, 1, thr);
			c.v[KNOB_PACK_B] = 0;
			run_one(&p, &op, d, &c, same ? TRIAL_OK :
			    TRIAL_COMPILE_FAILED, &r);
			trial_result_clear(&r);
			free(d);
			/* Transposed B in place: refused, never compiled. */
			op_init(&op, "matmul", 1, 37, vn, 13, types[t].in,
			    types[t].acc, 0, 1);
			op.name = "nopack_tb";
			d = generic_dispatch(&op);
			cfg_set(&c, 37, vn, 13, 6, vn, 1, thr);
			c.v[KNOB_PACK_B] = 0;
			run_one(&p, &op, d, &c, TRIAL_COMPILE_FAILED, &r);
			CHECK(r.error != NULL && strstr(r.error, "pack_b") != NULL);
			trial_result_clear(&r);
			free(d);
			/* The batch, odd (3: M chunks) and even (2). */
			op_init(&op, "batch_matmul", 3 - (thr == 2), 74, vn, 7,
			    types[t].in, types[t].acc, 0, 0);
			op.name = "split_batch";
			cfg_set(&c, 37, vn, 7, 6, vn, 1, thr);
			run_generic(&p, &op, &c, TRIAL_OK);
		}
	}
}

/*
 * pack_a 1 (A's cache tile packed into register-tile panels) verifies on
 * ragged shapes at 1 and 2 threads, B packed or read in place: an M split
 * into tiles and a peeled register-tile rest, a K rest, a batch. pack_a 0
 * writes the schedule of before the knob (no pads, no new name); an op
 * that is not f32, or whose A is transposed, is refused, never compiled.
 */
static void
test_pack_a(void)
{
	struct backend_params p;
	struct op_desc op;
	struct config c;
	struct trial_result r;
	char *d, *sc, *sc0;
	int thr, pb;

	memset(&r, 0, sizeof r);
	params_init(&p);
	op_init(&op, "matmul", 1, 74, 32, 37, ELEM_F32, ELEM_F32, 0, 0);
	cfg_set(&c, 37, 32, 16, 6, 16, 1, 1);
	sc0 = mlircpu_schedule_op(&op, &c, "t", 0);
	c.v[KNOB_PACK_A] = 1;
	sc = mlircpu_schedule_op(&op, &c, "t", 0);
	CHECK(strstr(sc0, "hoist_pad") == NULL && strstr(sc0, "_packa") == NULL);
	CHECK(strstr(sc, "hoist_pad") != NULL && strstr(sc, "_packa") != NULL);
	free(sc0);
	free(sc);
	for (thr = 1; thr <= 2; thr++) {
		for (pb = 0; pb <= 1; pb++) {
			/* M 74: tiles of 37, 6 rows (1 peeled); K 37: 16, 16, 5. */
			op_init(&op, "matmul", 1, 74, 32, 37, ELEM_F32, ELEM_F32,
			    0, 0);
			op.name = "packa";
			cfg_set(&c, 37, 32, 16, 6, 16, 1, thr);
			c.v[KNOB_PACK_B] = pb;
			c.v[KNOB_PACK_A] = 1;
			run_generic(&p, &op, &c, TRIAL_OK);
			/* An odd batch; M 20: 16 and 4; K 13: 8 and 5. */
			op_init(&op, "batch_matmul", 3, 20, 16, 13, ELEM_F32,
			    ELEM_F32, 0, 0);
			op.name = "packa_batch";
			cfg_set(&c, 16, 16, 8, 4, 16, 1, thr);
			c.v[KNOB_PACK_B] = pb;
			c.v[KNOB_PACK_A] = 1;
			run_generic(&p, &op, &c, TRIAL_OK);
		}
	}
	/* Refused: f16 inputs, a transposed A. */
	for (pb = 0; pb < 2; pb++) {
		op_init(&op, "matmul", 1, 37, 16, 13, pb ? ELEM_F32 : ELEM_F16,
		    ELEM_F32, pb, 0);
		op.name = "packa_refused";
		d = generic_dispatch(&op);
		cfg_set(&c, 37, 16, 13, 6, 16, 1, 1);
		c.v[KNOB_PACK_A] = 1;
		run_one(&p, &op, d, &c, TRIAL_COMPILE_FAILED, &r);
		CHECK(r.error != NULL && strstr(r.error, "pack_a") != NULL);
		trial_result_clear(&r);
		free(d);
	}
}

/* The element types the backend accepts, signedness included. */
static const struct {
	enum elem_type in, acc;
	int lhs_unsigned, rhs_unsigned;
} all_types[] = {
	{ ELEM_F32, ELEM_F32, 0, 0 }, { ELEM_F64, ELEM_F64, 0, 0 },
	{ ELEM_F16, ELEM_F32, 0, 0 }, { ELEM_F16, ELEM_F16, 0, 0 },
	{ ELEM_BF16, ELEM_F32, 0, 0 }, { ELEM_BF16, ELEM_BF16, 0, 0 },
	{ ELEM_I8, ELEM_I32, 0, 0 }, { ELEM_I8, ELEM_I32, 1, 0 },
	{ ELEM_I8, ELEM_I32, 0, 1 }, { ELEM_I8, ELEM_I32, 1, 1 },
};
#define NTYPES	(sizeof all_types / sizeof all_types[0])

/*
 * The default space of the mlir-cpu backend is never empty: for random
 * static shapes 1…300 (primes among them, and 1), every element type,
 * batch or not, transposed or not, with 1 or 2 threads listed, the space
 * has configs, the default config is one of them, and its count is exact:
 * the cross product of its knobs' value lists, filtered by the one
 * validator of stored configs (space_config_check) and the register rule,
 * counted by brute force, and every index maps to a point and back.
 */
static void
test_space(void)
{
	static const int64_t primes[] = { 1, 2, 3, 5, 7, 13, 37, 97, 151, 211,
	    293 };
	const struct backend_ops *ops = backend_find("mlir-cpu");
	int64_t thr[] = { 1, 2 };
	struct knob_values lists[] = { { KNOB_THREADS, thr, 2 } };
	uint64_t seed = 12345;
	int round, bad = 0;

	for (round = 0; round < 400; round++) {
		struct op_desc op;
		struct space_rules rules;
		struct space *sp = NULL;
		struct config def, cf;
		char *err = NULL;
		int64_t dims[4];
		size_t t = (size_t)round % NTYPES, n[KNOB_COUNT], idx[KNOB_COUNT];
		const int64_t *vals[KNOB_COUNT];
		uint64_t brute = 0, count, i;
		int d, k, done;

		for (d = 0; d < 4; d++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			/* One dimension in three a prime (or 1). */
			dims[d] = (seed >> 33) % 3 == 0 ?
			    primes[(seed >> 40) % (sizeof primes / sizeof primes[0])] :
			    1 + (int64_t)((seed >> 20) % 300);
		}
		op_init(&op, round % 4 == 3 ? "batch_matmul" : "matmul",
		    round % 4 == 3 ? 1 + dims[3] % 7 : 1, dims[0], dims[1],
		    dims[2], all_types[t].in, all_types[t].acc, round % 5 == 1,
		    round % 3 == 2);
		op.lhs_unsigned = all_types[t].lhs_unsigned;
		op.rhs_unsigned = all_types[t].rhs_unsigned;
		ops->rules(&op, &rules);
		if (space_new(&op, lists, 1, &rules, &sp, &err) != 0) {
			fprintf(stderr, "space %lldx%lldx%lld: %s\n",
			    (long long)op.m, (long long)op.n, (long long)op.k, err);
			free(err);
			bad++;
			continue;
		}
		count = space_count(sp);
		ops->baseline(&op, &def);
		if (count == 0 || space_index(sp, &def) < 0) {
			char name[160];

			space_config_name(&def, 0x7ff, name, sizeof name);
			fprintf(stderr, "%s %lldx%lldx%lldx%lld: %llu configs, "
			    "default %s %s\n", analysis_elem_name(op.lhs),
			    (long long)op.batch, (long long)op.m, (long long)op.n,
			    (long long)op.k, (unsigned long long)count, name,
			    count ? "not among them" : "");
			bad++;
		}
		/* Brute force over the lists' cross product. */
		for (k = 0; k < KNOB_COUNT; k++) {
			vals[k] = space_knob_list(sp, (enum knob)k, &n[k]);
			idx[k] = 0;
		}
		for (done = 0; !done; ) {
			memset(&cf, 0, sizeof cf);
			for (k = 0; k < KNOB_COUNT; k++)
				cf.v[k] = vals[k][idx[k]];
			if (space_config_check(&op, &rules, &cf, NULL) == 0 &&
			    rules.vector_ok(&op, cf.v[KNOB_VECTOR_M],
			    cf.v[KNOB_VECTOR_N], cf.v[KNOB_VECTOR_K]) &&
			    !(cf.v[KNOB_TILE_M] > op.m && cf.v[KNOB_TILE_M] !=
			    vals[KNOB_TILE_M][0]) &&
			    !(cf.v[KNOB_TILE_N] > op.n && cf.v[KNOB_TILE_N] !=
			    vals[KNOB_TILE_N][0]) &&
			    !(cf.v[KNOB_TILE_K] > op.k && cf.v[KNOB_TILE_K] !=
			    vals[KNOB_TILE_K][0])) {
				brute++;
				if (space_index(sp, &cf) < 0)
					bad++;
			}
			for (k = 0; k < KNOB_COUNT; k++) {
				if (++idx[k] < n[k])
					break;
				idx[k] = 0;
			}
			done = k == KNOB_COUNT;
		}
		if (brute != count) {
			fprintf(stderr, "%lldx%lldx%lld: %llu configs, brute "
			    "force %llu\n", (long long)op.m, (long long)op.n,
			    (long long)op.k, (unsigned long long)count,
			    (unsigned long long)brute);
			bad++;
		}
		for (i = 0; i < count; i += 1 + count / 50) {
			space_get(sp, i, &cf);
			if (space_index(sp, &cf) != (int64_t)i)
				bad++;
		}
		space_free(sp);
	}
	CHECK(bad == 0);
}

/*
 * Remainders at every level, compiled, run and verified exactly for every
 * element type at 1 and 2 threads: M = 1 (decode), N = 2, K = 1, K below
 * its tile, primes, cache tiles that do not divide M, N or K, N and K
 * register tiles that do not divide their cache tile, a batch, transposed
 * operands, B read in place.
 */
static void
test_ragged(void)
{
	static const struct {
		const char *kind;
		int64_t b, m, n, k;
		int ta, tb, pack;
		int tm, tn, tk, vm, vn, vk;
	} shapes[] = {
		/* decode: M = 1, cache tiles split N (37 = 32 + 5), K (29) */
		{ "matmul", 1, 1, 37, 29, 0, 0, 1, 1, 16, 8, 1, 16, 1 },
		/* M below its tile, N = 2, K = 1 */
		{ "matmul", 1, 13, 2, 1, 0, 1, 1, 8, 2, 1, 6, 2, 1 },
		/* primes, everything split, register tiles N 12 = 8 + 4 and
		 * K 10 = 9 + 1 inside the cache tiles */
		{ "matmul", 1, 23, 19, 17, 1, 0, 1, 16, 12, 10, 5, 8, 3 },
		/* a batch, K (300) past its tile with a rest of 44 */
		{ "batch_matmul", 3, 5, 7, 300, 0, 0, 1, 5, 7, 64, 4, 7, 1 },
		/* K (3) below its tile, N 17 = 16 + 1 */
		{ "matmul", 1, 9, 17, 3, 0, 1, 1, 9, 64, 64, 4, 16, 1 },
		/* B read in place (same-type ops only), M = 1, N split */
		{ "matmul", 1, 1, 67, 33, 0, 0, 0, 1, 32, 8, 1, 16, 1 },
	};
	struct backend_params p;
	struct op_desc op;
	struct config c;
	struct trial_result r;
	size_t t, s;
	char *d;
	int thr;

	memset(&r, 0, sizeof r);
	params_init(&p);
	/*
	 * Every type at 1 thread; the split over 2 threads (which cuts the
	 * outer tile loop the same way for any type) on one float and one
	 * integer type: a third fewer compiles than every type at both.
	 */
	for (t = 0; t < NTYPES; t++)
	for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
	for (thr = 1; thr <= (all_types[t].in == ELEM_F32 ||
	    (all_types[t].in == ELEM_I8 && !all_types[t].lhs_unsigned &&
	    !all_types[t].rhs_unsigned) ? 2 : 1); thr++) {
		op_init(&op, shapes[s].kind, shapes[s].b, shapes[s].m,
		    shapes[s].n, shapes[s].k, all_types[t].in,
		    all_types[t].acc, shapes[s].ta, shapes[s].tb);
		op.lhs_unsigned = all_types[t].lhs_unsigned;
		op.rhs_unsigned = all_types[t].rhs_unsigned;
		if (!shapes[s].pack && !mlircpu_nopack_ok(&op))
			continue;
		op.name = "ragged";
		cfg_set(&c, shapes[s].tm, shapes[s].tn, shapes[s].tk,
		    shapes[s].vm, shapes[s].vn, shapes[s].vk, thr);
		c.v[KNOB_PACK_B] = shapes[s].pack;
		d = generic_dispatch(&op);
		run_one(&p, &op, d, &c, TRIAL_OK, &r);
		trial_result_clear(&r);
		free(d);
	}
	/*
	 * Quantized matmuls (C += (A - za)(B - zb)), checked with zero points
	 * -7 and 5 and a non-zero accumulator: as their int8 matmul plus the
	 * corrections, with remainders, a batch, 1 and 2 threads.
	 */
	for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
	for (thr = 1; thr <= 2; thr++) {
		if (!shapes[s].pack || shapes[s].ta || shapes[s].tb)
			continue;
		op_init(&op, shapes[s].b > 1 ? "quantized_batch_matmul" :
		    "quantized_matmul", shapes[s].b, shapes[s].m, shapes[s].n,
		    shapes[s].k, ELEM_I8, ELEM_I32, 0, 0);
		op.name = "quantized";
		cfg_set(&c, shapes[s].tm, shapes[s].tn, shapes[s].tk,
		    shapes[s].vm, shapes[s].vn, shapes[s].vk, thr);
		d = quantized_dispatch(&op);
		run_one(&p, &op, d, &c, TRIAL_OK, &r);
		trial_result_clear(&r);
		free(d);
	}
}

/* Does the kernel of artifact hash art contain instruction insn? -1: no objdump. */
static int
kernel_has(const char *art, const char *insn)
{
	char *cmd, line[512];
	FILE *f;
	int found = 0;

	if (system("command -v objdump >/dev/null 2>&1") != 0)
		return -1;
	cmd = xasprintf("objdump -d --no-show-raw-insn %s/mlir-cpu/%s/kernel.so",
	    work_dir, art);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	while (f != NULL && fgets(line, sizeof line, f) != NULL) {
		if (strstr(line, insn) != NULL)
			found = 1;
	}
	if (f != NULL)
		pclose(f);
	free(cmd);
	return found;
}

/* What a dot kernel's code must contain. */
static const char *
kernel_insn(enum mlircpu_kernel k)
{
	return k == KERNEL_DOT_BF16 ? "vdpbf16ps" : k == KERNEL_DOT_I8 ?
	    "vpdpwssd" : k == KERNEL_DOT_VNNI ? "vpdpbusd" : "vfmadd";
}

/*
 * The dot kernels (bf16 -> f32 by vdpbf16ps, i8 -> i32 by vpdpwssd, u8 x s8
 * -> i32 by vpdpbusd): which configs take them, and odd shapes through them
 * at 1 and 2 threads, every run verified: an odd M (37 rows, 1-row register
 * tile), N of three 16-lane panels, K below a default K tile (and not a
 * multiple of 4: the u8 x s8 ops take vpdpwssd there) and K split into
 * cache tiles, M below the default register tile, a batch, B transposed,
 * unsigned A, unsigned B.
 */
static void
test_dot(void)
{
	static const struct {
		enum elem_type in, acc;
		int lhs_unsigned, rhs_unsigned;
	} types[] = {
		{ ELEM_BF16, ELEM_F32, 0, 0 },
		{ ELEM_I8, ELEM_I32, 0, 0 },
		{ ELEM_I8, ELEM_I32, 1, 0 },
		{ ELEM_I8, ELEM_I32, 0, 1 },
	};
	const struct mlircpu_isa *isa = mlircpu_isa();
	struct backend_params p;
	struct op_desc op;
	struct config c;
	struct trial_result r;
	enum mlircpu_kernel kernel;
	char *d;
	size_t t;
	int thr;

	memset(&r, 0, sizeof r);
	params_init(&p);
	/* Which configs take a dot kernel (on an AVX-512 CPU with the ISA). */
	op_init(&op, "matmul", 1, 64, 64, 64, ELEM_BF16, ELEM_F32, 0, 0);
	cfg_set(&c, 64, 64, 64, 8, 32, 1, 1);
	CHECK(mlircpu_kernel(&op, &c) == (isa->vec_bytes == 64 &&
	    isa->avx512_bf16 ? KERNEL_DOT_BF16 : KERNEL_FMA));
	op.lhs = op.rhs = ELEM_I8;
	op.acc = ELEM_I32;
	CHECK(mlircpu_kernel(&op, &c) == (isa->vec_bytes == 64 &&
	    isa->avx512bw ? isa->avx512_vnni ? KERNEL_DOT_VNNI : KERNEL_DOT_I8 :
	    KERNEL_FMA));
	op.k = 62;					/* K tile 62: pairs */
	cfg_set(&c, 64, 64, 62, 8, 32, 1, 1);
	if (isa->vec_bytes == 64 && isa->avx512bw) {
		char *sc = mlircpu_schedule_op(&op, &c, "t", 0);

		CHECK(mlircpu_kernel(&op, &c) == KERNEL_DOT_I8);
		/* B in [n/16][k/2][16][2] panels, one contraction per row and panel. */
		CHECK(strstr(sc, "packed_sizes = [0, 16, 2]") != NULL);
		CHECK(strstr(sc, "tile_sizes [1, 1]") != NULL);
		CHECK(strstr(sc, "loop.unroll %l3#0 {factor = 8}") != NULL);
		free(sc);
	}
	/* u8 x s8 (either way round): vpdpbusd where the K tile is 4n. */
	op.k = 64;
	cfg_set(&c, 64, 64, 64, 8, 32, 1, 1);
	op.lhs_unsigned = 1;
	CHECK(mlircpu_kernel(&op, &c) == (isa->vec_bytes == 64 &&
	    isa->avx512bw ? isa->avx512_vnni ? KERNEL_DOT_VNNI : KERNEL_DOT_I8 :
	    KERNEL_FMA));
	if (mlircpu_kernel(&op, &c) == KERNEL_DOT_VNNI) {
		char *sc = mlircpu_schedule_op(&op, &c, "t", 0);

		CHECK(strstr(sc, "packed_sizes = [0, 16, 4]") != NULL);
		free(sc);
	}
	op.lhs_unsigned = 0;
	op.rhs_unsigned = 1;
	CHECK(mlircpu_kernel(&op, &c) == (isa->vec_bytes == 64 &&
	    isa->avx512bw ? isa->avx512_vnni ? KERNEL_DOT_VNNI : KERNEL_DOT_I8 :
	    KERNEL_FMA));
	op.lhs_unsigned = 1;				/* u8 x u8: no vpdpbusd */
	CHECK(mlircpu_kernel(&op, &c) != KERNEL_DOT_VNNI);
	op.lhs_unsigned = 0;
	op.rhs_unsigned = 0;
	{
		/* The module part's steps: the flattening for any dot kernel,
		 * the plugin's pass only for the VNNI one. */
		const enum mlircpu_kernel fma[] = { KERNEL_FMA },
		    i8[] = { KERNEL_FMA, KERNEL_DOT_I8 },
		    vnni[] = { KERNEL_FMA, KERNEL_DOT_VNNI };
		char *m0 = mlircpu_schedule_module("m", fma, 1);
		char *m1 = mlircpu_schedule_module("m", i8, 2);
		char *m2 = mlircpu_schedule_module("m", vnni, 2);

		CHECK(strstr(m0, "test-vector-linearize") == NULL);
		CHECK(strstr(m0, "autosched-vnni-dot") == NULL);
		CHECK(strstr(m1, "test-vector-linearize") != NULL);
		CHECK(strstr(m1, "autosched-vnni-dot") == NULL);
		CHECK(strstr(m2, "test-vector-linearize") != NULL);
		CHECK(strstr(m2, "autosched-vnni-dot") != NULL);
		free(m0);
		free(m1);
		free(m2);
	}
	cfg_set(&c, 64, 64, 64, 8, 32, 2, 1);		/* vector_k 2: FMA */
	CHECK(mlircpu_kernel(&op, &c) == KERNEL_FMA);
	cfg_set(&c, 64, 64, 64, 6, 32, 1, 1);		/* peeled M tile: FMA */
	CHECK(mlircpu_kernel(&op, &c) == KERNEL_FMA);
	cfg_set(&c, 64, 48, 63, 8, 24, 1, 1);		/* half panel, odd K tile */
	CHECK(mlircpu_kernel(&op, &c) == KERNEL_FMA);
	cfg_set(&c, 64, 64, 64, 8, 32, 1, 1);
	c.v[KNOB_PACK_B] = 0;				/* B in place: FMA */
	CHECK(mlircpu_kernel(&op, &c) == KERNEL_FMA);
	c.v[KNOB_PACK_B] = 1;
	op.transpose_a = 1;				/* A stored K x M: FMA */
	CHECK(mlircpu_kernel(&op, &c) == KERNEL_FMA);
	op.transpose_a = 0;
	op.lhs = op.rhs = ELEM_F16;			/* no f16 dot here */
	op.acc = ELEM_F32;
	CHECK(mlircpu_kernel(&op, &c) == KERNEL_FMA);

	for (t = 0; t < sizeof types / sizeof types[0]; t++) {
		int have = isa->vec_bytes == 64 && (types[t].in == ELEM_BF16 ?
		    isa->avx512_bf16 : isa->avx512bw);

		if (!have) {
			fprintf(stderr, "test_dot: no %s dot kernel on this "
			    "CPU (%s): only the config rules were checked\n",
			    analysis_elem_name(types[t].in), isa->name);
			continue;
		}
		for (thr = 1; thr <= 2; thr++) {
			static const struct {
				const char *kind;
				int64_t b, m, n, k;
				int tb;
				int tm, tn, tk, vm, vn;
			} shapes[] = {
				/* odd M, 3 panels, K (34) below a default tile */
				{ "matmul", 1, 37, 48, 34, 0, 37, 48, 34, 1, 48 },
				/* K split into cache tiles, 2 M chunks */
				{ "matmul", 1, 64, 64, 96, 0, 32, 64, 32, 8, 32 },
				/* M (3) below the default register tile, B transposed */
				{ "matmul", 1, 3, 32, 16, 1, 3, 32, 16, 3, 32 },
				/* a batch */
				{ "batch_matmul", 2, 24, 32, 20, 0, 24, 32, 20, 4, 16 },
			};
			size_t s;

			for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
				op_init(&op, shapes[s].kind, shapes[s].b,
				    shapes[s].m, shapes[s].n, shapes[s].k,
				    types[t].in, types[t].acc, 0, shapes[s].tb);
				op.lhs_unsigned = types[t].lhs_unsigned;
				op.rhs_unsigned = types[t].rhs_unsigned;
				op.name = "dot";
				d = generic_dispatch(&op);
				cfg_set(&c, shapes[s].tm, shapes[s].tn,
				    shapes[s].tk, shapes[s].vm, shapes[s].vn, 1,
				    thr);
				kernel = mlircpu_kernel(&op, &c);
				CHECK(kernel != KERNEL_FMA);
				/* i8 but u8 x u8, a K tile of 4n: vpdpbusd. */
				CHECK((kernel == KERNEL_DOT_VNNI) ==
				    (types[t].in == ELEM_I8 && isa->avx512_vnni &&
				    !(op.lhs_unsigned && op.rhs_unsigned) &&
				    shapes[s].tk % 4 == 0));
				run_one(&p, &op, d, &c, TRIAL_OK, &r);
				if (r.status == TRIAL_OK) {
					int has = kernel_has(r.artifact,
					    kernel_insn(kernel));

					if (has == -1)
						fprintf(stderr, "test_dot: no "
						    "objdump: %s not looked for\n",
						    kernel_insn(kernel));
					else
						CHECK(has == 1);
				}
				trial_result_clear(&r);
				free(d);
			}
		}
	}
}

/* The reference run times the library routine of the op's precision. */
static void
test_reference(void)
{
	const struct backend_ops *ops = backend_find("mlir-cpu");
	struct backend_params p;
	struct backend *be = NULL;
	struct op_desc op;
	struct trial_result r;
	char *d, *err = NULL;

	memset(&r, 0, sizeof r);
	params_init(&p);
	op_init(&op, "matmul", 1, 64, 48, 32, ELEM_I8, ELEM_I32, 0, 0);
	op.lhs_unsigned = 1;
	op.name = "matmul_u8_i8_ref";
	d = generic_dispatch(&op);
	CHECK(ops->open(&p, &op, d, &be, &err) == 0);
	if (be != NULL) {
		CHECK(ops->reference(be, 1, &r, &err) == 0);
		fprintf(stderr, "u8·i8 reference: %s same %d\n", r.ref_routine,
		    r.ref_same_precision);
		CHECK(r.status == TRIAL_OK);
		CHECK(strncmp(r.ref_routine, "onednn:matmul_u8s8s32", 21) == 0);
		CHECK(r.ref_same_precision == 1);
		trial_result_clear(&r);
		ops->close(be);
	}
	free(d);
	op_init(&op, "matmul", 1, 64, 48, 32, ELEM_F16, ELEM_F16, 0, 0);
	op.name = "matmul_f16_ref";
	d = generic_dispatch(&op);
	CHECK(ops->open(&p, &op, d, &be, &err) == 0);
	if (be != NULL) {
		CHECK(ops->reference(be, 1, &r, &err) == 0);
		fprintf(stderr, "f16 reference: %s same %d\n", r.ref_routine,
		    r.ref_same_precision);
		CHECK(r.status == TRIAL_OK);
		/* Where no library has f16, sgemm stands in and says so. */
		CHECK((r.ref_same_precision == 0 &&
		    strncmp(r.ref_routine, "openblas:sgemm[", 15) == 0) ||
		    (r.ref_same_precision == 1 &&
		    strncmp(r.ref_routine, "onednn:matmul_f16f16f16", 23) == 0));
		trial_result_clear(&r);
		ops->close(be);
	}
	free(d);
	free(err);
}

static void
test_faults(void)
{
	static const struct {
		const char		*kind;
		enum trial_status	 want;
	} faults[] = {
		{ "compile_fail", TRIAL_COMPILE_FAILED },
		{ "compile_hang", TRIAL_COMPILE_TIMEOUT },
		{ "crash", TRIAL_CRASHED },
		{ "hang", TRIAL_TIMEOUT },
		{ "wrong", TRIAL_WRONG_RESULT },
	};
	struct backend_params p;
	struct op_desc op;
	struct config c, other;
	struct trial_result r;
	char *d, env[200], name[160];
	size_t i;

	memset(&r, 0, sizeof r);
	params_init(&p);
	p.timeout = 3;
	p.compile_timeout = 60;
	op_init(&op, "matmul", 1, 64, 48, 32, ELEM_F32, ELEM_F32, 0, 0);
	op.name = "matmul_fault";
	d = generic_dispatch(&op);
	cfg_set(&c, 16, 48, 32, 4, 16, 1, 1);
	cfg_set(&other, 64, 48, 32, 4, 16, 1, 1);
	space_config_name(&c, 0x7f, name, sizeof name);
	for (i = 0; i < sizeof faults / sizeof faults[0]; i++) {
		/* compile_hang would otherwise wait for the whole compile budget. */
		p.compile_timeout = strcmp(faults[i].kind, "compile_hang") == 0 ?
		    3 : 120;
		snprintf(env, sizeof env, "%s:%s", faults[i].kind, name);
		setenv("AUTOSCHED_TEST_FAULT", env, 1);
		run_one(&p, &op, d, &c, faults[i].want, &r);
		CHECK(r.error != NULL);
		trial_result_clear(&r);
	}
	/* Switched out during timed repetitions: dropped and measured again. */
	setenv("AUTOSCHED_TEST_FAULT", "sleep:tile_16x48x32", 1);
	run_one(&p, &op, d, &c, TRIAL_OK, &r);
	CHECK(r.reps_dropped >= 1);
	trial_result_clear(&r);
	/* The switch aims at one config only: the others still run right. */
	p.compile_timeout = 120;
	run_one(&p, &op, d, &other, TRIAL_OK, &r);
	trial_result_clear(&r);
	unsetenv("AUTOSCHED_TEST_FAULT");
	free(d);
}

static void
test_cache(void)
{
	struct backend_params p;
	struct op_desc op;
	struct config c;
	struct trial_result r1, r2;
	char *d;

	memset(&r1, 0, sizeof r1);
	memset(&r2, 0, sizeof r2);
	params_init(&p);
	op_init(&op, "matmul", 1, 64, 48, 32, ELEM_F32, ELEM_F32, 0, 0);
	op.name = "matmul_cache";
	d = generic_dispatch(&op);
	cfg_set(&c, 64, 16, 32, 2, 16, 1, 1);
	run_one(&p, &op, d, &c, TRIAL_OK, &r1);
	run_one(&p, &op, d, &c, TRIAL_OK, &r2);
	CHECK(r1.compile_s > 0);
	CHECK(r2.compile_s == 0);
	CHECK(strcmp(r1.artifact, r2.artifact) == 0);
	trial_result_clear(&r1);
	trial_result_clear(&r2);
	free(d);
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

/* 1 if /proc/cpuinfo's first flags line has flag. */
static int
cpuinfo_has(const char *text, const char *flag)
{
	const char *line = strstr(text, "\nflags"), *end, *p;
	size_t n = strlen(flag);

	if (line == NULL)
		return -1;
	end = strchr(line + 1, '\n');
	for (p = strchr(line, ':'); p != NULL && p < end; p = strchr(p + 1, ' ')) {
		if (strncmp(p + 1, flag, n) == 0 && (p[1 + n] == ' ' ||
		    p + 1 + n == end))
			return 1;
	}
	return 0;
}

/* The run-time ISA detection agrees with the kernel's view of the CPU. */
/*
 * The cap (backend_cpu_isa_set): below the CPU's ISA the registers, the
 * rule, -march and the peers' environment follow it; auto restores it.
 */
static void
test_isa_cap(const struct mlircpu_isa *cpu)
{
	const struct mlircpu_isa *isa;
	const char *const *env;
	struct op_desc op;
	int above, peer = 0;

	if (!cpu->avx2)
		return;
	above = strcmp(cpu->name, "avx2") != 0;
	op_init(&op, "matmul", 1, 64, 64, 64, ELEM_F32, ELEM_F32, 0, 0);
	backend_cpu_isa_set("avx2");
	isa = mlircpu_isa();
	CHECK_STR(isa->name, "avx2");
	CHECK(isa->vec_bytes == 32 && isa->vec_regs == 16 && !isa->avx512f &&
	    !isa->avx512_bf16 && !isa->avx_vnni && isa->fma == cpu->fma);
	CHECK_STR(mlircpu_isa_march(), above ? "-march=x86-64-v3" :
	    "-march=native");
	CHECK(mlircpu_lanes(&op) == 8);
	CHECK(mlircpu_vector_ok(&op, 6, 16, 1) && !mlircpu_vector_ok(&op, 8,
	    32, 1) && !mlircpu_vector_ok(&op, 7, 16, 1));
	for (env = mlircpu_isa_env(); *env != NULL; env++)
		peer += strcmp(*env, "OPENBLAS_CORETYPE=Haswell") == 0 ||
		    strcmp(*env, "ONEDNN_MAX_CPU_ISA=AVX2") == 0;
	CHECK(peer == (above ? 2 : 0));
	backend_cpu_isa_set("sse2");
	isa = mlircpu_isa();
	CHECK(isa->vec_bytes == 16 && isa->vec_regs == 16 && !isa->fma &&
	    !isa->avx2);
	CHECK_STR(mlircpu_isa_march(), "-march=x86-64");
	backend_cpu_isa_set("auto");
	CHECK_STR(mlircpu_isa()->name, cpu->name);
	CHECK(mlircpu_isa()->vec_bytes == cpu->vec_bytes);
	CHECK_STR(mlircpu_isa_march(), "-march=native");
	CHECK(*mlircpu_isa_env() == NULL);
}

static void
test_isa(void)
{
	struct mlircpu_isa isa;
	char *text = NULL, desc[160];
	size_t len;

	CHECK(util_read_file("/proc/cpuinfo", 4 << 20, &text, &len, NULL) == 0);
	if (text == NULL)
		return;
	mlircpu_isa_detect(&isa);
	CHECK(cpuinfo_has(text, "avx2") == isa.avx2);
	CHECK(cpuinfo_has(text, "fma") == isa.fma);
	CHECK(cpuinfo_has(text, "f16c") == isa.f16c);
	CHECK(cpuinfo_has(text, "avx512f") == isa.avx512f);
	CHECK(cpuinfo_has(text, "avx512bw") == isa.avx512bw);
	CHECK(cpuinfo_has(text, "avx512vl") == isa.avx512vl);
	CHECK(cpuinfo_has(text, "avx512_vnni") == isa.avx512_vnni);
	CHECK(cpuinfo_has(text, "avx512_bf16") == isa.avx512_bf16);
	CHECK(cpuinfo_has(text, "avx_vnni") == isa.avx_vnni);
	/* The widths follow the flags. */
	if (isa.avx512f && isa.avx512bw && isa.avx512vl)
		CHECK(isa.vec_bytes == 64 && isa.vec_regs == 32 &&
		    strcmp(isa.name, "avx512") == 0);
	else if (isa.avx2)
		CHECK(isa.vec_bytes == 32 && isa.vec_regs == 16);
	else
		CHECK(isa.vec_bytes == 16);
	CHECK(isa.l1d >= 4096 && isa.l2 >= isa.l1d);
	mlircpu_isa_describe(&isa, desc, sizeof desc);
	printf("detected: %s; L1d %lld KiB, L2 %lld KiB\n", desc,
	    (long long)isa.l1d >> 10, (long long)isa.l2 >> 10);
	free(text);
	test_isa_cap(&isa);
}

int
main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "eval";

	if (mkdtemp(work_dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	if (strcmp(what, "eval") == 0)
		test_eval();
	else if (strcmp(what, "types") == 0)
		test_types();
	else if (strcmp(what, "reference") == 0)
		test_reference();
	else if (strcmp(what, "faults") == 0)
		test_faults();
	else if (strcmp(what, "cache") == 0)
		test_cache();
	else if (strcmp(what, "isa") == 0)
		test_isa();
	else if (strcmp(what, "split") == 0)
		test_split();
	else if (strcmp(what, "dot") == 0)
		test_dot();
	else if (strcmp(what, "space") == 0)
		test_space();
	else if (strcmp(what, "ragged") == 0)
		test_ragged();
	else if (strcmp(what, "pack_a") == 0)
		test_pack_a();
	else {
		fprintf(stderr, "usage: test_mlircpu "
		    "eval|types|reference|faults|cache|isa|split|dot|space|ragged|"
		    "pack_a\n");
		return 2;
	}
	nftw(work_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return check_done();
}
