/*
 * Convolutions: read a linalg 2-D convolution's geometry (shapes, strides,
 * dilations, the zero padding of a tensor.pad producing its input) through
 * MLIR's C API, say which are tuned as the matmul of their im2col (the
 * matmul itself for 1×1 stride 1), and cut those into it for `build`.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include "analysis/analysis_int.h"
#include "util/util.h"

/* The most elements of a conv's matrices (im2col, filter, output). */
#define CONV_ELEMS_MAX	1099511627776.0	/* 2^40 */

/* The convolutions read, by op name, with the layout each implies. */
static const struct {
	const char		*op;
	enum conv_layout	 layout;
} conv_ops[] = {
	{ "linalg.conv_2d_nhwc_hwcf", CONV_NHWC_HWCF },
	{ "linalg.conv_2d_nchw_fchw", CONV_NCHW_FCHW },
	{ "linalg.depthwise_conv_2d_nhwc_hwc", CONV_DW_NHWC_HWC },
};

static MlirStringRef
ref(const char *s)
{
	return mlirStringRefCreateFromCString(s);
}

static int64_t
dim(MlirType t, intptr_t i)
{
	int64_t	s;

	if (i >= mlirShapedTypeGetRank(t))
		return -1;
	s = mlirShapedTypeGetDimSize(t, i);
	return mlirShapedTypeIsDynamicSize(s) ? -1 : s;
}

/* The two values of a strides or dilations attribute; 1, 1 when absent. */
static void
pair_attr(MlirOperation op, const char *name, int64_t v[2])
{
	MlirAttribute	a = mlirOperationGetAttributeByName(op, ref(name));

	v[0] = v[1] = 1;
	if (mlirAttributeIsNull(a) || !mlirAttributeIsADenseIntElements(a) ||
	    mlirElementsAttrGetNumElements(a) != 2)
		return;
	v[0] = mlirDenseElementsAttrGetInt64Value(a, 0);
	v[1] = mlirDenseElementsAttrGetInt64Value(a, 1);
}

/* 1 if the pad op yields a constant zero. */
static int
pads_zero(MlirOperation pad)
{
	MlirBlock	b;
	MlirOperation	y, c;
	MlirAttribute	v;

	if (mlirOperationGetNumRegions(pad) != 1)
		return 0;
	b = mlirRegionGetFirstBlock(mlirOperationGetRegion(pad, 0));
	if (mlirBlockIsNull(b))
		return 0;
	y = mlirBlockGetTerminator(b);
	if (mlirOperationIsNull(y) || mlirOperationGetNumOperands(y) != 1)
		return 0;
	c = analysis_def_op(mlirOperationGetOperand(y, 0));
	if (!analysis_op_is(c, "arith.constant"))
		return 0;
	v = mlirOperationGetAttributeByName(c, ref("value"));
	if (mlirAttributeIsNull(v))
		return 0;
	if (mlirAttributeIsAFloat(v))
		return mlirFloatAttrGetValueDouble(v) == 0.0;
	if (mlirAttributeIsAInteger(v))
		return mlirIntegerAttrGetValueInt(v) == 0;
	return 0;
}

/*
 * The padding of the conv's input: a tensor.pad of zeros over the dims hd
 * and wd only, static, produces it. Left 0 otherwise (the conv's input is
 * then what it reads, padded or not).
 */
static void
conv_padding(MlirValue in, intptr_t hd, intptr_t wd, struct op_conv *c)
{
	MlirOperation	pad = analysis_def_op(in);
	MlirAttribute	lo, hi;
	int64_t		l, h, p[4];
	intptr_t	i;

	if (!analysis_op_is(pad, "tensor.pad") || !pads_zero(pad))
		return;
	lo = mlirOperationGetAttributeByName(pad, ref("static_low"));
	hi = mlirOperationGetAttributeByName(pad, ref("static_high"));
	if (mlirAttributeIsNull(lo) || mlirAttributeIsNull(hi) ||
	    !mlirAttributeIsADenseI64Array(lo) ||
	    !mlirAttributeIsADenseI64Array(hi) ||
	    mlirDenseArrayGetNumElements(lo) != 4 ||
	    mlirDenseArrayGetNumElements(hi) != 4)
		return;
	for (i = 0; i < 4; i++) {
		l = mlirDenseI64ArrayGetElement(lo, i);
		h = mlirDenseI64ArrayGetElement(hi, i);
		if (l < 0 || h < 0 || ((i != hd && i != wd) && (l || h)))
			return;
		if (i == hd)
			p[0] = l, p[1] = h;
		if (i == wd)
			p[2] = l, p[3] = h;
	}
	memcpy(c->pad, p, sizeof p);
}

