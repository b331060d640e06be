/*
 * Shape sweeps: expand M × N × K (× batch) × dtypes into op descriptions and
 * print them as MLIR through the analysis' own emitter, so that what is
 * generated is exactly what the analysis and the backends read.
 */
#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generate/generate.h"
#include "util/util.h"

static const struct {
	const char	*name;
	enum elem_type	 in, acc;
	int		 uns;
} gen_types[GEN_DTYPE_COUNT] = {
	[GEN_F32] = { "f32", ELEM_F32, ELEM_F32, 0 },
	[GEN_F16] = { "f16", ELEM_F16, ELEM_F16, 0 },
	[GEN_F16F32] = { "f16f32", ELEM_F16, ELEM_F32, 0 },
	[GEN_BF16F32] = { "bf16f32", ELEM_BF16, ELEM_F32, 0 },
	[GEN_I8I32] = { "i8i32", ELEM_I8, ELEM_I32, 0 },
	[GEN_U8I32] = { "u8i32", ELEM_I8, ELEM_I32, 1 },
};

#define GEN_ARG_MAX	256	/* bytes of a dtype/transpose/kind value */

void
generate_sweep_clear(struct generate_sweep *s)
{
	free(s->conv.n);
	free(s->conv.h);
	free(s->conv.w);
	free(s->conv.c);
	free(s->conv.f);
	free(s->conv.filter);
	free(s->conv.stride);
	free(s->conv.pad);
	free(s->m);
	free(s->n);
	free(s->k);
	free(s->batch);
	memset(s, 0, sizeof *s);
}

const char *
generate_dtype_name(enum generate_dtype t)
{
	if ((int)t < 0 || t >= GEN_DTYPE_COUNT)
		return NULL;
	return gen_types[t].name;
}

/* Split s at commas and call fn on each trimmed element; -1 stops. */
static int
gen_split(const char *s, const char *what, int (*fn)(const char *, void *,
    char **), void *arg, char **err)
{
	char buf[GEN_ARG_MAX], *tok, *save = NULL, *e;
	int any = 0;

	if (strlen(s) >= sizeof buf) {
		util_seterr(err, "value too long for %s (at most %zu bytes)",
		    what, sizeof buf - 1);
		return -1;
	}
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ' || *tok == '\t')
			tok++;
		e = tok + strlen(tok);
		while (e > tok && (e[-1] == ' ' || e[-1] == '\t'))
			*--e = '\0';
		if (*tok == '\0')
			continue;
		if (fn(tok, arg, err) != 0)
			return -1;
		any = 1;
	}
	if (!any) {
		util_seterr(err, "no %s given", what);
		return -1;
	}
	return 0;
}

static int
gen_one_dtype(const char *tok, void *arg, char **err)
{
	uint32_t *mask = arg;
	int t;

	for (t = 0; t < GEN_DTYPE_COUNT; t++) {
		if (strcmp(tok, gen_types[t].name) == 0) {
			*mask |= 1u << t;
			return 0;
		}
	}
	util_seterr(err, "unknown '%.40s'; expected one or more of "
	    "f32, f16, f16f32, bf16f32, i8i32, u8i32", tok);
	return -1;
}

int
generate_parse_dtypes(const char *s, uint32_t *mask, char **err)
{
	uint32_t m = 0;

	if (gen_split(s, "dtype", gen_one_dtype, &m, err) != 0)
		return -1;
	*mask = m;
	return 0;
}

static int
gen_one_transpose(const char *tok, void *arg, char **err)
{
	int *t = arg;

	if (strcmp(tok, "a") == 0)
		t[0] = 1;
	else if (strcmp(tok, "b") == 0)
		t[1] = 1;
	else if (strcmp(tok, "none") != 0) {
		util_seterr(err, "unknown '%.40s'; expected a (lhs "
		    "stored KxM), b (rhs stored NxK), a,b or none", tok);
		return -1;
	}
	return 0;
}

int
generate_parse_transpose(const char *s, int *ta, int *tb, char **err)
{
	int t[2] = { 0, 0 };

	if (gen_split(s, "transpose", gen_one_transpose, t, err) != 0)
		return -1;
	*ta = t[0];
	*tb = t[1];
	return 0;
}

