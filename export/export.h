/*
 * Export: the store's best configs taken back into the user's compiler, as
 * an upstream transform-dialect library (the schedules as measured), an IREE
 * llvm-cpu tuning spec and an annotated copy of the program.
 */
#ifndef AUTOSCHED_EXPORT_H
#define AUTOSCHED_EXPORT_H

#include <stddef.h>
#include <stdint.h>

struct export_set;

/*
 * What an export is for: a transform library or a built program (rows of
 * backends with a schedule of their own: mlir-cpu), or IREE (spec and
 * annotate: rows of every backend that can say a compilation_info, those
 * measured with IREE's own codegen first).
 */
enum export_for {
	EXPORT_SCHEDULES = 0,
	EXPORT_IREE,
};

/*
 * The best configs of the store at db, one per op (the fastest row whose
 * backend can export for what and whose schedule version is this build's;
 * for EXPORT_IREE a row measured with IREE wins over any other), filtered
 * by op name/signature substring (NULL = all) and job (0 = all). Rows that
 * cannot be exported are skipped with a warning on stderr. Caller frees
 * with export_free. -1 with *err (no such store, store error).
 */
int	 export_load(const char *db, const char *op_filter, int64_t job,
	    enum export_for what, struct export_set **out, char **err)
	    __attribute__((warn_unused_result));
void	 export_free(struct export_set *);
size_t	 export_count(const struct export_set *);

/*
 * Keep only the configs of ops found in the MLIR file at path (by
 * signature). -1 with *err (MLIR's diagnostic) if it does not parse.
 */
int	 export_restrict(struct export_set *, const char *path, char **err)
	    __attribute__((warn_unused_result));

/* The transform library (entry point @__transform_main). Caller frees. */
char	*export_transform(const struct export_set *);

/* IREE attribute syntaxes, newest first: "2026.03", …; NULL-ended. */
const char *const *export_iree_syntaxes(void);
/*
 * How the spec's matchers find an op: IREE's own match ops (the default:
 * transform.iree.match.contraction compares the indexing maps and element
 * types, then the sizes), or upstream match ops only (mlir-opt runs them;
 * they cannot tell layouts apart).
 */
enum export_matcher {
	EXPORT_MATCH_IREE = 0,
	EXPORT_MATCH_UPSTREAM,
};

/*
 * The IREE tuning spec (entry point @__kernel_config) in syntax (NULL =
 * newest) with matchers of kind m. Caller frees. -1 with *err for an
 * unknown syntax; 1 with *err when no op has a config to override IREE's
 * own (every one kept IREE's default).
 */
int	 export_iree_spec(const struct export_set *, const char *syntax,
	    enum export_matcher m, char **text, char **err)
	    __attribute__((warn_unused_result));
/*
 * The program at path with a compilation_info attribute on every op the set
 * has a config for, printed by MLIR. *nannotated says how many. Caller frees.
 */
int	 export_annotate(const struct export_set *, const char *path,
	    const char *syntax, char **text, size_t *nannotated, char **err)
	    __attribute__((warn_unused_result));

/*
 * Write text to path through util_out: never the store db (nor its side
 * files), never input (may be NULL), never a link, device or folder, and an
 * existing file only if an earlier export, spec, library or annotated
 * program autosched wrote (they start "// autosched " or, JSON, with the
 * autosched-configs format). -1 with *err naming "-o PATH".
 */
int	 export_write(const char *path, const char *text, const char *db,
	    const char *input, char **err)
	    __attribute__((warn_unused_result));

/*
 * The checks export_build makes of out_so before writing it (the same as
 * export_write's; an existing file must hold the marker every built .so
 * holds). 0, or -1 with *err: nothing written.
 */
int	 export_build_check(const char *out_so, const char *db,
	    const char *program, char **err)
	    __attribute__((warn_unused_result));

/*
 * How export_build lowers the linalg ops no schedule covers (elementwise,
 * reductions, transposes, fills): the backend's pass vectorizes them and
 * splits each across threads (vector), or scalar loops on one thread
 * (loops, as before there was a choice).
 */
enum export_rest_mode {
	EXPORT_REST_VECTOR,
	EXPORT_REST_LOOPS
};

