/*
 * Export: the store's best configs as a transform-dialect library (the
 * backend's own schedules, behind one matcher per op), an IREE llvm-cpu
 * tuning spec and the annotated program.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "backends/backend.h"
#include "best/best.h"
#include "export/export.h"
#include "export/export_int.h"
#include "store/store.h"
#include "util/util.h"

#define EXPORT_MAX_OPS	4096

extern const char *const export_iree_syntax[];	/* export_iree_syntax.c */

void
export_entry_clear(struct export_entry *e)
{
	store_best_clear(&e->best);
	free((char *)e->op.kind);
	free((char *)e->op.op_name);
	free((char *)e->op.name);
	free(e->sig);
}

void
export_free(struct export_set *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++)
		export_entry_clear(&s->e[i]);
	free(s->e);
	free(s);
}

size_t
export_count(const struct export_set *s)
{
	return s != NULL ? s->n : 0;
}

/* store_trial_foreach callback: copy the op of the first trial and stop. */
static int
copy_op(const struct store_trial *t, const struct op_desc *op, void *arg)
{
	struct op_desc *d = arg;

	(void)t;
	*d = *op;
	d->kind = xstrdup(op->kind);
	d->op_name = xstrdup(op->op_name ? op->op_name : "");
	d->name = xstrdup(op->name ? op->name : "");
	d->function = "";
	d->loc = "";
	d->reason = NULL;
	d->tunable = 1;
	return 1;
}

/* 1 if rows of backend be measured with IREE's own codegen. */
static int
by_iree(const struct backend_ops *be)
{
	return be != NULL && be->export_iree_attr != NULL;
}

/* 1 when row r's backend be has a schedule this build can export, else 0 (said). */
static int
load_exportable(const struct backend_ops *be, const struct store_best *r,
    enum export_for what)
{
	char *on, *bn;

	if (be == NULL || (be->export_op == NULL && (what != EXPORT_IREE ||
	    be->export_iree_attr == NULL))) {
		on = util_escape(r->op_name ? r->op_name : "");
		bn = util_escape(r->backend ? r->backend : "");
		fprintf(stderr, "autosched: warning: %s: backend %s has no "
		    "schedule to export%s; skipped\n", on, bn, by_iree(be) ?
		    " (it tunes IREE's codegen: export it with --format "
		    "iree-spec or annotate)" : "");
		free(on);
		free(bn);
		return 0;
	}
	if (be->schedule_tag != NULL &&
	    strstr(r->toolchain, be->schedule_tag) == NULL) {
		on = util_escape(r->op_name ? r->op_name : "");
		fprintf(stderr, "autosched: warning: %s: measured with another "
		    "schedule version than this build's (%s); skipped (tune it "
		    "again)\n", on, be->schedule_tag);
		free(on);
		return 0;
	}
	return 1;
}

/*
 * Row r (of backend be) into s: its op read from its trials, one entry per
 * op signature, the fastest row's (for IREE, a row measured with IREE
 * first). r is emptied when taken. 0 (taken or skipped), or -1 with *err.
 */
static int
load_row(struct export_set *s, struct store *st, struct store_best *r,
    const struct backend_ops *be, enum export_for what, char **err)
{
	struct export_entry *e = NULL;
	struct op_desc op;
	char *sig, *on;
	size_t j;

	memset(&op, 0, sizeof op);
	if (store_trial_foreach(st, r->op_id, r->target_id, NULL, copy_op, &op,
	    err) < 0)
		return -1;
	if (op.kind == NULL) {
		on = util_escape(r->op_name ? r->op_name : "");
		fprintf(stderr, "autosched: warning: %s: no trial describes the "
		    "op; skipped\n", on);
		free(on);
		return 0;
	}
	sig = store_op_signature(&op);
	/* One config per op: the fastest target's. */
	for (j = 0; j < s->n; j++) {
		if (strcmp(s->e[j].sig, sig) == 0) {
			e = &s->e[j];
			break;
		}
	}
	/* For IREE, a row measured with IREE beats any other. */
	if (e != NULL && (what == EXPORT_IREE && by_iree(e->be) !=
	    by_iree(be) ? by_iree(e->be) : e->best.gflops >= r->gflops)) {
		free((char *)op.kind);
		free((char *)op.op_name);
		free((char *)op.name);
		free(sig);
		return 0;
	}
	if (e != NULL)
		export_entry_clear(e);
	else
		e = &s->e[s->n++];
	e->best = *r;
	memset(r, 0, sizeof *r);
	e->op = op;
	e->sig = sig;
	e->be = be;
	return 0;
}

int
export_load(const char *db, const char *op_filter, int64_t job,
    enum export_for what, struct export_set **out, char **err)
{
	struct store *st = NULL;
	struct store_best *rows = NULL;
	struct export_set *s;
	size_t n = 0, i;
	int rc = -1;

	*out = NULL;
	s = xcalloc(1, sizeof *s);
	if (access(db, F_OK) != 0) {
		util_seterr(err, "%s: no such store", db);
		goto out;
	}
	if (store_open_readonly(db, &st, err) != 0 ||
	    best_configs(st, op_filter, job, &rows, &n, err) != 0)
		goto out;
	if (n > EXPORT_MAX_OPS)
		n = EXPORT_MAX_OPS;
	s->e = xcalloc(n ? n : 1, sizeof *s->e);
	for (i = 0; i < n; i++) {
		const struct backend_ops *be = backend_find(rows[i].backend);

		if (load_exportable(be, &rows[i], what) &&
		    load_row(s, st, &rows[i], be, what, err) != 0)
			goto out;
	}
	*out = s;
	s = NULL;
	rc = 0;
out:
	for (i = 0; rows != NULL && i < n; i++)
		store_best_clear(&rows[i]);
	free(rows);
	store_close(st);
	export_free(s);
	return rc;
}

/* The entry whose op has signature sig, or -1. */
static ssize_t
entry_find(const struct export_set *s, const char *sig)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		if (strcmp(s->e[i].sig, sig) == 0)
			return (ssize_t)i;
	}
	return -1;
}