/*
 * The geometry from the operands' shapes in the op's layout: input,
 * filter and output dims of N, H, W, C, F, KH, KW, OH, OW.
 */
static void
conv_shape(MlirType in, MlirType fl, MlirType out, struct op_conv *c)
{
	switch (c->layout) {
	case CONV_NCHW_FCHW:
		c->n = dim(in, 0), c->c = dim(in, 1);
		c->h = dim(in, 2), c->w = dim(in, 3);
		c->f = dim(fl, 0), c->kh = dim(fl, 2), c->kw = dim(fl, 3);
		c->oh = dim(out, 2), c->ow = dim(out, 3);
		break;
	case CONV_DW_NHWC_HWC:
		c->n = dim(in, 0), c->h = dim(in, 1);
		c->w = dim(in, 2), c->c = dim(in, 3);
		c->kh = dim(fl, 0), c->kw = dim(fl, 1), c->f = dim(fl, 2);
		c->oh = dim(out, 1), c->ow = dim(out, 2);
		break;
	default:
		c->n = dim(in, 0), c->h = dim(in, 1);
		c->w = dim(in, 2), c->c = dim(in, 3);
		c->kh = dim(fl, 0), c->kw = dim(fl, 1), c->f = dim(fl, 3);
		c->oh = dim(out, 1), c->ow = dim(out, 2);
		break;
	}
}

int
analysis_conv_im2col(const struct op_desc *d)
{
	const struct op_conv *c = &d->conv;

	return c->layout != CONV_NONE && (c->kh != 1 || c->kw != 1 ||
	    c->stride[0] != 1 || c->stride[1] != 1);
}

/*
 * A conv as the matmul of its im2col (the plain matmul for 1×1 stride 1):
 * NHWC/HWCF (N·OH·OW)×F×(KH·KW·C), or NCHW/FCHW with N = 1
 * F×(OH·OW)×(C·KH·KW), the filter then the lhs. NULL, or why not (caller
 * frees).
 */
static char *
conv_as_matmul(struct op_desc *d, int tensors)
{
	struct op_conv	*c = &d->conv;
	enum elem_type	 t;
	int		 u;

	if (c->layout == CONV_DW_NHWC_HWC)
		return xasprintf("depthwise convolution %" PRId64 "x%" PRId64
		    ": not tuned yet (one small matmul per channel)", c->kh,
		    c->kw);
	if (!tensors)
		return xstrdup("convolution on memrefs: tuned as a matmul on "
		    "tensors only");
	if (c->layout == CONV_NCHW_FCHW && c->n != 1)
		return xasprintf("NCHW convolution of batch %" PRId64 ": "
		    "a matmul for batch 1 only", c->n);
	if (c->stride[0] < 1 || c->stride[1] < 1 || c->dilation[0] < 1 ||
	    c->dilation[1] < 1)
		return xstrdup("strides and dilations must be positive");
	if ((double)c->n * (double)c->oh * (double)c->ow * (double)c->f >
	    CONV_ELEMS_MAX || (double)c->kh * (double)c->kw * (double)c->c *
	    (double)c->n * (double)c->oh * (double)c->ow > CONV_ELEMS_MAX ||
	    (double)c->kh * (double)c->kw * (double)c->c * (double)c->f >
	    CONV_ELEMS_MAX)
		return xstrdup("its im2col or output would hold more than "
		    "2^40 elements");
	free((char *)d->kind);
	d->kind = xstrdup("matmul");
	if (c->layout == CONV_NCHW_FCHW) {
		d->m = c->f, d->n = c->oh * c->ow, d->k = c->c * c->kh * c->kw;
		t = d->lhs, d->lhs = d->rhs, d->rhs = t;
		u = d->lhs_unsigned;
		d->lhs_unsigned = d->rhs_unsigned, d->rhs_unsigned = u;
	} else {
		d->m = c->n * c->oh * c->ow, d->n = c->f;
		d->k = c->kh * c->kw * c->c;
	}
	return NULL;
}

