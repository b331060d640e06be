/*
 * Internals shared by the files of export/: the set of configs to export
 * (export.c) and the program build (build.c).
 */
#ifndef AUTOSCHED_EXPORT_INT_H
#define AUTOSCHED_EXPORT_INT_H

#include "analysis/analysis.h"
#include "backends/backend.h"
#include "store/store.h"

struct export_entry {
	struct store_best	 best;		/* config, figures (owned) */
	struct op_desc		 op;		/* kind, op_name, name owned */
	char			*sig;
	const struct backend_ops *be;
};

struct export_set {
	struct export_entry	*e;
	size_t			 n;
};

void	 export_entry_clear(struct export_entry *);
/*
 * s made fit for one line of an MLIR comment ("// s"): a comment ends at a
 * line break, so every control character is escaped (\n, \xNN) and text
 * from the store cannot start a line of IR. Caller frees.
 */
char	*export_mlir_comment(const char *s);
/* export_transform_text's fuse: what the library fuses. */
#define EXPORT_TX_EPILOGUE	0x1	/* a matmul's epilogue in its dispatch */
#define EXPORT_TX_CHAINS	0x2	/* the elementwise chains' dispatches */
#define EXPORT_TX_ROWS		0x4	/* the row groups' dispatches */
#define EXPORT_TX_INITS		0x8	/* matmuls' zero fills in their dispatch */

/*
 * The transform library of s; be gives the module-level part when s is
 * empty. With fuse & EXPORT_TX_EPILOGUE (and every op's backend able to:
 * export_op_fused), a second schedule per op for the op whose dispatch
 * holds its epilogue (analysis_outline_fused), matched first. With
 * EXPORT_TX_CHAINS, linalg-fuse-elementwise-ops first runs on each
 * function marked autosched.chain (a dispatch of chained elementwise ops),
 * and on no other: elsewhere it would rewrite the epilogues the schedules
 * match. With EXPORT_TX_ROWS, then the plugin's autosched-fuse-rows on each
 * function marked autosched.rows (a row group: one loop over blocks of
 * rows; the plugin must be loaded). With EXPORT_TX_INITS, after the
 * schedules, the plugin's autosched-fold-init (a matmul's zero fill, marked
 * autosched.init, folded into its register tiles where it can be). Caller frees. *plugin_out (when
 * not NULL): the MLIR pass plugin mlir-opt must load to apply it, or NULL;
 * caller frees.
 */
char	*export_transform_text(const struct export_set *s,
	    const struct backend_ops *be, int fuse, char **plugin_out);

struct util_out_guard;
/* The guard of export's outputs at -o (store db, input may be NULL). */
void	 export_guard(struct util_out_guard *g, const char *db,
	    const char *input);

/* runtime/pool.c's text (embed_file.cmake): compiled into built libraries. */
extern const char export_pool_source[];

#endif
