/*
 * A program cut into dispatches for `autosched build`: every op that
 * becomes loops (linalg, tensor copies, arith and math on whole tensors)
 * moved into a function of its own, called where the op was, so that each
 * op is scheduled, lowered and compiled on its own, as the tuner measured
 * it, and a model's thousands of ops make thousands of small functions
 * rather than one huge one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mlir-c/AffineMap.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/Linalg.h>
#include <mlir-c/Pass.h>

#include "analysis/analysis_int.h"
#include "util/util.h"

/* What the edit is asked for and what it made. */
struct outline {
	const char *path;	/* the program, for messages */
	int	 library;	/* the program's functions are a library's exports */
	int	 fuse;		/* ANALYSIS_FUSE_*: what shares a dispatch */
	size_t	 n;		/* dispatches made */
	size_t	 nfused;	/* matmuls with consumers in their dispatch */
	size_t	 nconsumers;	/* consumers moved there */
	size_t	 nchains;	/* dispatches of chained elementwise generics */
	size_t	 nchained;	/* generics moved there */
	size_t	 nrows;		/* dispatches of row groups */
	size_t	 nrowed;	/* ops moved there */
	size_t	 ninits;	/* matmuls with their zero fill */
	size_t	 nslices;	/* input slices in their matmul's dispatch */
	size_t	 ninserts;	/* results inserted in their matmul's dispatch */
	size_t	 nconverted;	/* tensor ops made linalg.generics */
	size_t	 nreshapes;	/* reshapes gone with the unit dims */
};

/* An attribute's text, cut at its first sizeof text - 1 bytes. */
struct attr_text {
	char	 text[1024];
	size_t	 len;
	int	 cut;		/* it did not fit */
};

/* The ops to move out of one function, in order. */
struct targets {
	MlirOperation	*ops;
	size_t		 n, cap;
};

/* A value an op uses from outside itself. */
struct capture {
	MlirValue	 v;
	int		 copy;	/* copied into the dispatch, not an argument */
	MlirValue	 inner;	/* what the op uses instead */
};

struct captures {
	struct capture	*c;
	size_t		 n, cap;
	const MlirOperation *ops;	/* the ops being moved (a matmul and its consumers) */
	size_t		 nops;
};

static MlirStringRef
ref(const char *s)
{
	return mlirStringRefCreateFromCString(s);
}

/* 1 if op's name is exactly name. */
static int
named(MlirOperation op, const char *name)
{
	MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));

	return n.length == strlen(name) && memcmp(n.data, name, n.length) == 0;
}

/* 1 if x is op or nested in it. */
static int
within(MlirOperation x, MlirOperation op)
{
	for (; !mlirOperationIsNull(x); x = mlirOperationGetParentOperation(x)) {
		if (mlirOperationEqual(x, op))
			return 1;
	}
	return 0;
}

/* 1 if v is defined in op (a result of an op in it, an argument of its blocks). */
static int
defined_within(MlirValue v, MlirOperation op)
{
	if (mlirValueIsAOpResult(v))
		return within(mlirOpResultGetOwner(v), op);
	return within(mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(v)),
	    op);
}

/*
 * 1 if v is copied into the dispatch rather than passed: a scalar constant,
 * a constant of one value repeated (splat: folded into the op's code, as
 * MLIR folds it where op and constant share a function, instead of written
 * out as data), or an empty tensor of static shape (the dispatch makes its
 * own result buffer).
 */
static int
copyable(MlirValue v)
{
	MlirOperation def;
	MlirAttribute val;

	if (!mlirValueIsAOpResult(v))
		return 0;
	def = mlirOpResultGetOwner(v);
	if (named(def, "arith.constant")) {
		if (!mlirTypeIsAShaped(mlirValueGetType(v)))
			return 1;
		val = mlirOperationGetAttributeByName(def, ref("value"));
		return !mlirAttributeIsNull(val) &&
		    mlirAttributeIsADenseElements(val) &&
		    mlirDenseElementsAttrIsSplat(val);
	}
	return named(def, "tensor.empty") && mlirOperationGetNumOperands(def) == 0;
}

/* Walk callback: note every value an op in the moved op uses from outside. */
static MlirWalkResult
collect_captures(MlirOperation o, void *arg)
{
	struct captures *cs = arg;
	intptr_t i, n = mlirOperationGetNumOperands(o);
	size_t j;

	for (i = 0; i < n; i++) {
		MlirValue v = mlirOperationGetOperand(o, i);

		for (j = 0; j < cs->nops && !defined_within(v, cs->ops[j]); j++)
			;
		if (j < cs->nops)
			continue;
		for (j = 0; j < cs->n && !mlirValueEqual(cs->c[j].v, v); j++)
			;
		if (j < cs->n)
			continue;
		if (cs->n == cs->cap) {
			cs->cap = cs->cap ? cs->cap * 2 : 8;
			cs->c = xrealloc(cs->c, cs->cap * sizeof *cs->c);
		}
		cs->c[cs->n].v = v;
		cs->c[cs->n].copy = copyable(v);
		cs->n++;
	}
	return MlirWalkResultAdvance;
}

/* Walk callback: make the moved op use the dispatch's values. */
static MlirWalkResult
use_inner(MlirOperation o, void *arg)
{
	struct captures *cs = arg;
	intptr_t i, n = mlirOperationGetNumOperands(o);
	size_t j;

	for (i = 0; i < n; i++) {
		MlirValue v = mlirOperationGetOperand(o, i);

		for (j = 0; j < cs->n; j++) {
			if (mlirValueEqual(cs->c[j].v, v)) {
				mlirOperationSetOperand(o, i, cs->c[j].inner);
				break;
			}
		}
	}
	return MlirWalkResultAdvance;
}

/* 1 if n starts with prefix. */
static int
prefixed(MlirStringRef n, const char *prefix)
{
	size_t len = strlen(prefix);

	return n.length >= len && memcmp(n.data, prefix, len) == 0;
}

/*
 * 1 if o is an arith or math op on whole tensors (not a constant): a loop
 * once convert-elementwise-to-linalg has made it a linalg.generic.
 */
