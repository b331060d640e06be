/*
 * Reading MLIR: parse a file with MLIR's own parser (C API), report its
 * diagnostics as "file:line:col: message", and walk every operation to list
 * the contraction-like ones.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/Diagnostics.h>
#include <mlir-c/RegisterEverything.h>

#include "analysis/analysis_int.h"
#include "util/util.h"

/* Cap on a printed type or diagnostic kept for a message. */
#define ANALYSIS_MAX_TEXT	4096

static const struct {
	const char	*name;
	const char	*unsigned_name;	/* integers widened with extui */
	size_t		 size;
	int		 is_float;
} elem_table[] = {
	[ELEM_UNKNOWN] = { "unknown", "unknown", 0, 0 },
	[ELEM_F32] = { "f32", "f32", 4, 1 },
	[ELEM_F64] = { "f64", "f64", 8, 1 },
	[ELEM_F16] = { "f16", "f16", 2, 1 },
	[ELEM_BF16] = { "bf16", "bf16", 2, 1 },
	[ELEM_I8] = { "i8", "u8", 1, 0 },
	[ELEM_I16] = { "i16", "u16", 2, 0 },
	[ELEM_I32] = { "i32", "u32", 4, 0 },
	[ELEM_I64] = { "i64", "u64", 8, 0 },
};

static int
elem_valid(enum elem_type t)
{
	return (unsigned)t < sizeof elem_table / sizeof elem_table[0];
}

const char *
analysis_elem_name(enum elem_type t)
{
	return elem_table[elem_valid(t) ? t : ELEM_UNKNOWN].name;
}

const char *
analysis_operand_name(enum elem_type t, int is_unsigned)
{
	t = elem_valid(t) ? t : ELEM_UNKNOWN;
	return is_unsigned ? elem_table[t].unsigned_name : elem_table[t].name;
}

size_t
analysis_elem_size(enum elem_type t)
{
	return elem_table[elem_valid(t) ? t : ELEM_UNKNOWN].size;
}

int
analysis_elem_is_float(enum elem_type t)
{
	return elem_table[elem_valid(t) ? t : ELEM_UNKNOWN].is_float;
}

int
analysis_kind_batch(const char *kind)
{
	return kind != NULL && (strcmp(kind, "batch_matmul") == 0 ||
	    strcmp(kind, "quantized_batch_matmul") == 0);
}

int
analysis_kind_quantized(const char *kind)
{
	return kind != NULL && strncmp(kind, "quantized_", 10) == 0;
}

/* The same geometry, every size known. */
static int
geometry_same(const struct op_conv *a, const struct op_conv *b)
{
	int	i;

	for (i = 0; i < 4; i++) {
		if (a->pad[i] != b->pad[i])
			return 0;
	}
	for (i = 0; i < 2; i++) {
		if (a->stride[i] != b->stride[i] ||
		    a->dilation[i] != b->dilation[i])
			return 0;
	}
	return a->layout == b->layout && a->n == b->n && a->h == b->h &&
	    a->w == b->w && a->c == b->c && a->f == b->f && a->kh == b->kh &&
	    a->kw == b->kw && a->oh == b->oh && a->ow == b->ow &&
	    a->n >= 0 && a->h >= 0 && a->w >= 0 && a->c >= 0 && a->f >= 0 &&
	    a->kh >= 0 && a->kw >= 0 && a->oh >= 0 && a->ow >= 0;
}

/* Both convolutions left as convolutions, of the same geometry and types. */
static int
conv_same(const struct op_desc *a, const struct op_desc *b)
{
	return !a->tunable && !b->tunable && a->conv.layout != CONV_NONE &&
	    a->kind != NULL && b->kind != NULL &&
	    strcmp(a->kind, b->kind) == 0 &&
	    geometry_same(&a->conv, &b->conv) && a->lhs == b->lhs &&
	    a->rhs == b->rhs && a->acc == b->acc &&
	    a->lhs_unsigned == b->lhs_unsigned &&
	    a->rhs_unsigned == b->rhs_unsigned &&
	    a->reason != NULL && b->reason != NULL &&
	    strcmp(a->reason, b->reason) == 0;
}

int
analysis_op_same(const struct op_desc *a, const struct op_desc *b)
{
	if (conv_same(a, b))
		return 1;
	return a->tunable && b->tunable && a->kind != NULL &&
	    b->kind != NULL && strcmp(a->kind, b->kind) == 0 &&
	    a->batch == b->batch && a->m == b->m && a->n == b->n &&
	    a->k == b->k && a->lhs == b->lhs && a->rhs == b->rhs &&
	    a->acc == b->acc && a->lhs_unsigned == b->lhs_unsigned &&
	    a->rhs_unsigned == b->rhs_unsigned &&
	    a->transpose_a == b->transpose_a &&
	    a->transpose_b == b->transpose_b;
}

