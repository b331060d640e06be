/*
 * Recognising contractions: decide which linalg ops are contraction-like and
 * whether each is a plain (batch) matmul, from its indexing maps, operand
 * types and body (mul + add, inputs optionally widened), through MLIR's C API.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mlir-c/AffineExpr.h>
#include <mlir-c/AffineMap.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/Linalg.h>

#include "analysis/analysis_int.h"
#include "util/util.h"

/* More loop dimensions than this is not a matmul of any kind. */
#define MAX_DIMS	16

/* The roles a loop dimension can have in a (batch) matmul. */
enum role { ROLE_NONE, ROLE_BATCH, ROLE_M, ROLE_N, ROLE_K };

/* Named ops of the matmul family: listed even when they are not tunable. */
static const char *matmul_family[] = {
	"matmul", "batch_matmul", "batch_reduce_matmul", "contract",
	"matvec", "vecmat", "batch_matvec", "batch_vecmat", "dot",
	"mmt4d", "batch_mmt4d", "quantized_matmul", "quantized_batch_matmul",
};

/* What is learnt about one op while it is looked at. */
struct look {
	MlirOperation	 op;
	char		*reason;	/* first reason it is not tunable */
	int		 shaped;	/* roles known: m/n/k/batch meaningful */
	int		 quant;		/* quantized: operands A, B, za, zb, C */
	int		 nbatch;
	int		 pos[5];	/* loop dim of each role */
	int		 apos[3], bpos[3], cpos[3];	/* result index of a role in a map */
};

static int
strref_is(MlirStringRef s, const char *lit)
{
	return s.length == strlen(lit) && memcmp(s.data, lit, s.length) == 0;
}