static int
elementwise_on_tensors(MlirOperation o)
{
	MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(o));

	if (!prefixed(n, "arith.") && !prefixed(n, "math."))
		return 0;
	if (named(o, "arith.constant") || mlirOperationGetNumResults(o) != 1)
		return 0;
	return mlirTypeIsARankedTensor(mlirValueGetType(
	    mlirOperationGetResult(o, 0)));
}

/*
 * 1 if o is a matmul whose elementwise consumers may join its dispatch: a
 * named linalg matmul of one result (a quantized one is split by the
 * build's plugin first and left alone).
 */
static int
fusable_root(MlirOperation o)
{
	MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(o));

	return prefixed(n, "linalg.") && mlirOperationGetNumResults(o) == 1 &&
	    memmem(n.data, n.length, "matmul", 6) != NULL &&
	    memmem(n.data, n.length, "quantized", 9) == NULL;
}

/* The only op using v, or a null op when v has no use or several. */
static MlirOperation
only_user(MlirValue v)
{
	MlirOpOperand u = mlirValueGetFirstUse(v);
	MlirOperation none = { NULL };

	if (mlirOpOperandIsNull(u) || !mlirOpOperandIsNull(mlirOpOperandGetNextUse(u)))
		return none;
	return mlirOpOperandGetOwner(u);
}

/*
 * 1 if c, the only user of v, is an elementwise consumer of v that can run
 * inside v's producer's tiles: a linalg.generic in the same block with one
 * result of v's type, whose output map is the identity (every loop
 * parallel), whose inputs are read through identity or broadcast maps (v
 * through the identity, never as the output) and whose body does not read
 * the output's old value (so that v can be the output: in place).
 */
static int
epilogue_op(MlirOperation c, MlirValue v)
{
	MlirAttribute maps = mlirOperationGetAttributeByName(c,
	    ref("indexing_maps"));
	intptr_t nops = mlirOperationGetNumOperands(c), i, nargs;
	MlirBlock body;
	MlirAffineMap m;

	if (!named(c, "linalg.generic") || mlirOperationGetNumResults(c) != 1 ||
	    nops < 2 || mlirAttributeIsNull(maps) ||
	    mlirArrayAttrGetNumElements(maps) != nops ||
	    !mlirTypeEqual(mlirValueGetType(mlirOperationGetResult(c, 0)),
	    mlirValueGetType(v)) ||
	    !mlirBlockEqual(mlirOperationGetBlock(c),
	    mlirOperationGetBlock(mlirOpResultGetOwner(v))))
		return 0;
	if (mlirValueEqual(mlirOperationGetOperand(c, nops - 1), v))
		return 0;
	m = mlirAffineMapAttrGetValue(mlirArrayAttrGetElement(maps, nops - 1));
	if (!mlirAffineMapIsIdentity(m))
		return 0;
	for (i = 0; i < nops - 1; i++) {
		m = mlirAffineMapAttrGetValue(mlirArrayAttrGetElement(maps, i));
		if (!mlirAffineMapIsProjectedPermutation(m) ||
		    (mlirValueEqual(mlirOperationGetOperand(c, i), v) &&
		    !mlirAffineMapIsIdentity(m)))
			return 0;
	}
	body = mlirRegionGetFirstBlock(mlirOperationGetRegion(c, 0));
	nargs = mlirBlockGetNumArguments(body);
	return nargs == nops && mlirOpOperandIsNull(mlirValueGetFirstUse(
	    mlirBlockGetArgument(body, nargs - 1)));
}

/*
 * The chain of elementwise consumers of root (each the only user of the
 * one before) into *ops after root; each is made to write in place into
 * the value it consumes (its output operand replaced: its body never read
 * it), marked autosched.epilogue, the last autosched.epilogue_end, for the
 * schedule's fused part. Returns how many ops *ops holds (1: no consumer).
 */
static size_t
epilogue_chain(MlirContext ctx, MlirOperation root, MlirOperation **ops)
{
	MlirValue v = mlirOperationGetResult(root, 0);
	MlirOperation c;
	size_t n = 1;

	*ops = xcalloc(1, sizeof **ops);
	(*ops)[0] = root;
	for (;;) {
		c = only_user(v);
		if (mlirOperationIsNull(c) || !epilogue_op(c, v))
			break;
		*ops = xrealloc(*ops, (n + 1) * sizeof **ops);
		(*ops)[n++] = c;
		mlirOperationSetOperand(c, mlirOperationGetNumOperands(c) - 1, v);
		v = mlirOperationGetResult(c, 0);
	}
	if (n > 1) {
		size_t i;

		for (i = 1; i < n; i++)
			mlirOperationSetDiscardableAttributeByName((*ops)[i],
			    ref(i + 1 == n ? "autosched.epilogue_end" :
			    "autosched.epilogue"), mlirUnitAttrGet(ctx));
	}
	return n;
}

/* Print callback: append to a struct attr_text. */
static void
attr_text_put(MlirStringRef s, void *arg)
{
	struct attr_text *t = arg;

	if (t->len + s.length >= sizeof t->text) {
		t->cut = 1;
		return;
	}
	memcpy(t->text + t->len, s.data, s.length);
	t->len += s.length;
	t->text[t->len] = '\0';
}

/*
 * 1 if o is a linalg.generic of one result whose loops are all parallel
 * (its iterator_types name no reduction): a producer
 * linalg-fuse-elementwise-ops fuses into its consumer.
 */
static int
parallel_generic(MlirOperation o)
{
	struct attr_text t = { .len = 0, .cut = 0 };
	MlirAttribute it;

	if (!named(o, "linalg.generic") || mlirOperationGetNumResults(o) != 1)
		return 0;
	it = mlirOperationGetAttributeByName(o, ref("iterator_types"));
	if (mlirAttributeIsNull(it))
		return 0;
	t.text[0] = '\0';
	mlirAttributePrint(it, attr_text_put, &t);
	return !t.cut && strstr(t.text, "reduction") == NULL;
}

/*
 * 1 if c, the only user of v, continues a chain of elementwise ops: a
 * linalg.generic of one result in v's block that reads v as an input
 * (never as its output), so that the fusion can make one loop of both.
 */