/* 1 if t is a static ranked tensor or memref of the given rank. */
static int
shaped_rank(MlirType t, intptr_t rank)
{
	return (mlirTypeIsARankedTensor(t) || mlirTypeIsAMemRef(t)) &&
	    mlirShapedTypeGetRank(t) == rank;
}

char *
analysis_conv_describe(MlirOperation op, struct op_desc *d)
{
	MlirStringRef	 nm = mlirIdentifierStr(mlirOperationGetName(op));
	struct op_conv	*c = &d->conv;
	MlirType	 t[3];
	enum elem_type	*e[3] = { &d->lhs, &d->rhs, &d->acc };
	char		*s, *why;
	size_t		 i;

	memset(c, 0, sizeof *c);
	d->kind = xstrndup(nm.data + 7, nm.length - 7);	/* after "linalg." */
	for (i = 0; i < sizeof conv_ops / sizeof conv_ops[0]; i++)
		if (analysis_op_is(op, conv_ops[i].op))
			c->layout = conv_ops[i].layout;
	if (c->layout == CONV_NONE) {
		free((char *)d->kind);
		d->kind = xstrdup("convolution");
		return xasprintf("convolution (%s): autosched reads "
		    "conv_2d_nhwc_hwcf, conv_2d_nchw_fchw and "
		    "depthwise_conv_2d_nhwc_hwc", d->op_name);
	}
	if (mlirOperationGetNumOperands(op) != 3)
		return xasprintf("%ld operands: not 2 inputs and 1 output",
		    (long)mlirOperationGetNumOperands(op));
	for (i = 0; i < 3; i++) {
		t[i] = mlirValueGetType(mlirOperationGetOperand(op,
		    (intptr_t)i));
		if (!shaped_rank(t[i], c->layout == CONV_DW_NHWC_HWC &&
		    i == 1 ? 3 : 4))
			return xasprintf("operand %zu is not a ranked tensor "
			    "or memref of the op's rank", i);
		*e[i] = analysis_elem_of(mlirShapedTypeGetElementType(t[i]));
	}
	pair_attr(op, "strides", c->stride);
	pair_attr(op, "dilations", c->dilation);
	conv_shape(t[0], t[1], t[2], c);
	for (i = 0; i < 3; i++) {
		if (*e[i] != ELEM_UNKNOWN)
			continue;
		s = analysis_type_string(mlirShapedTypeGetElementType(t[i]));
		why = xasprintf("unsupported element type %s", s);
		free(s);
		return why;
	}
	for (i = 0; i < 3; i++) {
		if (mlirShapedTypeHasStaticShape(t[i]))
			continue;
		s = analysis_type_string(t[i]);
		why = xasprintf("dynamic dimensions (%s): static shapes are "
		    "needed", s);
		free(s);
		return why;
	}
	if (c->layout == CONV_NCHW_FCHW)
		conv_padding(mlirOperationGetOperand(op, 0), 2, 3, c);
	else
		conv_padding(mlirOperationGetOperand(op, 0), 1, 2, c);
	c->h -= c->pad[0] + c->pad[1];
	c->w -= c->pad[2] + c->pad[3];
	if (analysis_mac_body(op, d) != 0)
		return xstrdup("body is not a multiply-accumulate (mul + add, "
		    "inputs widened by extf/extsi/extui)");
	return conv_as_matmul(d, mlirTypeIsARankedTensor(t[0]));
}

/* "2" when both are, else "2x1". */
static void
pair_str(char *buf, size_t len, const int64_t *v, size_t n)
{
	size_t	i, o = 0;

	for (i = 1; i < n && v[i] == v[0]; i++)
		;
	if (i == n) {
		snprintf(buf, len, "%" PRId64, v[0]);
		return;
	}
	for (i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%" PRId64,
		    i ? "x" : "", v[i]);
}