int
generate_parse_kind(const char *s, int *batch_matmul, char **err)
{
	if (strcmp(s, "matmul") == 0)
		*batch_matmul = 0;
	else if (strcmp(s, "batch_matmul") == 0)
		*batch_matmul = 1;
	else {
		util_seterr(err, "unknown '%.40s'; expected matmul or "
		    "batch_matmul", s);
		return -1;
	}
	return 0;
}

static uint64_t
gen_mul(uint64_t a, uint64_t b)
{
	if (a != 0 && b > UINT64_MAX / a)
		return UINT64_MAX;
	return a * b;
}

static unsigned
gen_ndtypes(const struct generate_sweep *s)
{
	uint32_t m = s->dtypes ? s->dtypes : 1u << GEN_F32;

	return (unsigned)__builtin_popcount(m);
}

/* A conv list's length, 1 for an unset list that has a default. */
static size_t
conv_len(const int64_t *v, size_t n, int has_default)
{
	return v == NULL && has_default ? 1 : n;
}

static uint64_t
conv_count(const struct generate_conv *c)
{
	uint64_t k = gen_mul(gen_mul(c->nh, c->nw), gen_mul(c->nc, c->nf));

	k = gen_mul(k, gen_mul(c->nfilter, conv_len(c->n, c->nn, 1)));
	return gen_mul(k, gen_mul(conv_len(c->stride, c->nstride, 1),
	    conv_len(c->pad, c->npad, 1)));
}

uint64_t
generate_count(const struct generate_sweep *s)
{
	uint64_t c = s->conv2d ? conv_count(&s->conv) :
	    gen_mul(gen_mul(s->nm, s->nn), s->nk);

	c = gen_mul(c, gen_ndtypes(s));
	if (s->batch_matmul)
		c = gen_mul(c, s->nbatch);
	return c;
}

/* The smallest value of a list (its first: lists are sorted), or def. */
static int64_t
conv_min(const int64_t *v, size_t n, int64_t def)
{
	return v == NULL || n == 0 ? def : v[0];
}

/* A conv2d sweep: every list given, every value fits, every filter fits. */
static int
conv_check(const struct generate_sweep *s, char **err)
{
	const struct generate_conv *c = &s->conv;

	if (c->nh == 0 || c->nw == 0 || c->nc == 0 || c->nf == 0 ||
	    c->nfilter == 0) {
		util_seterr(err, "a conv2d sweep needs --height, --width, "
		    "--channels, --filters and --filter (a value, a list or "
		    "start:stop:step)");
		return -1;
	}
	if (s->nm || s->nn || s->nk || s->batch_matmul || s->transpose_a ||
	    s->transpose_b) {
		util_seterr(err, "a conv2d sweep takes no problem_m, problem_n, "
		    "problem_k or transpose");
		return -1;
	}
	if (s->dtypes & (1u << GEN_U8I32)) {
		util_seterr(err, "u8i32 is not a conv2d type (linalg's convs "
		    "widen signed)");
		return -1;
	}
	if (conv_min(c->n, c->nn, 1) < 1 || c->h[0] < 1 || c->w[0] < 1 ||
	    c->c[0] < 1 || c->f[0] < 1 || c->filter[0] < 1 ||
	    conv_min(c->stride, c->nstride, 1) < 1 ||
	    conv_min(c->pad, c->npad, 0) < 0) {
		util_seterr(err, "conv2d sizes, filters and strides are at "
		    "least 1, paddings at least 0");
		return -1;
	}
	if (c->h[0] + 2 * conv_min(c->pad, c->npad, 0) <
	    c->filter[c->nfilter - 1] || c->w[0] + 2 * conv_min(c->pad,
	    c->npad, 0) < c->filter[c->nfilter - 1]) {
		util_seterr(err, "a %" PRId64 "x%" PRId64 " filter is larger "
		    "than the smallest padded input (%" PRId64 "x%" PRId64 ")",
		    c->filter[c->nfilter - 1], c->filter[c->nfilter - 1],
		    c->h[0] + 2 * conv_min(c->pad, c->npad, 0),
		    c->w[0] + 2 * conv_min(c->pad, c->npad, 0));
		return -1;
	}
	return 0;
}

