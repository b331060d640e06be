/*
 * Internals shared by the files of analysis/: the analysis itself and the
 * MLIR C API helpers the parser and the op recogniser both use.
 */
#ifndef AUTOSCHED_ANALYSIS_INT_H
#define AUTOSCHED_ANALYSIS_INT_H

#include <stdio.h>

#include <mlir-c/IR.h>

#include "analysis/analysis.h"

struct analysis {
	struct op_desc	*ops;
	size_t		 nops;
	size_t		 cap;
	char		**funcs;	/* func.func definitions: name, location, name, … */
	size_t		 nfuncs;
	const struct analysis_lowering *lowered;	/* NULL: read as written */
	size_t		 remaining;	/* ops of the lowered dialect left */
	size_t		 folded;	/* transposes folded (fold.c) */
	char		*nested;	/* where the first nested module is, or NULL */
};

/*
 * "file:line:col" of an MLIR location, looking through name, call-site and
 * fused locations. The parser names the buffer "-"; that becomes file.
 * "file:0:0" when the location carries no position. Caller frees.
 */
char	*analysis_loc_string(MlirLocation, const char *file);

/*
 * A bounded string the MLIR print callbacks append to (analysis_text_append
 * the callback, the struct its argument): buf holds cap bytes and is always
 * ended; what does not fit is cut.
 */
struct analysis_text {
	char	*buf;
	size_t	 cap, len;
};
void	 analysis_text_append(MlirStringRef, void *);

/* The op defining v, or a null op for a block argument (contraction.c). */
MlirOperation analysis_def_op(MlirValue v);
/* 1 if op is not null and named name ("linalg.matmul"; contraction.c). */
int	 analysis_op_is(MlirOperation op, const char *name);
/* Free the strings of d (a described op), not d itself. */
void	 analysis_desc_clear(struct op_desc *d);

/* The printed form of a type, for messages. Caller frees. */
char	*analysis_type_string(MlirType);

/*
 * Describe op into *d if it is contraction-like (see contraction.c).
 * Returns 1 if it is, with the strings of *d allocated (analysis_free frees
 * them), or 0 if the op is not one to list.
 */
int	 analysis_describe(MlirOperation op, const char *file,
	    struct op_desc *d);

/* The element type of a scalar type; ELEM_UNKNOWN for others. */
enum elem_type	 analysis_elem_of(MlirType);

/*
 * 0 if op's body is acc + in0·in1 (its two inputs optionally widened to
 * acc's type, d->lhs, d->rhs and d->acc the element types of inputs 0, 1
 * and the output), with d->lhs_unsigned and d->rhs_unsigned set from the
 * casts; -1 if not.
 */
int	 analysis_mac_body(MlirOperation op, struct op_desc *d);

/*
 * Describe the convolution op (one that MLIR's convolution interface
 * knows) into *d: kind, types, d->conv, and for a 1×1 stride-1 conv the
 * matmul it is (conv.c). Returns NULL if it is tunable, else why not
 * (caller frees).
 */
char	*analysis_conv_describe(MlirOperation op, struct op_desc *d);

/*
 * Replace, in module, each convolution analysis_describe calls a tunable
 * matmul by that matmul: its operands collapsed to matrices
 * (tensor.collapse_shape), the linalg.generic of analysis_emit_dispatch,
 * the result expanded back (tensor.expand_shape); the new ops carry the
 * conv's location. *n (when not NULL) = convs replaced. 0, or -1 with *err
 * (a bug: the replacement did not parse).
 */
int	 analysis_conv_rewrite(MlirContext ctx, MlirModule module,
	    const char *file, size_t *n, char **err);

/*
 * Print the linalg.generic contraction of the tunable matmul d, reading
 * %lhs, %rhs and %acc and defining %result, at four spaces of indent
 * (dispatch.c).
 */
void	 analysis_emit_generic(FILE *f, const struct op_desc *d,
	    const char *lhs, const char *rhs, const char *acc,
	    const char *result);

/*
 * Lower module in place if it holds ops of a dialect analysed only after
 * upstream passes lower it to linalg (lower.c). *how is the lowering run
 * (NULL: none needed), *remaining the ops of its dialect left after it.
 * -1 with *err when an op of the dialect has a tensor of a shape that is
 * not static (nothing run; file names it) or the pipeline did not parse (a
 * bug); -1 without when a pass failed (its diagnostics went to ctx's
 * handler). *how names the lowering either way.
 */
int	 analysis_lower_module(MlirContext ctx, MlirModule module,
	    const char *file, const struct analysis_lowering **how,
	    size_t *remaining, char **err);

/*
 * Fold into each linalg.matmul and linalg.batch_matmul of module the
 * linalg.transposes of its inputs that swap their last two dims (and
 * linalg.generics that only copy so; fold.c):
 * the operand read from the transpose's input through its map with the
 * last two results swapped; transposes (and their tensor.empty) left
 * unused are erased. Returns the operands folded.
 */
size_t	 analysis_fold_transposes(MlirModule module);

/*
 * A change to a whole module (outline.c): fn edits module in place, 0 or
 * -1 with *err set.
 */
struct analysis_edit {
	int	(*fn)(MlirContext, MlirModule, void *arg, char **err);
	void	*arg;
};

/*
 * Parse the MLIR file at path, apply edit to it and print it again, generic
 * form if the input was, with every location: those the input wrote, the
 * others path:line:col of the op in it (so that a tool reading the printed
 * program names the input's lines). Caller frees *text. -1 with *err on a
 * parse error or a failed edit.
 */
int	 analysis_edit(const char *path, const struct analysis_edit *edit,
	    char **text, char **err) __attribute__((warn_unused_result));

#endif