/* The entry of op (a tunable one) by its signature, or -1. */
static ssize_t
op_entry(const struct export_set *s, const struct op_desc *op)
{
	char *sig;
	ssize_t k;

	if (!op->tunable)
		return -1;
	sig = store_op_signature(op);
	k = entry_find(s, sig);
	free(sig);
	return k;
}

int
export_restrict(struct export_set *s, const char *path, char **err)
{
	struct analysis *an = NULL;
	char *keep;
	size_t i, j, n;

	if (analysis_load(path, &an, err) != 0)
		return -1;
	keep = xcalloc(s->n ? s->n : 1, 1);
	n = analysis_count(an);
	for (i = 0; i < n; i++) {
		ssize_t k = op_entry(s, analysis_op(an, i));

		if (k >= 0)
			keep[k] = 1;
	}
	for (i = j = 0; i < s->n; i++) {
		if (keep[i])
			s->e[j++] = s->e[i];
		else
			export_entry_clear(&s->e[i]);
	}
	s->n = j;
	free(keep);
	analysis_free(an);
	return 0;
}

/* ---- matchers ---------------------------------------------------------- */

static int
is_batch(const struct op_desc *op)
{
	return analysis_kind_batch(op->kind);
}

static int
bits(enum elem_type t)
{
	return (int)analysis_elem_size(t) * 8;
}

/*
 * Whether the library's filters tell ops a and b apart: not when they
 * differ only in which integer operands are unsigned (one op of the two
 * gets a schedule then, and it applies to both).
 */
static int
same_filter(const struct op_desc *a, const struct op_desc *b)
{
	return is_batch(a) == is_batch(b) && a->batch == b->batch &&
	    a->m == b->m && a->n == b->n && a->k == b->k &&
	    a->lhs == b->lhs && a->rhs == b->rhs && a->acc == b->acc &&
	    a->transpose_a == b->transpose_a &&
	    a->transpose_b == b->transpose_b;
}

/* What the upstream matchers can see: structure, sizes, bit widths, kind. */
static char *
coarse_key(const struct op_desc *op)
{
	return xasprintf("%d_%lld_%lld_%lld_%lld_%d_%d_%d_%d", is_batch(op),
	    (long long)op->batch, (long long)op->m, (long long)op->n,
	    (long long)op->k, bits(op->lhs), bits(op->rhs), bits(op->acc),
	    analysis_elem_is_float(op->acc));
}

static void
cmp_const(FILE *f, const char *param, long long v, int *cnt)
{
	fprintf(f, "      %%c%d = transform.param.constant %lld : i64 -> "
	    "!transform.param<i64>\n", *cnt, v);
	fprintf(f, "      transform.match.param.cmpi eq %s, %%c%d : "
	    "!transform.param<i64>\n", param, *cnt);
	(*cnt)++;
}

/*
 * The body of a matcher on %op with upstream match ops only: op name,
 * contraction dims in the canonical loop order (batch, m, n, k), their
 * sizes, the bit widths of lhs, rhs and acc and the body's arithmetic.
 */
static void
emit_match_body(FILE *f, const struct op_desc *op)
{
	int b = is_batch(op), cnt = 0, i;
	long long dims[4];
	int nd = 0;
	const char *fl = analysis_elem_is_float(op->acc) ?
	    "[\"arith.mulf\", \"arith.addf\"]" :
	    "[\"arith.muli\", \"arith.addi\"]";

	if (b)
		dims[nd++] = op->batch;
	dims[nd++] = op->m;
	dims[nd++] = op->n;
	dims[nd++] = op->k;
	fprintf(f, "    transform.match.operation_name %%op [\"%s\", "
	    "\"linalg.generic\"] : !transform.any_op\n",
	    b ? "linalg.batch_matmul" : "linalg.matmul");
	fprintf(f, "    transform.match.structured failures(propagate) %%op : "
	    "!transform.any_op {\n");
	fprintf(f, "    ^bb0(%%s: !transform.any_op):\n");
	fprintf(f, "      %%rank = transform.match.structured.rank %%s : "
	    "(!transform.any_op) -> !transform.param<i64>\n");
	cmp_const(f, "%rank", nd, &cnt);
	fprintf(f, "      %%b, %%m, %%n, %%k = transform.match.structured."
	    "classify_contraction_dims %%s : (!transform.any_op) -> "
	    "(!transform.param<i64>, !transform.param<i64>, "
	    "!transform.param<i64>, !transform.param<i64>)\n");
	if (b)
		cmp_const(f, "%b", 0, &cnt);
	cmp_const(f, "%m", b + 0, &cnt);
	cmp_const(f, "%n", b + 1, &cnt);
	cmp_const(f, "%k", b + 2, &cnt);
	for (i = 0; i < nd; i++) {
		char p[16];

		snprintf(p, sizeof p, "%%d%d", i);
		fprintf(f, "      %s = transform.match.structured.dim %%s[%d] : "
		    "(!transform.any_op) -> !transform.param<i64>\n", p, i);
		cmp_const(f, p, dims[i], &cnt);
	}
	fprintf(f, "      %%lhs = transform.match.structured.input %%s[0] : "
	    "(!transform.any_op) -> !transform.any_value\n");
	fprintf(f, "      %%rhs = transform.match.structured.input %%s[1] : "
	    "(!transform.any_op) -> !transform.any_value\n");
	fprintf(f, "      %%acc = transform.match.structured.init %%s[0] : "
	    "(!transform.any_op) -> !transform.any_value\n");
	fprintf(f, "      %%wl = transform.match.structured.elemental_bitwidth "
	    "%%lhs : (!transform.any_value) -> !transform.param<i64>\n");
	cmp_const(f, "%wl", bits(op->lhs), &cnt);
	fprintf(f, "      %%wr = transform.match.structured.elemental_bitwidth "
	    "%%rhs : (!transform.any_value) -> !transform.param<i64>\n");
	cmp_const(f, "%wr", bits(op->rhs), &cnt);
	fprintf(f, "      %%wa = transform.match.structured.elemental_bitwidth "
	    "%%acc : (!transform.any_value) -> !transform.param<i64>\n");
	cmp_const(f, "%wa", bits(op->acc), &cnt);
	fprintf(f, "      transform.match.structured.body %%s {contraction = %s} "
	    ": !transform.any_op\n", fl);
	fprintf(f, "    }\n");
}