int
generate_check(const struct generate_sweep *s, char **err)
{
	uint64_t c;

	if (s->conv2d && conv_check(s, err) != 0)
		return -1;
	if (!s->conv2d && (s->nm == 0 || s->nn == 0 || s->nk == 0)) {
		util_seterr(err, "the sweep needs problem_m, problem_n and "
		    "problem_k (a value, a list or start:stop:step)");
		return -1;
	}
	if (!s->conv2d && s->batch_matmul && s->nbatch == 0) {
		util_seterr(err, "batch_matmul needs a batch (a value, a list or "
		    "start:stop:step)");
		return -1;
	}
	if (!s->batch_matmul && s->nbatch > 0 && !s->conv2d) {
		util_seterr(err, "batch is only for kind batch_matmul");
		return -1;
	}
	if ((s->dtypes >> GEN_DTYPE_COUNT) != 0) {
		util_seterr(err, "unknown dtype in the sweep");
		return -1;
	}
	c = generate_count(s);
	if (c > GENERATE_OPS_MAX && s->conv2d) {
		util_seterr(err, "the sweep has %llu ops, more than %d; narrow a "
		    "range or raise its step", (unsigned long long)c,
		    GENERATE_OPS_MAX);
		return -1;
	}
	if (c > GENERATE_OPS_MAX) {
		util_seterr(err, "the sweep has %llu ops (%zu M x %zu N x %zu K"
		    "%s x %u dtype%s), more than %d; narrow a range or raise its "
		    "step", (unsigned long long)c, s->nm, s->nn, s->nk,
		    s->batch_matmul ? " x batch" : "", gen_ndtypes(s),
		    gen_ndtypes(s) == 1 ? "" : "s", GENERATE_OPS_MAX);
		return -1;
	}
	return 0;
}

/* The profiler's name, with unsigned 8-bit operands spelt u8. */
static char *
gen_name(const struct op_desc *d)
{
	char *name = analysis_profiler_name(d), *p;

	if (d->lhs_unsigned || d->rhs_unsigned) {
		/* Only the type fields hold "_i8": the sizes are digits and x. */
		for (p = strstr(name, "_i8"); p != NULL; p = strstr(p + 1, "_i8"))
			p[1] = 'u';
	}
	return name;
}

/* The value at i of a conv list, or def for an unset one. */
static int64_t
conv_at(const int64_t *v, size_t i, int64_t def)
{
	return v == NULL ? def : v[i];
}

/*
 * One conv of the sweep into g: geometry from the sizes in x (n, h, w, c,
 * f, filter, stride, pad), described as the analysis reads it back.
 */
static void
conv_op(struct generate_op *g, const int64_t x[8], enum generate_dtype t)
{
	struct op_desc *d = &g->d;
	struct op_conv *c = &d->conv;
	int i;

	c->layout = CONV_NHWC_HWCF;
	c->n = x[0], c->h = x[1], c->w = x[2], c->c = x[3], c->f = x[4];
	c->kh = c->kw = x[5];
	c->stride[0] = c->stride[1] = x[6];
	c->dilation[0] = c->dilation[1] = 1;
	for (i = 0; i < 4; i++)
		c->pad[i] = x[7];
	c->oh = (c->h + 2 * x[7] - x[5]) / x[6] + 1;
	c->ow = (c->w + 2 * x[7] - x[5]) / x[6] + 1;
	d->op_name = "linalg.conv_2d_nhwc_hwcf";
	d->batch = 1;
	d->m = c->n * c->oh * c->ow;
	d->n = c->f;
	d->k = c->kh * c->kw * c->c;
	d->lhs = d->rhs = gen_types[t].in;
	d->acc = gen_types[t].acc;
	d->function = "";
	d->loc = "";
	d->tunable = 1;
	d->kind = "matmul";
	g->name = analysis_conv_name(d);
	d->name = g->name;
	g->family = "conv2d";
	g->dtype = t;
}