static int
chain_op(MlirOperation c, MlirValue v)
{
	intptr_t nops, i;

	if (mlirOperationIsNull(c))
		return 0;
	nops = mlirOperationGetNumOperands(c);
	if (!named(c, "linalg.generic") ||
	    mlirOperationGetNumResults(c) != 1 || nops < 2 ||
	    !mlirBlockEqual(mlirOperationGetBlock(c),
	    mlirOperationGetBlock(mlirOpResultGetOwner(v))) ||
	    mlirValueEqual(mlirOperationGetOperand(c, nops - 1), v))
		return 0;
	for (i = 0; i < nops - 1; i++) {
		if (mlirValueEqual(mlirOperationGetOperand(c, i), v))
			return 1;
	}
	return 0;
}

/*
 * The chain of linalg.generics from root (all parallel) into *ops: each
 * the only user of the one before, the ones before the last all parallel
 * (the last may reduce: a softmax's exp fuses into its sum). The ops are
 * unchanged. Returns how many ops *ops holds (1: no chain); caller frees.
 */
static size_t
elementwise_chain(MlirOperation root, MlirOperation **ops)
{
	MlirOperation cur = root, c;
	size_t n = 1;

	*ops = xcalloc(1, sizeof **ops);
	(*ops)[0] = root;
	while (parallel_generic(cur)) {
		MlirValue v = mlirOperationGetResult(cur, 0);

		c = only_user(v);
		if (!chain_op(c, v))
			break;
		*ops = xrealloc(*ops, (n + 1) * sizeof **ops);
		(*ops)[n++] = c;
		cur = c;
	}
	return n;
}

/* The most ops a row group (row_group) takes. */
#define ROWS_MAX	32
/* The most targets row_group looks past for the group's next reader. */
#define ROWS_GAP	64

/*
 * 1 if o may join a row group: a linalg.generic or linalg.fill of one
 * ranked tensor result of static shape.
 */
static int
row_op(MlirOperation o)
{
	MlirType t;

	if (mlirOperationIsNull(o) || (!named(o, "linalg.generic") &&
	    !named(o, "linalg.fill")) || mlirOperationGetNumResults(o) != 1)
		return 0;
	t = mlirValueGetType(mlirOperationGetResult(o, 0));
	return mlirTypeIsARankedTensor(t) && mlirShapedTypeHasStaticShape(t) &&
	    mlirShapedTypeGetRank(t) > 0;
}

/* 1 if o is a linalg.generic that reduces (not all loops parallel). */
static int
reduction_generic(MlirOperation o)
{
	return named(o, "linalg.generic") && !parallel_generic(o);
}

/* 1 if op is one of the n ops of g. */
static int
in_ops(MlirOperation op, const MlirOperation *g, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (mlirOperationEqual(op, g[i]))
			return 1;
	}
	return 0;
}

/* 1 if o reads a result of one of the n ops of g. */
static int
reads_ops(MlirOperation o, const MlirOperation *g, size_t n)
{
	intptr_t i, nops = mlirOperationGetNumOperands(o);

	for (i = 0; i < nops; i++) {
		MlirValue v = mlirOperationGetOperand(o, i);

		if (mlirValueIsAOpResult(v) &&
		    in_ops(mlirOpResultGetOwner(v), g, n))
			return 1;
	}
	return 0;
}

/* 1 if every use of each of the n ops of g but the last is in g. */
static int
row_closed(const MlirOperation *g, size_t n)
{
	MlirOpOperand u;
	size_t i;

	for (i = 0; i + 1 < n; i++) {
		for (u = mlirValueGetFirstUse(mlirOperationGetResult(g[i], 0));
		    !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u)) {
			if (!in_ops(mlirOpOperandGetOwner(u), g, n))
				return 0;
		}
	}
	return 1;
}

/*
 * The row group from t's j-th target into *ops: the generics and fills
 * after it (in order) that read its values, and the fills whose only user
 * reads them; the longest such run of at least 3 ops, a reduction among
 * them, none of whose values is used outside it but the last op's (a
 * softmax, a layer norm: ops that share their rows, which
 * autosched-fuse-rows runs in one loop over blocks of rows), all in one
 * block. Ops in between that read none of its values stay where they are.
 * Returns how many ops *ops holds, or 1 (no group: *ops holds t's j-th
 * target alone); caller frees.
 */
static size_t
row_group(struct targets *t, size_t j, MlirOperation **ops)
{
	MlirOperation *g = xcalloc(ROWS_MAX, sizeof *g), c;
	MlirBlock block;
	size_t n = 0, best = 1, l, idle = 0;
	int reduces, same;

	*ops = g;
	g[n++] = t->ops[j];
	if (!row_op(g[0]))
		return 1;
	block = mlirOperationGetBlock(g[0]);
	reduces = reduction_generic(g[0]);
	for (l = j + 1; l < t->n && n < ROWS_MAX && idle < ROWS_GAP; l++) {
		c = t->ops[l];
		idle++;
		if (mlirOperationIsNull(c))
			continue;
		same = mlirBlockEqual(mlirOperationGetBlock(c), block);
		if (named(c, "linalg.fill") && row_op(c) && same) {
			MlirOperation u = only_user(mlirOperationGetResult(c,
			    0));

			if (!mlirOperationIsNull(u) && row_op(u) &&
			    reads_ops(u, g, n))
				g[n++] = c;
			continue;
		}
		if (!reads_ops(c, g, n))
			continue;
		/* A reader that cannot join (or in a loop): no group past it. */
		if (!row_op(c) || !same)
			break;
		idle = 0;
		reduces |= reduction_generic(c);
		g[n++] = c;
		if (n >= 3 && reduces && row_closed(g, n))
			best = n;
	}
	return best;
}

/* The tensor ops that are loops once bufferized (copies, mostly). */
static const char *const moves[] = { "tensor.extract_slice",
    "tensor.insert_slice", "tensor.pad", "tensor.concat", "tensor.generate",
    NULL };

/* 1 if o is an op that becomes a dispatch of its own wherever it is. */
static int
target_op(MlirOperation o)
{
	size_t i;

	for (i = 0; moves[i] != NULL && !named(o, moves[i]); i++)
		;
	return moves[i] != NULL ||
	    prefixed(mlirIdentifierStr(mlirOperationGetName(o)), "linalg.") ||
	    elementwise_on_tensors(o);
}