/* "tensor<8x256x64xf32>" of an operand stored as d0 x d1. Caller frees. */
static char *
tensor_of(const struct op_desc *op, int64_t d0, int64_t d1, enum elem_type e)
{
	if (is_batch(op))
		return xasprintf("tensor<%lldx%lldx%lldx%s>",
		    (long long)op->batch, (long long)d0, (long long)d1,
		    analysis_elem_name(e));
	return xasprintf("tensor<%lldx%lldx%s>", (long long)d0, (long long)d1,
	    analysis_elem_name(e));
}

/*
 * A transform.structured.match finding op itself (if it is exactly the
 * tuned op: indexing maps, so which operand is transposed, and the operand
 * types, so the element types) in %op, as %x<i>. Not the signedness of an
 * integer op's operands: no transform op tells extui from extsi in a body.
 */
static void
emit_exact_filter(FILE *f, const struct op_desc *op, size_t i)
{
	int b = is_batch(op);
	const char *dims = b ? "(d0, d1, d2, d3)" : "(d0, d1, d2)";
	const char *bd = b ? "d0, " : "";
	const char *m = b ? "d1" : "d0", *n = b ? "d2" : "d1",
	    *k = b ? "d3" : "d2";
	char *lt, *rt, *at;

	lt = op->transpose_a ? tensor_of(op, op->k, op->m, op->lhs) :
	    tensor_of(op, op->m, op->k, op->lhs);
	rt = op->transpose_b ? tensor_of(op, op->n, op->k, op->rhs) :
	    tensor_of(op, op->k, op->n, op->rhs);
	at = tensor_of(op, op->m, op->n, op->acc);
	fprintf(f, "    %%x%zu = transform.structured.match attributes{"
	    "indexing_maps = [affine_map<%s -> (%s%s, %s)>, "
	    "affine_map<%s -> (%s%s, %s)>, affine_map<%s -> (%s%s, %s)>]} "
	    "filter_operand_types = [%s, %s, %s] in %%op : "
	    "(!transform.any_op) -> !transform.any_op\n", i,
	    dims, bd, op->transpose_a ? k : m, op->transpose_a ? m : k,
	    dims, bd, op->transpose_b ? n : k, op->transpose_b ? k : n,
	    dims, bd, m, n, lt, rt, at);
	free(lt);
	free(rt);
	free(at);
}

char *
export_mlir_comment(const char *s)
{
	return util_escape(s != NULL ? s : "");
}

/* The comment line of an entry: its config, figures, backend and CPU. */
static void
emit_entry_comment(FILE *f, const struct export_entry *e)
{
	char *sig = export_mlir_comment(e->sig);
	char *cfg = export_mlir_comment(e->best.config_name);
	char *be = export_mlir_comment(e->best.backend);
	char *cpu = export_mlir_comment(e->best.cpu);

	fprintf(f, "// %s: %s, %.2f GFLOP/s measured", sig, cfg,
	    e->best.gflops);
	if (e->best.baseline_gflops > 0)
		fprintf(f, " (%.2fx the default)", e->best.gflops /
		    e->best.baseline_gflops);
	fprintf(f, "; %s on %s\n", be, cpu);
	free(sig);
	free(cfg);
	free(be);
	free(cpu);
}

char *
export_transform(const struct export_set *s)
{
	return export_transform_text(s, NULL, 0, NULL);
}

/*
 * @__transform_main's matching when some ops may have their epilogue in
 * their dispatch: foreach_match only marks each op with the schedule it
 * gets (a fused schedule erases the epilogue, ops the walk would visit
 * after the op), then each group's ops get theirs. The module is %r.
 */
static void
emit_main_fused(FILE *f, size_t ngroups)
{
	size_t j;

	fprintf(f, "    %%r = transform.foreach_match in %%root");
	for (j = 0; j < ngroups; j++)
		fprintf(f, "%s\n        @autosched_match_fused_%zu -> "
		    "@autosched_mark_fused_%zu", j ? "," : "", j, j);
	for (j = 0; j < ngroups; j++)
		fprintf(f, ",\n        @autosched_match_%zu -> "
		    "@autosched_mark_%zu", j, j);
	fprintf(f, "\n        : (!transform.any_op) -> !transform.any_op\n");
	for (j = 0; j < ngroups; j++)
		fprintf(f, "    %%hf%zu = transform.structured.match attributes{"
		    "autosched.apply_fused_%zu} in %%r : (!transform.any_op) -> "
		    "!transform.any_op\n    %%h%zu = transform.structured.match "
		    "attributes{autosched.apply_%zu} in %%r : (!transform.any_op)"
		    " -> !transform.any_op\n", j, j, j, j);
	for (j = 0; j < ngroups; j++)
		fprintf(f, "    transform.foreach %%hf%zu : !transform.any_op {\n"
		    "    ^bb0(%%o: !transform.any_op):\n"
		    "      transform.include @autosched_apply_fused_%zu "
		    "failures(propagate) (%%o) : (!transform.any_op) -> ()\n"
		    "    }\n    transform.foreach %%h%zu : !transform.any_op {\n"
		    "    ^bb0(%%o: !transform.any_op):\n"
		    "      transform.include @autosched_apply_%zu "
		    "failures(propagate) (%%o) : (!transform.any_op) -> ()\n"
		    "    }\n", j, j, j, j);
}

/*
 * The entries of a transform library in groups that one matcher tells
 * apart (coarse keys: sizes, bit widths, body), and the entries whose
 * exact filter an earlier one already has (skip: 1 + that one).
 */
struct tx_groups {
	size_t		*group;		/* per entry: its group */
	size_t		*skip;		/* per entry: 0, or 1 + the entry it is like */
	char		**keys;		/* per group */
	size_t		 ngroups;
	const char	*tag;		/* the backends' schedule tag */
};