void
analysis_text_append(MlirStringRef s, void *arg)
{
	struct analysis_text	*t = arg;
	size_t			 n = s.length;

	if (n > t->cap - 1 - t->len)
		n = t->cap - 1 - t->len;
	memcpy(t->buf + t->len, s.data, n);
	t->len += n;
	t->buf[t->len] = '\0';
}

char *
analysis_type_string(MlirType type)
{
	char			buf[ANALYSIS_MAX_TEXT];
	struct analysis_text	t = { buf, sizeof buf, 0 };

	buf[0] = '\0';
	mlirTypePrint(type, analysis_text_append, &t);
	return xstrdup(buf);
}

/* The position of a location, or 0 if it has none. */
static int
loc_position(MlirLocation loc, MlirStringRef *file, int *line, int *col,
    int depth)
{
	MlirLocation	*subs;
	unsigned	 i, n;
	int		 found = 0;

	if (depth > 16)
		return 0;
	if (mlirLocationIsAFileLineColRange(loc)) {
		*file = mlirIdentifierStr(
		    mlirLocationFileLineColRangeGetFilename(loc));
		*line = mlirLocationFileLineColRangeGetStartLine(loc);
		*col = mlirLocationFileLineColRangeGetStartColumn(loc);
		return 1;
	}
	if (mlirLocationIsAName(loc))
		return loc_position(mlirLocationNameGetChildLoc(loc), file,
		    line, col, depth + 1);
	if (mlirLocationIsACallSite(loc))
		return loc_position(mlirLocationCallSiteGetCallee(loc), file,
		    line, col, depth + 1);
	if (mlirLocationIsAFused(loc)) {
		n = mlirLocationFusedGetNumLocations(loc);
		if (n == 0)
			return 0;
		subs = xcalloc(n, sizeof *subs);
		mlirLocationFusedGetLocations(loc, subs);
		for (i = 0; i < n && !found; i++)
			found = loc_position(subs[i], file, line, col,
			    depth + 1);
		free(subs);
		return found;
	}
	return 0;
}

char *
analysis_loc_string(MlirLocation loc, const char *file)
{
	MlirStringRef	f;
	int		line, col;

	if (!loc_position(loc, &f, &line, &col, 0))
		return xasprintf("%s:0:0", file);
	/* The parser names the buffer "-" (mlirModuleCreateParse takes no name). */
	if (f.length == 0 || (f.length == 1 && f.data[0] == '-'))
		return xasprintf("%s:%d:%d", file, line, col);
	return xasprintf("%.*s:%d:%d", (int)f.length, f.data, line, col);
}

/* What the diagnostic handler collects: the first error. */
struct diag {
	const char	*file;
	char		*first;
};

static MlirLogicalResult
diag_handler(MlirDiagnostic dg, void *arg)
{
	struct diag		*d = arg;
	char			 buf[ANALYSIS_MAX_TEXT], *where;
	struct analysis_text	 msg = { buf, sizeof buf, 0 };

	if (mlirDiagnosticGetSeverity(dg) != MlirDiagnosticError ||
	    d->first != NULL)
		return mlirLogicalResultSuccess();
	buf[0] = '\0';
	mlirDiagnosticPrint(dg, analysis_text_append, &msg);
	where = analysis_loc_string(mlirDiagnosticGetLocation(dg), d->file);
	d->first = xasprintf("%s: %s", where, buf);
	free(where);
	/* Handled: MLIR must not print it to stderr as well. */
	return mlirLogicalResultSuccess();
}

/* An annotation request: attribute name = values[i] on listed op i. */
struct annotate {
	const char		*name;
	const char *const	*values;	/* by op index, NULL = none */
	size_t			 nvalues;
	char			*bad;		/* the value that did not parse */
	size_t			 done;
};

struct walk {
	struct analysis	*a;
	const char	*file;
	struct annotate	*ann;		/* NULL: only list */
	MlirContext	 ctx;
};

/* 1 if op is a func.func with a body and a string sym_name. */
static int
is_func_definition(MlirOperation op)
{
	MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
	MlirAttribute sym;

	if (name.length != 9 || memcmp(name.data, "func.func", 9) != 0)
		return 0;
	sym = mlirOperationGetAttributeByName(op,
	    mlirStringRefCreateFromCString("sym_name"));
	if (mlirAttributeIsNull(sym) || !mlirAttributeIsAString(sym))
		return 0;
	return mlirOperationGetNumRegions(op) > 0 &&
	    !mlirBlockIsNull(mlirRegionGetFirstBlock(
	    mlirOperationGetRegion(op, 0)));
}