static MlirWalkResult
find_target(MlirOperation o, void *arg)
{
	if (!target_op(o))
		return MlirWalkResultAdvance;
	*(int *)arg = 1;
	return MlirWalkResultInterrupt;
}

/*
 * 1 if o is a loop the program writes itself (scf.for, affine.for, their
 * parallel forms) with no op in it that is a dispatch of its own (buddy-
 * mlir's decode attention: affine loops of loads, stores and arithmetic
 * on memrefs). Such a loop is a dispatch as a whole, compiled as the
 * kernels are, not left in the program's function, which is compiled at
 * -O0 (export/build.c). A loop holding linalg or tensor ops (a tiled
 * program's) stays, and each of those ops is a dispatch called there.
 */
static int
scalar_loop(MlirOperation o)
{
	static const char *const loops[] = { "scf.for", "affine.for",
	    "scf.parallel", "affine.parallel", "scf.forall", NULL };
	size_t i;
	int found = 0;

	for (i = 0; loops[i] != NULL && !named(o, loops[i]); i++)
		;
	if (loops[i] == NULL)
		return 0;
	mlirOperationWalk(o, find_target, &found, MlirWalkPreOrder);
	return !found;
}

/* Walk callback: the outermost ops of a function body to move out. */
static MlirWalkResult
collect_targets(MlirOperation o, void *arg)
{
	struct targets *t = arg;

	if (!target_op(o) && !scalar_loop(o))
		return MlirWalkResultAdvance;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->ops = xrealloc(t->ops, t->cap * sizeof *t->ops);
	}
	t->ops[t->n++] = o;
	return MlirWalkResultSkip;
}

/* The dispatch's name: __autosched_FNAME_K_KIND (the first op's, dots as _). Caller frees. */
static char *
outline_name(MlirOperation op, const char *fname, size_t k)
{
	MlirStringRef opname = mlirIdentifierStr(mlirOperationGetName(op));
	char *kind, *name;
	size_t i;

	kind = xstrndup(opname.data, opname.length);
	memmove(kind, strchr(kind, '.') + 1, strlen(strchr(kind, '.')));
	for (i = 0; kind[i] != '\0'; i++) {
		if (kind[i] == '.')
			kind[i] = '_';
	}
	name = xasprintf("__autosched_%s_%zu_%s", fname, k, kind);
	free(kind);
	return name;
}

/*
 * The new function's body block: an argument for each captured value not
 * copied (its type in args, the value in callargs; *nargs of them), the
 * cheap ones cloned in; every use inside the ops pointed at them.
 */
static MlirBlock
outline_body(struct captures *cs, const MlirOperation *ops, size_t nops,
    MlirLocation loc, MlirType *args, MlirValue *callargs, size_t *nargs)
{
	MlirLocation *locs = xcalloc(cs->n + 1, sizeof *locs);
	MlirBlock body;
	size_t i, n = 0;

	for (i = 0; i < cs->n; i++) {
		if (cs->c[i].copy)
			continue;
		callargs[n] = cs->c[i].v;
		locs[n] = loc;
		args[n++] = mlirValueGetType(cs->c[i].v);
	}
	/* The body: copies of the cheap values, the op, its results returned. */
	body = mlirBlockCreate((intptr_t)n, args, locs);
	for (i = 0, n = 0; i < cs->n; i++) {
		if (cs->c[i].copy) {
			MlirOperation c = mlirOperationClone(
			    mlirOpResultGetOwner(cs->c[i].v));

			mlirBlockAppendOwnedOperation(body, c);
			cs->c[i].inner = mlirOperationGetResult(c,
			    mlirOpResultGetResultNumber(cs->c[i].v));
		} else
			cs->c[i].inner = mlirBlockGetArgument(body,
			    (intptr_t)n++);
	}
	for (i = 0; i < nops; i++)
		mlirOperationWalk(ops[i], use_inner, cs, MlirWalkPreOrder);
	free(locs);
	*nargs = n;
	return body;
}

/*
 * The private, never inlined func.func name of type (args) -> (res) around
 * body, inserted into syms (which renames it if the name is taken).
 */
static MlirOperation
outline_func(MlirContext ctx, MlirSymbolTable syms, const char *name,
    MlirLocation loc, MlirBlock body, const MlirType *args, size_t nargs,
    const MlirType *res, intptr_t nres)
{
	MlirType fty = mlirFunctionTypeGet(ctx, (intptr_t)nargs, args, nres,
	    res);
	MlirRegion region = mlirRegionCreate();
	MlirAttribute noinline = mlirStringAttrGet(ctx, ref("noinline"));
	MlirNamedAttribute attrs[4];
	MlirOperationState st;
	MlirOperation func;

	mlirRegionAppendOwnedBlock(region, body);
	attrs[0] = mlirNamedAttributeGet(mlirIdentifierGet(ctx, ref("sym_name")),
	    mlirStringAttrGet(ctx, ref(name)));
	attrs[1] = mlirNamedAttributeGet(mlirIdentifierGet(ctx,
	    ref("function_type")), mlirTypeAttrGet(fty));
	attrs[2] = mlirNamedAttributeGet(mlirIdentifierGet(ctx,
	    ref("sym_visibility")), mlirStringAttrGet(ctx, ref("private")));
	/* Compiled as measured: never inlined into its caller. */
	attrs[3] = mlirNamedAttributeGet(mlirIdentifierGet(ctx,
	    ref("passthrough")), mlirArrayAttrGet(ctx, 1, &noinline));
	st = mlirOperationStateGet(ref("func.func"), loc);
	mlirOperationStateAddAttributes(&st, 4, attrs);
	mlirOperationStateAddOwnedRegions(&st, 1, &region);
	func = mlirOperationCreate(&st);
	mlirSymbolTableInsert(syms, func);
	return func;
}

/*
 * A call of func where the last op was (a consumer's other operands may be
 * defined after the matmul; nothing between uses the chain's values), its
 * results in place of the last op's; the ops moved into body, which
 * returns the last op's results.
 */
