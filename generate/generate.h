/*
 * Dispatch generation for shape sweeps, as the IREE dispatch profiler's
 * generator.py does it: every (batch) matmul of a sweep over M, N, K (and
 * the batch), element types and layouts, named as the profiler names
 * operations, as MLIR programs the analysis reads back.
 */
#ifndef AUTOSCHED_GENERATE_H
#define AUTOSCHED_GENERATE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"

/* The element types of a sweep: inputs (and accumulator when it differs). */
enum generate_dtype {
	GEN_F32 = 0,	/* f32 · f32 → f32 */
	GEN_F16,	/* f16 · f16 → f16 */
	GEN_F16F32,	/* f16 · f16 → f32 */
	GEN_BF16F32,	/* bf16 · bf16 → f32 */
	GEN_I8I32,	/* i8 · i8 → i32 (signed) */
	GEN_U8I32,	/* u8 · u8 → i32 (widened unsigned) */
	GEN_DTYPE_COUNT
};

/* Ops one sweep may hold; a larger sweep is refused. */
#define GENERATE_OPS_MAX	4096

/*
 * A conv2d sweep: NHWC/HWCF convolutions (linalg.conv_2d_nhwc_hwcf) of
 * square filters, equal strides and dilation 1, the input padded by the
 * same number of zeros on every side. Unset lists: n, stride [1], pad [0].
 */
struct generate_conv {
	int64_t		*n, *h, *w, *c, *f, *filter, *stride, *pad;
	size_t		 nn, nh, nw, nc, nf, nfilter, nstride, npad;
};

/* A sweep. Lists are sorted without duplicates (as cfg lists are). */
struct generate_sweep {
	int		 conv2d;	/* a conv2d sweep: conv, not m, n, k */
	struct generate_conv conv;
	int		 batch_matmul;	/* 0 matmul, 1 batch_matmul */
	int64_t		*m, *n, *k, *batch;
	size_t		 nm, nn, nk, nbatch;
	uint32_t	 dtypes;	/* bit 1 << enum generate_dtype; 0 = f32 */
	int		 transpose_a;	/* lhs stored K×M */
	int		 transpose_b;	/* rhs stored N×K */
};

/* Free the lists of a sweep and zero it. */
void	 generate_sweep_clear(struct generate_sweep *);

/* "f16f32", …; NULL when out of range. */
const char *generate_dtype_name(enum generate_dtype);

/*
 * Parse a comma-separated dtype list ("f32,f16") into a bit set. -1 with
 * *err naming the unknown one and the known ones.
 */
int	 generate_parse_dtypes(const char *, uint32_t *mask, char **err)
	    __attribute__((warn_unused_result));
/* "a", "b", "a,b" or "none". -1 with *err. */
int	 generate_parse_transpose(const char *, int *ta, int *tb, char **err)
	    __attribute__((warn_unused_result));
/* "matmul" or "batch_matmul". -1 with *err. */
int	 generate_parse_kind(const char *, int *batch_matmul, char **err)
	    __attribute__((warn_unused_result));

/*
 * Check a sweep is whole and bounded: M, N and K given, the batch given
 * exactly for batch_matmul (a conv2d sweep: H, W, C, F and the filter
 * given, every filter fitting every padded input, no u8i32), at most
 * GENERATE_OPS_MAX ops. -1 with *err.
 */
int	 generate_check(const struct generate_sweep *, char **err)
	    __attribute__((warn_unused_result));
/* Ops in the sweep (saturates at UINT64_MAX). */
uint64_t generate_count(const struct generate_sweep *);

/*
 * One op of a sweep: its description (tunable, strings static or owned;
 * a conv's as the analysis reads it back: the matmul of its im2col).
 */
struct generate_op {
	struct op_desc		 d;
	char			*name;	/* the profiler's name; u8 operands spelt u8 */
	const char		*family;	/* "matmul", "batch_matmul", "conv2d" */
	enum generate_dtype	 dtype;
};

/* Every op of a checked sweep, M fastest. Caller frees with generate_ops_free. */
int	 generate_ops(const struct generate_sweep *, struct generate_op **ops,
	    size_t *n, char **err) __attribute__((warn_unused_result));
void	 generate_ops_free(struct generate_op *, size_t n);

/*
 * One MLIR module holding one func.func @NAME per op of the sweep (what a
 * [Problem] job tunes), preceded by comment (may be NULL) as // lines.
 * Caller frees *text.
 */
int	 generate_module(const struct generate_sweep *, const char *comment,
	    char **text, char **err) __attribute__((warn_unused_result));

/* The first line of every program and cfg generate writes (util_out knows them). */
#define GENERATE_MLIR_MAGIC	"// autosched generate: "
#define GENERATE_CFG_MAGIC	"; autosched generate: "

/*
 * The program of one op of a sweep: func.func @NAME, two spaces of indent
 * (analysis_emit_function or analysis_emit_conv). Caller frees *text.
 */
int	 generate_function(const struct generate_op *, char **text, char **err)
	    __attribute__((warn_unused_result));

/*
 * Write the profiler's layout under dir: dir/linalg/KIND/NAME/NAME.mlir, one
 * program per op. Everything is checked before the first file is written.
 * *nwritten gets the count. -1 with *err.
 */
int	 generate_write(const struct generate_sweep *, const char *dir,
	    size_t *nwritten, char **err) __attribute__((warn_unused_result));

/*
 * 0 if every program generate_write would write under dir may be written
 * (util_out_check on each that exists), else -1 with *err naming the first
 * refused. Nothing is written.
 */
int	 generate_check_outputs(const struct generate_sweep *, const char *dir,
	    char **err) __attribute__((warn_unused_result));

#endif