static MlirWalkResult
walk_op(MlirOperation op, void *arg)
{
	struct walk	*w = arg;
	struct analysis	*a = w->a;
	struct op_desc	 d;

	memset(&d, 0, sizeof d);
	/* A module inside the top one (or two top-level modules, wrapped). */
	if (a->nested == NULL &&
	    !mlirModuleIsNull(mlirModuleFromOperation(op)) &&
	    !mlirOperationIsNull(mlirOperationGetParentOperation(op)))
		a->nested = analysis_loc_string(mlirOperationGetLocation(op),
		    w->file);
	if (is_func_definition(op)) {
		MlirStringRef sym = mlirStringAttrGetValue(
		    mlirOperationGetAttributeByName(op,
		    mlirStringRefCreateFromCString("sym_name")));

		a->funcs = xrealloc(a->funcs, (a->nfuncs + 1) * 2 *
		    sizeof *a->funcs);
		a->funcs[2 * a->nfuncs] = xstrndup(sym.data, sym.length);
		a->funcs[2 * a->nfuncs + 1] = analysis_loc_string(
		    mlirOperationGetLocation(op), w->file);
		a->nfuncs++;
		return MlirWalkResultAdvance;
	}
	if (!analysis_describe(op, w->file, &d))
		return MlirWalkResultAdvance;
	if (a->nops == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 8;
		a->ops = xrealloc(a->ops, a->cap * sizeof *a->ops);
	}
	d.index = (int)a->nops;
	a->ops[a->nops++] = d;
	if (w->ann != NULL && (size_t)d.index < w->ann->nvalues &&
	    w->ann->values[d.index] != NULL && w->ann->bad == NULL) {
		const char *v = w->ann->values[d.index];
		MlirAttribute attr = mlirAttributeParseGet(w->ctx,
		    mlirStringRefCreateFromCString(v));

		if (mlirAttributeIsNull(attr))
			w->ann->bad = xstrdup(v);
		else {
			MlirStringRef nm = mlirStringRefCreateFromCString(
			    w->ann->name);

			/* Said, never replaced without a word. */
			if (!mlirAttributeIsNull(
			    mlirOperationGetDiscardableAttributeByName(op, nm)))
				fprintf(stderr, "autosched: warning: %s: %s (%s)"
				    " already has a %s: replaced by the tuned"
				    " one\n", d.loc ? d.loc : w->file, d.name ?
				    d.name : "op", d.kind ? d.kind : "?",
				    w->ann->name);
			mlirOperationSetDiscardableAttributeByName(op,
			    mlirStringRefCreateFromCString(w->ann->name), attr);
			w->ann->done++;
		}
	}
	/* A contraction's body holds no further contraction. */
	return MlirWalkResultSkip;
}

/*
 * Call visit for each character of text outside strings and comments
 * (newlines aside, which it counts), in order, until visit returns 0: then
 * 0, with *line and *col (1-based) naming that character. 1 if visit never
 * stopped. Both pre-parse checks below read the text through it.
 */
static int
text_walk(const char *text, size_t len,
    int (*visit)(const char *, size_t, size_t, void *), void *arg,
    int *line, int *col)
{
	size_t i, bol = 0;

	*line = 1;
	for (i = 0; i < len; i++) {
		char c = text[i];

		if (c == '\n') {
			(*line)++;
			bol = i + 1;
		} else if (c == '"') {
			for (i++; i < len && text[i] != '"'; i++) {
				if (text[i] == '\\' && i + 1 < len)
					i++;
				else if (text[i] == '\n') {
					(*line)++;
					bol = i + 1;
				}
			}
		} else if (c == '/' && i + 1 < len && text[i + 1] == '/') {
			while (i + 1 < len && text[i + 1] != '\n')
				i++;
		} else if (!visit(text, len, i, arg)) {
			*col = (int)(i - bol) + 1;
			return 0;
		}
	}
	return 1;
}

/*
 * text_walk's visitor for nesting_ok: arg is the bracket depth so far; 0
 * once it exceeds ANALYSIS_NESTING_MAX. A '>' of "->" closes nothing.
 */
static int
nesting_visit(const char *text, size_t len, size_t i, void *arg)
{
	int	*depth = arg;
	char	 c = text[i];

	if (c == '(' || c == '[' || c == '{' || c == '<')
		return ++*depth <= ANALYSIS_NESTING_MAX;
	if ((c == ')' || c == ']' || c == '}' ||
	    (c == '>' && (i == 0 || text[i - 1] != '-'))) && *depth > 0)
		(*depth)--;
	return 1;
}

/* Is text[i..] the keyword kw followed by blanks, '=', blanks and '['? Its '[' in *open. */
static int
int_list_at(const char *text, size_t len, size_t i, const char *kw,
    size_t *open)
{
	size_t n = strlen(kw);

	if (i + n > len || memcmp(text + i, kw, n) != 0 ||
	    (i > 0 && (isalnum((unsigned char)text[i - 1]) || text[i - 1] == '_')))
		return 0;
	for (i += n; i < len && (text[i] == ' ' || text[i] == '\t'); i++)
		;
	if (i >= len || text[i] != '=')
		return 0;
	for (i++; i < len && (text[i] == ' ' || text[i] == '\t'); i++)
		;
	if (i >= len || text[i] != '[')
		return 0;
	*open = i;
	return 1;
}