static void
outline_call(MlirContext ctx, MlirOperation func, MlirBlock body,
    const MlirOperation *ops, size_t nops, MlirValue *callargs, size_t nargs,
    MlirType *res, intptr_t nres, MlirLocation loc)
{
	MlirOperation last = ops[nops - 1], call, ret;
	MlirValue *rets = xcalloc((size_t)nres + 1, sizeof *rets);
	MlirAttribute callee;
	MlirNamedAttribute attr;
	MlirOperationState st;
	intptr_t r;
	size_t i;

	callee = mlirFlatSymbolRefAttrGet(ctx, mlirStringAttrGetValue(
	    mlirOperationGetAttributeByName(func, ref("sym_name"))));
	st = mlirOperationStateGet(ref("func.call"), loc);
	mlirOperationStateAddOperands(&st, (intptr_t)nargs, callargs);
	mlirOperationStateAddResults(&st, nres, res);
	attr = mlirNamedAttributeGet(mlirIdentifierGet(ctx, ref("callee")),
	    callee);
	mlirOperationStateAddAttributes(&st, 1, &attr);
	call = mlirOperationCreate(&st);
	mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(last), last,
	    call);
	for (r = 0; r < nres; r++) {
		mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(last, r),
		    mlirOperationGetResult(call, r));
	}
	for (i = 0; i < nops; i++) {
		mlirOperationRemoveFromParent(ops[i]);
		mlirBlockAppendOwnedOperation(body, ops[i]);
	}
	for (r = 0; r < nres; r++)
		rets[r] = mlirOperationGetResult(last, r);
	st = mlirOperationStateGet(ref("func.return"), loc);
	mlirOperationStateAddOperands(&st, nres, rets);
	ret = mlirOperationCreate(&st);
	mlirBlockAppendOwnedOperation(body, ret);
	free(rets);
}

/*
 * Move the nops ops (in function fname, in order; each but the last used
 * only by the ops after it: a matmul's fill, the matmul and its epilogue)
 * into a new private function named after fname, its number k and the
 * kind of ops[lead] (the matmul), inserted into the module's symbol table
 * (which renames it if the name is taken), and call that in their place:
 * it returns the last op's results. Returns the new function.
 */
static MlirOperation
outline_op(MlirContext ctx, MlirSymbolTable syms, const char *fname,
    size_t k, const MlirOperation *ops, size_t nops, size_t lead)
{
	MlirOperation op = ops[lead], last = ops[nops - 1], func;
	MlirLocation loc = mlirOperationGetLocation(op);
	intptr_t nres = mlirOperationGetNumResults(last), r;
	struct captures cs = { .c = NULL, .n = 0, .cap = 0, .ops = ops,
	    .nops = nops };
	MlirType *args, *res;
	MlirValue *callargs;
	MlirBlock body;
	char *name;
	size_t i, nargs;

	for (i = 0; i < nops; i++)
		mlirOperationWalk(ops[i], collect_captures, &cs,
		    MlirWalkPreOrder);
	args = xcalloc(cs.n + 1, sizeof *args);
	callargs = xcalloc(cs.n + 1, sizeof *callargs);
	res = xcalloc((size_t)nres + 1, sizeof *res);
	for (r = 0; r < nres; r++)
		res[r] = mlirValueGetType(mlirOperationGetResult(last, r));
	body = outline_body(&cs, ops, nops, loc, args, callargs, &nargs);
	name = outline_name(op, fname, k);
	func = outline_func(ctx, syms, name, loc, body, args, nargs, res, nres);
	outline_call(ctx, func, body, ops, nops, callargs, nargs, res, nres,
	    loc);
	free(name);
	free(cs.c);
	free(args);
	free(callargs);
	free(res);
	return func;
}

/*
 * The zero fill of matmul mm's init: a linalg.fill of a tensor.empty in
 * mm's block whose result mm alone uses; else a null op.
 */
static MlirOperation
init_fill(MlirOperation mm)
{
	MlirValue init = mlirOperationGetOperand(mm,
	    mlirOperationGetNumOperands(mm) - 1), out;
	MlirOperation f, none = { NULL };

	if (!mlirValueIsAOpResult(init))
		return none;
	f = mlirOpResultGetOwner(init);
	if (!named(f, "linalg.fill") || mlirOperationGetNumOperands(f) != 2 ||
	    !mlirOperationEqual(only_user(init), mm) ||
	    !mlirBlockEqual(mlirOperationGetBlock(f), mlirOperationGetBlock(mm)))
		return none;
	out = mlirOperationGetOperand(f, 1);
	if (!mlirValueIsAOpResult(out) ||
	    !named(mlirOpResultGetOwner(out), "tensor.empty"))
		return none;
	return f;
}

/*
 * 1 if slice is a tensor.extract_slice in mm's block whose result mm alone
 * uses, as an input (A or B: a head of attention's Q, K or V).
 */
static int
input_slice(MlirOperation mm, MlirOperation slice)
{
	intptr_t i, n = mlirOperationGetNumOperands(mm);
	MlirValue v;

	if (!named(slice, "tensor.extract_slice") ||
	    !mlirBlockEqual(mlirOperationGetBlock(slice),
	    mlirOperationGetBlock(mm)))
		return 0;
	v = mlirOperationGetResult(slice, 0);
	if (!mlirOperationEqual(only_user(v), mm))
		return 0;
	for (i = 0; i + 1 < n; i++) {
		if (mlirValueEqual(mlirOperationGetOperand(mm, i), v))
			return 1;
	}
	return 0;
}

/*
 * 1 if o is a producer a matmul's dispatch takes in (with_producers): the
 * zero fill of its init or a slice of its input, o's only user the matmul.
 */
static int
taken_by_matmul(MlirOperation o)
{
	MlirOperation u;

	if (!named(o, "linalg.fill") && !named(o, "tensor.extract_slice"))
		return 0;
	u = only_user(mlirOperationGetResult(o, 0));
	return !mlirOperationIsNull(u) && fusable_root(u) &&
	    (mlirOperationEqual(init_fill(u), o) || input_slice(u, o));
}

