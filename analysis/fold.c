/*
 * Transposes folded into the matmuls that read them, before analysis.
 *
 * Exporters write x·Wᵀ (a linear layer, PyTorch's weight layout) as a
 * linalg.transpose of W into a new tensor and a plain linalg.matmul of it
 * (tosa.transpose + tosa.matmul lowered; torch-mlir's aten.linear). Built
 * as written, the transpose copies the whole weight every call: in the
 * DeepSeek block of ../shared/models that copy took more time than every
 * matmul together. Each linalg.matmul (linalg.batch_matmul) operand made by
 * a linalg.transpose swapping its last two dims (permutation [1, 0], [0, 2,
 * 1]), or by a linalg.generic that only copies through that permutation, is
 * read from the transpose's input instead, through its indexing map
 * with the last two results swapped: the same op with that operand stored
 * transposed (analysis names it so: "…_f32n…"), which the kernels read in
 * place or pack. A transpose left unused is erased, and its tensor.empty
 * with it. The module stays valid: a matmul's maps may be plain or
 * transposed per operand (MLIR 22).
 */
#include <stdlib.h>
#include <string.h>

#include <mlir-c/AffineMap.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/Linalg.h>

#include "analysis/analysis_int.h"
#include "util/util.h"

/* The matmuls of a module, collected before any is changed. */
struct matmuls {
	MlirOperation	*ops;
	size_t		 n, cap;
};

static MlirWalkResult
collect_matmul(MlirOperation op, void *arg)
{
	struct matmuls *m = arg;

	if (analysis_op_is(op, "linalg.matmul") ||
	    analysis_op_is(op, "linalg.batch_matmul")) {
		if (m->n == m->cap) {
			m->cap = m->cap ? m->cap * 2 : 16;
			m->ops = xrealloc(m->ops, m->cap * sizeof *m->ops);
		}
		m->ops[m->n++] = op;
	}
	return MlirWalkResultAdvance;
}

/*
 * 1 if t is a linalg.generic that only copies its one input to its one
 * output, reading it through the permutation swapping the last two of rank
 * dims and writing through the identity: a transpose as older exporters
 * write it.
 */
static int
generic_swaps(MlirOperation t, intptr_t rank)
{
	MlirAttribute maps = mlirLinalgGetIndexingMapsAttribute(t);
	MlirContext ctx = mlirOperationGetContext(t);
	unsigned perm[8];
	MlirBlock body;
	MlirOperation y;
	intptr_t i;

	if (mlirOperationGetNumRegions(t) != 1 || mlirAttributeIsNull(maps) ||
	    !mlirAttributeIsAArray(maps) ||
	    mlirArrayAttrGetNumElements(maps) != 2)
		return 0;
	for (i = 0; i < rank; i++)
		perm[i] = (unsigned)(i < rank - 2 ? i : i == rank - 2 ?
		    rank - 1 : rank - 2);
	if (!mlirAffineMapEqual(mlirAffineMapAttrGetValue(
	    mlirArrayAttrGetElement(maps, 0)),
	    mlirAffineMapPermutationGet(ctx, rank, perm)) ||
	    !mlirAffineMapEqual(mlirAffineMapAttrGetValue(
	    mlirArrayAttrGetElement(maps, 1)),
	    mlirAffineMapMultiDimIdentityGet(ctx, rank)))
		return 0;
	body = mlirRegionGetFirstBlock(mlirOperationGetRegion(t, 0));
	if (mlirBlockIsNull(body))
		return 0;
	y = mlirBlockGetFirstOperation(body);
	return analysis_op_is(y, "linalg.yield") &&
	    mlirOperationGetNumOperands(y) == 1 &&
	    mlirValueEqual(mlirOperationGetOperand(y, 0),
	    mlirBlockGetArgument(body, 0));
}

/*
 * 1 if t is a linalg.transpose of a rank-rank tensor that swaps the last
 * two dims and keeps the others, or a linalg.generic that does the same.
 */