/*
 * Every "permutation = [...]" and "dimensions = [...]" (linalg.transpose,
 * broadcast, reduce) a list of integers: MLIR 22's parser reports a bad
 * element and then crashes (a null attribute set on the op: mlir-opt
 * itself dies with SIGSEGV), so a bad one is refused before it, its line
 * in *line.
 */
static int
int_lists_ok(const char *text, size_t len, int *line)
{
	static const char *const kws[] = { "permutation", "dimensions" };
	size_t i, j, open, k;
	int ln = 1, want_int;

	for (i = 0; i < len; i++) {
		if (text[i] == '\n')
			ln++;
		for (k = 0; k < 2; k++) {
			if (!int_list_at(text, len, i, kws[k], &open))
				continue;
			want_int = 1;
			for (j = open + 1; j < len && text[j] != ']'; j++) {
				if (text[j] == ' ' || text[j] == '\t')
					continue;
				if (want_int && (text[j] == '-' ||
				    isdigit((unsigned char)text[j]))) {
					while (j + 1 < len &&
					    isdigit((unsigned char)text[j + 1]))
						j++;
					want_int = 0;
				} else if (!want_int && text[j] == ',')
					want_int = 1;
				else
					break;
			}
			/* "[]" is a list; "[1,]" and "[1,,2]" are not. */
			if (j >= len || text[j] != ']' || (want_int &&
			    j != open + 1 + strspn(text + open + 1, " \t"))) {
				*line = ln;
				return 0;
			}
		}
	}
	return 1;
}

/*
 * The deepest nesting of brackets in text, outside strings and comments,
 * up to the first line where it exceeds ANALYSIS_NESTING_MAX (*line then
 * names it).
 */
static int
nesting_ok(const char *text, size_t len, int *line)
{
	int depth = 0, col;

	return text_walk(text, len, nesting_visit, &depth, line, &col);
}

/* What linalg_lists_ok's visitor carries from one character to the next. */
struct lists_scan {
	int		 in_op;	/* inside a linalg op whose list is unseen */
	const char	*key;	/* the key refused */
};

/* The index of the first character from j on that is not white space. */
static size_t
skip_space(const char *text, size_t len, size_t j)
{
	while (j < len && (text[j] == ' ' || text[j] == '\t' ||
	    text[j] == '\n' || text[j] == '\r'))
		j++;
	return j;
}

/*
 * text_walk's visitor for linalg_lists_ok: notes a linalg op named at i,
 * or, inside one, checks the `dimensions =` / `permutation =` starting at
 * i; 0 (with s->key) if its value is not a list.
 */
static int
lists_visit(const char *text, size_t len, size_t i, void *arg)
{
	static const char *const ops[] = { "linalg.reduce", "linalg.broadcast",
	    "linalg.transpose" };
	static const char *const keys[] = { "dimensions", "permutation" };
	struct lists_scan	*s = arg;
	char			 c = text[i];
	size_t			 j, k, n;

	if (c == 'l' && (i == 0 || text[i - 1] != '"')) {
		for (k = 0; k < sizeof ops / sizeof ops[0]; k++) {
			n = strlen(ops[k]);
			if (len - i >= n && memcmp(text + i, ops[k], n) == 0)
				s->in_op = 1;
		}
		return 1;
	}
	if (!s->in_op || (c != 'd' && c != 'p') ||
	    (i > 0 && (isalnum((unsigned char)text[i - 1]) ||
	    text[i - 1] == '_' || text[i - 1] == '.')))
		return 1;
	for (k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		n = strlen(keys[k]);
		if (len - i < n || memcmp(text + i, keys[k], n) != 0)
			continue;
		j = skip_space(text, len, i + n);
		if (j >= len || text[j] != '=')
			continue;
		j = skip_space(text, len, j + 1);
		s->in_op = 0;
		if (j >= len || text[j] != '[') {
			s->key = keys[k];
			return 0;
		}
	}
	return 1;
}

/*
 * 0 (with *line, *col, *key) if a linalg.reduce, linalg.broadcast or
 * linalg.transpose in custom form gives its `dimensions =` / `permutation =`
 * anything but a list ([...]): MLIR 22's parser of those ops dereferences
 * the null attribute it gets back (found by fuzz_analysis). Strings and
 * comments are skipped; the generic form ("linalg.reduce"(...)) has another
 * parser and is left to it.
 */
static int
linalg_lists_ok(const char *text, size_t len, int *line, int *col,
    const char **key)
{
	struct lists_scan s = { 0, NULL };

	if (text_walk(text, len, lists_visit, &s, line, col))
		return 1;
	*key = s.key;
	return 0;
}

/*
 * Locations as the annotated program keeps them. The parser gives an op
 * without loc(...) its place in the buffer ("-":line:col); only the others
 * were written by the user.
 */
struct locs {
	MlirContext	 ctx;
	int		 written;	/* a loc(...) other than unknown was seen */
	int		 clear;		/* set the parser's own ones to unknown */
};