char *
analysis_conv_name(const struct op_desc *d)
{
	const struct op_conv	*c = &d->conv;
	const char		*op = NULL;
	char			 s[48], dl[48], p[96], in[96], fl[96];
	size_t			 i;

	for (i = 0; i < sizeof conv_ops / sizeof conv_ops[0]; i++)
		if (conv_ops[i].layout == c->layout)
			op = conv_ops[i].op + 7;
	if (op == NULL)
		return NULL;
	pair_str(s, sizeof s, c->stride, 2);
	pair_str(dl, sizeof dl, c->dilation, 2);
	pair_str(p, sizeof p, c->pad, 4);
	if (c->layout == CONV_NCHW_FCHW) {
		snprintf(in, sizeof in, "%" PRId64 "x%" PRId64 "x%" PRId64 "x%"
		    PRId64, c->n, c->c, c->h, c->w);
		snprintf(fl, sizeof fl, "%" PRId64 "x%" PRId64 "x%" PRId64 "x%"
		    PRId64, c->f, c->c, c->kh, c->kw);
	} else {
		snprintf(in, sizeof in, "%" PRId64 "x%" PRId64 "x%" PRId64 "x%"
		    PRId64, c->n, c->h, c->w, c->c);
		if (c->layout == CONV_DW_NHWC_HWC)
			snprintf(fl, sizeof fl, "%" PRId64 "x%" PRId64 "x%"
			    PRId64, c->kh, c->kw, c->c);
		else
			snprintf(fl, sizeof fl, "%" PRId64 "x%" PRId64 "x%"
			    PRId64 "x%" PRId64, c->kh, c->kw, c->c, c->f);
	}
	/* The conv's own input and filter types, whichever the matmul's lhs. */
	if (c->layout == CONV_NCHW_FCHW && strcmp(d->kind, "matmul") == 0)
		return xasprintf("%s_%s_%s_s%s_d%s_p%s_%st_%st_%st", op, in, fl,
		    s, dl, p, analysis_operand_name(d->rhs, d->rhs_unsigned),
		    analysis_operand_name(d->lhs, d->lhs_unsigned),
		    analysis_elem_name(d->acc));
	return xasprintf("%s_%s_%s_s%s_d%s_p%s_%st_%st_%st", op, in, fl, s, dl,
	    p, analysis_operand_name(d->lhs, d->lhs_unsigned),
	    analysis_operand_name(d->rhs, d->rhs_unsigned),
	    analysis_elem_name(d->acc));
}

double
analysis_op_flops(const struct op_desc *d)
{
	const struct op_conv	*c = &d->conv;
	double			 f;

	if (d->conv.layout == CONV_NONE || strcmp(d->kind, "matmul") == 0) {
		if (d->m < 0 || d->n < 0 || d->k < 0)
			return 0;
		return 2.0 * (double)d->m * (double)d->n * (double)d->k *
		    (double)(d->batch > 0 ? d->batch : 1);
	}
	if (c->n < 0 || c->oh < 0 || c->ow < 0 || c->c < 0 || c->f < 0 ||
	    c->kh < 0 || c->kw < 0)
		return 0;
	f = 2.0 * (double)c->n * (double)c->oh * (double)c->ow *
	    (double)c->c * (double)c->kh * (double)c->kw;
	return c->layout == CONV_DW_NHWC_HWC ? f : f * (double)c->f;
}

/* ---- a 1×1 conv cut into its matmul ------------------------------------ */

/* The convs to replace, found in a walk. */
struct convs {
	const char	 *file;
	MlirOperation	 *ops;
	struct op_desc	 *descs;
	size_t		  n, cap;
};

/* Walk callback: the convs the analysis tunes as matmuls. */
static MlirWalkResult
collect_convs(MlirOperation o, void *arg)
{
	struct convs	*cs = arg;
	struct op_desc	 d;
	size_t		 i;

	for (i = 0; i < sizeof conv_ops / sizeof conv_ops[0]; i++)
		if (analysis_op_is(o, conv_ops[i].op))
			break;
	if (i == sizeof conv_ops / sizeof conv_ops[0])
		return MlirWalkResultAdvance;
	memset(&d, 0, sizeof d);
	if (!analysis_describe(o, cs->file, &d))
		return MlirWalkResultAdvance;
	if (!d.tunable || strcmp(d.kind, "matmul") != 0) {
		analysis_desc_clear(&d);
		return MlirWalkResultAdvance;
	}
	if (cs->n == cs->cap) {
		cs->cap = cs->cap ? cs->cap * 2 : 16;
		cs->ops = xrealloc(cs->ops, cs->cap * sizeof *cs->ops);
		cs->descs = xrealloc(cs->descs, cs->cap * sizeof *cs->descs);
	}
	cs->ops[cs->n] = o;
	cs->descs[cs->n++] = d;
	return MlirWalkResultSkip;
}