static void look_fail(struct look *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

/* Record why the op is not tunable; the first reason found is kept. */
static void
look_fail(struct look *l, const char *fmt, ...)
{
	char	buf[512];
	va_list	ap;

	if (l->reason != NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	l->reason = xstrdup(buf);
}

enum elem_type
analysis_elem_of(MlirType t)
{
	if (mlirTypeIsAF32(t))
		return ELEM_F32;
	if (mlirTypeIsAF64(t))
		return ELEM_F64;
	if (mlirTypeIsAF16(t))
		return ELEM_F16;
	if (mlirTypeIsABF16(t))
		return ELEM_BF16;
	if (mlirTypeIsAInteger(t) && mlirIntegerTypeIsSignless(t)) {
		switch (mlirIntegerTypeGetWidth(t)) {
		case 8:
			return ELEM_I8;
		case 16:
			return ELEM_I16;
		case 32:
			return ELEM_I32;
		case 64:
			return ELEM_I64;
		}
	}
	return ELEM_UNKNOWN;
}

/* The symbol name of the nearest enclosing function-like op. Caller frees. */
static char *
enclosing_function(MlirOperation op)
{
	MlirAttribute	name;
	MlirStringRef	s;

	for (op = mlirOperationGetParentOperation(op);
	    !mlirOperationIsNull(op);
	    op = mlirOperationGetParentOperation(op)) {
		/* func.func, util.func, gpu.func, …: a symbol with a function type. */
		if (mlirAttributeIsNull(mlirOperationGetAttributeByName(op,
		    mlirStringRefCreateFromCString("function_type"))))
			continue;
		name = mlirOperationGetAttributeByName(op,
		    mlirStringRefCreateFromCString("sym_name"));
		if (mlirAttributeIsNull(name) || !mlirAttributeIsAString(name))
			continue;
		s = mlirStringAttrGetValue(name);
		return xstrndup(s.data, s.length);
	}
	return xstrdup("");
}

/*
 * Whether op is one to list, and under which family ("matmul", "generic",
 * "convolution", …). Contraction-like: the matmul family, convolutions, any
 * op MLIR calls a contraction, and generics with two inputs, one output and
 * a loop dimension the output does not use (a reduction).
 */
static const char *
contraction_like(MlirOperation op, MlirStringRef opname)
{
	static const char	 linalg[] = "linalg.";
	MlirStringRef		 fam;
	MlirAttribute		 maps, last;
	size_t			 i;

	if (opname.length <= sizeof linalg - 1 ||
	    memcmp(opname.data, linalg, sizeof linalg - 1) != 0)
		return NULL;
	fam = mlirStringRefCreate(opname.data + sizeof linalg - 1,
	    opname.length - (sizeof linalg - 1));
	for (i = 0; i < sizeof matmul_family / sizeof matmul_family[0]; i++)
		if (strref_is(fam, matmul_family[i]))
			return matmul_family[i];
	if (mlirLinalgIsAContractionOp(op))
		return strref_is(fam, "generic") ? "generic" : "contraction";
	if (mlirLinalgIsAConvolutionOp(op))
		return "convolution";
	if (!strref_is(fam, "generic") || mlirOperationGetNumOperands(op) != 3)
		return NULL;
	maps = mlirLinalgGetIndexingMapsAttribute(op);
	if (mlirAttributeIsNull(maps) || !mlirAttributeIsAArray(maps) ||
	    mlirArrayAttrGetNumElements(maps) != 3)
		return NULL;
	last = mlirArrayAttrGetElement(maps, 2);
	if (!mlirAttributeIsAAffineMap(last))
		return NULL;
	if (mlirAffineMapGetNumResults(mlirAffineMapAttrGetValue(last)) <
	    mlirAffineMapGetNumDims(mlirAffineMapAttrGetValue(last)))
		return "generic";
	return NULL;
}

/* One element of a DenseI32Array attribute of length 1, or -1. */
static int
single_dim(MlirAttribute a)
{
	if (mlirAttributeIsNull(a) || !mlirAttributeIsADenseI32Array(a) ||
	    mlirDenseArrayGetNumElements(a) != 1)
		return -1;
	return mlirDenseI32ArrayGetElement(a, 0);
}

static int
dims_count(MlirAttribute a)
{
	if (mlirAttributeIsNull(a) || !mlirAttributeIsADenseI32Array(a))
		return -1;
	return (int)mlirDenseArrayGetNumElements(a);
}

/*
 * The op's three indexing maps (a, b, c; a quantized matmul's zero points,
 * maps 2 and 3, checked to be scalars) into map. 0, or -1 after look_fail.
 */
static int
look_maps_read(struct look *l, MlirAffineMap map[3])
{
	MlirAttribute maps, attr;
	intptr_t i;

	maps = mlirLinalgGetIndexingMapsAttribute(l->op);
	if (mlirAttributeIsNull(maps) || !mlirAttributeIsAArray(maps)) {
		look_fail(l, "no indexing maps");
		return -1;
	}
	if (mlirOperationGetNumOperands(l->op) != (l->quant ? 5 : 3) ||
	    mlirArrayAttrGetNumElements(maps) != (l->quant ? 5 : 3)) {
		look_fail(l, "%ld operands: not %s",
		    (long)mlirOperationGetNumOperands(l->op), l->quant ?
		    "2 inputs, 2 zero points and 1 output" :
		    "2 inputs and 1 output");
		return -1;
	}
	for (i = 0; l->quant && i < 2; i++) {
		/* The zero points' maps: scalars, no result. */
		attr = mlirArrayAttrGetElement(maps, 2 + i);
		if (!mlirAttributeIsAAffineMap(attr) ||
		    mlirAffineMapGetNumResults(
		    mlirAffineMapAttrGetValue(attr)) != 0) {
			look_fail(l, "zero point %ld is not a scalar", (long)i);
			return -1;
		}
	}
	for (i = 0; i < 3; i++) {
		attr = mlirArrayAttrGetElement(maps, l->quant && i == 2 ? 4 : i);
		if (!mlirAttributeIsAAffineMap(attr)) {
			look_fail(l, "indexing map %ld is not an affine map",
			    (long)i);
			return -1;
		}
		map[i] = mlirAffineMapAttrGetValue(attr);
	}
	return 0;
}

/*
 * The maps are projected permutations of ndims dimensions: used[p] gets
 * bit i when map i reads dimension p. 0, or -1 after look_fail.
 */
static int
look_maps_used(struct look *l, const MlirAffineMap map[3], intptr_t ndims,
    unsigned *used)
{
	MlirAffineExpr e;
	intptr_t i, j, nres;
	int p;

	memset(used, 0, MAX_DIMS * sizeof *used);
	for (i = 0; i < 3; i++) {
		if (mlirAffineMapGetNumDims(map[i]) != ndims ||
		    mlirAffineMapGetNumSymbols(map[i]) != 0) {
			look_fail(l, "indexing maps are not projected "
			    "permutations");
			return -1;
		}
		nres = mlirAffineMapGetNumResults(map[i]);
		for (j = 0; j < nres; j++) {
			e = mlirAffineMapGetResult(map[i], j);
			if (!mlirAffineExprIsADim(e)) {
				look_fail(l, "indexing maps are not projected "
				    "permutations (strided or offset access)");
				return -1;
			}
			p = (int)mlirAffineDimExprGetPosition(e);
			if (p < 0 || p >= ndims || (used[p] & (1u << i))) {
				look_fail(l, "indexing maps are not projected "
				    "permutations");
				return -1;
			}
			used[p] |= 1u << i;
		}
	}
	return 0;
}

/*
 * Each dimension's role from which maps read it (l->pos, l->nbatch): one
 * m, one n, one k, at most one batch. 0, or -1 after look_fail.
 */
static int
look_roles(struct look *l, const unsigned *used, intptr_t ndims,
    const char *family)
{
	int count[5] = { 0 };
	int p, r;

	for (p = 0; p < 5; p++)
		l->pos[p] = -1;
	for (p = 0; p < ndims; p++) {
		switch (used[p]) {
		case 7:
			r = ROLE_BATCH;
			break;
		case 5:
			r = ROLE_M;
			break;
		case 6:
			r = ROLE_N;
			break;
		case 3:
			r = ROLE_K;
			break;
		default:
			look_fail(l, "contraction with an extra dimension "
			    "(d%d is not batch, m, n or k)", p);
			return -1;
		}
		count[r]++;
		l->pos[r] = p;
	}
	if (strcmp(family, "mmt4d") == 0 || strcmp(family, "batch_mmt4d") == 0) {
		look_fail(l, "packed layout (%s): not a plain matmul", family);
		return -1;
	}
	if (count[ROLE_M] != 1 || count[ROLE_N] != 1 || count[ROLE_K] != 1 ||
	    count[ROLE_BATCH] > 1) {
		look_fail(l, "not a plain (batch) matmul: %d batch, %d m, "
		    "%d n, %d k dimensions", count[ROLE_BATCH], count[ROLE_M],
		    count[ROLE_N], count[ROLE_K]);
		return -1;
	}
	l->nbatch = count[ROLE_BATCH];
	return 0;
}

/*
 * Where each role sits in each operand (l->apos, bpos, cpos: the two
 * matrix dimensions in stored order); the batch outermost everywhere and
 * the result stored m×n. 0, or -1 after look_fail.
 */
static int
look_where(struct look *l, const MlirAffineMap map[3])
{
	int *where[3] = { l->apos, l->bpos, l->cpos };
	intptr_t i, j, nres;
	int p, r;

	for (i = 0; i < 3; i++) {
		where[i][0] = where[i][1] = where[i][2] = -1;
		nres = mlirAffineMapGetNumResults(map[i]);
		/* Slots 0 and 1: the two matrix dims in stored order. */
		for (j = 0, r = 0; j < nres && r < 3; j++) {
			p = (int)mlirAffineDimExprGetPosition(
			    mlirAffineMapGetResult(map[i], j));
			if (p != l->pos[ROLE_BATCH])
				where[i][r++] = p;
		}
	}
	if (l->nbatch == 1 && (
	    mlirAffineDimExprGetPosition(mlirAffineMapGetResult(map[0], 0)) !=
	    l->pos[ROLE_BATCH] ||
	    mlirAffineDimExprGetPosition(mlirAffineMapGetResult(map[1], 0)) !=
	    l->pos[ROLE_BATCH] ||
	    mlirAffineDimExprGetPosition(mlirAffineMapGetResult(map[2], 0)) !=
	    l->pos[ROLE_BATCH])) {
		look_fail(l, "batch dimension is not the outermost one");
		return -1;
	}
	if (l->cpos[0] != l->pos[ROLE_M]) {
		look_fail(l, "transposed result (stored n×m)");
		return -1;
	}
	return 0;
}

/*
 * Give each loop dimension its role from the indexing maps and check that
 * they make a plain (batch) matmul: one m, one n, one k, at most one batch
 * (outermost), and an output stored m×n.
 */
static void
look_maps(struct look *l, const char *family)
{
	MlirAffineMap			 map[3];
	MlirLinalgContractionDimensions	 cd;
	unsigned			 used[MAX_DIMS];
	intptr_t			 ndims;

	if (look_maps_read(l, map) != 0)
		return;
	ndims = mlirAffineMapGetNumDims(map[0]);
	if (ndims > MAX_DIMS) {
		look_fail(l, "%ld loop dimensions", (long)ndims);
		return;
	}
	if (look_maps_used(l, map, ndims, used) != 0 ||
	    look_roles(l, used, ndims, family) != 0 ||
	    look_where(l, map) != 0)
		return;

	/*
	 * MLIR's own view, which also reads the iterator types (a quantized
	 * matmul is not a contraction to it: its body subtracts the zero
	 * points; its maps are fixed by its definition).
	 */
	if (l->quant) {
		l->shaped = 1;
		return;
	}
	cd = mlirLinalgInferContractionDimensions(l->op);
	if (single_dim(cd.m) != l->pos[ROLE_M] ||
	    single_dim(cd.n) != l->pos[ROLE_N] ||
	    single_dim(cd.k) != l->pos[ROLE_K] ||
	    dims_count(cd.batch) != l->nbatch ||
	    (l->nbatch && single_dim(cd.batch) != l->pos[ROLE_BATCH])) {
		look_fail(l, "iterator types do not make a matmul");
		return;
	}
	l->shaped = 1;
}

MlirOperation
analysis_def_op(MlirValue v)
{
	MlirOperation	none = { NULL };

	if (mlirValueIsAOpResult(v))
		return mlirOpResultGetOwner(v);
	return none;
}

/* v's argument number if it is an argument of block, else -1. */
static int
arg_no(MlirValue v, MlirBlock block)
{
	if (!mlirValueIsABlockArgument(v) ||
	    !mlirBlockEqual(mlirBlockArgumentGetOwner(v), block))
		return -1;
	return (int)mlirBlockArgumentGetArgNumber(v);
}

int
analysis_op_is(MlirOperation op, const char *name)
{
	return !mlirOperationIsNull(op) &&
	    strref_is(mlirIdentifierStr(mlirOperationGetName(op)), name);
}

/*
 * Follow one multiplicand back to a block argument through at most one
 * widening cast. Returns the argument number or -1; *cast gets the cast's
 * name ("" for none).
 */
static int
multiplicand(MlirValue v, MlirBlock block, const char **cast)
{
	static const char	*casts[] = { "arith.extf", "arith.extsi",
				    "arith.extui" };
	MlirOperation		 op;
	size_t			 i;

	*cast = "";
	if (arg_no(v, block) >= 0)
		return arg_no(v, block);
	op = analysis_def_op(v);
	for (i = 0; i < sizeof casts / sizeof casts[0]; i++) {
		if (analysis_op_is(op, casts[i]) &&
		    mlirOperationGetNumOperands(op) == 1) {
			*cast = casts[i];
			return arg_no(mlirOperationGetOperand(op, 0), block);
		}
	}
	return -1;
}

/* Whether the widening cast (or none) fits the types of an input and acc. */
static int
cast_fits(const char *cast, enum elem_type in, enum elem_type acc, int *uns)
{
	*uns = 0;
	if (in == acc)
		return *cast == '\0';
	if (analysis_elem_is_float(in) != analysis_elem_is_float(acc) ||
	    analysis_elem_size(in) > analysis_elem_size(acc))
		return 0;
	if (analysis_elem_is_float(in))
		return strcmp(cast, "arith.extf") == 0;
	*uns = strcmp(cast, "arith.extui") == 0;
	return strcmp(cast, "arith.extsi") == 0 || *uns;
}

/*
 * Check the body is acc + lhs·rhs: yield(add(acc, mul(a', b'))) where a' and
 * b' are the inputs, each optionally widened, and nothing else.
 */
static void
look_body(struct look *l, struct op_desc *d)
{
	static const char	*bad = "body is not a multiply-accumulate "
				    "(mul + add, inputs widened by extf/extsi/extui)";
	MlirRegion		 region;
	MlirBlock		 block;
	MlirOperation		 yield, add, mul, o;
	MlirValue		 v;
	const char		*cast[2] = { "", "" };
	int			 isf, nops = 0, ncast = 0, i, arg, a0, a1;

	if (mlirOperationGetNumRegions(l->op) != 1) {
		look_fail(l, "no body");
		return;
	}
	region = mlirOperationGetRegion(l->op, 0);
	block = mlirRegionGetFirstBlock(region);
	if (mlirBlockIsNull(block) || mlirBlockGetNumArguments(block) != 3) {
		look_fail(l, "%s", bad);
		return;
	}
	for (o = mlirBlockGetFirstOperation(block); !mlirOperationIsNull(o);
	    o = mlirOperationGetNextInBlock(o))
		nops++;
	isf = analysis_elem_is_float(d->acc);
	yield = mlirBlockGetTerminator(block);
	if (!analysis_op_is(yield, "linalg.yield") ||
	    mlirOperationGetNumOperands(yield) != 1)
		goto bad;
	add = analysis_def_op(mlirOperationGetOperand(yield, 0));
	if (!analysis_op_is(add, isf ? "arith.addf" : "arith.addi") ||
	    mlirOperationGetNumOperands(add) != 2)
		goto bad;
	/* acc + mul, either way round. */
	if (arg_no(mlirOperationGetOperand(add, 0), block) == 2)
		v = mlirOperationGetOperand(add, 1);
	else if (arg_no(mlirOperationGetOperand(add, 1), block) == 2)
		v = mlirOperationGetOperand(add, 0);
	else
		goto bad;
	mul = analysis_def_op(v);
	if (!analysis_op_is(mul, isf ? "arith.mulf" : "arith.muli") ||
	    mlirOperationGetNumOperands(mul) != 2)
		goto bad;
	a0 = a1 = -1;
	for (i = 0; i < 2; i++) {
		const char *c;

		arg = multiplicand(mlirOperationGetOperand(mul, i), block, &c);
		if (arg == 0)
			a0 = i, cast[0] = c;
		else if (arg == 1)
			a1 = i, cast[1] = c;
		if (*c != '\0')
			ncast++;
	}
	if (a0 < 0 || a1 < 0 || a0 == a1 || nops != 3 + ncast)
		goto bad;
	if (!cast_fits(cast[0], d->lhs, d->acc, &d->lhs_unsigned) ||
	    !cast_fits(cast[1], d->rhs, d->acc, &d->rhs_unsigned))
		goto bad;
	return;
bad:
	look_fail(l, "%s", bad);
}

int
analysis_mac_body(MlirOperation op, struct op_desc *d)
{
	struct look	l;
	int		rc;

	memset(&l, 0, sizeof l);
	l.op = op;
	look_body(&l, d);
	rc = l.reason == NULL ? 0 : -1;
	free(l.reason);
	return rc;
}

/* Operand i's shaped type, or a null type (with a reason) if it has none. */
static MlirType
operand_type(struct look *l, intptr_t i)
{
	MlirType	t, none = { NULL };

	t = mlirValueGetType(mlirOperationGetOperand(l->op, i));
	if (!mlirTypeIsARankedTensor(t) && !mlirTypeIsAMemRef(t)) {
		look_fail(l, "operand %ld is not a ranked tensor or memref",
		    (long)i);
		return none;
	}
	return t;
}

static int64_t
dim_size(MlirType t, int idx)
{
	int64_t	s;

	if (idx < 0 || idx >= mlirShapedTypeGetRank(t))
		return -1;
	s = mlirShapedTypeGetDimSize(t, idx);
	return mlirShapedTypeIsDynamicSize(s) ? -1 : s;
}

/* Whether a memref's rows are contiguous (innermost stride 1), as t/n assume. */
static int
rows_contiguous(MlirType t)
{
	int64_t		strides[MAX_DIMS], offset;
	intptr_t	rank;

	if (!mlirTypeIsAMemRef(t))
		return 1;
	rank = mlirShapedTypeGetRank(t);
	if (rank <= 0 || rank > MAX_DIMS)
		return 1;
	if (mlirLogicalResultIsFailure(mlirMemRefTypeGetStridesAndOffset(t,
	    strides, &offset)))
		return 0;
	return strides[rank - 1] == 1;
}

/*
 * A quantized matmul's body is its definition's: C += (A - za)(B - zb),
 * both inputs widened signed. autosched tunes i8 inputs into i32 with
 * integer scalars as zero points.
 */
static void
look_quant(struct look *l, struct op_desc *d)
{
	int i;

	for (i = 2; i < 4; i++) {
		MlirType t = mlirValueGetType(mlirOperationGetOperand(l->op, i));

		if (!mlirTypeIsAInteger(t)) {
			look_fail(l, "zero point %d is not an integer scalar",
			    i - 2);
			return;
		}
	}
	if (d->lhs != ELEM_I8 || d->rhs != ELEM_I8 || d->acc != ELEM_I32)
		look_fail(l, "quantized matmul of %s x %s -> %s: autosched "
		    "tunes i8 x i8 -> i32", analysis_elem_name(d->lhs),
		    analysis_elem_name(d->rhs), analysis_elem_name(d->acc));
}

/* Sizes and element types from the operands' types. */
static void
look_types(struct look *l, struct op_desc *d)
{
	MlirType	 t[3];
	enum elem_type	*e[3] = { &d->lhs, &d->rhs, &d->acc };
	char		*s;
	int		 i, nb = l->nbatch;

	if (mlirOperationGetNumOperands(l->op) < (l->quant ? 5 : 3))
		return;
	for (i = 0; i < 3; i++) {
		t[i] = operand_type(l, l->quant && i == 2 ? 4 : i);
		if (mlirTypeIsNull(t[i]))
			return;
		*e[i] = analysis_elem_of(mlirShapedTypeGetElementType(t[i]));
	}
	for (i = 0; i < 3; i++) {
		if (*e[i] == ELEM_UNKNOWN) {
			s = analysis_type_string(
			    mlirShapedTypeGetElementType(t[i]));
			look_fail(l, "unsupported element type %s", s);
			free(s);
		}
	}
	if (!l->shaped)
		return;
	d->transpose_a = l->apos[0] == l->pos[ROLE_K];
	d->transpose_b = l->bpos[0] == l->pos[ROLE_N];
	d->batch = nb ? dim_size(t[2], 0) : 1;
	d->m = dim_size(t[2], nb);
	d->n = dim_size(t[2], nb + 1);
	d->k = dim_size(t[0], nb + (d->transpose_a ? 0 : 1));
	for (i = 0; i < 3; i++) {
		if (!mlirShapedTypeHasStaticShape(t[i])) {
			s = analysis_type_string(t[i]);
			look_fail(l, "dynamic dimensions (%s): static shapes "
			    "are needed", s);
			free(s);
			break;
		}
		if (!rows_contiguous(t[i])) {
			s = analysis_type_string(t[i]);
			look_fail(l, "strided layout (%s): rows are not "
			    "contiguous", s);
			free(s);
			break;
		}
	}
	if (l->quant) {
		look_quant(l, d);
		return;
	}
	if (l->reason == NULL)
		look_body(l, d);
}

static void
size_str(char *buf, size_t len, int64_t v)
{
	if (v < 0)
		snprintf(buf, len, "?");
	else
		snprintf(buf, len, "%lld", (long long)v);
}

/*
 * "matmul_1024x512x256_f32t_f32t_f32t", batch first for batch_matmul; an
 * operand widened unsigned is spelled u8 ("matmul_16x4x8_u8t_u8t_i32t").
 */
static char *
profiler_name(const struct op_desc *d)
{
	char	b[24], m[24], n[24], k[24], dims[128];

	size_str(b, sizeof b, d->batch);
	size_str(m, sizeof m, d->m);
	size_str(n, sizeof n, d->n);
	size_str(k, sizeof k, d->k);
	if (analysis_kind_batch(d->kind))
		snprintf(dims, sizeof dims, "%sx%sx%sx%s", b, m, n, k);
	else
		snprintf(dims, sizeof dims, "%sx%sx%s", m, n, k);
	return xasprintf("%s_%s_%s%c_%s%c_%st", d->kind, dims,
	    analysis_operand_name(d->lhs, d->lhs_unsigned),
	    d->transpose_a ? 'n' : 't',
	    analysis_operand_name(d->rhs, d->rhs_unsigned),
	    d->transpose_b ? 'n' : 't', analysis_elem_name(d->acc));
}

char *
analysis_profiler_name(const struct op_desc *d)
{
	return profiler_name(d);
}

int
analysis_describe(MlirOperation op, const char *file, struct op_desc *d)
{
	MlirStringRef	 opname;
	struct look	 l;
	const char	*family;

	opname = mlirIdentifierStr(mlirOperationGetName(op));
	if ((family = contraction_like(op, opname)) == NULL)
		return 0;

	memset(&l, 0, sizeof l);
	l.op = op;
	l.quant = strcmp(family, "quantized_matmul") == 0 ||
	    strcmp(family, "quantized_batch_matmul") == 0;
	d->op_name = xstrndup(opname.data, opname.length);
	d->loc = analysis_loc_string(mlirOperationGetLocation(op), file);
	d->function = enclosing_function(op);
	d->batch = 1;
	d->m = d->n = d->k = -1;

	if (strcmp(family, "convolution") == 0) {
		d->reason = analysis_conv_describe(op, d);
		d->tunable = d->reason == NULL;
		if (strcmp(d->kind, "matmul") == 0)
			d->name = profiler_name(d);
		else if (d->conv.layout != CONV_NONE)
			d->name = analysis_conv_name(d);
		else
			d->name = xstrdup(d->kind);
		return 1;
	}
	look_maps(&l, family);
	if (l.shaped && l.quant)
		d->kind = xstrdup(l.nbatch ? "quantized_batch_matmul" :
		    "quantized_matmul");
	else if (l.shaped)
		d->kind = xstrdup(l.nbatch ? "batch_matmul" : "matmul");
	else
		d->kind = xstrdup(family);
	look_types(&l, d);

	d->tunable = l.reason == NULL;
	d->reason = l.reason;
	d->name = l.shaped ? profiler_name(d) : xstrdup(d->kind);
	return 1;
}