/* 1 if loc is the parser's, not written in the input. */
static int
loc_implicit(MlirLocation loc)
{
	MlirStringRef f;

	if (!mlirLocationIsAFileLineColRange(loc))
		return 0;
	f = mlirIdentifierStr(mlirLocationFileLineColRangeGetFilename(loc));
	return f.length == 1 && f.data[0] == '-';
}

/* Look at (or clear) one location; 1 if it is to be replaced. */
static int
loc_visit(struct locs *l, MlirLocation loc)
{
	if (loc_implicit(loc))
		return l->clear;
	if (!mlirLocationEqual(loc, mlirLocationUnknownGet(l->ctx)))
		l->written = 1;
	return 0;
}

/* fn(v, arg) for every argument v of every block of op's regions. */
static void
block_args_each(MlirOperation op, void (*fn)(MlirValue, void *), void *arg)
{
	intptr_t r, a, n;
	MlirBlock b;

	for (r = 0; r < mlirOperationGetNumRegions(op); r++) {
		for (b = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, r));
		    !mlirBlockIsNull(b); b = mlirBlockGetNextInRegion(b)) {
			n = mlirBlockGetNumArguments(b);
			for (a = 0; a < n; a++)
				fn(mlirBlockGetArgument(b, a), arg);
		}
	}
}

static void
locs_arg(MlirValue v, void *arg)
{
	struct locs *l = arg;

	if (loc_visit(l, mlirValueGetLocation(v)))
		mlirBlockArgumentSetLocation(v, mlirLocationUnknownGet(l->ctx));
}

static MlirWalkResult
locs_walk(MlirOperation op, void *arg)
{
	struct locs *l = arg;

	if (loc_visit(l, mlirOperationGetLocation(op)))
		mlirOperationSetLocation(op, mlirLocationUnknownGet(l->ctx));
	block_args_each(op, locs_arg, l);
	return MlirWalkResultAdvance;
}

/*
 * 1 if the first op of text is in generic form ("dialect.op"(…)): past
 * blank lines, comments and attribute/type alias definitions.
 */
static int
generic_form(const char *text, size_t len)
{
	size_t i = 0;

	while (i < len) {
		while (i < len && (text[i] == ' ' || text[i] == '\t' ||
		    text[i] == '\n' || text[i] == '\r'))
			i++;
		if (i < len && (text[i] == '#' || text[i] == '!' ||
		    (text[i] == '/' && i + 1 < len && text[i + 1] == '/'))) {
			while (i < len && text[i] != '\n')
				i++;
			continue;
		}
		break;
	}
	return i < len && text[i] == '"';
}

/* Appends MLIR's printed text to a memstream. */
static void
file_append(MlirStringRef s, void *arg)
{
	fwrite(s.data, 1, s.length, (FILE *)arg);
}

/*
 * The module printed with flags (destroyed here), in generic form if
 * generic, into *text (caller frees). -1 with *err.
 */
static int
module_print(MlirModule module, MlirOpPrintingFlags flags, int generic,
    char **text, char **err)
{
	size_t	 len = 0;
	FILE	*f;

	*text = NULL;
	if ((f = open_memstream(text, &len)) == NULL) {
		mlirOpPrintingFlagsDestroy(flags);
		util_seterr(err, "open_memstream failed");
		return -1;
	}
	if (generic)
		mlirOpPrintingFlagsPrintGenericOpForm(flags);
	mlirOperationPrintWithFlags(mlirModuleGetOperation(module), flags,
	    file_append, f);
	mlirOpPrintingFlagsDestroy(flags);
	fputc('\n', f);
	if (fclose(f) != 0) {
		free(*text);
		*text = NULL;
		util_seterr(err, "printing the module failed");
		return -1;
	}
	return 0;
}

/* loc with the parser's buffer name ("-") replaced by file. */
static MlirLocation
loc_rename(MlirContext ctx, MlirLocation loc, MlirStringRef file, int depth)
{
	MlirLocation	*subs, r;
	unsigned	 i, n;

	if (depth > 16)
		return loc;
	if (mlirLocationIsAFileLineColRange(loc)) {
		int l0 = mlirLocationFileLineColRangeGetStartLine(loc);
		int c0 = mlirLocationFileLineColRangeGetStartColumn(loc);
		int l1 = mlirLocationFileLineColRangeGetEndLine(loc);
		int c1 = mlirLocationFileLineColRangeGetEndColumn(loc);

		if (!loc_implicit(loc))
			return loc;
		if (l0 == l1 && c0 == c1)
			return mlirLocationFileLineColGet(ctx, file,
			    (unsigned)l0, (unsigned)c0);
		return mlirLocationFileLineColRangeGet(ctx, file, (unsigned)l0,
		    (unsigned)c0, (unsigned)l1, (unsigned)c1);
	}
	if (mlirLocationIsAName(loc))
		return mlirLocationNameGet(ctx,
		    mlirIdentifierStr(mlirLocationNameGetName(loc)),
		    loc_rename(ctx, mlirLocationNameGetChildLoc(loc), file,
		    depth + 1));
	if (mlirLocationIsACallSite(loc))
		return mlirLocationCallSiteGet(
		    loc_rename(ctx, mlirLocationCallSiteGetCallee(loc), file,
		    depth + 1),
		    loc_rename(ctx, mlirLocationCallSiteGetCaller(loc), file,
		    depth + 1));
	if (mlirLocationIsAFused(loc) &&
	    (n = mlirLocationFusedGetNumLocations(loc)) > 0) {
		subs = xcalloc(n, sizeof *subs);
		mlirLocationFusedGetLocations(loc, subs);
		for (i = 0; i < n; i++)
			subs[i] = loc_rename(ctx, subs[i], file, depth + 1);
		r = mlirLocationFusedGet(ctx, n, subs,
		    mlirLocationFusedGetMetadata(loc));
		free(subs);
		return r;
	}
	return loc;
}