/*
 * Print the conv's patch matrix as %name: the input collapsed to (N·H·W)×C
 * (NHWC) or C×(H·W) (NCHW) for a 1×1 stride-1 conv, else its im2col, a
 * linalg.generic copying each output pixel's window (kh, kw, c in the
 * filter's order) into a tensor of N×OH×OW×KH×KW×C (NCHW:
 * 1×C×KH×KW×OH×OW), collapsed to (N·OH·OW)×(KH·KW·C) (NCHW:
 * (C·KH·KW)×(OH·OW)). The input is the conv's own, padded or not.
 */
static void
emit_patches(FILE *f, const struct op_desc *d, const char *tin,
    const char *name)
{
	const struct op_conv	*c = &d->conv;
	int			 nchw = c->layout == CONV_NCHW_FCHW;
	const char		*e = analysis_elem_name(nchw ? d->rhs : d->lhs);
	int64_t			 rows = nchw ? d->k : d->m;
	int64_t			 cols = nchw ? d->n : d->k;
	char			 t6[256];

	if (!analysis_conv_im2col(d)) {
		fprintf(f, "    %%%s = tensor.collapse_shape %%in %s : %s into "
		    "tensor<%" PRId64 "x%" PRId64 "x%s>\n", name, nchw ?
		    "[[0, 1], [2, 3]]" : "[[0, 1, 2], [3]]", tin, rows, cols, e);
		return;
	}
	if (nchw)
		snprintf(t6, sizeof t6, "tensor<1x%" PRId64 "x%" PRId64 "x%"
		    PRId64 "x%" PRId64 "x%" PRId64 "x%s>", c->c, c->kh, c->kw,
		    c->oh, c->ow, e);
	else
		snprintf(t6, sizeof t6, "tensor<%" PRId64 "x%" PRId64 "x%"
		    PRId64 "x%" PRId64 "x%" PRId64 "x%" PRId64 "x%s>", c->n,
		    c->oh, c->ow, c->kh, c->kw, c->c, e);
	fprintf(f, "    %%e6 = tensor.empty() : %s\n", t6);
	fprintf(f, "    %%p6 = linalg.generic {indexing_maps = [\n");
	if (nchw)
		fprintf(f, "        affine_map<(n, c, i, j, y, x) -> (n, c, "
		    "y * %" PRId64 " + i * %" PRId64 ", x * %" PRId64 " + j * %"
		    PRId64 ")>,\n        affine_map<(n, c, i, j, y, x) -> "
		    "(n, c, i, j, y, x)>],\n", c->stride[0], c->dilation[0],
		    c->stride[1], c->dilation[1]);
	else
		fprintf(f, "        affine_map<(n, y, x, i, j, c) -> (n, "
		    "y * %" PRId64 " + i * %" PRId64 ", x * %" PRId64 " + j * %"
		    PRId64 ", c)>,\n        affine_map<(n, y, x, i, j, c) -> "
		    "(n, y, x, i, j, c)>],\n", c->stride[0], c->dilation[0],
		    c->stride[1], c->dilation[1]);
	fprintf(f, "        iterator_types = [\"parallel\", \"parallel\", "
	    "\"parallel\", \"parallel\", \"parallel\", \"parallel\"]}\n");
	fprintf(f, "        ins(%%in : %s) outs(%%e6 : %s) {\n", tin, t6);
	fprintf(f, "    ^bb0(%%v: %s, %%o: %s):\n      linalg.yield %%v : %s\n",
	    e, e, e);
	fprintf(f, "    } -> %s\n", t6);
	fprintf(f, "    %%%s = tensor.collapse_shape %%p6 %s : %s into "
	    "tensor<%" PRId64 "x%" PRId64 "x%s>\n", name, nchw ?
	    "[[0, 1, 2, 3], [4, 5]]" : "[[0, 1, 2], [3, 4, 5]]", t6, rows,
	    cols, e);
}

/*
 * The conv d (operand types tin, tfl, tout) as a function of its three
 * operands: the patch matrix, the filter and the output collapsed, the
 * matmul, the result expanded. Caller frees.
 */
