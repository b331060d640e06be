/*
 * Tests of analysis/: every fixture form (pretty, generic, aliases, nested,
 * memref, transposed, mixed precision, IREE dumps, not-tunable ops, bad MLIR),
 * every op_desc field, and each dispatch checked by mlir-opt --verify-each.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "tests/check.h"
#include "util/util.h"

/* Load a fixture; NULL (and a failed check) if it does not parse. */
static struct analysis *
load(const char *name)
{
	struct analysis	*a = NULL;
	char		*path, *err = NULL;

	path = xasprintf("%s/%s", FIXTURES, name);
	if (analysis_load(path, &a, &err) != 0) {
		fprintf(stderr, "%s: %s\n", name, err);
		a = NULL;
	}
	CHECK(a != NULL);
	free(path);
	free(err);
	return a;
}

/* The op at i, with a failed check if there is none. */
static const struct op_desc *
op_at(struct analysis *a, size_t i)
{
	const struct op_desc	*d = a ? analysis_op(a, i) : NULL;
	static struct op_desc	 empty;

	CHECK(d != NULL);
	return d ? d : &empty;
}

/* The loc with its folder stripped: fixtures are found through FIXTURES. */
static const char *
base_loc(const struct op_desc *d)
{
	const char	*s = d->loc ? strrchr(d->loc, '/') : NULL;

	return s ? s + 1 : (d->loc ? d->loc : "");
}

/* Run the dispatch of every tunable op of a fixture through mlir-opt. */
static void
check_dispatches(const char *name)
{
	struct analysis		*a;
	const struct op_desc	*d;
	struct proc_result	 res;
	struct proc_opts	 opts;
	char			*text, *err = NULL, *tmp;
	char			*argv[] = { MLIR_OPT, "--verify-each", NULL,
				    NULL };
	size_t			 i;

	if ((a = load(name)) == NULL)
		return;
	for (i = 0; i < analysis_count(a); i++) {
		d = analysis_op(a, i);
		if (!d->tunable) {
			CHECK(analysis_emit_dispatch(d, &text, &err) == -1);
			CHECK(err != NULL && strstr(err, d->reason) != NULL);
			free(err);
			err = NULL;
			continue;
		}
		CHECK(analysis_emit_dispatch(d, &text, &err) == 0);
		if (text == NULL) {
			free(err);
			err = NULL;
			continue;
		}
		CHECK(strstr(text, "func.func @dispatch(%lhs: ") != NULL);
		tmp = xasprintf("%s/test_analysis_%ld_%zu.mlir",
		    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		    (long)getpid(), i);
		CHECK(util_write_file(tmp, text, strlen(text), &err) == 0);
		argv[2] = tmp;
		memset(&opts, 0, sizeof opts);
		opts.timeout = 60;
		memset(&res, 0, sizeof res);
		CHECK(proc_run(argv, &opts, &res, &err) == 0);
		CHECK(res.exited && res.status == 0);
		if (!res.exited || res.status != 0)
			fprintf(stderr, "%s (%s): mlir-opt rejects:\n%s\n%s\n",
			    name, d->name, text, res.err ? res.err : "");
		proc_result_free(&res);
		unlink(tmp);
		free(tmp);
		free(text);
		free(err);
		err = NULL;
	}
	analysis_free(a);
}

static void
test_seed(void)
{
	struct analysis		*a = load("seed.mlir");
	const struct op_desc	*d;

	if (a == NULL)
		return;
	CHECK(analysis_count(a) == 1);
	d = op_at(a, 0);
	CHECK(d->index == 0);
	CHECK_STR(d->kind, "matmul");
	CHECK_STR(d->op_name, "linalg.matmul");
	CHECK_STR(d->name, "matmul_1024x512x256_f32t_f32t_f32t");
	CHECK(d->batch == 1);
	CHECK(d->m == 1024 && d->n == 512 && d->k == 256);
	CHECK(d->lhs == ELEM_F32 && d->rhs == ELEM_F32 && d->acc == ELEM_F32);
	CHECK(!d->transpose_a && !d->transpose_b);
	CHECK(!d->lhs_unsigned && !d->rhs_unsigned);
	CHECK_STR(d->function, "matmul");
	CHECK_STR(base_loc(d), "seed.mlir:12:14");
	CHECK(d->tunable == 1);
	CHECK(d->reason == NULL);
	CHECK(analysis_op(a, 1) == NULL);
	analysis_free(a);
}

/* The same op text through analysis_parse, under a name of our choosing. */
static void
test_parse_buffer(void)
{
	const char	*src =
	    "func.func @f(%a: memref<8x4xi8>, %b: memref<4x2xi8>, "
	    "%c: memref<8x2xi8>) {\n"
	    "  linalg.matmul ins(%a, %b : memref<8x4xi8>, memref<4x2xi8>) "
	    "outs(%c : memref<8x2xi8>)\n"
	    "  return\n}\n";
	struct analysis		*a = NULL;
	const struct op_desc	*d;
	char			*err = NULL;

	CHECK(analysis_parse("buf.mlir", src, strlen(src), &a, &err) == 0);
	if (a == NULL)
		return;
	CHECK(analysis_count(a) == 1);
	d = op_at(a, 0);
	CHECK_STR(d->loc, "buf.mlir:2:3");
	CHECK_STR(d->name, "matmul_8x2x4_i8t_i8t_i8t");
	CHECK_STR(d->function, "f");
	analysis_free(a);

	/* A name with a line break must not break the dispatch's comment. */
	CHECK(analysis_parse("odd\nname.mlir", src, strlen(src), &a, &err) == 0);
	if (a != NULL) {
		char *text = NULL;

		CHECK(analysis_emit_dispatch(op_at(a, 0), &text, &err) == 0);
		CHECK(text != NULL && strstr(text, "odd?name.mlir:2:3") != NULL);
		free(text);
		analysis_free(a);
	}

	/* Not NUL-terminated: only len bytes are read. */
	CHECK(analysis_parse("cut.mlir", src, 10, &a, &err) == -1);
	CHECK(err != NULL && strncmp(err, "cut.mlir:1:", 11) == 0);
	free(err);
	err = NULL;
	/* Empty input is an empty module. */
	CHECK(analysis_parse("empty.mlir", "", 0, &a, &err) == 0);
	CHECK(a != NULL && analysis_count(a) == 0);
	analysis_free(a);
	{
		/*
		 * A permutation list MLIR 22's parser crashes on (it reports
		 * the bad element, then sets a null attribute: mlir-opt dies
		 * with SIGSEGV; found by fuzz_analysis): refused before it.
		 */
		static const char bad[] = "func.func @t(%a: tensor<4x8xf32>, "
		    "%b: tensor<8x4xf32>) -> tensor<8x4xf32> {\n  %t = "
		    "linalg.transpose ins(%a : tensor<4x8xf32>) outs(%b : "
		    "tensor<8x4xf32>) permutation = [1,, tensor<1x4xf32>) "
		    "outs(%b : tensor<1x4x 0]\n  return %t : tensor<8x4xf32>\n}\n";
		static const char good[] = "func.func @t(%a: tensor<4x8xf32>, "
		    "%b: tensor<8x4xf32>) -> tensor<8x4xf32> {\n  %t = "
		    "linalg.transpose ins(%a : tensor<4x8xf32>) outs(%b : "
		    "tensor<8x4xf32>) permutation = [1, 0]\n  return %t : "
		    "tensor<8x4xf32>\n}\n";

		a = NULL;
		err = NULL;
		CHECK(analysis_parse("perm.mlir", bad, strlen(bad), &a, &err) == -1);
		CHECK(err != NULL && strncmp(err, "perm.mlir:2: a permutation or "
		    "dimensions list that is not a list of integers", 73) == 0);
		free(err);
		err = NULL;
		CHECK(analysis_parse("perm.mlir", good, strlen(good), &a, &err) == 0);
		analysis_free(a);
		free(err);
	}
}

static void
test_forms(void)
{
	struct analysis		*a;
	const struct op_desc	*d;

	if ((a = load("generic_form.mlir")) != NULL) {
		CHECK(analysis_count(a) == 1);
		d = op_at(a, 0);
		CHECK_STR(d->name, "matmul_128x32x64_f32t_f32t_f32t");
		CHECK_STR(d->function, "generic_form");
		CHECK_STR(base_loc(d), "generic_form.mlir:8:10");
		CHECK(d->tunable);
		analysis_free(a);
	}
	if ((a = load("nested.mlir")) != NULL) {
		CHECK(analysis_count(a) == 1);
		d = op_at(a, 0);
		CHECK_STR(d->name, "matmul_64x16x32_bf16t_bf16t_f32t");
		CHECK(d->lhs == ELEM_BF16 && d->acc == ELEM_F32);
		CHECK_STR(d->function, "nested_mm");
		CHECK_STR(base_loc(d), "nested.mlir:9:12");
		CHECK(d->tunable);
		analysis_free(a);
	}
	if ((a = load("memref.mlir")) != NULL) {
		CHECK(analysis_count(a) == 1);
		d = op_at(a, 0);
		CHECK_STR(d->name, "matmul_512x256x128_f64t_f64t_f64t");
		CHECK(d->acc == ELEM_F64);
		CHECK_STR(base_loc(d), "memref.mlir:3:3");
		CHECK(d->tunable);
		analysis_free(a);
	}
	if ((a = load("batch_f16.mlir")) != NULL) {
		CHECK(analysis_count(a) == 1);
		d = op_at(a, 0);
		CHECK_STR(d->kind, "batch_matmul");
		CHECK_STR(d->op_name, "linalg.batch_matmul");
		CHECK_STR(d->name, "batch_matmul_16x1024x1024x80_f16t_f16t_f16t");
		CHECK(d->batch == 16 && d->m == 1024 && d->n == 1024 &&
		    d->k == 80);
		CHECK(d->lhs == ELEM_F16 && d->rhs == ELEM_F16 &&
		    d->acc == ELEM_F16);
		CHECK_STR(d->function, "attention_scores");
		CHECK(d->tunable);
		analysis_free(a);
	}
}