/* What locs_rename_op needs. */
struct rename {
	MlirContext	 ctx;
	MlirStringRef	 file;
};

static void
locs_rename_arg(MlirValue v, void *arg)
{
	struct rename	*rn = arg;

	mlirBlockArgumentSetLocation(v, loc_rename(rn->ctx,
	    mlirValueGetLocation(v), rn->file, 0));
}

static MlirWalkResult
locs_rename_op(MlirOperation op, void *arg)
{
	struct rename	*rn = arg;

	mlirOperationSetLocation(op, loc_rename(rn->ctx,
	    mlirOperationGetLocation(op), rn->file, 0));
	block_args_each(op, locs_rename_arg, rn);
	return MlirWalkResultAdvance;
}

/* A parsed module, the context that owns it and what MLIR said. */
struct parsed {
	MlirDialectRegistry		 registry;
	MlirContext			 ctx;
	MlirModule			 module;
	MlirDiagnosticHandlerID		 handler;
	struct diag			 diag;
	char				*copy;
	const struct analysis_lowering	*lowered;	/* NULL: as written */
	size_t				 remaining;
	size_t				 folded;	/* transposes (fold.c) */
};

/* Free what parsed_open made, whatever it returned. */
static void
parsed_close(struct parsed *p)
{
	if (!mlirModuleIsNull(p->module))
		mlirModuleDestroy(p->module);
	if (!mlirContextIsNull(p->ctx)) {
		mlirContextDetachDiagnosticHandler(p->ctx, p->handler);
		mlirContextDestroy(p->ctx);
		mlirDialectRegistryDestroy(p->registry);
	}
	free(p->diag.first);
	free(p->copy);
}

/*
 * Parse text (name in messages) into p->module, and lower it when it holds
 * ops of a dialect analysed only after lowering (lower.c). -1 with *err;
 * either way the caller closes p with parsed_close.
 */
static int
parsed_open(struct parsed *p, const char *name, const char *text, size_t len,
    char **err)
{
	const char	*key = NULL;
	char		*why = NULL;
	int		 line, col = 0;

	memset(p, 0, sizeof *p);
	p->diag.file = name;
	if (len > ANALYSIS_INPUT_MAX) {
		util_seterr(err, "%s: input too large (%zu bytes, at most %zu)",
		    name, len, ANALYSIS_INPUT_MAX);
		return -1;
	}
	if (!linalg_lists_ok(text, len, &line, &col, &key)) {
		util_seterr(err, "%s:%d:%d: linalg op: `%s =` must be followed "
		    "by a list such as [0, 1]: refused before MLIR's parser, "
		    "which crashes on anything else there", name, line, col, key);
		return -1;
	}
	if (!nesting_ok(text, len, &line)) {
		util_seterr(err, "%s:%d: nested more than %d levels deep (brackets,"
		    " regions, types): refused before MLIR's parser, which"
		    " recurses on nesting", name, line, ANALYSIS_NESTING_MAX);
		return -1;
	}
	if (!int_lists_ok(text, len, &line)) {
		util_seterr(err, "%s:%d: a permutation or dimensions list that is"
		    " not a list of integers: refused before MLIR's parser,"
		    " which crashes on it (MLIR 22)", name, line);
		return -1;
	}
	/* MLIR's lexer finds the end of the buffer by its NUL. */
	p->copy = xmalloc(len + 1);
	memcpy(p->copy, text, len);
	p->copy[len] = '\0';

	/*
	 * Every upstream dialect, so that any of them parses in pretty form;
	 * the rest (hal, flow, iree_tensor_ext, …) as unregistered ops.
	 */
	p->registry = mlirDialectRegistryCreate();
	mlirRegisterAllDialects(p->registry);
	p->ctx = mlirContextCreateWithRegistry(p->registry, false);
	mlirContextSetAllowUnregisteredDialects(p->ctx, true);
	p->handler = mlirContextAttachDiagnosticHandler(p->ctx, diag_handler,
	    &p->diag, NULL);

	p->module = mlirModuleCreateParse(p->ctx,
	    mlirStringRefCreate(p->copy, len));
	if (mlirModuleIsNull(p->module)) {
		if (p->diag.first != NULL)
			util_seterr(err, "%s", p->diag.first);
		else
			util_seterr(err, "%s: not valid MLIR", name);
		return -1;
	}
	if (analysis_lower_module(p->ctx, p->module, name, &p->lowered,
	    &p->remaining, &why) != 0) {
		if (why != NULL && p->diag.first == NULL)
			util_seterr(err, "%s", why);
		else if (p->diag.first != NULL)
			util_seterr(err, "%s (lowering %s to linalg before "
			    "analysis, with the upstream passes %s)",
			    p->diag.first, p->lowered->from,
			    p->lowered->pipeline);
		else
			util_seterr(err, "%s: lowering %s to linalg before "
			    "analysis failed (%s)", name, p->lowered->from,
			    p->lowered->pipeline);
		free(why);
		return -1;
	}
	p->folded = analysis_fold_transposes(p->module);
	return 0;
}