static void
tx_groups_make(const struct export_set *s, struct tx_groups *g)
{
	size_t i, j, n = s->n ? s->n : 1;

	g->group = xcalloc(n, sizeof *g->group);
	g->skip = xcalloc(n, sizeof *g->skip);
	g->keys = xcalloc(n, sizeof *g->keys);
	g->ngroups = 0;
	g->tag = "";
	for (i = 0; i < s->n; i++) {
		char *k = coarse_key(&s->e[i].op);

		for (j = 0; j < g->ngroups; j++) {
			if (strcmp(g->keys[j], k) == 0)
				break;
		}
		if (j == g->ngroups)
			g->keys[g->ngroups++] = k;
		else
			free(k);
		g->group[i] = j;
		if (s->e[i].be->schedule_tag != NULL)
			g->tag = s->e[i].be->schedule_tag;
	}
	/* An op the filters cannot tell from an earlier one: 1 + that one. */
	for (i = 0; i < s->n; i++) {
		for (j = 0; j < i && g->skip[i] == 0; j++) {
			if (g->skip[j] == 0 && same_filter(&s->e[i].op,
			    &s->e[j].op)) {
				g->skip[i] = j + 1;
				fprintf(stderr, "autosched: warning: %s: the "
				    "transform library cannot tell it from %s "
				    "(only the signedness of operands differs); "
				    "%s's schedule applies to both\n",
				    s->e[i].sig, s->e[j].sig, s->e[j].sig);
			}
		}
	}
}

static void
tx_groups_free(struct tx_groups *g)
{
	size_t j;

	for (j = 0; j < g->ngroups; j++)
		free(g->keys[j]);
	free(g->keys);
	free(g->group);
	free(g->skip);
}

/*
 * The module-level part of be (the entries' first backend's when NULL):
 * *mod, and *plugin when its schedules need the backend's pass plugin.
 */
static void
tx_module(const struct export_set *s, const struct backend_ops *be,
    char **mod, char **plugin)
{
	const struct op_desc **ops;
	const struct config **cfgs;
	size_t i;

	*mod = *plugin = NULL;
	/* One module-level part: the backends that export share mlir-cpu's. */
	if (be == NULL && s->n > 0)
		be = s->e[0].be;
	if (be == NULL)
		return;
	ops = xcalloc(s->n + 1, sizeof *ops);
	cfgs = xcalloc(s->n + 1, sizeof *cfgs);
	for (i = 0; i < s->n; i++) {
		ops[i] = &s->e[i].op;
		cfgs[i] = &s->e[i].best.config;
	}
	*mod = be->export_module("autosched_module", ops, cfgs, s->n);
	if (be->export_plugin != NULL)
		*plugin = be->export_plugin(ops, cfgs, s->n);
	free(ops);
	free(cfgs);
}

/* The library's opening comment: how to use it, and one line per entry. */
static void
tx_header(FILE *f, const struct export_set *s, const char *tag,
    const char *plugin)
{
	size_t i;

	fprintf(f, "// autosched transform library (%s): the schedules autosched "
	    "measured,\n// one per tuned op, each behind a matcher of that op "
	    "alone. Use:\n//   mlir-opt PROGRAM.mlir %s%s%s"
	    "--transform-preload-library=transform-library-paths=THIS_FILE "
	    "--transform-interpreter\n", tag,
	    plugin != NULL ? "--load-pass-plugin=" : "",
	    plugin != NULL ? plugin : "", plugin != NULL ? " " : "");
	if (plugin != NULL)
		fprintf(f, "// (the plugin is autosched's: the passes the "
		    "schedules run, autosched-vnni-dot, autosched-fold-init)\n");
	for (i = 0; i < s->n && !analysis_kind_quantized(s->e[i].op.kind); i++)
		;
	if (i < s->n)
		fprintf(f, "// Quantized matmuls are tuned as their int8 matmul: "
		    "split them first with the\n// plugin's pass, as the "
		    "measured kernels were (and `autosched build` does):\n"
		    "//   --pass-pipeline='builtin.module(autosched-quantized-"
		    "matmul,cse,transform-preload-library{transform-library-paths="
		    "THIS_FILE},transform-interpreter)'\n");
	for (i = 0; i < s->n; i++)
		emit_entry_comment(f, &s->e[i]);
}

/*
 * Group j's matcher and the sequence applying its entries' schedules. With
 * pre "fused_", those of the ops whose result's only user is a
 * linalg.generic: in a built program's dispatch (analysis_outline_fused),
 * its epilogue; they apply the fused schedules.
 */
static void
tx_group_seqs(FILE *f, const struct export_set *s, const struct tx_groups *g,
    size_t j, const char *pre)
{
	size_t i, first = 0;

	for (i = 0; i < s->n; i++) {
		if (g->group[i] == j) {
			first = i;
			break;
		}
	}
	fprintf(f, "  // Ops shaped like %s (sizes, bit widths, body)%s.\n",
	    s->e[first].sig, *pre ? ", their epilogue in their dispatch" : "");
	fprintf(f, "  transform.named_sequence @autosched_match_%s%zu("
	    "%%op: !transform.any_op {transform.readonly}) -> "
	    "!transform.any_op {\n", pre, j);
	emit_match_body(f, &s->e[first].op);
	if (*pre)
		fprintf(f, "    %%epi = transform.match.structured failures("
		    "propagate) %%op : (!transform.any_op) -> "
		    "!transform.any_op {\n    ^bb0(%%s: !transform.any_op):\n"
		    "      %%u = transform.match.structured.result %%s[0] "
		    "{any} : (!transform.any_op) -> !transform.any_op\n"
		    "      transform.match.structured.yield %%u : "
		    "!transform.any_op\n    }\n    transform.match."
		    "operation_name %%epi [\"linalg.generic\"] : "
		    "!transform.any_op\n");
	fprintf(f, "    transform.yield %%op : !transform.any_op\n  }\n");
	fprintf(f, "  // Each schedule applies to its op only: layout and "
	    "element types exact.\n");
	fprintf(f, "  transform.named_sequence @autosched_apply_%s%zu("
	    "%%op: !transform.any_op {transform.readonly}) {\n", pre, j);
	for (i = 0; i < s->n; i++) {
		if (g->group[i] != j)
			continue;
		if (g->skip[i] != 0) {
			fprintf(f, "    // %s: left out (its filter is %s's; the "
			    "signedness of operands is not visible to transform "
			    "ops)\n", s->e[i].sig, s->e[g->skip[i] - 1].sig);
			continue;
		}
		emit_exact_filter(f, &s->e[i].op, i);
	}
	for (i = 0; i < s->n; i++) {
		if (g->group[i] != j || g->skip[i] != 0)
			continue;
		fprintf(f, "    transform.foreach %%x%zu : !transform.any_op {\n"
		    "    ^bb0(%%o: !transform.any_op):\n      transform.include "
		    "@autosched_op_%s%zu failures(propagate) (%%o) : "
		    "(!transform.any_op) -> ()\n    }\n", i, pre, i);
	}
	fprintf(f, "    transform.yield\n  }\n");
}