static char *
conv_snippet(const struct op_desc *d, const char *tin, const char *tfl,
    const char *tout)
{
	const struct op_conv	*c = &d->conv;
	char			*buf = NULL;
	size_t			 len = 0;
	FILE			*f;
	int			 nchw = c->layout == CONV_NCHW_FCHW;
	const char		*acc = analysis_elem_name(d->acc);

	if ((f = open_memstream(&buf, &len)) == NULL)
		return NULL;
	fprintf(f, "func.func private @conv(%%in: %s, %%fl: %s, %%out: %s) -> "
	    "%s {\n", tin, tfl, tout, tout);
	emit_patches(f, d, tin, nchw ? "rhs" : "lhs");
	if (nchw)
		fprintf(f, "    %%lhs = tensor.collapse_shape %%fl [[0], [1, 2, "
		    "3]] : %s into tensor<%" PRId64 "x%" PRId64 "x%s>\n", tfl,
		    d->m, d->k, analysis_elem_name(d->lhs));
	else
		fprintf(f, "    %%rhs = tensor.collapse_shape %%fl [[0, 1, 2], "
		    "[3]] : %s into tensor<%" PRId64 "x%" PRId64 "x%s>\n", tfl,
		    d->k, d->n, analysis_elem_name(d->rhs));
	fprintf(f, "    %%acc = tensor.collapse_shape %%out %s : %s into "
	    "tensor<%" PRId64 "x%" PRId64 "x%s>\n", nchw ? "[[0, 1], [2, 3]]" :
	    "[[0, 1, 2], [3]]", tout, d->m, d->n, acc);
	analysis_emit_generic(f, d, "lhs", "rhs", "acc", "mm");
	fprintf(f, "    %%r = tensor.expand_shape %%mm %s output_shape [%"
	    PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] : tensor<%"
	    PRId64 "x%" PRId64 "x%s> into %s\n", nchw ? "[[0, 1], [2, 3]]" :
	    "[[0, 1, 2], [3]]", c->n, nchw ? c->f : c->oh, nchw ? c->oh : c->ow,
	    nchw ? c->ow : c->f, d->m, d->n, acc, tout);
	fprintf(f, "    return %%r : %s\n}\n", tout);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static MlirWalkResult
set_loc(MlirOperation o, void *arg)
{
	mlirOperationSetLocation(o, *(MlirLocation *)arg);
	return MlirWalkResultAdvance;
}

/* Replace the conv op (described by d) by its matmul. 0 or -1. */
static int
conv_replace(MlirContext ctx, MlirOperation op, const struct op_desc *d)
{
	MlirLocation	 loc = mlirOperationGetLocation(op);
	MlirOperation	 fn, o, next, ret;
	MlirBlock	 b;
	char		*t[3], *text;
	intptr_t	 i;

	for (i = 0; i < 3; i++)
		t[i] = analysis_type_string(mlirValueGetType(
		    mlirOperationGetOperand(op, i)));
	text = conv_snippet(d, t[0], t[1], t[2]);
	for (i = 0; i < 3; i++)
		free(t[i]);
	if (text == NULL)
		return -1;
	fn = mlirOperationCreateParse(ctx, ref(text), ref("conv-as-matmul"));
	free(text);
	if (mlirOperationIsNull(fn))
		return -1;
	b = mlirRegionGetFirstBlock(mlirOperationGetRegion(fn, 0));
	for (i = 0; i < 3; i++)
		mlirValueReplaceAllUsesOfWith(mlirBlockGetArgument(b, i),
		    mlirOperationGetOperand(op, i));
	ret = mlirBlockGetTerminator(b);
	for (o = mlirBlockGetFirstOperation(b); !mlirOperationEqual(o, ret);
	    o = next) {
		next = mlirOperationGetNextInBlock(o);
		mlirOperationWalk(o, set_loc, &loc, MlirWalkPreOrder);
		mlirOperationMoveBefore(o, op);
	}
	mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0),
	    mlirOperationGetOperand(ret, 0));
	mlirOperationDestroy(op);
	mlirOperationDestroy(fn);
	return 0;
}

