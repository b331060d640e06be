/*
 * MLIR analysis: parse an MLIR file with MLIR's own parser (C API), find every
 * (batch) matmul in it, describe it, and extract it into a standalone dispatch.
 */
#ifndef AUTOSCHED_ANALYSIS_H
#define AUTOSCHED_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

enum elem_type {
	ELEM_UNKNOWN = 0,
	ELEM_F32,
	ELEM_F64,
	ELEM_F16,
	ELEM_BF16,
	ELEM_I8,
	ELEM_I16,
	ELEM_I32,
	ELEM_I64,
};

/* "f32", "bf16", "i8", …; "unknown" for ELEM_UNKNOWN. */
const char	*analysis_elem_name(enum elem_type);
/*
 * An operand's type as the dispatch profiler spells it: the element name,
 * or "u8", "u16", … for an integer operand widened unsigned (extui).
 */
const char	*analysis_operand_name(enum elem_type, int is_unsigned);
/* Size in bytes of one element (0 for ELEM_UNKNOWN). */
size_t		 analysis_elem_size(enum elem_type);
int		 analysis_elem_is_float(enum elem_type);

/* The 2-D convolutions the analysis reads: which op, so which layout. */
enum conv_layout {
	CONV_NONE = 0,		/* not one of them */
	CONV_NHWC_HWCF,		/* linalg.conv_2d_nhwc_hwcf */
	CONV_NCHW_FCHW,		/* linalg.conv_2d_nchw_fchw */
	CONV_DW_NHWC_HWC,	/* linalg.depthwise_conv_2d_nhwc_hwc */
};

/*
 * A 2-D convolution's geometry as the program has it (layout CONV_NONE for
 * every other op): the input N×H×W×C before padding (the padding being a
 * tensor.pad of zeros over H and W that produces the conv's input), F
 * filters of KH×KW (F = C for a depthwise conv), the output OH×OW, strides
 * and dilations from the op's attributes (1 where it has none). Sizes not
 * known statically are -1. No pointers: an op_desc copies freely.
 */
struct op_conv {
	enum conv_layout layout;
	int64_t		 n, h, w, c, f;
	int64_t		 kh, kw, oh, ow;
	int64_t		 stride[2];	/* H, W */
	int64_t		 dilation[2];	/* H, W */
	int64_t		 pad[4];	/* top, bottom, left, right */
};

/*
 * One contraction-like op found in the input: every (batch) matmul, and the
 * ops that look like one but are not (mmt4d, matvec, convolutions, dynamic
 * shapes, other element types or bodies), listed with tunable = 0 and a
 * reason. Sizes not known statically are -1. name is the dispatch-profiler
 * name for tunable ops ("?" for unknown sizes otherwise, or just the kind when
 * the op is not shaped like a matmul at all). Strings are owned by the
 * analysis and live until analysis_free.
 */
struct op_desc {
	int		 index;		/* position among all ops listed, from 0 */
	/* "matmul" | "batch_matmul" when shaped like one, else the op's family */
	const char	*kind;		/* ("mmt4d", "convolution", "generic", …) */
	const char	*op_name;	/* the MLIR op name, e.g. "linalg.generic" */
	const char	*name;		/* "matmul_1024x512x256_f32t_f32t_f32t" */
	int64_t		 batch;		/* 1 for plain matmul */
	int64_t		 m, n, k;
	enum elem_type	 lhs, rhs, acc;
	int		 transpose_a;	/* lhs stored K×M */
	int		 transpose_b;	/* rhs stored N×K */
	int		 lhs_unsigned;	/* integer lhs widened with extui, not extsi */
	int		 rhs_unsigned;	/* integer rhs widened with extui, not extsi */
	const char	*function;	/* enclosing func's symbol name, "" if none */
	const char	*loc;		/* "file:line:col" (an explicit loc() in the IR wins; :0:0 if none) */
	int		 tunable;
	const char	*reason;	/* why not tunable; NULL when tunable */
	/*
	 * A convolution's geometry (conv.layout != CONV_NONE). A conv on
	 * tensors (not depthwise) is tuned as the matmul of its im2col: kind
	 * "matmul", m = N·OH·OW, n = F, k = KH·KW·C (NHWC/HWCF; NCHW/FCHW with
	 * N = 1: m = F, n = OH·OW, k = C·KH·KW, lhs the filter); a 1×1
	 * stride-1 conv is that matmul with no im2col. `build` cuts it into
	 * the im2col and that matmul (analysis_outline). Other convs: kind is
	 * the op's name after "linalg." and name analysis_conv_name's.
	 */
	struct op_conv	 conv;
};