/*
 * The producers of the matmul (*ops)[0] its dispatch takes in, put before
 * it in *ops (*n counts them): each input's tensor.extract_slice (in the
 * dispatch a view of the whole tensor, not a copy of the slice made by a
 * dispatch of its own) and its zero fill (init_fill), marked
 * autosched.init for the schedules to fill each thread's chunk where the
 * chunk is computed (backends/mlir-cpu: fill_parallel). Returns how many;
 * *fill: the fill, or a null op.
 */
static size_t
with_producers(MlirContext ctx, MlirOperation **ops, size_t *n,
    MlirOperation *fill)
{
	MlirOperation mm = (*ops)[0], pre[8];
	intptr_t i, nops = mlirOperationGetNumOperands(mm);
	size_t k = 0;

	for (i = 0; i + 1 < nops && k < 7; i++) {
		MlirValue v = mlirOperationGetOperand(mm, i);

		if (mlirValueIsAOpResult(v) &&
		    input_slice(mm, mlirOpResultGetOwner(v)))
			pre[k++] = mlirOpResultGetOwner(v);
	}
	*fill = init_fill(mm);
	if (!mlirOperationIsNull(*fill)) {
		pre[k++] = *fill;
		mlirOperationSetDiscardableAttributeByName(*fill,
		    ref("autosched.init"), mlirUnitAttrGet(ctx));
	}
	if (k == 0)
		return 0;
	*ops = xrealloc(*ops, (*n + k) * sizeof **ops);
	memmove(*ops + k, *ops, *n * sizeof **ops);
	memcpy(*ops, pre, k * sizeof *pre);
	*n += k;
	return k;
}

/*
 * A tensor.extract_slice of dest at the offsets, sizes and strides of the
 * static insert_slice ins, of type ty, made before ins. Null op when ins
 * has dynamic ones.
 */
static MlirOperation
slice_like(MlirContext ctx, MlirOperation ins, MlirType ty)
{
	static const char *const keep[] = { "static_offsets", "static_sizes",
	    "static_strides" };
	static const int32_t seg[] = { 1, 0, 0, 0 };
	MlirNamedAttribute attrs[4];
	MlirOperationState st;
	MlirOperation x, none = { NULL };
	MlirValue dest;
	size_t i;

	if (mlirOperationGetNumOperands(ins) != 2)
		return none;
	dest = mlirOperationGetOperand(ins, 1);
	for (i = 0; i < 3; i++) {
		MlirAttribute a = mlirOperationGetAttributeByName(ins,
		    ref(keep[i]));

		if (mlirAttributeIsNull(a))
			return none;
		attrs[i] = mlirNamedAttributeGet(mlirIdentifierGet(ctx,
		    ref(keep[i])), a);
	}
	attrs[3] = mlirNamedAttributeGet(mlirIdentifierGet(ctx,
	    ref("operandSegmentSizes")), mlirDenseI32ArrayGet(ctx, 4, seg));
	st = mlirOperationStateGet(ref("tensor.extract_slice"),
	    mlirOperationGetLocation(ins));
	mlirOperationStateAddOperands(&st, 1, &dest);
	mlirOperationStateAddResults(&st, 1, &ty);
	mlirOperationStateAddAttributes(&st, 4, attrs);
	x = mlirOperationCreate(&st);
	mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(ins), ins, x);
	return x;
}

/*
 * The matmul's result (the last of the n ops, its epilogue's end) inserted
 * whole into a bigger tensor (a head of attention into all heads): the
 * tensor.insert_slice, static, its only user in its block, joins the
 * dispatch (*ops, *n one more); with the zero fill fill (not null), the
 * fill writes into that slice of the destination instead of an empty
 * tensor, so the matmul and its epilogue compute in place there and the
 * insert copies nothing (the destination, an argument of the dispatch, is
 * written in place: no other op reads it). 1 if it joined, else 0.
 */
static int
with_insert(MlirContext ctx, MlirOperation **ops, size_t *n,
    MlirOperation fill)
{
	MlirValue v = mlirOperationGetResult((*ops)[*n - 1], 0);
	MlirOperation ins = only_user(v), x;

	if (mlirOperationIsNull(ins) || !named(ins, "tensor.insert_slice") ||
	    !mlirBlockEqual(mlirOperationGetBlock(ins),
	    mlirOperationGetBlock((*ops)[*n - 1])) ||
	    mlirOperationGetNumOperands(ins) != 2 ||
	    !mlirValueEqual(mlirOperationGetOperand(ins, 0), v))
		return 0;
	*ops = xrealloc(*ops, (*n + 2) * sizeof **ops);
	if (!mlirOperationIsNull(fill)) {
		x = slice_like(ctx, ins, mlirValueGetType(
		    mlirOperationGetOperand(fill, 1)));
		if (!mlirOperationIsNull(x)) {
			mlirOperationSetOperand(fill, 1,
			    mlirOperationGetResult(x, 0));
			/* First in the dispatch: before the fill. */
			memmove(*ops + 1, *ops, *n * sizeof **ops);
			(*ops)[0] = x;
			(*n)++;
		}
	}
	(*ops)[(*n)++] = ins;
	return 1;
}

/* What a group's function is marked with and counted as. */
struct group_kind {
	int	 epilogue;	/* a matmul with its consumers */
	int	 rows;		/* a row group */
	int	 init;		/* a matmul with its zero fill inside */
	size_t	 consumers;
};

/*
 * Mark f, the function of a group of n ops rooted at root, for the passes
 * that run on such functions alone, and count it in ol.
 */
static void
mark_group(MlirContext ctx, struct outline *ol, MlirOperation f,
    MlirOperation root, const struct group_kind *k, size_t n)
{
	/*
	 * Its zero fill inside (autosched.inits): for autosched-fold-init (the
	 * plugin), which folds the fills of these functions alone
	 * (canonicalized into a reshape's, a fill loses its own mark).
	 */
	if (k->init)
		mlirOperationSetDiscardableAttributeByName(f,
		    ref("autosched.inits"), mlirUnitAttrGet(ctx));
	if (k->epilogue) {
		ol->nfused++;
		ol->nconsumers += k->consumers;
	} else if (fusable_root(root)) {
		/* A matmul with its producers or its insert. */
	} else if (k->rows) {
		/*
		 * For autosched-fuse-rows; its elementwise ops first fused as
		 * a chain's are.
		 */
		mlirOperationSetDiscardableAttributeByName(f,
		    ref("autosched.rows"), mlirUnitAttrGet(ctx));
		mlirOperationSetDiscardableAttributeByName(f,
		    ref("autosched.chain"), mlirUnitAttrGet(ctx));
		ol->nrows++;
		ol->nrowed += n;
	} else {
		/* For the fusion pass, run on these functions alone. */
		mlirOperationSetDiscardableAttributeByName(f,
		    ref("autosched.chain"), mlirUnitAttrGet(ctx));
		ol->nchains++;
		ol->nchained += n;
	}
}