int
analysis_conv_rewrite(MlirContext ctx, MlirModule module, const char *file,
    size_t *n, char **err)
{
	struct convs	cs = { .file = file, .ops = NULL, .descs = NULL };
	size_t		i;
	int		rc = 0;

	mlirOperationWalk(mlirModuleGetOperation(module), collect_convs, &cs,
	    MlirWalkPreOrder);
	for (i = 0; i < cs.n; i++) {
		if (rc == 0 && conv_replace(ctx, cs.ops[i], &cs.descs[i]) != 0) {
			util_seterr(err, "%s: %s did not become its matmul "
			    "(a bug)", cs.descs[i].loc, cs.descs[i].op_name);
			rc = -1;
		}
		analysis_desc_clear(&cs.descs[i]);
	}
	if (n != NULL)
		*n = rc == 0 ? cs.n : 0;
	free(cs.ops);
	free(cs.descs);
	return rc;
}

/* ---- a conv printed from its description ------------------------------- */

/* "tensor<1x56x56x64xf32>" of four sizes. Caller frees. */
static char *
tensor4(int64_t a, int64_t b, int64_t c, int64_t d, enum elem_type e)
{
	return xasprintf("tensor<%" PRId64 "x%" PRId64 "x%" PRId64 "x%" PRId64
	    "x%s>", a, b, c, d, analysis_elem_name(e));
}

/* The zero of an element type, as arith.constant prints it. */
static const char *
zero_of(enum elem_type e)
{
	return analysis_elem_is_float(e) ? "0.0" : "0";
}

int
analysis_emit_conv(const struct op_desc *d, const char *fname, char **text,
    char **err)
{
	const struct op_conv	*c = &d->conv;
	enum elem_type		 in = d->lhs, fe = d->rhs;
	int64_t			 ph, pw;
	char			*tx, *tp, *tw, *ty, *buf = NULL;
	size_t			 len = 0;
	FILE			*f;

	*text = NULL;
	if (c->layout != CONV_NHWC_HWCF || c->n < 1 || c->h < 1 || c->w < 1 ||
	    c->c < 1 || c->f < 1 || c->kh < 1 || c->kw < 1 || c->oh < 1 ||
	    c->ow < 1 || d->lhs_unsigned || d->rhs_unsigned) {
		util_seterr(err, "%s: not an NHWC/HWCF convolution of known "
		    "sizes and signed or float types", fname);
		return -1;
	}
	ph = c->h + c->pad[0] + c->pad[1];
	pw = c->w + c->pad[2] + c->pad[3];
	tx = tensor4(c->n, c->h, c->w, c->c, in);
	tp = tensor4(c->n, ph, pw, c->c, in);
	tw = tensor4(c->kh, c->kw, c->c, c->f, fe);
	ty = tensor4(c->n, c->oh, c->ow, c->f, d->acc);
	if ((f = open_memstream(&buf, &len)) == NULL) {
		util_seterr(err, "open_memstream failed");
		goto out;
	}
	fprintf(f, "  func.func @%s(%%x: %s, %%w: %s, %%y: %s) -> %s {\n",
	    fname, tx, tw, ty, ty);
	if (ph != c->h || pw != c->w) {
		fprintf(f, "    %%z = arith.constant %s : %s\n", zero_of(in),
		    analysis_elem_name(in));
		fprintf(f, "    %%p = tensor.pad %%x low[0, %" PRId64 ", %"
		    PRId64 ", 0] high[0, %" PRId64 ", %" PRId64 ", 0] {\n"
		    "    ^bb0(%%a: index, %%b: index, %%c: index, %%d: index):\n"
		    "      tensor.yield %%z : %s\n    } : %s to %s\n", c->pad[0],
		    c->pad[2], c->pad[1], c->pad[3], analysis_elem_name(in),
		    tx, tp);
	}
	fprintf(f, "    %%0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<[%"
	    PRId64 ", %" PRId64 "]> : tensor<2xi64>, strides = dense<[%" PRId64
	    ", %" PRId64 "]> : tensor<2xi64>} ins(%%%s, %%w : %s, %s) "
	    "outs(%%y : %s) -> %s\n", c->dilation[0], c->dilation[1],
	    c->stride[0], c->stride[1], ph != c->h || pw != c->w ? "p" : "x",
	    tp, tw, ty, ty);
	fprintf(f, "    return %%0 : %s\n  }\n", ty);
	if (fclose(f) != 0) {
		util_seterr(err, "writing the convolution failed");
		free(buf);
		buf = NULL;
		goto out;
	}
	*text = buf;
out:
	free(tx);
	free(tp);
	free(tw);
	free(ty);
	return *text != NULL ? 0 : -1;
}