/* Every conv of a checked conv2d sweep, H fastest, into v; the count. */
static size_t
conv_ops(const struct generate_sweep *s, struct generate_op *v)
{
	const struct generate_conv *c = &s->conv;
	size_t cnt = 0, i[8], len[8];
	int64_t x[8];
	int t, j;

	len[0] = conv_len(c->n, c->nn, 1), len[1] = c->nh, len[2] = c->nw;
	len[3] = c->nc, len[4] = c->nf, len[5] = c->nfilter;
	len[6] = conv_len(c->stride, c->nstride, 1);
	len[7] = conv_len(c->pad, c->npad, 1);
	for (t = 0; t < GEN_DTYPE_COUNT; t++) {
		if (!((s->dtypes ? s->dtypes : 1u << GEN_F32) & (1u << t)))
			continue;
		memset(i, 0, sizeof i);
		do {
			x[0] = conv_at(c->n, i[0], 1), x[1] = c->h[i[1]];
			x[2] = c->w[i[2]], x[3] = c->c[i[3]];
			x[4] = c->f[i[4]], x[5] = c->filter[i[5]];
			x[6] = conv_at(c->stride, i[6], 1);
			x[7] = conv_at(c->pad, i[7], 0);
			v[cnt].d.index = (int)cnt;
			conv_op(&v[cnt++], x, (enum generate_dtype)t);
			/* The next index, H fastest (then W, C, F, ...). */
			for (j = 1; j < 9; j++) {
				int k = j % 8;

				if (++i[k] < len[k])
					break;
				i[k] = 0;
			}
		} while (j < 9);
	}
	return cnt;
}

int
generate_ops(const struct generate_sweep *s, struct generate_op **ops,
    size_t *n, char **err)
{
	struct generate_op *v;
	size_t cnt = 0, ib, ik, in, im, nb;
	int t;

	*ops = NULL;
	*n = 0;
	if (generate_check(s, err) != 0)
		return -1;
	v = xcalloc((size_t)generate_count(s) + 1, sizeof *v);
	if (s->conv2d) {
		*n = conv_ops(s, v);
		*ops = v;
		return 0;
	}
	nb = s->batch_matmul ? s->nbatch : 1;
	for (t = 0; t < GEN_DTYPE_COUNT; t++) {
		if (!((s->dtypes ? s->dtypes : 1u << GEN_F32) & (1u << t)))
			continue;
		for (ib = 0; ib < nb; ib++)
		for (ik = 0; ik < s->nk; ik++)
		for (in = 0; in < s->nn; in++)
		for (im = 0; im < s->nm; im++) {
			struct generate_op *g = &v[cnt++];
			struct op_desc *d = &g->d;

			d->index = (int)(cnt - 1);
			d->kind = s->batch_matmul ? "batch_matmul" : "matmul";
			d->op_name = "linalg.generic";
			d->batch = s->batch_matmul ? s->batch[ib] : 1;
			d->m = s->m[im];
			d->n = s->n[in];
			d->k = s->k[ik];
			d->lhs = d->rhs = gen_types[t].in;
			d->acc = gen_types[t].acc;
			d->lhs_unsigned = d->rhs_unsigned = gen_types[t].uns;
			d->transpose_a = s->transpose_a;
			d->transpose_b = s->transpose_b;
			d->function = "";
			d->loc = "";
			d->tunable = 1;
			g->name = gen_name(d);
			d->name = g->name;
			g->family = d->kind;
			g->dtype = (enum generate_dtype)t;
		}
	}
	*ops = v;
	*n = cnt;
	return 0;
}

void
generate_ops_free(struct generate_op *ops, size_t n)
{
	size_t i;

	for (i = 0; ops != NULL && i < n; i++)
		free(ops[i].name);
	free(ops);
}

int
generate_function(const struct generate_op *g, char **text, char **err)
{
	if (g->d.conv.layout != CONV_NONE)
		return analysis_emit_conv(&g->d, g->name, text, err);
	return analysis_emit_function(&g->d, g->name, text, err);
}