/*
 * A convolution's name from its geometry and types:
 * "conv_2d_nhwc_hwcf_1x56x56x64_3x3x64x64_s1_d1_p1_f32t_f32t_f32t" (input
 * N×H×W×C and filter in the op's layout, stride, dilation and padding, one
 * number when all equal: "s2x1", "p0x1x0x1" otherwise). The name of the
 * conv behind a 1×1 conv tuned as a matmul too. Caller frees; NULL for an
 * op that is not a convolution.
 */
char	*analysis_conv_name(const struct op_desc *);

/*
 * 1 if the convolution d needs an im2col to be a matmul (a filter larger
 * than 1×1 or a stride other than 1); 0 for a 1×1 stride-1 conv and for
 * ops that are not convolutions.
 */
int	 analysis_conv_im2col(const struct op_desc *);

/*
 * The op's arithmetic in flops: 2·batch·m·n·k for a matmul (a conv tuned
 * as one included), 2·N·OH·OW·F·C·KH·KW for a convolution (2·N·OH·OW·C·
 * KH·KW depthwise); 0 when a size is not known.
 */
double	 analysis_op_flops(const struct op_desc *);

/*
 * Kinds: "matmul", "batch_matmul", and the quantized ops
 * "quantized_matmul", "quantized_batch_matmul" (C += (A - za)(B - zb), i8
 * inputs, i32 accumulator, zero points za and zb scalars: their dispatch
 * takes them as two i32 arguments after acc). 1 if kind has a batch dim /
 * subtracts zero points.
 */
int	 analysis_kind_batch(const char *kind);
int	 analysis_kind_quantized(const char *kind);

/*
 * 1 if a and b are the same op as far as tuning goes (both tunable, same
 * kind, sizes, element types, signedness and layout; a conv tuned as a
 * matmul is that matmul), or both convolutions not tuned with the same
 * layout, geometry (shape, stride, dilation, padding) and types: a program
 * that uses one op several times is tuned once for all its occurrences.
 */
int	 analysis_op_same(const struct op_desc *a, const struct op_desc *b);

struct analysis;

/*
 * The one limit on an MLIR input (every reader uses it): IREE dumps of whole
 * models stay far below. And the deepest bracket nesting ((, [, {, <)
 * handed to MLIR's parser, which recurses on it: deeper files are refused
 * before they can overflow the stack.
 */
#define ANALYSIS_INPUT_MAX	((size_t)256 << 20)
#define ANALYSIS_NESTING_MAX	512

/*
 * Parse the MLIR file at path (or the text buffer, named name for messages)
 * and find its ops. Unregistered dialects are allowed. A module holding ops
 * of an upstream dialect that upstream passes lower to linalg (TOSA) is run
 * through those passes first, in memory (see analysis_lowered); the ops'
 * locations still name the input and the lines of the ops they come from.
 * On a parse error, or a pass that fails, returns -1 with *err holding
 * MLIR's diagnostic ("file:line:col: message").
 * The caller frees *out with analysis_free.
 */
int	 analysis_load(const char *path, struct analysis **out, char **err)
	    __attribute__((warn_unused_result));
int	 analysis_parse(const char *name, const char *text, size_t len,
	    struct analysis **out, char **err)
	    __attribute__((warn_unused_result));
void	 analysis_free(struct analysis *);

/* A lowering run before analysis: from which dialect, by which passes. */
struct analysis_lowering {
	const char	*from;		/* "TOSA" */
	/* MLIR's textual pass pipeline, as mlir-opt --pass-pipeline takes it */
	const char	*pipeline;
};

/*
 * How the program was lowered before its ops were looked for, or NULL when
 * it was read as written. *remaining (when not NULL) = ops of the lowered
 * dialect the passes did not reach (outside a func.func of the top module):
 * such ops are not analysed. Static.
 */
const struct analysis_lowering *analysis_lowered(const struct analysis *,
	    size_t *remaining);
/*
 * "file:line:col" of the first module inside the top one (two top-level
 * modules in a file read as two inside an implicit one), or NULL. Static.
 */
const char *analysis_nested_module(const struct analysis *);