static int
swaps_last_two(MlirOperation t, intptr_t rank)
{
	MlirAttribute perm;
	intptr_t i;

	if ((!analysis_op_is(t, "linalg.transpose") &&
	    !analysis_op_is(t, "linalg.generic")) ||
	    mlirOperationGetNumOperands(t) != 2 ||
	    mlirOperationGetNumResults(t) != 1)
		return 0;
	if (analysis_op_is(t, "linalg.generic"))
		return generic_swaps(t, rank);
	perm = mlirOperationGetAttributeByName(t,
	    mlirStringRefCreateFromCString("permutation"));
	if (mlirAttributeIsNull(perm) || !mlirAttributeIsADenseI64Array(perm) ||
	    mlirDenseArrayGetNumElements(perm) != rank)
		return 0;
	for (i = 0; i < rank; i++) {
		int64_t want = i < rank - 2 ? i : i == rank - 2 ? rank - 1 :
		    rank - 2;

		if (mlirDenseI64ArrayGetElement(perm, i) != want)
			return 0;
	}
	return 1;
}

/* map with its last two results swapped. */
static MlirAttribute
swapped_map(MlirAttribute attr)
{
	MlirAffineMap map = mlirAffineMapAttrGetValue(attr);
	intptr_t n = mlirAffineMapGetNumResults(map), i;
	MlirAffineExpr e[8];

	for (i = 0; i < n; i++)
		e[i] = mlirAffineMapGetResult(map, i);
	e[n - 2] = mlirAffineMapGetResult(map, n - 1);
	e[n - 1] = mlirAffineMapGetResult(map, n - 2);
	return mlirAffineMapAttrGet(mlirAffineMapGet(
	    mlirAffineMapGetContext(map), mlirAffineMapGetNumDims(map),
	    mlirAffineMapGetNumSymbols(map), n, e));
}

/* Erase op when its results have no use left (a tensor.empty after it). */
static void
erase_unused(MlirOperation op)
{
	MlirOperation init = { NULL };

	if (!mlirOpOperandIsNull(mlirValueGetFirstUse(
	    mlirOperationGetResult(op, 0))))
		return;
	if (analysis_op_is(op, "linalg.transpose") ||
	    analysis_op_is(op, "linalg.generic"))
		init = analysis_def_op(mlirOperationGetOperand(op, 1));
	mlirOperationRemoveFromParent(op);
	mlirOperationDestroy(op);
	if (analysis_op_is(init, "tensor.empty"))
		erase_unused(init);
}

/*
 * Fold the transposes making input i (0 or 1) of the matmul mm into it. 1
 * if one was folded.
 */
static int
fold_operand(MlirOperation mm, intptr_t i)
{
	MlirValue v = mlirOperationGetOperand(mm, i);
	MlirOperation t = analysis_def_op(v);
	MlirAttribute maps = mlirLinalgGetIndexingMapsAttribute(mm), m[3];
	intptr_t rank, j;

	if (!mlirTypeIsARankedTensor(mlirValueGetType(v)) ||
	    mlirAttributeIsNull(maps) || !mlirAttributeIsAArray(maps) ||
	    mlirArrayAttrGetNumElements(maps) != 3)
		return 0;
	rank = mlirShapedTypeGetRank(mlirValueGetType(v));
	/* A broadcast operand (a map of fewer results) is left as it is. */
	if (rank != (analysis_op_is(mm, "linalg.matmul") ? 2 : 3) ||
	    !swaps_last_two(t, rank))
		return 0;
	for (j = 0; j < 3; j++) {
		m[j] = mlirArrayAttrGetElement(maps, j);
		if (!mlirAttributeIsAAffineMap(m[j]))
			return 0;
	}
	if (mlirAffineMapGetNumResults(mlirAffineMapAttrGetValue(m[i])) != rank)
		return 0;
	m[i] = swapped_map(m[i]);
	mlirOperationSetInherentAttributeByName(mm,
	    mlirStringRefCreateFromCString("indexing_maps"),
	    mlirArrayAttrGet(mlirOperationGetContext(mm), 3, m));
	mlirOperationSetOperand(mm, i, mlirOperationGetOperand(t, 0));
	erase_unused(t);
	return 1;
}

size_t
analysis_fold_transposes(MlirModule module)
{
	struct matmuls m = { NULL, 0, 0 };
	size_t i, n = 0;

	mlirOperationWalk(mlirModuleGetOperation(module), collect_matmul, &m,
	    MlirWalkPreOrder);
	for (i = 0; i < m.n; i++)
		n += (size_t)fold_operand(m.ops[i], 0) +
		    (size_t)fold_operand(m.ops[i], 1);
	free(m.ops);
	return n;
}