/* "// " before each line of comment. */
static void
gen_comment(FILE *f, const char *comment)
{
	const char *p = comment;

	while (p != NULL && *p != '\0') {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		fprintf(f, "// %.*s\n", (int)len, p);
		p = e ? e + 1 : NULL;
	}
}

int
generate_module(const struct generate_sweep *s, const char *comment,
    char **text, char **err)
{
	struct generate_op *ops = NULL;
	FILE *f = NULL;
	char *buf = NULL, *fn = NULL;
	size_t n = 0, len = 0, i;
	int rc = -1;

	*text = NULL;
	if (generate_ops(s, &ops, &n, err) != 0)
		return -1;
	if ((f = open_memstream(&buf, &len)) == NULL) {
		util_seterr(err, "open_memstream failed");
		goto out;
	}
	gen_comment(f, comment);
	fprintf(f, "module {\n");
	for (i = 0; i < n; i++) {
		if (generate_function(&ops[i], &fn, err) != 0)
			goto out;
		fputs(fn, f);
		free(fn);
		fn = NULL;
	}
	fprintf(f, "}\n");
	rc = util_memstream_close(f, &buf, text, "the sweep's module", err);
	f = NULL;
out:
	if (f != NULL)
		fclose(f);
	free(buf);
	free(fn);
	generate_ops_free(ops, n);
	return rc;
}

/* The guard of a generated program: over nothing but an earlier one. */
static void
generate_guard(struct util_out_guard *g)
{
	memset(g, 0, sizeof *g);
	g->key = "-o";
	g->what = "a generated program";
	g->magic[0] = GENERATE_MLIR_MAGIC;
}

int
generate_check_outputs(const struct generate_sweep *s, const char *dir,
    char **err)
{
	struct generate_op *ops = NULL;
	struct util_out_guard g;
	struct stat sb;
	char *path;
	size_t n = 0, i;
	int rc = 0;

	generate_guard(&g);
	if (generate_ops(s, &ops, &n, err) != 0)
		return -1;
	/* What is there already; folders still to be made hold nothing. */
	for (i = 0; i < n && rc == 0; i++) {
		path = xasprintf("%s/linalg/%s/%s/%s.mlir", dir, ops[i].family,
		    ops[i].name, ops[i].name);
		if ((lstat(path, &sb) == 0 || errno != ENOENT) &&
		    util_out_check(path, &g, err) != 0)
			rc = -1;
		free(path);
	}
	generate_ops_free(ops, n);
	return rc;
}

int
generate_write(const struct generate_sweep *s, const char *dir,
    size_t *nwritten, char **err)
{
	struct generate_op *ops = NULL;
	struct util_out_guard g;
	char **texts = NULL, *sub = NULL, *path = NULL;
	size_t n = 0, i;
	int rc = -1;

	*nwritten = 0;
	generate_guard(&g);
	if (generate_check_outputs(s, dir, err) != 0 ||
	    generate_ops(s, &ops, &n, err) != 0)
		return -1;
	/* Every program is made before anything is written. */
	texts = xcalloc(n + 1, sizeof *texts);
	for (i = 0; i < n; i++) {
		char *fn = NULL;

		if (generate_function(&ops[i], &fn, err) != 0)
			goto out;
		texts[i] = xasprintf(GENERATE_MLIR_MAGIC "%s\n"
		    "module {\n%s}\n", ops[i].name, fn);
		free(fn);
	}
	for (i = 0; i < n; i++) {
		sub = xasprintf("%s/linalg/%s/%s", dir, ops[i].family,
		    ops[i].name);
		if (util_mkdirs(sub, err) != 0)
			goto out;
		path = xasprintf("%s/%s.mlir", sub, ops[i].name);
		if (util_out_write(path, texts[i], strlen(texts[i]), &g, err) != 0)
			goto out;
		free(sub);
		free(path);
		sub = path = NULL;
		(*nwritten)++;
	}
	rc = 0;
out:
	for (i = 0; texts != NULL && i < n; i++)
		free(texts[i]);
	free(texts);
	free(sub);
	free(path);
	generate_ops_free(ops, n);
	return rc;
}