/*
 * With fused schedules, the sequences marking an op for its group's
 * schedule (and one with its epilogue for the fused one): the schedules
 * run once every op is matched (emit_main_fused).
 */
static void
tx_marks(FILE *f, size_t ngroups)
{
	size_t j;

	for (j = 0; j < ngroups; j++)
		fprintf(f, "  // Marks an op for @autosched_apply_%zu (and one "
		    "with its epilogue for\n  // @autosched_apply_fused_%zu): "
		    "the schedules run once every op is matched.\n"
		    "  transform.named_sequence @autosched_mark_%zu(%%op: "
		    "!transform.any_op {transform.readonly}) {\n"
		    "    transform.annotate %%op \"autosched.apply_%zu\" : "
		    "!transform.any_op\n    transform.yield\n  }\n"
		    "  transform.named_sequence @autosched_mark_fused_%zu(%%op: "
		    "!transform.any_op {transform.readonly}) {\n"
		    "    transform.annotate %%op \"autosched.apply_fused_%zu\" : "
		    "!transform.any_op\n    transform.yield\n  }\n",
		    j, j, j, j, j, j);
}

/*
 * @__transform_main (fuse: EXPORT_TX_*): with chains, the elementwise
 * chains' dispatches fused first; with rows, then the row groups'
 * (autosched-fuse-rows); every group's match and apply; with init_pass
 * (EXPORT_TX_INITS), the matmuls' zero fills folded into their register
 * tiles by that pass; then the module part.
 */
static void
tx_main(FILE *f, size_t ngroups, int has_mod, int fused, int fuse,
    const char *init_pass)
{
	const char *mod = ngroups > 0 ? "%r" : "%root";
	int chains = (fuse & EXPORT_TX_CHAINS) != 0;
	int rows = (fuse & EXPORT_TX_ROWS) != 0;
	size_t j;

	fprintf(f, "  transform.named_sequence @__transform_main(%%root: "
	    "!transform.any_op {transform.consumed}) {\n");
	if (chains)
		fprintf(f, "    %%chains = transform.structured.match ops{"
		    "[\"func.func\"]} attributes{autosched.chain} in %%root : "
		    "(!transform.any_op) -> !transform.any_op\n"
		    "    %%chains_fused = transform.apply_registered_pass "
		    "\"linalg-fuse-elementwise-ops\" to %%chains : "
		    "(!transform.any_op) -> !transform.any_op\n");
	if (rows)
		fprintf(f, "    %%rows = transform.structured.match ops{"
		    "[\"func.func\"]} attributes{autosched.rows} in %%root : "
		    "(!transform.any_op) -> !transform.any_op\n"
		    "    %%rows_fused = transform.apply_registered_pass "
		    "\"autosched-fuse-rows\" to %%rows : "
		    "(!transform.any_op) -> !transform.any_op\n");
	/* No op to schedule (build --untuned of a program without one): no matcher. */
	if (ngroups > 0 && fused)
		emit_main_fused(f, ngroups);
	else if (ngroups > 0) {
		fprintf(f, "    %%r = transform.foreach_match in %%root");
		for (j = 0; j < ngroups; j++)
			fprintf(f, "%s\n        @autosched_match_%zu -> "
			    "@autosched_apply_%zu", j ? "," : "", j, j);
		fprintf(f, "\n        : (!transform.any_op) -> "
		    "!transform.any_op\n");
	}
	if (init_pass != NULL && ngroups > 0) {
		fprintf(f, "    %%ri = transform.apply_registered_pass "
		    "\"%s\" to %%r : (!transform.any_op) -> "
		    "!transform.any_op\n", init_pass);
		mod = "%ri";
	}
	if (has_mod)
		fprintf(f, "    transform.include @autosched_module "
		    "failures(propagate) (%s) : (!transform.any_op) -> ()\n",
		    mod);
	fprintf(f, "    transform.yield\n  }\n}\n");
}