/*
 * Every location in op that names the parser's buffer names file instead,
 * so that printed IR points into the file.
 */
static void
locs_rename(MlirContext ctx, MlirOperation op, const char *file)
{
	struct rename rn;

	rn.ctx = ctx;
	rn.file = mlirStringRefCreateFromCString(file);
	mlirOperationWalk(op, locs_rename_op, &rn, MlirWalkPreOrder);
}

/*
 * The annotated module as the input was: its loc(...) kept (those the
 * parser made up print as unknown), generic form if it was generic. A
 * lowered module is not the input's text: every location is written out,
 * naming the input.
 */
static int
annotated_print(struct parsed *p, const char *name, const char *text,
    size_t len, char **printed, char **err)
{
	MlirOpPrintingFlags	flags = mlirOpPrintingFlagsCreate();
	struct locs		locs;

	locs.ctx = p->ctx;
	locs.written = locs.clear = 0;
	if (p->lowered != NULL) {
		locs_rename(p->ctx, mlirModuleGetOperation(p->module), name);
		mlirOpPrintingFlagsEnableDebugInfo(flags, true, false);
	} else
		mlirOperationWalk(mlirModuleGetOperation(p->module),
		    locs_walk, &locs, MlirWalkPreOrder);
	if (locs.written) {
		locs.clear = 1;
		mlirOperationWalk(mlirModuleGetOperation(p->module), locs_walk,
		    &locs, MlirWalkPreOrder);
		mlirOpPrintingFlagsEnableDebugInfo(flags, true, false);
	}
	return module_print(p->module, flags, generic_form(text, len), printed,
	    err);
}

/*
 * The module changed by edit and printed with every location, those the
 * parser made up naming the input's lines (an edited program's ops are not
 * where they were), generic form if the input was.
 */
static int
edited_print(struct parsed *p, const char *name, const char *text,
    size_t len, const struct analysis_edit *edit, char **printed, char **err)
{
	MlirOpPrintingFlags	flags;

	locs_rename(p->ctx, mlirModuleGetOperation(p->module), name);
	if (edit->fn(p->ctx, p->module, edit->arg, err) != 0)
		return -1;
	flags = mlirOpPrintingFlagsCreate();
	mlirOpPrintingFlagsEnableDebugInfo(flags, true, false);
	return module_print(p->module, flags, generic_form(text, len), printed,
	    err);
}

/*
 * Parse text (named name), list its ops into *out, and with printed not
 * NULL print the module again into *printed (caller frees): annotated as
 * ann asks, or changed by edit first (one of the two).
 */
static int
parse_walk(const char *name, const char *text, size_t len,
    struct annotate *ann, const struct analysis_edit *edit, char **printed,
    struct analysis **out, char **err)
{
	struct parsed	 p;
	struct walk	 w;
	struct analysis	*a = NULL;
	int		 rc = -1;

	*out = NULL;
	if (parsed_open(&p, name, text, len, err) != 0)
		goto out;
	a = xcalloc(1, sizeof *a);
	a->lowered = p.lowered;
	a->remaining = p.remaining;
	a->folded = p.folded;
	w.a = a;
	w.file = name;
	w.ann = ann;
	w.ctx = p.ctx;
	mlirOperationWalk(mlirModuleGetOperation(p.module), walk_op, &w,
	    MlirWalkPreOrder);
	if (ann != NULL && ann->bad != NULL) {
		util_seterr(err, "%s: cannot parse the attribute %s%s%s", name,
		    ann->bad, p.diag.first ? ": " : "",
		    p.diag.first ? p.diag.first : "");
		goto out;
	}
	if (ann != NULL &&
	    annotated_print(&p, name, text, len, printed, err) != 0)
		goto out;
	if (edit != NULL &&
	    edited_print(&p, name, text, len, edit, printed, err) != 0)
		goto out;
	*out = a;
	a = NULL;
	rc = 0;
out:
	analysis_free(a);
	parsed_close(&p);
	return rc;
}

int
analysis_parse(const char *name, const char *text, size_t len,
    struct analysis **out, char **err)
{
	return parse_walk(name, text, len, NULL, NULL, NULL, out, err);
}