/*
 * How export_build runs f32 exp, log, erf, tanh (and expm1, log1p, log2):
 * MLIR's polynomial approximations on whole vectors (fast; their error
 * bounds in README), or LLVM's and libm's functions, one call a lane
 * (exact: the build as it was before there was a choice).
 */
enum export_math {
	EXPORT_MATH_FAST,
	EXPORT_MATH_EXACT
};

struct export_rest {
	enum export_rest_mode	 mode;
	int			 threads;	/* vector: threads an op is split across */
	enum export_math	 math;
	int			 pool;		/* intermediates from the library's pool (1), or malloc and free each call (0) */
	/*
	 * 1: a matmul's chain of elementwise consumers (bias add, scale,
	 * activation, residual add) shares its dispatch, in place, and runs
	 * in each step of the matmul's outermost parallel loop where its
	 * schedule has one (analysis_outline_fused, the backend's
	 * export_op_fused); 0: each consumer a dispatch and a pass over
	 * memory of its own.
	 */
	int			 fuse;
	/*
	 * 1: each chain of elementwise linalg.generics (each the only user
	 * of the one before) shares a dispatch, where MLIR's
	 * linalg-fuse-elementwise-ops makes one loop of it, the arithmetic
	 * of each element unchanged; 0: each op a dispatch of its own.
	 */
	int			 rest_fuse;
};

/* What export_build made, and the wall time of each of its steps. */
struct export_build_info {
	size_t	 ntuned;	/* ops built with a tuned config */
	size_t	 ndispatches;	/* ops moved to functions of their own */
	size_t	 npieces;	/* objects compiled (dispatches in pieces, the program's functions) */
	int	 jobs;		/* tools run at once (one per CPU) */
	struct export_rest rest; /* how the rest was lowered (vector: loops if the backend has no pass) */
	size_t	 nfused_ops;	/* tunable ops whose dispatch holds their epilogue */
	size_t	 nfused;	/* elementwise consumers in those dispatches */
	size_t	 nchains;	/* dispatches of chained elementwise generics */
	size_t	 nchained;	/* generics in those dispatches */
	size_t	 nrows;		/* dispatches of row groups (softmax, norms) */
	size_t	 nrowed;	/* ops in those dispatches */
	size_t	 ninits;	/* matmuls with their zero fill in their dispatch */
	size_t	 nslices;	/* input slices in their matmul's dispatch */
	size_t	 ninserts;	/* results inserted there (a head into all) */
	size_t	 nconverted;	/* arith/math ops on tensors made generics first */
	size_t	 nreshapes;	/* reshapes gone with the unit dims folded */
	double	 outline_s, opt_s, translate_s, split_s, compile_s, link_s;
};

/*
 * Compile the program at path into the shared object out_so: the configs of
 * s (none if untuned) for the ops they know, the backend's default schedule
 * for the other tunable ops (a warning names each), the rest lowered by the
 * default pipeline as rest says (the same for tuned and untuned builds);
 * every function exported with MLIR's C interface, and nothing else
 * exported. Each op is moved to a function of its own
 * (analysis_outline), the module lowered once, and its functions compiled
 * in pieces, one clang per CPU at a time. out_so is written as
 * export_build_check says (db: the store). *info says what was made and
 * how long each step took. Scratch files go to a folder under $TMPDIR
 * (default /tmp), removed on return. SIGINT, SIGTERM and SIGHUP are caught
 * while it runs: every tool running is killed. 0; 1 with *err when not
 * untuned and no op of the program is in s; 128 + the signal with *err
 * when one stopped it (nothing written); -1 with *err on failure.
 */
int	 export_build(const struct export_set *s, const char *path,
	    int untuned, const struct export_rest *rest, const char *out_so,
	    const char *db, struct export_build_info *info, char **err)
	    __attribute__((warn_unused_result));

/* The commands: `autosched export --format transform|iree-spec`, `annotate`, `build`. */
int	 export_cmd_export(int argc, char **argv);
int	 export_cmd_annotate(int argc, char **argv);
int	 export_cmd_build(int argc, char **argv);

#endif
