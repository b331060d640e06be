/*
 * Standalone dispatches: print a tunable op, from its description, as a
 * module with one func.func @dispatch(%lhs, %rhs, %acc) holding a
 * linalg.generic contraction (acc + lhs·rhs, casts kept, layouts as stored).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis_int.h"
#include "util/util.h"

/* "tensor<16x1024x80xf16>": dims in stored order, batch first if any. */
static char *
tensor_type(const struct op_desc *d, int64_t d0, int64_t d1,
    enum elem_type e)
{
	if (analysis_kind_batch(d->kind))
		return xasprintf("tensor<%lldx%lldx%lldx%s>",
		    (long long)d->batch, (long long)d0, (long long)d1,
		    analysis_elem_name(e));
	return xasprintf("tensor<%lldx%lldx%s>", (long long)d0, (long long)d1,
	    analysis_elem_name(e));
}

/* The widening of one input into the acc type, printed as a body line. */
static void
emit_cast(FILE *f, const char *out, const char *in, enum elem_type from,
    enum elem_type to, int uns)
{
	const char	*op;

	if (analysis_elem_is_float(from))
		op = "arith.extf";
	else
		op = uns ? "arith.extui" : "arith.extsi";
	fprintf(f, "      %%%s = %s %%%s : %s to %s\n", out, op, in,
	    analysis_elem_name(from), analysis_elem_name(to));
}

void
analysis_emit_generic(FILE *f, const struct op_desc *d, const char *lhs,
    const char *rhs, const char *acc, const char *result)
{
	char		*lt, *rt, *at;
	const char	*dims, *b, *lhs_in, *rhs_in, *mul, *add, *acct;
	int		 batch;

	batch = analysis_kind_batch(d->kind);
	lt = d->transpose_a ? tensor_type(d, d->k, d->m, d->lhs) :
	    tensor_type(d, d->m, d->k, d->lhs);
	rt = d->transpose_b ? tensor_type(d, d->n, d->k, d->rhs) :
	    tensor_type(d, d->k, d->n, d->rhs);
	at = tensor_type(d, d->m, d->n, d->acc);
	acct = analysis_elem_name(d->acc);
	if (analysis_elem_is_float(d->acc))
		mul = "arith.mulf", add = "arith.addf";
	else
		mul = "arith.muli", add = "arith.addi";
	dims = batch ? "b, m, n, k" : "m, n, k";
	b = batch ? "b, " : "";
	fprintf(f, "    %%%s = linalg.generic {indexing_maps = [\n", result);
	fprintf(f, "        affine_map<(%s) -> (%s%s)>,\n", dims, b,
	    d->transpose_a ? "k, m" : "m, k");
	fprintf(f, "        affine_map<(%s) -> (%s%s)>,\n", dims, b,
	    d->transpose_b ? "n, k" : "k, n");
	fprintf(f, "        affine_map<(%s) -> (%sm, n)>],\n", dims, b);
	fprintf(f, "        iterator_types = [%s\"parallel\", \"parallel\","
	    " \"reduction\"]}\n", batch ? "\"parallel\", " : "");
	fprintf(f, "        ins(%%%s, %%%s : %s, %s) outs(%%%s : %s) {\n",
	    lhs, rhs, lt, rt, acc, at);
	fprintf(f, "    ^bb0(%%a: %s, %%b: %s, %%c: %s):\n",
	    analysis_elem_name(d->lhs), analysis_elem_name(d->rhs), acct);
	lhs_in = rhs_in = NULL;
	if (d->lhs != d->acc) {
		emit_cast(f, "a1", "a", d->lhs, d->acc, d->lhs_unsigned);
		lhs_in = "a1";
	}
	if (d->rhs != d->acc) {
		emit_cast(f, "b1", "b", d->rhs, d->acc, d->rhs_unsigned);
		rhs_in = "b1";
	}
	fprintf(f, "      %%p = %s %%%s, %%%s : %s\n", mul,
	    lhs_in ? lhs_in : "a", rhs_in ? rhs_in : "b", acct);
	fprintf(f, "      %%s = %s %%c, %%p : %s\n", add, acct);
	fprintf(f, "      linalg.yield %%s : %s\n", acct);
	fprintf(f, "    } -> %s\n", at);
	free(lt);
	free(rt);
	free(at);
}