static void
test_transposed(void)
{
	struct analysis		*a = load("transposed.mlir");
	const struct op_desc	*d;

	if (a == NULL)
		return;
	CHECK(analysis_count(a) == 5);
	d = op_at(a, 0);
	CHECK_STR(d->name, "matmul_1024x512x256_f32n_f32t_f32t");
	CHECK(d->transpose_a && !d->transpose_b);
	CHECK(d->m == 1024 && d->n == 512 && d->k == 256);
	CHECK_STR(d->function, "transpose_a");
	d = op_at(a, 1);
	CHECK_STR(d->name, "matmul_1024x512x256_f32t_f32n_f32t");
	CHECK(!d->transpose_a && d->transpose_b);
	d = op_at(a, 2);
	CHECK_STR(d->name, "batch_matmul_8x64x128x32_f16t_f16n_f16t");
	CHECK(d->batch == 8 && !d->transpose_a && d->transpose_b);
	d = op_at(a, 3);
	CHECK_STR(d->op_name, "linalg.generic");
	CHECK_STR(d->kind, "matmul");
	CHECK_STR(d->name, "matmul_64x16x32_f32n_f32n_f32t");
	CHECK(d->tunable);
	d = op_at(a, 4);
	CHECK_STR(d->op_name, "linalg.contract");
	CHECK_STR(d->name, "matmul_128x32x64_f32t_f32n_f32t");
	CHECK(d->tunable);
	analysis_free(a);
}

static void
test_mixed(void)
{
	struct analysis		*a = load("mixed.mlir");
	const struct op_desc	*d;

	if (a == NULL)
		return;
	CHECK(analysis_count(a) == 4);
	d = op_at(a, 0);
	CHECK_STR(d->name, "matmul_256x64x128_i8t_i8t_i32t");
	CHECK(d->lhs == ELEM_I8 && d->rhs == ELEM_I8 && d->acc == ELEM_I32);
	CHECK(!d->lhs_unsigned && !d->rhs_unsigned);
	CHECK(d->tunable);
	d = op_at(a, 1);
	CHECK_STR(d->name, "matmul_64x48x32_f16t_f16t_f32t");
	CHECK(d->tunable);
	d = op_at(a, 2);
	CHECK_STR(d->name, "matmul_16x4x8_u8t_u8t_i32t");
	CHECK(d->lhs_unsigned && d->rhs_unsigned);
	CHECK(d->tunable);
	d = op_at(a, 3);
	CHECK_STR(d->name, "matmul_16x4x8_i8t_i16t_i32t");
	CHECK(d->rhs == ELEM_I16 && !d->lhs_unsigned && !d->rhs_unsigned);
	CHECK(d->tunable);
	analysis_free(a);
}

static void
test_iree(void)
{
	struct analysis		*a = load("iree_dispatch.mlir");
	const struct op_desc	*d;

	if (a == NULL)
		return;
	CHECK(analysis_count(a) == 1);
	d = op_at(a, 0);
	CHECK_STR(d->op_name, "linalg.generic");
	CHECK_STR(d->name, "matmul_384x128x512_f16t_f16t_f32t");
	CHECK_STR(d->function, "main_dispatch_0_matmul_384x128x512_f16xf16xf32");
	/* The op carries an explicit loc(): MLIR's own view wins. */
	CHECK_STR(d->loc, "model.mlir:12:10");
	CHECK(d->tunable);
	analysis_free(a);
}

static void
test_multi(void)
{
	struct analysis		*a = load("multi.mlir");
	const struct op_desc	*d;
	size_t			 i;

	if (a == NULL)
		return;
	CHECK(analysis_count(a) == 4);
	for (i = 0; i < analysis_count(a); i++)
		CHECK(op_at(a, i)->index == (int)i);
	d = op_at(a, 0);
	CHECK_STR(d->name, "matmul_32x256x784_f32t_f32t_f32t");
	CHECK_STR(d->function, "mlp");
	CHECK_STR(base_loc(d), "multi.mlir:6:8");
	d = op_at(a, 1);
	CHECK_STR(d->name, "matmul_32x10x256_f32t_f32t_f32t");
	CHECK_STR(base_loc(d), "multi.mlir:15:8");
	d = op_at(a, 2);
	CHECK_STR(d->name, "batch_matmul_4x128x128x64_f32t_f32t_f32t");
	CHECK_STR(d->function, "attention");
	d = op_at(a, 3);
	CHECK_STR(d->name, "batch_matmul_4x128x64x128_f32t_f32t_f32t");
	analysis_free(a);
}

/* One not-tunable op: its kind, name and the start of its reason. */
static void
check_not_tunable(const struct op_desc *d, const char *function,
    const char *kind, const char *name, const char *reason)
{
	CHECK_STR(d->function, function);
	CHECK_STR(d->kind, kind);
	CHECK_STR(d->name, name);
	CHECK(d->tunable == 0);
	CHECK(d->reason != NULL &&
	    strncmp(d->reason, reason, strlen(reason)) == 0);
	if (d->reason == NULL || strncmp(d->reason, reason, strlen(reason)))
		fprintf(stderr, "  %s: reason \"%s\"\n", function,
		    d->reason ? d->reason : "(null)");
}

static void
test_not_tunable(void)
{
	struct analysis		*a = load("not_tunable.mlir");
	const struct op_desc	*d;

	if (a == NULL)
		return;
	CHECK(analysis_count(a) == 10);
	d = op_at(a, 0);
	check_not_tunable(d, "dynamic", "matmul",
	    "matmul_?x?x?_f32t_f32t_f32t", "dynamic dimensions");
	CHECK(d->m == -1 && d->n == -1 && d->k == -1);
	CHECK(d->lhs == ELEM_F32);
	check_not_tunable(op_at(a, 1), "packed", "mmt4d", "mmt4d",
	    "packed layout (mmt4d)");
	check_not_tunable(op_at(a, 2), "wrong_body", "matmul",
	    "matmul_16x4x8_f32t_f32t_f32t", "body is not a multiply-accumulate");
	check_not_tunable(op_at(a, 3), "conv", "depthwise_conv_2d_nhwc_hwc",
	    "depthwise_conv_2d_nhwc_hwc_1x8x8x4_3x3x4_s1_d1_p0_f32t_f32t_f32t",
	    "depthwise convolution 3x3: not tuned yet");
	check_not_tunable(op_at(a, 4), "matvec", "matvec", "matvec",
	    "not a plain (batch) matmul: 0 batch, 1 m, 0 n, 1 k");
	check_not_tunable(op_at(a, 5), "complex", "matmul",
	    "matmul_4x4x4_unknownt_unknownt_unknownt",
	    "unsupported element type complex<f32>");
	check_not_tunable(op_at(a, 6), "fp8", "matmul",
	    "matmul_32x32x32_unknownt_unknownt_unknownt",
	    "unsupported element type f8E4M3FN");
	check_not_tunable(op_at(a, 7), "extra_dim", "generic", "generic",
	    "contraction with an extra dimension");
	check_not_tunable(op_at(a, 8), "transposed_result", "matmul",
	    "matmul", "transposed result");
	check_not_tunable(op_at(a, 9), "narrow_acc", "matmul",
	    "matmul_16x4x8_f32t_f32t_f16t", "body is not a multiply-accumulate");
	analysis_free(a);
}

/* A conv's geometry: input, filter, output, stride, dilation, padding. */
static void
check_conv(const struct op_desc *d, enum conv_layout layout,
    const int64_t g[9], const int64_t sdp[8])
{
	const struct op_conv *c = &d->conv;

	CHECK(c->layout == layout);
	CHECK(c->n == g[0] && c->h == g[1] && c->w == g[2] && c->c == g[3] &&
	    c->f == g[4] && c->kh == g[5] && c->kw == g[6] && c->oh == g[7] &&
	    c->ow == g[8]);
	CHECK(c->stride[0] == sdp[0] && c->stride[1] == sdp[1] &&
	    c->dilation[0] == sdp[2] && c->dilation[1] == sdp[3] &&
	    c->pad[0] == sdp[4] && c->pad[1] == sdp[5] &&
	    c->pad[2] == sdp[6] && c->pad[3] == sdp[7]);
}

/*
 * Convolutions: geometry, the matmuls they are tuned as (1x1 stride 1 and
 * im2col), names, identity, flops.
 */