/*
 * Transposes folded into the matmuls that read them before the ops were
 * looked for: a linalg.matmul (linalg.batch_matmul) input made by a
 * linalg.transpose swapping its last two dims (or a linalg.generic that
 * only copies through that permutation) is read from the
 * transpose's input, stored transposed (its indexing map's last two
 * results swapped; the op's name says "n" for that operand), and a
 * transpose left unused is gone. Every command that reads a program reads
 * it so (analyze, run, build, annotate). Static.
 */
size_t	 analysis_folded(const struct analysis *);
/*
 * What the folds did, for messages ("2 linalg.transpose folded into the
 * matmuls that read them: …"), or NULL when none. Caller frees.
 */
char	*analysis_folded_said(const struct analysis *);

/*
 * The MLIR file at path as analysis_load reads it, for tools that compile
 * it: when it is lowered before analysis or transposes were folded
 * (analysis_folded), the module as MLIR prints it then (every location
 * written out: they name path and the lines of the ops they come from) in
 * *text, caller frees, the lowering in *how (NULL if none) and the folds
 * in *folded (when not NULL); else *text and *how are NULL, *folded 0, and
 * the file is to be used as written. -1 with *err as analysis_load.
 */
int	 analysis_lower(const char *path, char **text,
	    const struct analysis_lowering **how, size_t *folded, char **err)
	    __attribute__((warn_unused_result));

/*
 * Parse the MLIR file at path, set the attribute attr_name on each listed
 * op i (the op analysis_op(…, i) describes) whose values[i] is not NULL
 * (values[i] is MLIR attribute text; unregistered dialects allowed), and
 * print the module again (MLIR's printer): with the locations the input
 * wrote, if any (debug info; the parser's own print as unknown), in generic
 * form if the input was. A program lowered before analysis (TOSA) is
 * annotated and printed lowered, every location written out (naming path
 * and the lines of the ops they come from). *done = ops annotated. Caller
 * frees *text. -1 with *err on a parse error of the file or of a value.
 */
int	 analysis_annotate(const char *path, const char *attr_name,
	    const char *const *values, size_t nvalues, char **text,
	    size_t *done, char **err) __attribute__((warn_unused_result));

/*
 * The program at path cut into dispatches, as `autosched build` compiles
 * it: first each convolution the analysis tunes as a matmul replaced by
 * that matmul (its operands collapsed to matrices, the linalg.generic of
 * analysis_emit_dispatch, its result expanded back), then every linalg op, every tensor op that is a loop once bufferized
 * (extract_slice, insert_slice, pad, concat, generate) and every arith or
 * math op on whole tensors (but constants), of every function
 * of the module's body (functions of nested modules stay whole) moved into
 * a private function of its own, called where the op was. The op's
 * operands from outside it become the dispatch's arguments, as in the
 * dispatch the tuner measured, except scalar and splat constants and
 * static tensor.empty, which are copied in; its results are returned.
 * A dispatch is named
 * __autosched_FUNCTION_N_KIND (N counts the function's ops from 0, KIND is
 * the op's name after its dialect; renamed if the name is taken) and marked
 * noinline (passthrough). With library, the program's own functions are
 * made the exports of a library: each gets llvm.emit_c_interface, and a
 * definition loses any private visibility. *n = dispatches made. Printed
 * with the location of every op (path:line:col where the input wrote none),
 * generic form if the input was; caller frees *text. -1 with *err on a
 * parse error.
 */
int	 analysis_outline(const char *path, int library, char **text,
	    size_t *n, char **err) __attribute__((warn_unused_result));

/* What analysis_outline_fused put into the matmuls' dispatches. */
struct analysis_fused {
	size_t	 nops;		/* matmuls with consumers in their dispatch */
	size_t	 nconsumers;	/* consumers moved there */
	size_t	 nchains;	/* dispatches of chained elementwise ops */
	size_t	 nchained;	/* elementwise ops in them */
	size_t	 nrows;		/* dispatches of row groups */
	size_t	 nrowed;	/* ops in them */
	size_t	 ninits;	/* matmuls with their zero fill in their dispatch */
	size_t	 nslices;	/* input slices in their matmul's dispatch */
	size_t	 ninserts;	/* results inserted there (a head into all) */
	size_t	 nconverted;	/* arith/math ops on tensors made generics */
	size_t	 nreshapes;	/* reshapes gone with the unit dims */
};

/* analysis_outline_fused's fuse: what shares a dispatch. */
#define ANALYSIS_FUSE_EPILOGUE	0x1	/* a matmul and its consumers */
#define ANALYSIS_FUSE_CHAINS	0x2	/* a chain of elementwise generics */
#define ANALYSIS_FUSE_NORMALIZE	0x4	/* tensor ops as generics, unit dims folded, first */
#define ANALYSIS_FUSE_ROWS	0x8	/* a group of row-wise ops with a reduction */