int
analysis_annotate(const char *path, const char *attr_name,
    const char *const *values, size_t nvalues, char **text, size_t *done,
    char **err)
{
	struct annotate	 ann;
	struct analysis	*a = NULL;
	char		*buf;
	size_t		 len;
	int		 rc;

	*text = NULL;
	memset(&ann, 0, sizeof ann);
	ann.name = attr_name;
	ann.values = values;
	ann.nvalues = nvalues;
	if (util_read_file(path, ANALYSIS_INPUT_MAX, &buf, &len, err) != 0)
		return -1;
	rc = parse_walk(path, buf, len, &ann, NULL, text, &a, err);
	free(buf);
	free(ann.bad);
	analysis_free(a);
	if (done != NULL)
		*done = ann.done;
	return rc;
}

int
analysis_edit(const char *path, const struct analysis_edit *edit, char **text,
    char **err)
{
	struct analysis	*a = NULL;
	char		*buf;
	size_t		 len;
	int		 rc;

	*text = NULL;
	if (util_read_file(path, ANALYSIS_INPUT_MAX, &buf, &len, err) != 0)
		return -1;
	rc = parse_walk(path, buf, len, NULL, edit, text, &a, err);
	free(buf);
	analysis_free(a);
	return rc;
}

int
analysis_load(const char *path, struct analysis **out, char **err)
{
	char	*buf;
	size_t	 len;
	int	 rc;

	*out = NULL;
	if (util_read_file(path, ANALYSIS_INPUT_MAX, &buf, &len, err) != 0)
		return -1;
	rc = analysis_parse(path, buf, len, out, err);
	free(buf);
	return rc;
}

int
analysis_lower(const char *path, char **text,
    const struct analysis_lowering **how, size_t *folded, char **err)
{
	MlirOpPrintingFlags	 flags;
	struct parsed		 p;
	char			*buf;
	size_t			 len;
	int			 rc = -1;

	*text = NULL;
	*how = NULL;
	if (folded != NULL)
		*folded = 0;
	if (util_read_file(path, ANALYSIS_INPUT_MAX, &buf, &len, err) != 0)
		return -1;
	if (parsed_open(&p, path, buf, len, err) != 0)
		goto out;
	rc = 0;
	if (p.lowered == NULL && p.folded == 0)
		goto out;
	/* Every location written out, naming the file: tools point into it. */
	locs_rename(p.ctx, mlirModuleGetOperation(p.module), path);
	flags = mlirOpPrintingFlagsCreate();
	mlirOpPrintingFlagsEnableDebugInfo(flags, true, false);
	rc = module_print(p.module, flags, 0, text, err);
	if (rc == 0) {
		*how = p.lowered;
		if (folded != NULL)
			*folded = p.folded;
	}
out:
	parsed_close(&p);
	free(buf);
	return rc;
}

size_t
analysis_folded(const struct analysis *a)
{
	return a->folded;
}

char *
analysis_folded_said(const struct analysis *a)
{
	if (a->folded == 0)
		return NULL;
	return xasprintf("%zu transpose%s folded into the matmul%s that read "
	    "%s (swapping the last two dims): %s read stored transposed, not "
	    "copied", a->folded, a->folded == 1 ? "" : "s",
	    a->folded == 1 ? "" : "s",
	    a->folded == 1 ? "it" : "them",
	    a->folded == 1 ? "that operand is" : "those operands are");
}

const struct analysis_lowering *
analysis_lowered(const struct analysis *a, size_t *remaining)
{
	if (remaining != NULL)
		*remaining = a->lowered != NULL ? a->remaining : 0;
	return a->lowered;
}

void
analysis_desc_clear(struct op_desc *d)
{
	free((char *)d->kind);
	free((char *)d->op_name);
	free((char *)d->name);
	free((char *)d->function);
	free((char *)d->loc);
	free((char *)d->reason);
}

void
analysis_free(struct analysis *a)
{
	size_t		 i;

	if (a == NULL)
		return;
	for (i = 0; i < a->nops; i++)
		analysis_desc_clear(&a->ops[i]);
	for (i = 0; i < 2 * a->nfuncs; i++)
		free(a->funcs[i]);
	free(a->funcs);
	free(a->ops);
	free(a->nested);
	free(a);
}

const char *
analysis_nested_module(const struct analysis *a)
{
	return a->nested;
}

size_t
analysis_function_count(const struct analysis *a)
{
	return a->nfuncs;
}

const char *
analysis_function(const struct analysis *a, size_t i, const char **loc)
{
	if (i >= a->nfuncs)
		return NULL;
	if (loc != NULL)
		*loc = a->funcs[2 * i + 1];
	return a->funcs[2 * i];
}

size_t
analysis_count(const struct analysis *a)
{
	return a->nops;
}

const struct op_desc *
analysis_op(const struct analysis *a, size_t i)
{
	if (i >= a->nops)
		return NULL;
	return &a->ops[i];
}