char *
export_transform_text(const struct export_set *s,
    const struct backend_ops *be, int fuse, char **plugin_out)
{
	struct tx_groups g;
	char *buf = NULL, *mod, *plugin, *init_pass = NULL, *ip = NULL;
	size_t len = 0, i, j;
	FILE *f = open_memstream(&buf, &len);
	int fused = (fuse & EXPORT_TX_EPILOGUE) != 0;

	/* Fused schedules only where every entry's backend has them. */
	for (i = 0; i < s->n; i++) {
		if (s->e[i].be->export_op_fused == NULL)
			fused = 0;
	}
	tx_groups_make(s, &g);
	tx_module(s, be, &mod, &plugin);
	if ((fuse & EXPORT_TX_INITS) != 0 && be->export_init_pass != NULL) {
		init_pass = be->export_init_pass(&ip);
		if (plugin == NULL) {
			plugin = ip;
			ip = NULL;
		}
		free(ip);
	}
	tx_header(f, s, g.tag, plugin);
	fprintf(f, "module attributes {transform.with_named_sequence} {\n");
	for (i = 0; i < s->n; i++) {
		char name[48], *part;

		snprintf(name, sizeof name, "autosched_op_%zu", i);
		part = s->e[i].be->export_op(&s->e[i].op, &s->e[i].best.config,
		    name);
		fprintf(f, "  // %s\n%s", s->e[i].sig, part);
		free(part);
		if (!fused)
			continue;
		snprintf(name, sizeof name, "autosched_op_fused_%zu", i);
		part = s->e[i].be->export_op_fused(&s->e[i].op,
		    &s->e[i].best.config, name);
		fprintf(f, "  // %s, its epilogue in its dispatch\n%s",
		    s->e[i].sig, part);
		free(part);
	}
	if (mod != NULL)
		fputs(mod, f);
	for (j = 0; j < g.ngroups; j++) {
		tx_group_seqs(f, s, &g, j, "");
		if (fused)
			tx_group_seqs(f, s, &g, j, "fused_");
	}
	if (fused)
		tx_marks(f, g.ngroups);
	tx_main(f, g.ngroups, mod != NULL, fused, fuse, init_pass);
	free(init_pass);
	fclose(f);
	free(mod);
	tx_groups_free(&g);
	if (plugin_out != NULL)
		*plugin_out = plugin;
	else
		free(plugin);
	return buf;
}

/* ---- IREE ---------------------------------------------------------------- */

const char *const *
export_iree_syntaxes(void)
{
	static const char *names[32];
	size_t i;

	if (names[0] == NULL) {
		for (i = 0; export_iree_syntax[2 * i] != NULL && i < 31; i++)
			names[i] = export_iree_syntax[2 * i];
	}
	return names;
}

/* The template of syntax (NULL = newest), or NULL with *err. */
static const char *
iree_template(const char *syntax, char **err)
{
	size_t i;
	char *list;

	for (i = 0; export_iree_syntax[2 * i] != NULL; i++) {
		if (syntax == NULL ||
		    strcmp(syntax, export_iree_syntax[2 * i]) == 0)
			return export_iree_syntax[2 * i + 1];
	}
	list = xstrdup("");
	for (i = 0; export_iree_syntax[2 * i] != NULL; i++) {
		char *t = xasprintf("%s%s%s", list, i ? ", " : "",
		    export_iree_syntax[2 * i]);

		free(list);
		list = t;
	}
	util_seterr(err, "--iree-syntax %s: unknown; expected one of %s "
	    "(newest first)", syntax, list);
	free(list);
	return NULL;
}

/* Replace @KEY@ by values in tpl. Caller frees. */
static char *
fill(const char *tpl, const char *const *kv)
{
	char *buf = NULL;
	size_t len = 0, i, n;
	FILE *f = open_memstream(&buf, &len);
	const char *p = tpl, *at, *end;

	while ((at = strchr(p, '@')) != NULL &&
	    (end = strchr(at + 1, '@')) != NULL) {
		const char *val = NULL;

		for (i = 0; kv[i] != NULL; i += 2) {
			n = strlen(kv[i]);
			if ((size_t)(end - at - 1) == n &&
			    strncmp(at + 1, kv[i], n) == 0)
				val = kv[i + 1];
		}
		fwrite(p, 1, (size_t)(at - p), f);
		if (val != NULL) {
			fputs(val, f);
			p = end + 1;
		} else {
			fputc('@', f);
			p = at + 1;
		}
	}
	fputs(p, f);
	fclose(f);
	return buf;
}

/*
 * The compilation_info of an entry. Loops in the op's order (batch, m, n,
 * k): cache tiles M/N → distribution, the register tile → vector levels.
 */
static char *
iree_attr_template(const struct export_entry *e, const char *tpl)
{
	const struct config *c = &e->best.config;
	char dist[96], vpar[96], vred[96];
	const char *b0 = is_batch(&e->op) ? "0, " : "";
	const char *b1 = is_batch(&e->op) ? "1, " : "";
	long long vk = c->v[KNOB_VECTOR_K] > 0 ? c->v[KNOB_VECTOR_K] : 1;

	snprintf(dist, sizeof dist, "%s%lld, %lld, 0", b1,
	    (long long)c->v[KNOB_TILE_M], (long long)c->v[KNOB_TILE_N]);
	snprintf(vpar, sizeof vpar, "%s%lld, %lld, 0", b1,
	    (long long)c->v[KNOB_VECTOR_M], (long long)c->v[KNOB_VECTOR_N]);
	snprintf(vred, sizeof vred, "%s0, 0, %lld", b0, vk);
	{
		const char *const kv[] = { "DISTRIBUTION", dist,
		    "VECTOR_PARALLEL", vpar, "VECTOR_REDUCTION", vred, NULL };

		return fill(tpl, kv);
	}
}

/*
 * The compilation_info of an entry in syntax (NULL = newest): as the
 * backend compiled it when it measured with IREE and syntax is the newest
 * (the release it measured with), else the template's mapping of the
 * knobs. NULL when the entry is IREE's own choice (nothing to override).
 * Caller frees.
 */
static char *
iree_attr(const struct export_entry *e, const char *syntax, const char *tpl)
{
	if (by_iree(e->be)) {
		if (syntax == NULL || strcmp(syntax, export_iree_syntax[0]) == 0)
			return e->be->export_iree_attr(&e->op, &e->best.config);
		/* Measured with IREE: its own default stays its own. */
		if (e->be->export_iree_attr(&e->op, &e->best.config) == NULL)
			return NULL;
	}
	return iree_attr_template(e, tpl);
}

/*
 * The body of a matcher on %op with IREE's match ops: a contraction with
 * exactly the op's indexing maps (which operand is transposed) and element
 * types, then its batch, M, N and K sizes.
 */