/*
 * analysis_outline, and with fuse, each named linalg matmul (not quantized)
 * shares its dispatch with its chain of elementwise consumers: each a
 * linalg.generic, the only user of the value before it, with that value's
 * type, an identity output map (every loop parallel), identity or
 * broadcast input maps, a body that never reads its output's old value.
 * Each consumer is made to write into the value it consumes (in place) and
 * marked autosched.epilogue (the last: autosched.epilogue_end) for the
 * schedules' fused part (fuse & ANALYSIS_FUSE_EPILOGUE). With
 * ANALYSIS_FUSE_CHAINS, a linalg.generic whose loops are all parallel
 * shares its dispatch with the chain of linalg.generics after it, each in
 * the same block and the only user of the one before (operands unchanged;
 * the function marked autosched.chain: linalg-fuse-elementwise-ops then
 * makes one loop of them). With ANALYSIS_FUSE_NORMALIZE, first the arith
 * and math ops on whole tensors become linalg.generics (MLIR's
 * convert-elementwise-to-linalg, as the build does after outlining) and
 * the generics' unit dims are folded away (linalg-fold-unit-extent-dims),
 * so that a matmul's 384x512 result and its consumers' 1x384x512 are one
 * shape and no reshape cuts their chain; the folding not where a generic
 * is a contraction (it may be a tuned op, known by its shape). The
 * arithmetic is unchanged. *fused (may be NULL) counts them.
 */
int	 analysis_outline_fused(const char *path, int library, int fuse,
	    char **text, size_t *n, struct analysis_fused *fused, char **err)
	    __attribute__((warn_unused_result));

/*
 * The func.func definitions (with a body) of the module, in order: the
 * symbol name of the i-th and, in *loc when loc is not NULL, where it is
 * ("file:line:col"). Borrowed until analysis_free; NULL past the end.
 */
size_t			 analysis_function_count(const struct analysis *);
const char		*analysis_function(const struct analysis *, size_t i,
			    const char **loc);

size_t			 analysis_count(const struct analysis *);
/* Borrowed until analysis_free. */
const struct op_desc	*analysis_op(const struct analysis *, size_t i);

/*
 * The standalone dispatch of a tunable op: a module with one function
 *   func.func @dispatch(%lhs: tensor<…>, %rhs: tensor<…>, %acc: tensor<…>) -> tensor<…>
 * (a quantized op: (%lhs, %rhs, %acc, %za: i32, %zb: i32) and the op itself,
 * linalg.quantized_[batch_]matmul)
 * in destination-passing style (the result is acc + lhs·rhs, acc is the outs
 * operand), with static shapes exactly as the op's operands are stored
 * (transposed operands stay transposed). The body is a linalg.generic
 * contraction with the op's casts (extf/extsi/extui), which the transform
 * dialect tiles and vectorizes into vector.contract. Caller frees *text;
 * -1 with *err for an op that is not tunable.
 */
int	 analysis_emit_dispatch(const struct op_desc *, char **text, char **err)
	    __attribute__((warn_unused_result));

/*
 * The same contraction as one func.func @fname (no module around it, two
 * spaces of indent), so that several can share a module. Only kind, sizes,
 * types, transposes and signedness of *op are read; op->tunable must be 1.
 * Caller frees *text.
 */
int	 analysis_emit_function(const struct op_desc *, const char *fname,
	    char **text, char **err) __attribute__((warn_unused_result));

/*
 * The convolution d (layout CONV_NHWC_HWCF, geometry and types as
 * analysis_describe gives them) as one func.func @fname(%x, %w, %y) (no
 * module around it, two spaces of indent): the input N×H×W×C, padded by a
 * tensor.pad of zeros when d->conv.pad says so, and a
 * linalg.conv_2d_nhwc_hwcf with d's strides and dilations accumulating
 * into %y. Reading it back gives d again. Caller frees *text; -1 with
 * *err for another layout, unknown sizes or unsigned operands.
 */
int	 analysis_emit_conv(const struct op_desc *, const char *fname,
	    char **text, char **err) __attribute__((warn_unused_result));

/*
 * The dispatch profiler's name of a matmul described by kind, sizes, types
 * and transposes: "matmul_768x512x1024_f16t_f16t_f16t". Caller frees.
 */
char	*analysis_profiler_name(const struct op_desc *);

#endif
