/*
 * Lowering before analysis: a module holding ops of an upstream dialect that
 * upstream passes lower to linalg (TOSA) is run through those passes, in
 * memory, with MLIR's pass manager (C API), before its ops are looked for.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Conversion.h>
#include <mlir-c/Pass.h>
#include <mlir-c/Transforms.h>

#include "analysis/analysis_int.h"
#include "util/util.h"

/* A dialect lowered before analysis, and the passes that do it. */
struct lowering {
	const char			*prefix;	/* its ops' names: "tosa." */
	struct analysis_lowering	 how;
};

/*
 * TOSA: the pipeline that made the models' .lowered.mlir (PROVENANCE.md),
 * so that both give the same ops, names and signatures. remove-dead-values
 * drops the tosa.const_shape ops the conversions leave unused.
 */
static const struct lowering lowerings[] = {
	{ "tosa.", { "TOSA",
	    "builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,"
	    "tosa-to-arith,tosa-to-tensor),remove-dead-values)" } },
};
#define NLOWERINGS	(sizeof lowerings / sizeof lowerings[0])

static pthread_once_t	lower_once = PTHREAD_ONCE_INIT;

/* Make the pipelines' passes known to MLIR's pass registry (process-wide). */
static void
lower_register(void)
{
	mlirRegisterConversionTosaToLinalgNamed();
	mlirRegisterConversionTosaToLinalg();
	mlirRegisterConversionTosaToArithPass();
	mlirRegisterConversionTosaToTensorPass();
	mlirRegisterTransformsRemoveDeadValues();
}

/* Counts the ops whose name starts with a prefix. */
struct count {
	const char	*prefix;
	size_t		 n;
	int		 first;		/* stop at the first one */
};

static MlirWalkResult
count_op(MlirOperation op, void *arg)
{
	struct count	*c = arg;
	MlirStringRef	 name = mlirIdentifierStr(mlirOperationGetName(op));
	size_t		 len = strlen(c->prefix);

	if (name.length > len && memcmp(name.data, c->prefix, len) == 0) {
		c->n++;
		if (c->first)
			return MlirWalkResultInterrupt;
	}
	return MlirWalkResultAdvance;
}

static size_t
count_ops(MlirModule module, const char *prefix, int first)
{
	struct count c = { .prefix = prefix, .n = 0, .first = first };

	mlirOperationWalk(mlirModuleGetOperation(module), count_op, &c,
	    MlirWalkPreOrder);
	return c.n;
}

/* The first op of a dialect with a tensor of a shape not static. */
struct unsafe {
	const char	*prefix;
	MlirOperation	 op;
	MlirType	 type;
};

static int
type_static(MlirType t)
{
	return !mlirTypeIsATensor(t) || (mlirTypeIsARankedTensor(t) &&
	    mlirShapedTypeHasStaticShape(t));
}

static MlirWalkResult
unsafe_op(MlirOperation op, void *arg)
{
	struct unsafe	*u = arg;
	MlirStringRef	 name = mlirIdentifierStr(mlirOperationGetName(op));
	size_t		 len = strlen(u->prefix);
	intptr_t	 i, n;
	MlirType	 t;

	if (name.length <= len || memcmp(name.data, u->prefix, len) != 0)
		return MlirWalkResultAdvance;
	n = mlirOperationGetNumOperands(op);
	for (i = 0; i < n; i++) {
		t = mlirValueGetType(mlirOperationGetOperand(op, i));
		if (!type_static(t))
			goto found;
	}
	n = mlirOperationGetNumResults(op);
	for (i = 0; i < n; i++) {
		t = mlirValueGetType(mlirOperationGetResult(op, i));
		if (!type_static(t))
			goto found;
	}
	return MlirWalkResultAdvance;
found:
	u->op = op;
	u->type = t;
	return MlirWalkResultInterrupt;
}

/*
 * 0 if every op of l's dialect has tensors of static shapes only, else -1
 * with *err naming the first other. Upstream's TOSA lowering is not safe
 * on the others: in MLIR 22 it crashes (an unranked tosa.matmul, a
 * tosa.reduce_sum with a dynamic dimension) or allocates without bound (an
 * unranked tosa.reshape), and such ops are never tunable.
 */
static int
lower_check(MlirModule module, const struct lowering *l, const char *file,
    char **err)
{
	struct unsafe	 u = { .prefix = l->prefix };
	MlirStringRef	 name;
	char		*where, *type;

	u.op.ptr = NULL;
	mlirOperationWalk(mlirModuleGetOperation(module), unsafe_op, &u,
	    MlirWalkPreOrder);
	if (mlirOperationIsNull(u.op))
		return 0;
	name = mlirIdentifierStr(mlirOperationGetName(u.op));
	where = analysis_loc_string(mlirOperationGetLocation(u.op), file);
	type = analysis_type_string(u.type);
	util_seterr(err, "%s: '%.*s' has a tensor whose shape is not static"
	    " (%s): %s is lowered to linalg before analysis only when every"
	    " shape is static, as upstream's passes can crash on others; give"
	    " the program static types (mlir-opt --tosa-infer-shapes infers"
	    " them from static arguments)", where, (int)name.length, name.data,
	    type, l->how.from);
	free(where);
	free(type);
	return -1;
}

int
analysis_lower_module(MlirContext ctx, MlirModule module, const char *file,
    const struct analysis_lowering **how, size_t *remaining, char **err)
{
	const struct lowering	*l = NULL;
	MlirPassManager		 pm;
	MlirLogicalResult	 r;
	/* What the pipeline parser says (only a bug of ours makes it speak). */
	char			 said[512] = "";
	struct analysis_text	 t = { said, sizeof said, 0 };
	size_t			 i;

	*how = NULL;
	*remaining = 0;
	for (i = 0; i < NLOWERINGS && l == NULL; i++) {
		if (count_ops(module, lowerings[i].prefix, 1) > 0)
			l = &lowerings[i];
	}
	if (l == NULL)
		return 0;
	*how = &l->how;
	if (lower_check(module, l, file, err) != 0)
		return -1;
	pthread_once(&lower_once, lower_register);
	pm = mlirPassManagerCreateOnOperation(ctx,
	    mlirStringRefCreateFromCString("builtin.module"));
	r = mlirParsePassPipeline(mlirPassManagerGetAsOpPassManager(pm),
	    mlirStringRefCreateFromCString(l->how.pipeline),
	    analysis_text_append, &t);
	if (mlirLogicalResultIsFailure(r)) {
		util_seterr(err, "the pass pipeline %s does not parse: %s",
		    l->how.pipeline, said);
		mlirPassManagerDestroy(pm);
		return -1;
	}
	r = mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module));
	mlirPassManagerDestroy(pm);
	if (mlirLogicalResultIsFailure(r))
		return -1;
	*remaining = count_ops(module, l->prefix, 0);
	return 0;
}