static void
test_conv(void)
{
	static const int64_t one[8] = { 1, 1, 1, 1, 0, 0, 0, 0 };
	struct analysis		*a = load("conv.mlir");
	const struct op_desc	*d;
	char			*name;

	if (a == NULL)
		return;
	CHECK(analysis_count(a) == 14);
	/* 1x1 stride 1 NHWC: the matmul (N*H*W) x F x C, no im2col. */
	d = op_at(a, 0);
	CHECK(d->tunable && d->reason == NULL);
	CHECK_STR(d->kind, "matmul");
	CHECK_STR(d->op_name, "linalg.conv_2d_nhwc_hwcf");
	CHECK_STR(d->name, "matmul_196x64x256_f32t_f32t_f32t");
	CHECK(d->m == 196 && d->n == 64 && d->k == 256 && d->batch == 1);
	CHECK(!d->transpose_a && !d->transpose_b);
	CHECK(!analysis_conv_im2col(d));
	check_conv(d, CONV_NHWC_HWCF, (const int64_t[9]){ 1, 14, 14, 256, 64,
	    1, 1, 14, 14 }, one);
	name = analysis_conv_name(d);
	CHECK_STR(name, "conv_2d_nhwc_hwcf_1x14x14x256_1x1x256x64_s1_d1_p0_"
	    "f32t_f32t_f32t");
	free(name);
	CHECK(analysis_op_flops(d) == 2.0 * 196 * 64 * 256);
	/* 3x3 behind a zero pad: H and W before it; (OH*OW) x F x (9*C). */
	d = op_at(a, 1);
	CHECK(d->tunable);
	CHECK_STR(d->name, "matmul_64x32x144_f32t_f32t_f32t");
	CHECK(analysis_conv_im2col(d));
	check_conv(d, CONV_NHWC_HWCF, (const int64_t[9]){ 1, 8, 8, 16, 32, 3,
	    3, 8, 8 }, (const int64_t[8]){ 1, 1, 1, 1, 1, 1, 1, 1 });
	name = analysis_conv_name(d);
	CHECK_STR(name, "conv_2d_nhwc_hwcf_1x8x8x16_3x3x16x32_s1_d1_p1_"
	    "f32t_f32t_f32t");
	free(name);
	CHECK(analysis_op_flops(d) == 2.0 * 8 * 8 * 32 * 16 * 9);
	CHECK(analysis_op_same(d, op_at(a, 2)));
	/* Padding and dilation: another conv, the same matmul. */
	check_conv(op_at(a, 3), CONV_NHWC_HWCF, (const int64_t[9]){ 1, 8, 8,
	    16, 32, 3, 3, 8, 8 }, (const int64_t[8]){ 1, 1, 2, 2, 2, 2, 2, 2 });
	CHECK(analysis_op_same(d, op_at(a, 3)));
	/* The stem: stride 2, uneven padding. */
	d = op_at(a, 4);
	check_conv(d, CONV_NHWC_HWCF, (const int64_t[9]){ 1, 32, 32, 3, 64, 7,
	    7, 16, 16 }, (const int64_t[8]){ 2, 2, 1, 1, 3, 2, 3, 2 });
	CHECK_STR(d->name, "matmul_256x64x147_f32t_f32t_f32t");
	name = analysis_conv_name(d);
	CHECK_STR(name, "conv_2d_nhwc_hwcf_1x32x32x3_7x7x3x64_s2_d1_p3x2x3x2_"
	    "f32t_f32t_f32t");
	free(name);
	/* A strided 1x1: an im2col too. */
	d = op_at(a, 5);
	CHECK_STR(d->name, "matmul_16x128x64_f32t_f32t_f32t");
	CHECK(analysis_conv_im2col(d));
	/* 1x1 NCHW, batch 1: F x (H*W) x C, the filter the lhs. */
	d = op_at(a, 6);
	CHECK(d->tunable);
	CHECK_STR(d->name, "matmul_32x49x64_f32t_f32t_f32t");
	check_conv(d, CONV_NCHW_FCHW, (const int64_t[9]){ 1, 7, 7, 64, 32, 1,
	    1, 7, 7 }, one);
	name = analysis_conv_name(d);
	CHECK_STR(name, "conv_2d_nchw_fchw_1x64x7x7_32x64x1x1_s1_d1_p0_"
	    "f32t_f32t_f32t");
	free(name);
	check_not_tunable(op_at(a, 7), "nchw_batch", "conv_2d_nchw_fchw",
	    "conv_2d_nchw_fchw_2x64x7x7_32x64x1x1_s1_d1_p0_f32t_f32t_f32t",
	    "NCHW convolution of batch 2");
	/* Depthwise: not tuned; the same conv twice, a padded one apart. */
	d = op_at(a, 8);
	check_not_tunable(d, "depthwise", "depthwise_conv_2d_nhwc_hwc",
	    "depthwise_conv_2d_nhwc_hwc_1x10x10x32_3x3x32_s1_d1_p0_"
	    "f32t_f32t_f32t", "depthwise convolution 3x3");
	check_conv(d, CONV_DW_NHWC_HWC, (const int64_t[9]){ 1, 10, 10, 32, 32,
	    3, 3, 8, 8 }, one);
	CHECK(analysis_op_flops(d) == 2.0 * 8 * 8 * 32 * 9);
	CHECK(analysis_op_same(d, op_at(a, 10)));
	CHECK(!analysis_op_same(d, op_at(a, 9)));
	check_conv(op_at(a, 9), CONV_DW_NHWC_HWC, (const int64_t[9]){ 1, 8, 8,
	    32, 32, 3, 3, 8, 8 }, (const int64_t[8]){ 1, 1, 1, 1, 1, 1, 1, 1 });
	d = op_at(a, 11);
	CHECK(d->tunable);
	CHECK_STR(d->name, "matmul_16x16x32_i8t_i8t_i32t");
	CHECK(d->lhs == ELEM_I8 && d->rhs == ELEM_I8 && d->acc == ELEM_I32);
	d = op_at(a, 12);
	check_not_tunable(d, "pool", "convolution", "convolution",
	    "convolution (linalg.pooling_nhwc_max): autosched reads");
	CHECK(d->conv.layout == CONV_NONE);
	CHECK(!analysis_op_same(d, op_at(a, 12)));
	check_not_tunable(op_at(a, 13), "buffers", "conv_2d_nhwc_hwcf",
	    "conv_2d_nhwc_hwcf_1x4x4x8_1x1x8x8_s1_d1_p0_f32t_f32t_f32t",
	    "convolution on memrefs");
	analysis_free(a);
}

static void
test_edge(void)
{
	struct analysis		*a = load("edge.mlir");
	const struct op_desc	*d;

	if (a == NULL)
		return;
	CHECK(analysis_count(a) == 8);
	check_not_tunable(op_at(a, 0), "scalar_input", "generic", "generic",
	    "contraction with an extra dimension");
	check_not_tunable(op_at(a, 1), "batch_inner", "generic", "generic",
	    "batch dimension is not the outermost one");
	check_not_tunable(op_at(a, 2), "all_parallel_iter", "generic",
	    "generic", "iterator types do not make a matmul");
	check_not_tunable(op_at(a, 3), "int_to_float", "matmul",
	    "matmul_16x4x8_i8t_i8t_f32t", "body is not a multiply-accumulate");
	check_not_tunable(op_at(a, 4), "reduce_and_dot", "batch_reduce_matmul",
	    "batch_reduce_matmul", "not a plain (batch) matmul: 0 batch, 1 m, "
	    "1 n, 2 k");
	check_not_tunable(op_at(a, 5), "reduce_and_dot", "dot", "dot",
	    "not a plain (batch) matmul");
	/* Padded rows are fine: the problem is the same. */
	d = op_at(a, 6);
	CHECK_STR(d->name, "matmul_16x4x8_f32t_f32t_f32t");
	CHECK(d->tunable);
	check_not_tunable(op_at(a, 7), "column_major", "matmul",
	    "matmul_16x4x8_f32t_f32t_f32t", "strided layout");
	analysis_free(a);
}

/* Bad MLIR: -1 and MLIR's diagnostic, "file:line:col: message". */
static void
check_bad(const char *name, const char *where, const char *message)
{
	struct analysis	*a = NULL;
	char		*path, *err = NULL, *want;

	path = xasprintf("%s/%s", FIXTURES, name);
	want = xasprintf("%s/%s: %s", FIXTURES, where, message);
	CHECK(analysis_load(path, &a, &err) == -1);
	CHECK(a == NULL);
	CHECK_STR(err, want);
	free(want);
	free(path);
	free(err);
}

static void
test_bad(void)
{
	struct analysis	*a = NULL;
	char		*err = NULL;

	check_bad("bad_syntax.mlir", "bad_syntax.mlir:3:12", "expected ':'");
	check_bad("bad_type.mlir", "bad_type.mlir:2:29",
	    "expected non-function type");
	check_bad("removed_op.mlir", "removed_op.mlir:2:8",
	    "custom op 'linalg.matmul_transpose_b' is unknown");
	check_bad("bad_verify.mlir", "bad_verify.mlir:2:8",
	    "'linalg.matmul' op inferred input/output operand #2 has shape's "
	    "dimension #1 to be 8, but found 4");
	check_bad("bad_reduce_dims.mlir", "bad_reduce_dims.mlir:4:73",
	    "linalg op: `dimensions =` must be followed by a list such as "
	    "[0, 1]: refused before MLIR's parser, which crashes on anything "
	    "else there");
	CHECK(analysis_load(FIXTURES "/no_such_file.mlir", &a, &err) == -1);
	CHECK(err != NULL && strstr(err, "no_such_file.mlir") != NULL);
	free(err);
}

static void
test_elem(void)
{
	CHECK_STR(analysis_elem_name(ELEM_BF16), "bf16");
	CHECK_STR(analysis_elem_name(ELEM_UNKNOWN), "unknown");
	CHECK_STR(analysis_elem_name((enum elem_type)99), "unknown");
	CHECK_STR(analysis_operand_name(ELEM_I8, 1), "u8");
	CHECK_STR(analysis_operand_name(ELEM_I8, 0), "i8");
	CHECK_STR(analysis_operand_name(ELEM_F16, 1), "f16");
	CHECK_STR(analysis_operand_name((enum elem_type)99, 1), "unknown");
	CHECK(analysis_elem_size(ELEM_I8) == 1);
	CHECK(analysis_elem_size(ELEM_F64) == 8);
	CHECK(analysis_elem_size(ELEM_UNKNOWN) == 0);
	CHECK(analysis_elem_is_float(ELEM_F16));
	CHECK(!analysis_elem_is_float(ELEM_I32));
}