/*
 * Outline the j-th target of t (in function fname): with fusion, a matmul
 * with its input slices, its zero fill and its chain of elementwise
 * consumers (the consumers' own entries in t are then skipped: nulled; the
 * producers', left when they come).
 */
static void
outline_target(MlirContext ctx, MlirSymbolTable syms, const char *fname,
    struct outline *ol, struct targets *t, size_t j)
{
	MlirOperation *ops = NULL, f;
	size_t n = 1, i, l, lead = 0;
	struct group_kind k = { 0, 0, 0, 0 };

	if (mlirOperationIsNull(t->ops[j]))
		return;
	/* A matmul's fill or input slice: its matmul's dispatch takes it. */
	if ((ol->fuse & ANALYSIS_FUSE_EPILOGUE) && taken_by_matmul(t->ops[j]))
		return;
	if ((ol->fuse & ANALYSIS_FUSE_EPILOGUE) && fusable_root(t->ops[j])) {
		MlirOperation fill;
		size_t before, fills;

		n = epilogue_chain(ctx, t->ops[j], &ops);
		k.consumers = n - 1;
		k.epilogue = k.consumers > 0;
		lead = with_producers(ctx, &ops, &n, &fill);
		fills = !mlirOperationIsNull(fill);
		k.init = fills != 0;
		ol->ninits += fills;
		ol->nslices += lead - fills;
		before = n;
		if (with_insert(ctx, &ops, &n, fill)) {
			ol->ninserts++;
			/* The destination's slice, put first. */
			lead += n - before - 1;
		}
	} else if ((ol->fuse & ANALYSIS_FUSE_ROWS) &&
	    (n = row_group(t, j, &ops)) > 1)
		k.rows = 1;
	else if ((ol->fuse & ANALYSIS_FUSE_CHAINS) &&
	    parallel_generic(t->ops[j])) {
		free(ops);
		n = elementwise_chain(t->ops[j], &ops);
	}
	if (n > 1) {
		for (i = 1; i < n; i++) {
			for (l = j + 1; l < t->n; l++) {
				if (mlirOperationEqual(t->ops[l], ops[i]))
					t->ops[l].ptr = NULL;
			}
		}
		f = outline_op(ctx, syms, fname, j, ops, n, lead);
		mark_group(ctx, ol, f, t->ops[j], &k, n);
	} else
		(void)outline_op(ctx, syms, fname, j, &t->ops[j], 1, 0);
	ol->n++;
	free(ops);
}

/* Counts reshapes, elementwise ops on tensors, contraction generics. */
struct unit_scan {
	size_t	 reshapes;
	size_t	 tensor_ops;
	size_t	 contractions;
};

static MlirWalkResult
unit_scan_op(MlirOperation o, void *arg)
{
	struct unit_scan *u = arg;

	if (named(o, "tensor.expand_shape") || named(o, "tensor.collapse_shape"))
		u->reshapes++;
	else if (elementwise_on_tensors(o))
		u->tensor_ops++;
	else if (named(o, "linalg.generic") && mlirLinalgIsAContractionOp(o))
		u->contractions++;
	return MlirWalkResultAdvance;
}

static struct unit_scan
unit_scan(MlirModule module)
{
	struct unit_scan u = { 0, 0, 0 };

	mlirOperationWalk(mlirModuleGetOperation(module), unit_scan_op, &u,
	    MlirWalkPreOrder);
	return u;
}

/*
 * Walk callback: a generic of one output whose output is also one of its
 * inputs and whose body never reads the output (as
 * convert-elementwise-to-linalg makes them) writes into an empty tensor
 * instead, so that its input has one user, as a chain or an epilogue
 * needs. Static shapes only.
 */
static MlirWalkResult
fresh_init(MlirOperation o, void *arg)
{
	intptr_t n = mlirOperationGetNumOperands(o), i;
	MlirValue init;
	MlirType t;
	MlirBlock body;
	MlirOperationState st;
	MlirOperation e;

	(void)arg;
	if (!named(o, "linalg.generic") || mlirOperationGetNumResults(o) != 1 ||
	    n < 2)
		return MlirWalkResultAdvance;
	init = mlirOperationGetOperand(o, n - 1);
	t = mlirValueGetType(init);
	body = mlirRegionGetFirstBlock(mlirOperationGetRegion(o, 0));
	if (!mlirTypeIsARankedTensor(t) || !mlirShapedTypeHasStaticShape(t) ||
	    mlirBlockGetNumArguments(body) != n ||
	    !mlirOpOperandIsNull(mlirValueGetFirstUse(
	    mlirBlockGetArgument(body, n - 1))))
		return MlirWalkResultAdvance;
	for (i = 0; i < n - 1 &&
	    !mlirValueEqual(mlirOperationGetOperand(o, i), init); i++)
		;
	if (i == n - 1)
		return MlirWalkResultAdvance;
	st = mlirOperationStateGet(ref("tensor.empty"),
	    mlirOperationGetLocation(o));
	mlirOperationStateAddResults(&st, 1, &t);
	e = mlirOperationCreate(&st);
	mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(o), o, e);
	mlirOperationSetOperand(o, n - 1, mlirOperationGetResult(e, 0));
	return MlirWalkResultAdvance;
}