static void
emit_iree_match_body(FILE *f, const struct op_desc *op)
{
	int b = is_batch(op);
	const char *dims = b ? "(d0, d1, d2, d3)" : "(d0, d1, d2)";
	const char *bd = b ? "d0, " : "";
	const char *m = b ? "d1" : "d0", *n = b ? "d2" : "d1",
	    *k = b ? "d3" : "d2";

	fprintf(f, "    %%b, %%m, %%n, %%k = transform.iree.match.contraction "
	    "%%op, lhs_type = %s, rhs_type = %s, output_type = %s, "
	    "indexing_maps = [affine_map<%s -> (%s%s, %s)>, "
	    "affine_map<%s -> (%s%s, %s)>, affine_map<%s -> (%s%s, %s)>] : "
	    "!transform.any_op -> !transform.param<i64>\n",
	    analysis_elem_name(op->lhs), analysis_elem_name(op->rhs),
	    analysis_elem_name(op->acc),
	    dims, bd, op->transpose_a ? k : m, op->transpose_a ? m : k,
	    dims, bd, op->transpose_b ? n : k, op->transpose_b ? k : n,
	    dims, bd, m, n);
	if (b)
		fprintf(f, "    transform.iree.match.dims_equal %%b, [%lld] : "
		    "!transform.param<i64>\n", (long long)op->batch);
	else
		fprintf(f, "    transform.iree.match.dims_equal %%b, [] : "
		    "!transform.param<i64>\n");
	fprintf(f, "    transform.iree.match.dims_equal %%m, [%lld] : "
	    "!transform.param<i64>\n", (long long)op->m);
	fprintf(f, "    transform.iree.match.dims_equal %%n, [%lld] : "
	    "!transform.param<i64>\n", (long long)op->n);
	fprintf(f, "    transform.iree.match.dims_equal %%k, [%lld] : "
	    "!transform.param<i64>\n", (long long)op->k);
}

/*
 * The entries a spec holds: those with a tuned config (attrs) that the
 * matchers of mk tell apart (keys), each an index into the set (use).
 */
struct spec_sel {
	char	**keys, **attrs;
	size_t	 *use, n;
	size_t	  nnote;	/* rows of backends no spec applies to */
};

static void
spec_sel_free(struct spec_sel *x)
{
	size_t j;

	for (j = 0; j < x->n; j++) {
		free(x->keys[j]);
		free(x->attrs[j]);
	}
	free(x->keys);
	free(x->attrs);
	free(x->use);
}

/* 1 when entry i goes in the spec (its attr kept in x), else 0 (said). */
static int
spec_take(const struct export_set *s, size_t i, const char *syntax,
    const char *tpl, enum export_matcher mk, struct spec_sel *x)
{
	char *k, *attr = iree_attr(&s->e[i], syntax, tpl);
	size_t j;

	/* No spec applies to the rows of such a backend: left out. */
	if (s->e[i].be != NULL && s->e[i].be->spec_note != NULL) {
		fprintf(stderr, "autosched: note: %s (backend %s): left out of "
		    "the spec: %s\n", s->e[i].sig, s->e[i].be->name,
		    s->e[i].be->spec_note);
		x->nnote++;
		free(attr);
		return 0;
	}
	if (attr == NULL) {
		fprintf(stderr, "autosched: note: %s: IREE's own config was kept "
		    "(the tuned ones were not measurably faster); nothing to put "
		    "in the spec\n", s->e[i].sig);
		return 0;
	}
	/*
	 * IREE's matcher compares maps, element types and sizes: only the
	 * signedness of integer operands is not seen. The upstream ones see
	 * sizes and bit widths alone.
	 */
	k = mk == EXPORT_MATCH_IREE ? NULL : coarse_key(&s->e[i].op);
	for (j = 0; j < x->n; j++) {
		if (mk == EXPORT_MATCH_IREE ? same_filter(&s->e[i].op,
		    &s->e[x->use[j]].op) : strcmp(x->keys[j], k) == 0)
			break;
	}
	if (j < x->n) {
		fprintf(stderr, "autosched: warning: %s: the spec's %s matchers "
		    "cannot tell it from %s (%s); left out of the spec\n",
		    s->e[i].sig, mk == EXPORT_MATCH_IREE ? "IREE" : "upstream",
		    s->e[x->use[j]].sig, mk == EXPORT_MATCH_IREE ? "only the "
		    "signedness of operands differs" : "same sizes and bit "
		    "widths, another layout or type");
		free(k);
		free(attr);
		return 0;
	}
	x->attrs[x->n] = attr;
	x->use[x->n] = i;
	x->keys[x->n++] = k;
	return 1;
}

/* The spec's text: its comments, one matcher per entry, the entry point. */
static void
spec_write(FILE *f, const struct export_set *s, const struct spec_sel *x,
    const char *syntax, enum export_matcher mk)
{
	size_t j;

	fprintf(f, "// autosched IREE llvm-cpu tuning spec (IREE attribute "
	    "syntax %s, %s matchers).\n// iree-compile --mlir-disable-threading "
	    "--iree-codegen-tuning-spec-path=THIS_FILE …\n// (IREE 3.13 can "
	    "deadlock loading a spec while it configures executables\n// in "
	    "parallel: see autosched's docs/iree-spec-deadlock.)\n// Each figure was "
	    "measured by the backend its line names: iree is IREE's own\n"
	    "// codegen with this config, mlir-cpu autosched's own codegen "
	    "(not IREE's).\n", syntax ? syntax : export_iree_syntax[0],
	    mk == EXPORT_MATCH_IREE ? "IREE's" : "upstream");
	for (j = 0; j < x->n; j++)
		emit_entry_comment(f, &s->e[x->use[j]]);
	fprintf(f, "module @autosched_spec attributes "
	    "{transform.with_named_sequence} {\n");
	fprintf(f, "  transform.named_sequence @apply_op_config(%%op: "
	    "!transform.any_op {transform.readonly}, %%config: "
	    "!transform.any_param {transform.readonly}) {\n"
	    "    transform.annotate %%op \"compilation_info\" = %%config : "
	    "!transform.any_op, !transform.any_param\n"
	    "    transform.yield\n  }\n");
	for (j = 0; j < x->n; j++) {
		const struct export_entry *e = &s->e[x->use[j]];

		fprintf(f, "  transform.named_sequence @match_%s(%%op: "
		    "!transform.any_op {transform.readonly}) -> "
		    "(!transform.any_op, !transform.any_param) {\n", e->sig);
		if (mk == EXPORT_MATCH_IREE)
			emit_iree_match_body(f, &e->op);
		else
			emit_match_body(f, &e->op);
		fprintf(f, "    %%config = transform.param.constant %s -> "
		    "!transform.any_param\n", x->attrs[j]);
		fprintf(f, "    transform.yield %%op, %%config : "
		    "!transform.any_op, !transform.any_param\n  }\n");
	}
	fprintf(f, "  transform.named_sequence @__kernel_config(%%variant_op: "
	    "!transform.any_op {transform.consumed}) -> !transform.any_op\n"
	    "      attributes {iree_codegen.tuning_spec_entrypoint} {\n");
	fprintf(f, "    %%res = transform.foreach_match in %%variant_op");
	for (j = 0; j < x->n; j++)
		fprintf(f, "%s\n        @match_%s -> @apply_op_config",
		    j ? "," : "", s->e[x->use[j]].sig);
	fprintf(f, "\n        : (!transform.any_op) -> !transform.any_op\n");
	fprintf(f, "    transform.yield %%res : !transform.any_op\n  }\n}\n");
}