/* The exact text of one dispatch, the contract backends build on. */
static void
test_dispatch_text(void)
{
	struct analysis	*a = load("mixed.mlir");
	char		*text = NULL, *err = NULL;

	if (a == NULL)
		return;
	CHECK(analysis_emit_dispatch(op_at(a, 2), &text, &err) == 0);
	CHECK(text != NULL && strstr(text,
	    "func.func @dispatch(%lhs: tensor<16x8xi8>, %rhs: tensor<8x4xi8>, "
	    "%acc: tensor<16x4xi32>) -> tensor<16x4xi32>") != NULL);
	CHECK(text != NULL && strstr(text, "arith.extui %a : i8 to i32"));
	CHECK(text != NULL && strstr(text, "outs(%acc : tensor<16x4xi32>)"));
	free(text);
	analysis_free(a);
}

/* TOSA, lowered to linalg before analysis; locations into the TOSA lines. */
static void
test_tosa(void)
{
	struct analysis			*a = load("tosa.mlir");
	const struct analysis_lowering	*how;
	const struct op_desc		*d;
	size_t				 left = 99;

	if (a == NULL)
		return;
	how = analysis_lowered(a, &left);
	CHECK(how != NULL);
	CHECK_STR(how ? how->from : NULL, "TOSA");
	CHECK_STR(how ? how->pipeline : NULL, "builtin.module(func.func("
	    "tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),"
	    "remove-dead-values)");
	CHECK(left == 0);
	CHECK(analysis_count(a) == 4);
	d = op_at(a, 0);
	CHECK_STR(d->op_name, "linalg.batch_matmul");
	/* kᵀ (tosa.transpose) folded: k read stored N x K. */
	CHECK_STR(d->name, "batch_matmul_4x32x32x16_f32t_f32n_f32t");
	CHECK(d->batch == 4 && d->m == 32 && d->n == 32 && d->k == 16);
	CHECK(!d->transpose_a && d->transpose_b);
	CHECK(analysis_folded(a) == 1);
	CHECK_STR(d->function, "scores");
	CHECK_STR(base_loc(d), "tosa.mlir:10:10");	/* the tosa.matmul */
	CHECK(d->tunable);
	d = op_at(a, 1);
	CHECK_STR(d->name, "matmul_64x48x32_f32t_f32t_f32t");
	CHECK_STR(base_loc(d), "tosa.mlir:16:10");
	d = op_at(a, 2);
	CHECK_STR(d->name, "batch_matmul_2x8x4x16_i8t_i8t_i32t");
	CHECK(d->tunable && !d->lhs_unsigned && !d->rhs_unsigned);
	CHECK_STR(base_loc(d), "tosa.mlir:21:10");
	d = op_at(a, 3);
	CHECK_STR(d->op_name, "linalg.quantized_batch_matmul");
	/* A quantized op: tuned as its int8 matmul plus the corrections. */
	CHECK(d->tunable);
	CHECK_STR(d->kind, "quantized_batch_matmul");
	CHECK_STR(d->name, "quantized_batch_matmul_2x8x4x16_i8t_i8t_i32t");
	CHECK_STR(base_loc(d), "tosa.mlir:27:10");
	analysis_free(a);

	/* A program without TOSA is read as written. */
	if ((a = load("seed.mlir")) != NULL) {
		left = 99;
		CHECK(analysis_lowered(a, &left) == NULL);
		CHECK(left == 0);
		analysis_free(a);
	}
	/* TOSA the passes do not reach is left, and counted. */
	if ((a = load("tosa_nested.mlir")) != NULL) {
		CHECK(analysis_lowered(a, &left) != NULL);
		CHECK(left == 2);
		CHECK(analysis_count(a) == 0);
		analysis_free(a);
	}
}

/* A pass that fails: -1, its diagnostic at the op, the passes named. */
static void
test_tosa_unlowered(void)
{
	struct analysis	*a = NULL;
	char		*err = NULL, *text = (char *)"x";
	const struct analysis_lowering *how = NULL;

	CHECK(analysis_load(FIXTURES "/tosa_unlowered.mlir", &a, &err) == -1);
	CHECK(a == NULL);
	CHECK(err != NULL && strstr(err, FIXTURES "/tosa_unlowered.mlir:4:8: "
	    "failed to legalize operation 'tosa.custom'") == err);
	CHECK(err != NULL && strstr(err, "lowering TOSA to linalg before "
	    "analysis, with the upstream passes builtin.module(") != NULL);
	free(err);
	err = NULL;
	CHECK(analysis_lower(FIXTURES "/tosa_unlowered.mlir", &text, &how, NULL,
	    &err) == -1);
	CHECK(text == NULL && how == NULL);
	CHECK(err != NULL && strstr(err, "tosa.custom") != NULL);
	free(err);

	/* Shapes upstream's passes crash on: refused before any pass runs. */
	err = NULL;
	CHECK(analysis_load(FIXTURES "/tosa_unranked.mlir", &a, &err) == -1);
	CHECK(err != NULL && strstr(err, FIXTURES "/tosa_unranked.mlir:5:8: "
	    "'tosa.matmul' has a tensor whose shape is not static "
	    "(tensor<*xf32>): TOSA is lowered") == err);
	free(err);
	err = NULL;
	CHECK(analysis_load(FIXTURES "/tosa_dynamic.mlir", &a, &err) == -1);
	CHECK(err != NULL && strstr(err, FIXTURES "/tosa_dynamic.mlir:4:8: "
	    "'tosa.reduce_sum' has a tensor whose shape is not static "
	    "(tensor<2x?x4xf32>)") == err);
	free(err);
}

/*
 * analysis_lower: the lowered text with every location naming the file, and
 * the same ops when it is analysed again; nothing for a linalg program.
 */
static void
test_lower_text(void)
{
	const struct analysis_lowering	*how = NULL;
	struct analysis			*a = NULL, *b = NULL;
	char				*text = NULL, *err = NULL, *want;
	size_t				 i;

	CHECK(analysis_lower(FIXTURES "/tosa.mlir", &text, &how, NULL, &err) == 0);
	CHECK(how != NULL && strcmp(how->from, "TOSA") == 0);
	if (text == NULL)
		return;
	CHECK(strstr(text, "= tosa.") == NULL);	/* no TOSA op left */
	CHECK(strstr(text, "\"tosa.") == NULL);
	CHECK(strstr(text, "linalg.batch_matmul") != NULL);
	want = xasprintf("loc(\"%s/tosa.mlir\":10:10)", FIXTURES);
	CHECK(strstr(text, want) != NULL);
	free(want);
	CHECK(strstr(text, "loc(\"-\"") == NULL);
	a = load("tosa.mlir");
	CHECK(analysis_parse(FIXTURES "/tosa.mlir", text, strlen(text), &b,
	    &err) == 0);
	CHECK(b != NULL && analysis_lowered(b, NULL) == NULL);
	if (a != NULL && b != NULL) {
		CHECK(analysis_count(a) == analysis_count(b));
		for (i = 0; i < analysis_count(a) && i < analysis_count(b); i++) {
			CHECK_STR(op_at(a, i)->name, op_at(b, i)->name);
			CHECK_STR(op_at(a, i)->loc, op_at(b, i)->loc);
		}
	}
	analysis_free(a);
	analysis_free(b);
	free(text);
	text = (char *)"x";
	CHECK(analysis_lower(FIXTURES "/seed.mlir", &text, &how, NULL, &err) == 0);
	CHECK(text == NULL && how == NULL);
}

/*
 * The real DeepSeek-R1 block (TOSA 1.0 + linalg, PROVENANCE.md): all 9
 * matmuls, the 2 tosa.matmul as batch_matmuls at their lines, and every op
 * named and keyed as in the file lowered by mlir-opt, so one store serves
 * both.
 */
static void
test_tosa_model(void)
{
	struct analysis		*t = load("deepseek_r1_qwen1p5b_block_prefill40_f32_tosa.mlir");
	struct analysis		*l = load("deepseek_r1_qwen1p5b_block_prefill40_f32_tosa.lowered.mlir");
	const struct op_desc	*x, *y;
	size_t			 i, ntunable = 0;

	if (t == NULL || l == NULL)
		goto out;
	CHECK(analysis_lowered(t, NULL) != NULL);
	CHECK(analysis_lowered(l, NULL) == NULL);
	CHECK(analysis_count(t) == 9);
	CHECK(analysis_count(l) == 9);
	for (i = 0; i < analysis_count(t) && i < analysis_count(l); i++) {
		x = op_at(t, i);
		y = op_at(l, i);
		ntunable += x->tunable;
		CHECK_STR(x->name, y->name);
		CHECK_STR(x->kind, y->kind);
		CHECK(x->batch == y->batch && x->m == y->m && x->n == y->n &&
		    x->k == y->k);
		CHECK(x->lhs == y->lhs && x->rhs == y->rhs && x->acc == y->acc);
		CHECK(x->transpose_a == y->transpose_a &&
		    x->transpose_b == y->transpose_b);
		CHECK(x->lhs_unsigned == y->lhs_unsigned &&
		    x->rhs_unsigned == y->rhs_unsigned);
		CHECK_STR(x->function, y->function);
	}
	CHECK(ntunable == 9);
	x = op_at(t, 3);
	CHECK_STR(x->name, "batch_matmul_12x40x40x128_f32t_f32t_f32t");
	CHECK_STR(base_loc(x),
	    "deepseek_r1_qwen1p5b_block_prefill40_f32_tosa.mlir:137:11");
	x = op_at(t, 4);
	CHECK_STR(x->name, "batch_matmul_12x40x128x40_f32t_f32t_f32t");
	CHECK_STR(base_loc(x),
	    "deepseek_r1_qwen1p5b_block_prefill40_f32_tosa.mlir:187:11");
	/* The linalg.matmuls keep their own lines. */
	CHECK_STR(base_loc(op_at(t, 0)),
	    "deepseek_r1_qwen1p5b_block_prefill40_f32_tosa.mlir:62:11");
out:
	analysis_free(t);
	analysis_free(l);
}