/*
 * The program made uniform for the fusions (ANALYSIS_FUSE_NORMALIZE): on
 * each function, convert-elementwise-to-linalg (an arith or math op on
 * whole tensors becomes the linalg.generic the build would make of it
 * after outlining, so that it can join a chain or an epilogue) and
 * linalg-fold-unit-extent-dims (the generics' unit dims folded away), the
 * latter unless a generic is a contraction: folding would change the shape
 * a tuned op is known by; then each generic that writes into its own input
 * writes into an empty tensor (fresh_init). Named ops are left as they
 * are; the arithmetic is unchanged. *converted: the tensor ops made generics; *gone: the
 * reshapes fewer. 0, or -1 when a pass fails.
 */
static int
normalize(MlirContext ctx, MlirModule module, size_t *converted,
    size_t *gone, char **err)
{
	struct unit_scan before = unit_scan(module), after;
	MlirPassManager pm;
	MlirOpPassManager fpm;
	MlirLogicalResult r;

	pm = mlirPassManagerCreateOnOperation(ctx, ref("builtin.module"));
	fpm = mlirPassManagerGetNestedUnder(pm, ref("func.func"));
	mlirOpPassManagerAddOwnedPass(fpm,
	    mlirCreateLinalgConvertElementwiseToLinalgPass());
	if (before.contractions == 0)
		mlirOpPassManagerAddOwnedPass(fpm,
		    mlirCreateLinalgLinalgFoldUnitExtentDimsPass());
	r = mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module));
	mlirPassManagerDestroy(pm);
	if (mlirLogicalResultIsFailure(r)) {
		util_seterr(err, "making the program uniform for the fusions "
		    "(convert-elementwise-to-linalg, "
		    "linalg-fold-unit-extent-dims) failed");
		return -1;
	}
	mlirOperationWalk(mlirModuleGetOperation(module), fresh_init, NULL,
	    MlirWalkPostOrder);
	after = unit_scan(module);
	*converted = before.tensor_ops > after.tensor_ops ?
	    before.tensor_ops - after.tensor_ops : 0;
	*gone = before.reshapes > after.reshapes ?
	    before.reshapes - after.reshapes : 0;
	return 0;
}

/* The edit: every function of the module's body, one after the other. */
static int
outline_module(MlirContext ctx, MlirModule module, void *arg, char **err)
{
	struct outline *ol = arg;
	MlirOperation mop = mlirModuleGetOperation(module), f;
	MlirSymbolTable syms = mlirSymbolTableCreate(mop);
	MlirOperation *funcs = NULL;
	size_t nf = 0, i, j;

	if (mlirSymbolTableIsNull(syms)) {
		util_seterr(err, "the module is not a symbol table");
		return -1;
	}
	if ((ol->fuse & ANALYSIS_FUSE_NORMALIZE) && normalize(ctx, module,
	    &ol->nconverted, &ol->nreshapes, err) != 0) {
		mlirSymbolTableDestroy(syms);
		return -1;
	}
	/* A conv tuned as a matmul is that matmul, as it was measured. */
	if (analysis_conv_rewrite(ctx, module, ol->path, NULL, err) != 0) {
		mlirSymbolTableDestroy(syms);
		return -1;
	}
	/* The program's own functions, before any dispatch joins them. */
	for (f = mlirBlockGetFirstOperation(mlirModuleGetBody(module));
	    !mlirOperationIsNull(f); f = mlirOperationGetNextInBlock(f)) {
		if (!named(f, "func.func"))
			continue;
		if (ol->library) {
			mlirOperationSetDiscardableAttributeByName(f,
			    ref("llvm.emit_c_interface"), mlirUnitAttrGet(ctx));
			/*
			 * A definition is exported, private or not: no pass
			 * may drop it or change its results.
			 */
			if (mlirOperationGetNumRegions(f) > 0 &&
			    !mlirBlockIsNull(mlirRegionGetFirstBlock(
			    mlirOperationGetRegion(f, 0))))
				mlirOperationRemoveAttributeByName(f,
				    ref("sym_visibility"));
		}
		funcs = xrealloc(funcs, (nf + 1) * sizeof *funcs);
		funcs[nf++] = f;
	}
	for (i = 0; i < nf; i++) {
		struct targets t = { .ops = NULL, .n = 0, .cap = 0 };
		MlirStringRef sym = mlirStringAttrGetValue(
		    mlirOperationGetAttributeByName(funcs[i], ref("sym_name")));
		char *fname = xstrndup(sym.data, sym.length);

		if (mlirOperationGetNumRegions(funcs[i]) > 0) {
			MlirRegion body = mlirOperationGetRegion(funcs[i], 0);
			MlirBlock b;

			for (b = mlirRegionGetFirstBlock(body); !mlirBlockIsNull(b);
			    b = mlirBlockGetNextInRegion(b)) {
				MlirOperation o;

				for (o = mlirBlockGetFirstOperation(b);
				    !mlirOperationIsNull(o);
				    o = mlirOperationGetNextInBlock(o))
					mlirOperationWalk(o, collect_targets,
					    &t, MlirWalkPreOrder);
			}
		}
		for (j = 0; j < t.n; j++)
			outline_target(ctx, syms, fname, ol, &t, j);
		free(t.ops);
		free(fname);
	}
	free(funcs);
	mlirSymbolTableDestroy(syms);
	return 0;
}

int
analysis_outline(const char *path, int library, char **text, size_t *n,
    char **err)
{
	return analysis_outline_fused(path, library, 0, text, n, NULL, err);
}

int
analysis_outline_fused(const char *path, int library, int fuse, char **text,
    size_t *n, struct analysis_fused *fused, char **err)
{
	struct outline ol = { .path = path, .library = library, .fuse = fuse };
	struct analysis_edit e = { .fn = outline_module, .arg = &ol };
	int rc;

	rc = analysis_edit(path, &e, text, err);
	if (n != NULL)
		*n = ol.n;
	if (fused != NULL) {
		fused->nops = ol.nfused;
		fused->nconsumers = ol.nconsumers;
		fused->nchains = ol.nchains;
		fused->nchained = ol.nchained;
		fused->nrows = ol.nrows;
		fused->nrowed = ol.nrowed;
		fused->ninits = ol.ninits;
		fused->nslices = ol.nslices;
		fused->ninserts = ol.ninserts;
		fused->nconverted = ol.nconverted;
		fused->nreshapes = ol.nreshapes;
	}
	return rc;
}