/*
 * Print d as func.func @fname (indented as inside a module) to f. The
 * caller has checked d is tunable.
 */
static void
emit_func(FILE *f, const struct op_desc *d, const char *fname)
{
	char	*lt, *rt, *at;

	lt = d->transpose_a ? tensor_type(d, d->k, d->m, d->lhs) :
	    tensor_type(d, d->m, d->k, d->lhs);
	rt = d->transpose_b ? tensor_type(d, d->n, d->k, d->rhs) :
	    tensor_type(d, d->k, d->n, d->rhs);
	at = tensor_type(d, d->m, d->n, d->acc);
	if (analysis_kind_quantized(d->kind)) {
		/* The named op: its zero points are the last two arguments. */
		fprintf(f, "  func.func @%s(%%lhs: %s, %%rhs: %s, %%acc: %s, "
		    "%%za: i32, %%zb: i32) -> %s {\n", fname, lt, rt, at, at);
		fprintf(f, "    %%0 = linalg.%s ins(%%lhs, %%rhs, %%za, %%zb : "
		    "%s, %s, i32, i32) outs(%%acc : %s) -> %s\n", d->kind, lt,
		    rt, at, at);
		fprintf(f, "    return %%0 : %s\n  }\n", at);
		goto out;
	}
	fprintf(f, "  func.func @%s(%%lhs: %s, %%rhs: %s, %%acc: %s)"
	    " -> %s {\n", fname, lt, rt, at, at);
	analysis_emit_generic(f, d, "lhs", "rhs", "acc", "0");
	fprintf(f, "    return %%0 : %s\n", at);
	fprintf(f, "  }\n");
out:
	free(lt);
	free(rt);
	free(at);
}

int
analysis_emit_dispatch(const struct op_desc *d, char **text, char **err)
{
	FILE		*f;
	char		*buf = NULL;
	const char	*p;
	size_t		 len = 0;

	*text = NULL;
	if (!d->tunable) {
		util_seterr(err, "%s: %s is not tunable: %s", d->loc, d->op_name,
		    d->reason ? d->reason : "unknown reason");
		return -1;
	}
	if ((f = open_memstream(&buf, &len)) == NULL) {
		util_seterr(err, "open_memstream failed");
		return -1;
	}
	/* A file name may hold anything: no line break ends the comment early. */
	fprintf(f, "// %s from ", d->name);
	for (p = d->loc; *p != '\0'; p++)
		fputc((unsigned char)*p < 0x20 ? '?' : *p, f);
	fprintf(f, " (%s)\n", d->op_name);
	fprintf(f, "module {\n");
	emit_func(f, d, "dispatch");
	fprintf(f, "}\n");
	if (fclose(f) != 0) {
		util_seterr(err, "writing the dispatch failed");
		free(buf);
		return -1;
	}
	*text = buf;
	return 0;
}

int
analysis_emit_function(const struct op_desc *d, const char *fname,
    char **text, char **err)
{
	FILE	*f;
	char	*buf = NULL;
	size_t	 len = 0;

	*text = NULL;
	if (!d->tunable || (strcmp(d->kind, "matmul") != 0 &&
	    strcmp(d->kind, "batch_matmul") != 0 &&
	    !analysis_kind_quantized(d->kind))) {
		util_seterr(err, "%s: not a tunable matmul", d->name ? d->name :
		    d->kind);
		return -1;
	}
	if ((f = open_memstream(&buf, &len)) == NULL) {
		util_seterr(err, "open_memstream failed");
		return -1;
	}
	emit_func(f, d, fname);
	if (fclose(f) != 0) {
		util_seterr(err, "writing the function failed");
		free(buf);
		return -1;
	}
	*text = buf;
	return 0;
}