int
export_iree_spec(const struct export_set *s, const char *syntax,
    enum export_matcher mk, char **text, char **err)
{
	const char *tpl = iree_template(syntax, err);
	struct spec_sel x;
	char *buf = NULL;
	size_t len = 0, i, n = s->n ? s->n : 1;
	FILE *f;

	*text = NULL;
	if (tpl == NULL)
		return -1;
	memset(&x, 0, sizeof x);
	x.keys = xcalloc(n, sizeof *x.keys);
	x.use = xcalloc(n, sizeof *x.use);
	x.attrs = xcalloc(n, sizeof *x.attrs);
	for (i = 0; i < s->n; i++)
		(void)spec_take(s, i, syntax, tpl, mk, &x);
	if (x.n == 0) {
		if (x.nnote > 0)
			util_seterr(err, "no op to put in the spec: %zu of %zu "
			    "measured on a target no IREE tuning spec applies "
			    "to (IREE 3.13 ignores --iree-codegen-tuning-spec-"
			    "path for CUDA); use `autosched annotate "
			    "PROGRAM.mlir` for those, the rest kept IREE's own "
			    "config", x.nnote, s->n);
		else
			util_seterr(err, "no op to put in the spec: IREE's own "
			    "config was kept for every one");
		spec_sel_free(&x);
		return 1;
	}
	f = open_memstream(&buf, &len);
	spec_write(f, s, &x, syntax, mk);
	fclose(f);
	spec_sel_free(&x);
	*text = buf;
	return 0;
}

int
export_annotate(const struct export_set *s, const char *path,
    const char *syntax, char **text, size_t *nannotated, char **err)
{
	const char *tpl = iree_template(syntax, err);
	const struct analysis_lowering *how;
	struct analysis *an = NULL;
	char **values = NULL;
	size_t i, n = 0;
	int rc = -1;

	*text = NULL;
	*nannotated = 0;
	if (tpl == NULL)
		return -1;
	if (analysis_load(path, &an, err) != 0)
		return -1;
	n = analysis_count(an);
	values = xcalloc(n ? n : 1, sizeof *values);
	for (i = 0; i < n; i++) {
		const struct op_desc *op = analysis_op(an, i);
		ssize_t k = op_entry(s, op);

		if (k >= 0 && op->conv.layout != CONV_NONE)
			/* Its config is the matmul's, not the conv op's. */
			fprintf(stderr, "autosched: warning: %s (%s): a "
			    "convolution tuned as a matmul is not annotated "
			    "(`build` cuts it into that matmul)\n", op->loc,
			    op->op_name);
		else if (k >= 0)
			values[i] = iree_attr(&s->e[k], syntax, tpl);
	}
	rc = analysis_annotate(path, "compilation_info",
	    (const char *const *)values, n, text, nannotated, err);
	if (rc == 0) {
		/*
		 * The first line marks the file as autosched's (util_out); a
		 * program lowered before analysis is annotated lowered.
		 */
		char *low = NULL, *fold = NULL, *folds, *t;

		if ((how = analysis_lowered(an, NULL)) != NULL) {
			low = xasprintf("// lowered from %s to linalg first, as "
			    "mlir-opt --pass-pipeline='%s' does\n", how->from,
			    how->pipeline);
			fprintf(stderr, "autosched: %s: lowered %s to linalg "
			    "before annotating: the program written is the "
			    "lowered one\n", path, how->from);
		}
		if ((folds = analysis_folded_said(an)) != NULL) {
			fold = xasprintf("// %s\n", folds);
			fprintf(stderr, "autosched: %s: %s; the program written "
			    "is the folded one\n", path, folds);
		}
		t = xasprintf("// autosched annotate: the program with the"
		    " store's best configs\n%s%s%s", low ? low : "",
		    fold ? fold : "", *text);
		free(*text);
		free(low);
		free(fold);
		free(folds);
		*text = t;
	}
	for (i = 0; i < n; i++)
		free(values[i]);
	free(values);
	analysis_free(an);
	return rc;
}

/* What an existing output of export, annotate or best -o starts with. */
void
export_guard(struct util_out_guard *g, const char *db, const char *input)
{
	memset(g, 0, sizeof *g);
	g->key = "-o";
	g->what = "the export";
	g->stores[0] = db;
	g->inputs[0].path = input;
	g->inputs[0].what = "the input program";
	g->magic[0] = "// autosched ";
	g->magic[1] = "{\n  \"format\": \"autosched-configs/";
}

int
export_write(const char *path, const char *text, const char *db,
    const char *input, char **err)
{
	struct util_out_guard g;

	export_guard(&g, db, input);
	return util_out_write(path, text, strlen(text), &g, err);
}