static int verifies(const char *what, const char *text);

/* Occurrences of needle in hay. */
static size_t
count_of(const char *hay, const char *needle)
{
	size_t n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/*
 * Transposes folded into the matmuls that read them (fold.c): the ops
 * named with the operand stored transposed, the transposes gone where
 * nothing else reads them, the program as read valid and read again the
 * same; those left alone (the batch dim moved, the output).
 */
static void
test_fold(void)
{
	static const char *const names[] = {
		"matmul_40x96x64_f32t_f32n_f32t",	/* x·Wᵀ */
		"matmul_40x96x64_f32n_f32t_f32t",	/* shared transpose */
		"batch_matmul_4x32x32x16_f32t_f32n_f32t",	/* q·kᵀ */
		"matmul_40x96x64_f32t_f32t_f32t",	/* twice: plain */
		"batch_matmul_4x32x32x16_f32t_f32t_f32t",	/* moves batch */
		"matmul_40x96x64_f32t_f32n_f32t",	/* a generic copy */
		"matmul_40x96x64_f32t_f32t_f32t",	/* a generic negf */
		"matmul_40x96x64_f32t_f32t_f32t",	/* into the output */
	};
	const struct analysis_lowering *how = NULL;
	struct analysis	*a = load("fold.mlir"), *b = NULL;
	char		*text = NULL, *err = NULL, *said;
	size_t		 i, folded = 0;

	if (a == NULL)
		return;
	CHECK(analysis_count(a) == 8);
	for (i = 0; i < 8 && i < analysis_count(a); i++)
		CHECK_STR(op_at(a, i)->name, names[i]);
	CHECK(analysis_folded(a) == 5);
	CHECK(analysis_lowered(a, NULL) == NULL);
	said = analysis_folded_said(a);
	CHECK_STR(said, "5 transposes folded into the matmuls that read them "
	    "(swapping the last two dims): those operands are read stored "
	    "transposed, not copied");
	free(said);
	CHECK(analysis_lower(FIXTURES "/fold.mlir", &text, &how, &folded,
	    &err) == 0);
	CHECK(how == NULL && folded == 5);
	if (text != NULL) {
		/* shared's (also returned), moves_batch's, into_acc's. */
		CHECK(count_of(text, "linalg.transpose") == 3);
		CHECK(count_of(text, "linalg.generic") == 1);	/* the negf */
		CHECK(count_of(text, "tensor.empty") == 4);
		CHECK(verifies("fold.mlir as read", text));
		CHECK(analysis_parse(FIXTURES "/fold.mlir", text, strlen(text),
		    &b, &err) == 0);
		CHECK(b != NULL && analysis_folded(b) == 0);
		for (i = 0; b != NULL && i < 8 && i < analysis_count(b); i++) {
			CHECK_STR(op_at(b, i)->name, names[i]);
			CHECK_STR(op_at(b, i)->loc, op_at(a, i)->loc);
		}
	}
	analysis_free(a);
	analysis_free(b);
	free(text);
	/* Nothing to fold: nothing said, the file used as written. */
	if ((a = load("seed.mlir")) != NULL) {
		CHECK(analysis_folded(a) == 0);
		CHECK(analysis_folded_said(a) == NULL);
		analysis_free(a);
	}
}

/* mlir-opt --verify-each accepts text (unregistered dialects allowed). */
static int
verifies(const char *what, const char *text)
{
	struct proc_result	 res;
	struct proc_opts	 opts;
	char			*err = NULL, *tmp;
	char			*argv[] = { MLIR_OPT, "--verify-each",
				    "--allow-unregistered-dialect", NULL, NULL };
	int			 ok;

	tmp = xasprintf("%s/test_analysis_%ld_outlined.mlir",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
	if (util_write_file(tmp, text, strlen(text), &err) != 0) {
		fprintf(stderr, "%s\n", err);
		free(err);
		free(tmp);
		return 0;
	}
	argv[3] = tmp;
	memset(&opts, 0, sizeof opts);
	opts.timeout = 60;
	memset(&res, 0, sizeof res);
	ok = proc_run(argv, &opts, &res, &err) == 0 && res.exited &&
	    res.status == 0;
	if (!ok)
		fprintf(stderr, "%s: mlir-opt rejects the outlined program:\n"
		    "%s\n%s\n", what, text, res.err ? res.err : err);
	proc_result_free(&res);
	unlink(tmp);
	free(tmp);
	free(err);
	return ok;
}

/* Lines of text holding needle. */
static size_t
count(const char *text, const char *needle)
{
	size_t n = 0;

	for (; text != NULL && (text = strstr(text, needle)) != NULL; text++)
		n++;
	return n;
}

/* The line of text holding needle, or "" (a failed check). Caller frees. */
static char *
line_of(const char *text, const char *needle)
{
	const char *p = text != NULL ? strstr(text, needle) : NULL, *b, *e;

	CHECK(p != NULL);
	if (p == NULL)
		return xstrdup("");
	for (b = p; b > text && b[-1] != '\n'; b--)
		;
	e = strchr(p, '\n');
	return e != NULL ? xstrndup(b, (size_t)(e - b)) : xstrdup(b);
}

/*
 * ANALYSIS_FUSE_NORMALIZE: a matmul's consumer after a unit reshape (the
 * 8x16 result read as 1x8x16 and back, as exporters write it) and an
 * arith op on the whole tensor after it join its dispatch
 * once the unit dims are folded; not when a generic is a contraction (a
 * tuned op known by its shape), nor without the flag.
 */
static void
test_outline_unit_dims(void)
{
	static const char head[] =
	    "#id = affine_map<(d0, d1) -> (d0, d1)>\n"
	    "#row = affine_map<(d0, d1) -> (d1)>\n"
	    "#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>\n"
	    "#mk = affine_map<(d0, d1, d2) -> (d0, d2)>\n"
	    "#kn = affine_map<(d0, d1, d2) -> (d2, d1)>\n"
	    "#mn = affine_map<(d0, d1, d2) -> (d0, d1)>\n"
	    "func.func @f(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>,\n"
	    "    %c: tensor<8x16xf32>, %bias: tensor<16xf32>)\n"
	    "    -> (tensor<8x16xf32>, tensor<8x16xf32>) {\n"
	    "  %e = tensor.empty() : tensor<8x16xf32>\n"
	    "  %e3 = tensor.empty() : tensor<1x8x16xf32>\n"
	    "  %m = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x16xf32>)\n"
	    "      outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>\n"
	    "  %x = linalg.generic {indexing_maps = [#id, #row, #id],\n"
	    "      iterator_types = [\"parallel\", \"parallel\"]}\n"
	    "      ins(%m, %bias : tensor<8x16xf32>, tensor<16xf32>)\n"
	    "      outs(%e : tensor<8x16xf32>) {\n"
	    "  ^bb0(%p: f32, %q: f32, %o: f32):\n"
	    "    %s = arith.addf %p, %q : f32\n"
	    "    linalg.yield %s : f32\n"
	    "  } -> tensor<8x16xf32>\n"
	    "  %x3 = tensor.expand_shape %x [[0, 1], [2]] output_shape [1, 8, 16]\n"
	    "      : tensor<8x16xf32> into tensor<1x8x16xf32>\n"
	    "  %y = linalg.generic {indexing_maps = [#id3, #id3],\n"
	    "      iterator_types = [\"parallel\", \"parallel\", \"parallel\"]}\n"
	    "      ins(%x3 : tensor<1x8x16xf32>) outs(%e3 : tensor<1x8x16xf32>) {\n"
	    "  ^bb0(%p: f32, %o: f32):\n"
	    "    %s = math.tanh %p : f32\n"
	    "    linalg.yield %s : f32\n"
	    "  } -> tensor<1x8x16xf32>\n"
	    "  %y2 = tensor.collapse_shape %y [[0, 1], [2]]\n"
	    "      : tensor<1x8x16xf32> into tensor<8x16xf32>\n";
	/* An arith op on the whole tensor (made a generic first) ends it. */
	static const char plain[] =
	    "  %n = arith.negf %y2 : tensor<8x16xf32>\n"
	    "  return %n, %c : tensor<8x16xf32>, tensor<8x16xf32>\n}\n";
	/* The same matmul written as a generic: a contraction. */
	static const char contraction[] =
	    "  %g = linalg.generic {indexing_maps = [#mk, #kn, #mn],\n"
	    "      iterator_types = [\"parallel\", \"parallel\", \"reduction\"]}\n"
	    "      ins(%a, %b : tensor<8x4xf32>, tensor<4x16xf32>)\n"
	    "      outs(%c : tensor<8x16xf32>) {\n"
	    "  ^bb0(%p: f32, %q: f32, %o: f32):\n"
	    "    %s = arith.mulf %p, %q : f32\n"
	    "    %t = arith.addf %o, %s : f32\n"
	    "    linalg.yield %t : f32\n"
	    "  } -> tensor<8x16xf32>\n"
	    "  return %y2, %g : tensor<8x16xf32>, tensor<8x16xf32>\n}\n";
	const int both = ANALYSIS_FUSE_EPILOGUE | ANALYSIS_FUSE_NORMALIZE;
	struct analysis_fused fu = { 0 };
	char *path, *src, *text = NULL, *err = NULL;
	size_t n = 0;

	path = xasprintf("%s/test_analysis_%ld_units.mlir",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
	src = xasprintf("%s%s", head, plain);
	CHECK(util_write_file(path, src, strlen(src), &err) == 0);
	free(src);
	/* Folded: the bias add, the tanh and the negf in the matmul's dispatch. */
	CHECK(analysis_outline_fused(path, 1, both, &text, &n, &fu, &err) == 0);
	CHECK(text != NULL && verifies("outline unit dims", text));
	CHECK(fu.nops == 1 && fu.nconsumers == 3 && fu.nreshapes == 2 &&
	    fu.nconverted == 1);
	CHECK(n == 1);
	CHECK(text != NULL && count(text, "{autosched.epilogue_end}") == 1);
	free(text);
	text = NULL;
	/* Not folded: the reshape cuts the chain after the bias add. */
	CHECK(analysis_outline_fused(path, 1, ANALYSIS_FUSE_EPILOGUE, &text,
	    &n, &fu, &err) == 0);
	CHECK(fu.nops == 1 && fu.nconsumers == 1 && fu.nreshapes == 0);
	free(text);
	text = NULL;
	/* A contraction among the generics: nothing folded. */
	src = xasprintf("%s%s", head, contraction);
	CHECK(util_write_file(path, src, strlen(src), &err) == 0);
	free(src);
	CHECK(analysis_outline_fused(path, 1, both, &text, &n, &fu, &err) == 0);
	CHECK(fu.nconsumers == 1 && fu.nreshapes == 0 && fu.nconverted == 0);
	CHECK(text != NULL && strstr(text, "tensor<1x8x16xf32>") != NULL);
	unlink(path);
	free(path);
	free(text);
	free(err);
}

/*
 * analysis_outline_fused with ANALYSIS_FUSE_ROWS: a row max, the shift by
 * it and a row sum (a reduction among them, a fill for each) are one
 * dispatch marked autosched.rows (and autosched.chain) though an
 * unrelated op sits between them; with the max also returned (a value
 * used outside) the group is the shift and the sum alone; without the
 * flag, no group.
 */
static void
test_outline_rows(void)
{
	static const char body[] =
	    "#id = affine_map<(d0, d1) -> (d0, d1)>\n"
	    "#row = affine_map<(d0, d1) -> (d0)>\n"
	    "func.func @f(%%x: tensor<8x16xf32>, %%y: tensor<8x16xf32>)\n"
	    "    -> (tensor<8xf32>, tensor<8x16xf32>%s) {\n"
	    "  %%z = arith.constant 0.0 : f32\n"
	    "  %%e = tensor.empty() : tensor<8xf32>\n"
	    "  %%e2 = tensor.empty() : tensor<8x16xf32>\n"
	    "  %%f = linalg.fill ins(%%z : f32) outs(%%e : tensor<8xf32>) -> tensor<8xf32>\n"
	    "  %%m = linalg.generic {indexing_maps = [#id, #row],\n"
	    "      iterator_types = [\"parallel\", \"reduction\"]}\n"
	    "      ins(%%x : tensor<8x16xf32>) outs(%%f : tensor<8xf32>) {\n"
	    "  ^bb0(%%p: f32, %%o: f32):\n"
	    "    %%r = arith.maximumf %%p, %%o : f32\n"
	    "    linalg.yield %%r : f32\n"
	    "  } -> tensor<8xf32>\n"
	    /* Reads none of the group's values: stays where it is. */
	    "  %%u = linalg.generic {indexing_maps = [#id, #id],\n"
	    "      iterator_types = [\"parallel\", \"parallel\"]}\n"
	    "      ins(%%y : tensor<8x16xf32>) outs(%%e2 : tensor<8x16xf32>) {\n"
	    "  ^bb0(%%p: f32, %%o: f32):\n"
	    "    %%r = math.exp %%p : f32\n"
	    "    linalg.yield %%r : f32\n"
	    "  } -> tensor<8x16xf32>\n"
	    "  %%c = linalg.generic {indexing_maps = [#id, #row, #id],\n"
	    "      iterator_types = [\"parallel\", \"parallel\"]}\n"
	    "      ins(%%x, %%m : tensor<8x16xf32>, tensor<8xf32>)\n"
	    "      outs(%%e2 : tensor<8x16xf32>) {\n"
	    "  ^bb0(%%p: f32, %%q: f32, %%o: f32):\n"
	    "    %%r = arith.subf %%p, %%q : f32\n"
	    "    linalg.yield %%r : f32\n"
	    "  } -> tensor<8x16xf32>\n"
	    "  %%f2 = linalg.fill ins(%%z : f32) outs(%%e : tensor<8xf32>) -> tensor<8xf32>\n"
	    "  %%s = linalg.generic {indexing_maps = [#id, #row],\n"
	    "      iterator_types = [\"parallel\", \"reduction\"]}\n"
	    "      ins(%%c : tensor<8x16xf32>) outs(%%f2 : tensor<8xf32>) {\n"
	    "  ^bb0(%%p: f32, %%o: f32):\n"
	    "    %%r = arith.addf %%p, %%o : f32\n"
	    "    linalg.yield %%r : f32\n"
	    "  } -> tensor<8xf32>\n"
	    "  return %%s, %%u%s : tensor<8xf32>, tensor<8x16xf32>%s\n"
	    "}\n";
	struct analysis_fused fu = { 0 };
	char *path, *src, *text = NULL, *err = NULL;
	size_t n = 0;

	path = xasprintf("%s/test_analysis_%ld_rows.mlir",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
	src = xasprintf(body, "", "", "");
	CHECK(util_write_file(path, src, strlen(src), &err) == 0);
	free(src);
	CHECK(analysis_outline_fused(path, 1, ANALYSIS_FUSE_ROWS |
	    ANALYSIS_FUSE_CHAINS, &text, &n, &fu, &err) == 0);
	CHECK(text != NULL && verifies("outline rows", text));
	/* fill, max, shift, fill, sum: one dispatch; exp its own. */
	CHECK(n == 2 && fu.nrows == 1 && fu.nrowed == 5 && fu.nchains == 0);
	CHECK(text != NULL && count(text, "autosched.rows") == 1 &&
	    count(text, "autosched.chain") == 1);
	free(text);
	text = NULL;
	/* Without the flag: each op its own dispatch. */
	CHECK(analysis_outline_fused(path, 1, ANALYSIS_FUSE_CHAINS, &text, &n,
	    &fu, &err) == 0);
	CHECK(n == 5 && fu.nrows == 0 && fu.nchains == 1);
	CHECK(text != NULL && strstr(text, "autosched.rows") == NULL);
	free(text);
	text = NULL;
	/* The max also returned: used outside, so the group starts after it. */
	src = xasprintf(body, ", tensor<8xf32>", ", %m", ", tensor<8xf32>");
	CHECK(util_write_file(path, src, strlen(src), &err) == 0);
	free(src);
	CHECK(analysis_outline_fused(path, 1, ANALYSIS_FUSE_ROWS |
	    ANALYSIS_FUSE_CHAINS, &text, &n, &fu, &err) == 0);
	CHECK(text != NULL && verifies("outline rows, max returned", text));
	CHECK(n == 4 && fu.nrows == 1 && fu.nrowed == 3);
	free(text);
	text = NULL;
	/* The max's reader in a loop: it stays there, no group. */
	src = xstrdup(
	    "#id = affine_map<(d0, d1) -> (d0, d1)>\n"
	    "#row = affine_map<(d0, d1) -> (d0)>\n"
	    "func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {\n"
	    "  %z = arith.constant 0.0 : f32\n"
	    "  %c0 = arith.constant 0 : index\n"
	    "  %c1 = arith.constant 1 : index\n"
	    "  %e = tensor.empty() : tensor<8xf32>\n"
	    "  %e2 = tensor.empty() : tensor<8x16xf32>\n"
	    "  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>\n"
	    "  %m = linalg.generic {indexing_maps = [#id, #row],\n"
	    "      iterator_types = [\"parallel\", \"reduction\"]}\n"
	    "      ins(%x : tensor<8x16xf32>) outs(%f : tensor<8xf32>) {\n"
	    "  ^bb0(%p: f32, %o: f32):\n"
	    "    %r = arith.maximumf %p, %o : f32\n"
	    "    linalg.yield %r : f32\n"
	    "  } -> tensor<8xf32>\n"
	    "  %l = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %e2) -> (tensor<8x16xf32>) {\n"
	    "    %c = linalg.generic {indexing_maps = [#id, #row, #id],\n"
	    "        iterator_types = [\"parallel\", \"parallel\"]}\n"
	    "        ins(%x, %m : tensor<8x16xf32>, tensor<8xf32>)\n"
	    "        outs(%a : tensor<8x16xf32>) {\n"
	    "    ^bb0(%p: f32, %q: f32, %o: f32):\n"
	    "      %r = arith.subf %p, %q : f32\n"
	    "      linalg.yield %r : f32\n"
	    "    } -> tensor<8x16xf32>\n"
	    "    scf.yield %c : tensor<8x16xf32>\n"
	    "  }\n"
	    "  return %l : tensor<8x16xf32>\n"
	    "}\n");
	CHECK(util_write_file(path, src, strlen(src), &err) == 0);
	free(src);
	CHECK(analysis_outline_fused(path, 1, ANALYSIS_FUSE_ROWS |
	    ANALYSIS_FUSE_CHAINS, &text, &n, &fu, &err) == 0);
	CHECK(text != NULL && verifies("outline rows, reader in a loop", text));
	CHECK(fu.nrows == 0 && n == 3);
	if (err != NULL)
		fprintf(stderr, "outline rows: %s\n", err);
	unlink(path);
	free(path);
	free(text);
	free(err);
}

/*
 * analysis_outline_fused: a matmul's chain of elementwise consumers joins
 * its dispatch, written in place and marked; a consumer with a second user,
 * or one whose body reads its output, stays a dispatch of its own. With
 * chains alone, the two consumers are one dispatch marked autosched.chain.
 */
static void
test_outline_fused(void)
{
	static const char src[] =
	    "#id = affine_map<(d0, d1) -> (d0, d1)>\n"
	    "#row = affine_map<(d0, d1) -> (d1)>\n"
	    "func.func @f(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>,\n"
	    "    %c: tensor<8x16xf32>, %bias2: tensor<1x16xf32>)\n"
	    "    -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {\n"
	    "  %e = tensor.empty() : tensor<8x16xf32>\n"
	    "  %m = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x16xf32>)\n"
	    "      outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>\n"
	    /* A consumer's operand made after the matmul: the call goes after it. */
	    "  %bias = tensor.collapse_shape %bias2 [[0, 1]]\n"
	    "      : tensor<1x16xf32> into tensor<16xf32>\n"
	    "  %x = linalg.generic {indexing_maps = [#id, #row, #id],\n"
	    "      iterator_types = [\"parallel\", \"parallel\"]}\n"
	    "      ins(%m, %bias : tensor<8x16xf32>, tensor<16xf32>)\n"
	    "      outs(%e : tensor<8x16xf32>) {\n"
	    "  ^bb0(%p: f32, %q: f32, %o: f32):\n"
	    "    %s = arith.addf %p, %q : f32\n"
	    "    linalg.yield %s : f32\n"
	    "  } -> tensor<8x16xf32>\n"
	    "  %y = linalg.generic {indexing_maps = [#id, #id],\n"
	    "      iterator_types = [\"parallel\", \"parallel\"]}\n"
	    "      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {\n"
	    "  ^bb0(%p: f32, %o: f32):\n"
	    "    %s = math.tanh %p : f32\n"
	    "    linalg.yield %s : f32\n"
	    "  } -> tensor<8x16xf32>\n"
	    /* Two users of %m2: no consumer joins it. */
	    "  %m2 = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x16xf32>)\n"
	    "      outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>\n"
	    "  %z = linalg.generic {indexing_maps = [#id, #id, #id],\n"
	    "      iterator_types = [\"parallel\", \"parallel\"]}\n"
	    "      ins(%m2, %m2 : tensor<8x16xf32>, tensor<8x16xf32>)\n"
	    "      outs(%e : tensor<8x16xf32>) {\n"
	    "  ^bb0(%p: f32, %q: f32, %o: f32):\n"
	    "    %s = arith.mulf %p, %q : f32\n"
	    "    linalg.yield %s : f32\n"
	    "  } -> tensor<8x16xf32>\n"
	    /* The body reads the output's old value: not in place. */
	    "  %m3 = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x16xf32>)\n"
	    "      outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>\n"
	    "  %w = linalg.generic {indexing_maps = [#id, #id],\n"
	    "      iterator_types = [\"parallel\", \"parallel\"]}\n"
	    "      ins(%m3 : tensor<8x16xf32>) outs(%c : tensor<8x16xf32>) {\n"
	    "  ^bb0(%p: f32, %o: f32):\n"
	    "    %s = arith.addf %p, %o : f32\n"
	    "    linalg.yield %s : f32\n"
	    "  } -> tensor<8x16xf32>\n"
	    "  return %y, %z, %w : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>\n"
	    "}\n";
	struct analysis_fused fu = { 0 };
	char *path, *text = NULL, *err = NULL, *line;
	size_t n = 0;

	path = xasprintf("%s/test_analysis_%ld_fused.mlir",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
	CHECK(util_write_file(path, src, strlen(src), &err) == 0);
	CHECK(analysis_outline_fused(path, 1, 1, &text, &n, &fu, &err) == 0);
	if (text == NULL) {
		fprintf(stderr, "outline fused: %s\n", err);
		free(err);
		unlink(path);
		free(path);
		return;
	}
	CHECK(verifies("outline fused", text));
	/* The first matmul with its two consumers; 2 matmuls, 2 generics alone. */
	CHECK(fu.nops == 1 && fu.nconsumers == 2);
	CHECK(n == 5);
	CHECK(count(text, "func.func private @__autosched_") == 5);
	CHECK(count(text, "{autosched.epilogue}") == 1);
	CHECK(count(text, "{autosched.epilogue_end}") == 1);
	line = line_of(text, "func.func private @__autosched_f_0_matmul(");
	CHECK(line != NULL && strstr(line, "-> tensor<8x16xf32>") != NULL);
	free(line);
	/* In place: each consumer writes into the value it reads. */
	CHECK(strstr(text, "outs(%0 : tensor<8x16xf32>) attrs =  "
	    "{autosched.epilogue}") != NULL);
	CHECK(strstr(text, "outs(%1 : tensor<8x16xf32>) attrs =  "
	    "{autosched.epilogue_end}") != NULL);
	free(text);
	text = NULL;
	/* Chains alone: the bias add and tanh one dispatch, marked for the fusion. */
	CHECK(analysis_outline_fused(path, 1, ANALYSIS_FUSE_CHAINS, &text, &n,
	    &fu, &err) == 0);
	CHECK(n == 6 && fu.nops == 0 && fu.nchains == 1 && fu.nchained == 2);
	CHECK(text != NULL && count(text, "autosched.chain") == 1 &&
	    strstr(text, "autosched.epilogue") == NULL);
	CHECK(text != NULL && verifies("outline chains", text));
	free(text);
	text = NULL;
	/* Both: the matmul takes its consumers first, no chain is left. */
	CHECK(analysis_outline_fused(path, 1, ANALYSIS_FUSE_EPILOGUE |
	    ANALYSIS_FUSE_CHAINS, &text, &n, &fu, &err) == 0);
	CHECK(n == 5 && fu.nops == 1 && fu.nconsumers == 2 && fu.nchains == 0);
	free(text);
	text = NULL;
	/* Without fuse: every op a dispatch, nothing marked. */
	CHECK(analysis_outline_fused(path, 1, 0, &text, &n, &fu, &err) == 0);
	CHECK(n == 7 && fu.nops == 0 && fu.nconsumers == 0);
	CHECK(text != NULL && strstr(text, "autosched.epilogue") == NULL);
	unlink(path);
	free(path);
	free(text);
	free(err);
}

/*
 * The convs tuned as matmuls cut into them: operands collapsed, the
 * dispatch's generic, the result expanded; the others left as they are.
 */
static void
test_outline_conv(void)
{
	char	*path, *text = NULL, *err = NULL;
	size_t	 n = 0;

	path = xasprintf("%s/conv.mlir", FIXTURES);
	CHECK(analysis_outline(path, 1, &text, &n, &err) == 0);
	free(path);
	if (text == NULL) {
		fprintf(stderr, "conv.mlir: %s\n", err);
		free(err);
		return;
	}
	/*
	 * Eight convs as matmuls: the filter and the output collapsed for
	 * each, the input for the three 1x1 stride-1 ones, the im2col for the
	 * five others (3x3 thrice, stem, strided 1x1).
	 */
	CHECK(count(text, "tensor.collapse_shape") == 8 * 3);
	CHECK(count(text, "tensor.expand_shape") == 8);
	/* The im2col's destination, where the conv was and in its dispatch. */
	CHECK(count(text, "tensor.empty() : tensor<1x8x8x3x3x16xf32>") == 6);
	CHECK(strstr(text, "tensor<1x14x14x256xf32> into tensor<196x256xf32>")
	    != NULL);
	CHECK(strstr(text, "tensor<1x8x8x3x3x16xf32> into tensor<64x144xf32>")
	    != NULL);
	CHECK(strstr(text, "tensor<1x16x16x7x7x3xf32> into "
	    "tensor<256x147xf32>") != NULL);
	CHECK(strstr(text, "tensor<32x64x1x1xf32> into tensor<32x64xf32>")
	    != NULL);
	CHECK(strstr(text, "tensor<1x64x7x7xf32> into tensor<64x49xf32>")
	    != NULL);
	CHECK(strstr(text, "output_shape [1, 32, 7, 7] : tensor<32x49xf32> "
	    "into tensor<1x32x7x7xf32>") != NULL);
	CHECK(strstr(text, "call @__autosched_pointwise_0_generic(") != NULL);
	CHECK(strstr(text, "call @__autosched_int8_0_generic(") != NULL);
	CHECK(strstr(text, "arith.extsi") != NULL);
	/* Convs left as convs: NCHW batch 2, three depthwise, the memref. */
	CHECK(count(text, "linalg.conv_2d_nhwc_hwcf") == 1);
	CHECK(count(text, "linalg.conv_2d_nchw_fchw") == 1);
	CHECK(count(text, "linalg.depthwise_conv_2d_nhwc_hwc") == 3);
	/* The matmul where the conv was: the input's line. */
	CHECK(strstr(text, "conv.mlir\":4:8") != NULL);
	CHECK(verifies("conv.mlir outlined", text));
	free(text);
	free(err);
}

/*
 * analysis_outline: every fixture cut into dispatches stays valid MLIR and
 * keeps its tunable ops; and a program made for it shows what is copied
 * into a dispatch, what is passed, what a library exports.
 */
static void
test_outline(void)
{
	static const char *const fixtures[] = { "seed.mlir",
	    "generic_form.mlir", "nested.mlir", "memref.mlir",
	    "batch_f16.mlir", "transposed.mlir", "mixed.mlir",
	    "iree_dispatch.mlir", "multi.mlir", "not_tunable.mlir",
	    "edge.mlir", "conv.mlir" };
	static const char src[] =
	    "#id = affine_map<(i) -> (i)>\n"
	    "func.func private @ext(tensor<8xf32>) -> tensor<8xf32>\n"
	    "func.func private @__autosched_f_0_fill() -> tensor<8xf32> {\n"
	    "  %e = tensor.empty() : tensor<8xf32>\n"
	    "  return %e : tensor<8xf32>\n"
	    "}\n"
	    "func.func @f(%a: tensor<8xf32>, %n: index) -> tensor<8xf32> {\n"
	    "  %z = arith.constant 0.0 : f32\n"
	    "  %two = arith.constant 2.0 : f32\n"
	    "  %s = arith.constant dense<3.0> : tensor<8xf32>\n"
	    "  %w = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>\n"
	    "  %e = tensor.empty() : tensor<8xf32>\n"
	    "  %0 = linalg.fill ins(%z : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>\n"
	    "  %1 = linalg.generic {indexing_maps = [#id, #id, #id, #id],\n"
	    "      iterator_types = [\"parallel\"]}\n"
	    "      ins(%a, %s, %w : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)\n"
	    "      outs(%0 : tensor<8xf32>) {\n"
	    "  ^bb0(%x: f32, %y: f32, %v: f32, %o: f32):\n"
	    "    %m = arith.mulf %x, %two : f32\n"
	    "    %t = arith.addf %m, %y : f32\n"
	    "    %u = arith.addf %t, %v : f32\n"
	    "    linalg.yield %u : f32\n"
	    "  } -> tensor<8xf32>\n"
	    "  %c0 = arith.constant 0 : index\n"
	    "  %c1 = arith.constant 1 : index\n"
	    "  %2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %1) -> (tensor<8xf32>) {\n"
	    "    %p = tensor.extract_slice %acc[0] [4] [1] : tensor<8xf32> to tensor<4xf32>\n"
	    "    %q = tensor.insert_slice %p into %acc[4] [4] [1] : tensor<4xf32> into tensor<8xf32>\n"
	    "    scf.yield %q : tensor<8xf32>\n"
	    "  }\n"
	    "  %3 = call @g(%2) : (tensor<8xf32>) -> tensor<8xf32>\n"
	    "  %4 = math.exp %3 : tensor<8xf32>\n"
	    "  return %4 : tensor<8xf32>\n"
	    "}\n"
	    "func.func private @g(%a: tensor<8xf32>) -> tensor<8xf32> {\n"
	    "  return %a : tensor<8xf32>\n"
	    "}\n"
	    "func.func @m(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>) {\n"
	    "  linalg.matmul ins(%a, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)\n"
	    "  return\n"
	    "}\n";
	struct analysis	*a = NULL, *o = NULL;
	char		*path, *text = NULL, *err = NULL, *line;
	size_t		 i, n = 0;

	for (i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) {
		path = xasprintf("%s/%s", FIXTURES, fixtures[i]);
		CHECK(analysis_outline(path, 1, &text, &n, &err) == 0);
		if (text == NULL) {
			fprintf(stderr, "%s: %s\n", fixtures[i], err);
			free(err);
			err = NULL;
			free(path);
			continue;
		}
		CHECK(verifies(fixtures[i], text));
		/* The tunable ops are still there, each in a dispatch. */
		CHECK(analysis_load(path, &a, &err) == 0);
		CHECK(analysis_parse(fixtures[i], text, strlen(text), &o,
		    &err) == 0);
		if (a != NULL && o != NULL) {
			size_t j;

			CHECK(analysis_count(o) == analysis_count(a));
			for (j = 0; j < analysis_count(a) &&
			    j < analysis_count(o); j++) {
				/*
				 * A conv left as a conv reads its tensor.pad
				 * from a dispatch of its own there: padded
				 * input, no padding.
				 */
				if (analysis_op(a, j)->tunable ||
				    analysis_op(a, j)->conv.layout == CONV_NONE)
					CHECK_STR(analysis_op(o, j)->name,
					    analysis_op(a, j)->name);
				/* Functions in nested modules stay whole. */
				CHECK(!analysis_op(a, j)->tunable ||
				    strncmp(analysis_op(o, j)->function,
				    "__autosched_", 12) == 0 ||
				    strcmp(fixtures[i], "iree_dispatch.mlir")
				    == 0 || strcmp(fixtures[i], "nested.mlir")
				    == 0);
			}
		}
		analysis_free(a);
		analysis_free(o);
		a = o = NULL;
		free(text);
		text = NULL;
		free(path);
	}

	test_outline_conv();
	path = xasprintf("%s/test_analysis_%ld_outline.mlir",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
	CHECK(util_write_file(path, src, strlen(src), &err) == 0);
	CHECK(analysis_outline(path, 1, &text, &n, &err) == 0);
	unlink(path);
	free(path);
	if (text == NULL) {
		fprintf(stderr, "outline: %s\n", err);
		free(err);
		return;
	}
	CHECK(verifies("outline", text));
	/* fill, generic, extract_slice, insert_slice, exp in @f; matmul in @m. */
	CHECK(n == 6);
	CHECK(count(text, "func.func private @__autosched_") == 6);
	CHECK(strstr(text, "call @__autosched_f_4_exp(") != NULL);
	/* The name taken by the program's own function: the fill renamed. */
	CHECK(strstr(text, "func.func @__autosched_f_0_fill() -> "
	    "tensor<8xf32> attributes {llvm.emit_c_interface} {") != NULL);
	CHECK(strstr(text, "@__autosched_f_0_fill_") != NULL);
	/* Scalar and splat constants and the empty tensor copied in, the
	 * other constant and the program's values passed. */
	line = line_of(text, "func.func private @__autosched_f_1_generic(");
	CHECK(strstr(line, "%arg2: tensor<8xf32>") != NULL);
	CHECK(strstr(line, "%arg3") == NULL);
	CHECK(strstr(line, ") -> tensor<8xf32> attributes") != NULL);
	free(line);
	CHECK(count(text, "arith.constant dense<3.000000e+00>") == 2);
	CHECK(count(text, "arith.constant dense<[1.000000e+00") == 1);
	/* In the loop, its slices: dispatches called there. */
	CHECK(strstr(text, "call @__autosched_f_2_extract_slice(%arg") != NULL);
	CHECK(strstr(text, "call @__autosched_f_3_insert_slice(") != NULL);
	/* An op on buffers: its operands passed, no result. */
	line = line_of(text, "func.func private @__autosched_m_0_matmul(");
	CHECK(strstr(line, "%arg2: memref<4x4xf32>") != NULL);
	CHECK(strstr(line, ") attributes {passthrough = [\"noinline\"]}")
	    != NULL);
	free(line);
	/* Where each op came from: the input's lines. */
	CHECK(strstr(text, "test_analysis_") != NULL &&
	    strstr(text, "_outline.mlir\":39:3)") != NULL);
	/* The library's exports: C interface, public; not the dispatches. */
	CHECK(count(text, "llvm.emit_c_interface") == 5);
	CHECK(strstr(text, "func.func @g(") != NULL);
	CHECK(strstr(text, "func.func private @ext(") != NULL);
	CHECK(count(text, "passthrough = [\"noinline\"]") == 6);
	free(text);
	text = NULL;
	/* Without library: nothing of the program's functions changes. */
	path = xasprintf("%s/test_analysis_%ld_outline.mlir",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
	CHECK(util_write_file(path, src, strlen(src), &err) == 0);
	CHECK(analysis_outline(path, 0, &text, &n, &err) == 0);
	unlink(path);
	free(path);
	CHECK(count(text, "llvm.emit_c_interface") == 0);
	CHECK(strstr(text, "func.func private @g(") != NULL);
	CHECK(text != NULL && verifies("outline, not a library", text));
	free(text);
	free(err);
}

int
main(void)
{
	static const char	*fixtures[] = { "seed.mlir", "generic_form.mlir",
				    "nested.mlir", "memref.mlir",
				    "batch_f16.mlir", "transposed.mlir",
				    "mixed.mlir", "iree_dispatch.mlir",
				    "multi.mlir", "not_tunable.mlir",
				    "edge.mlir", "tosa.mlir", "conv.mlir",
				    "fold.mlir" };
	size_t			 i;

	test_elem();
	test_seed();
	test_parse_buffer();
	test_forms();
	test_transposed();
	test_mixed();
	test_iree();
	test_multi();
	test_not_tunable();
	test_edge();
	test_conv();
	test_bad();
	test_dispatch_text();
	test_tosa();
	test_tosa_unlowered();
	test_lower_text();
	test_tosa_model();
	test_fold();
	test_outline();
	test_outline_fused();
	test_outline_rows();
	test_outline_unit_dims();
	for (i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++)
		check_dispatches(fixtures[i]);
	return check_done();
}
