/*
 * autosched-gpu-stage: compile a fixed-seed sample of the iree backend's
 * CUDA space for one matmul (plus IREE's own config) through the backend's
 * own prepare and stage hooks, and write what autosched-gpu-measure needs
 * to measure them on another host: bench/gpu.sh's payload, one folder an op.
 *
 *   autosched-gpu-stage --arch ARCH --op M,N,K,TYPE[,bB][,ta][,tb] --sample N
 *       [--seed S] --out DIR [--work DIR] [--timeout S]
 *       [--extra TM,TN,TK,VM,VN,P[,D];...]
 *
 * --op's tail, as autosched-gpu-measure reads it: bB a batch matmul of B
 * matrices (linalg.batch_matmul), ta A stored KxM, tb B stored NxK (by
 * linalg's indexing_maps).
 *
 * --extra adds configs by hand (named "pick_…", kept apart from the drawn
 * ones in the tables): tile, warp or thread tile, promote (pack_b), and
 * the shared-memory row padding (pad_smem: 1 if D is left out).
 *
 * DIR gets op.txt (--op's value), kernels.txt (one harness line a kernel,
 * the first IREE's own config), NAME.ptx and NAME.vmfb for each, and
 * manifest.tsv (every config drawn: its name, outcome, compile seconds,
 * why it was refused or failed). Exit 0, or 2 on bad input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "backends/backend.h"
#include "search/space.h"
#include "util/util.h"

struct stage_opts {
	const char	*arch, *out, *work;
	const char	*extra;		/* "TM,TN,TK,VM,VN,P[,D];…": configs added */
	const char	*op;		/* --op's value */
	long		 m, n, k;
	long		 batch;		/* 0: linalg.matmul */
	int		 ta, tb;	/* A stored KxM, B NxK */
	char		 type[16];
	int		 sample;
	uint64_t	 seed;
	double		 timeout;
};

static int
usage(const char *why)
{
	fprintf(stderr, "autosched-gpu-stage: %s\nusage: autosched-gpu-stage "
	    "--arch ARCH --op M,N,K,TYPE[,bB][,ta][,tb] --sample N [--seed S] "
	    "--out DIR "
	    "[--work DIR] [--timeout S] [--extra TM,TN,TK,VM,VN,P[,D];...]\n",
	    why);
	return 2;
}

/* --op's value into o: M,N,K,TYPE, then bB, ta, tb. 0 or -1. */
static int
op_parse(const char *v, struct stage_opts *o)
{
	long *dim[3] = { &o->m, &o->n, &o->k };
	char buf[96], *t, *save, *end;
	int i;

	if (strlen(v) >= sizeof buf)
		return -1;
	strcpy(buf, v);
	o->op = v;
	for (i = 0, t = strtok_r(buf, ",", &save); t != NULL;
	    i++, t = strtok_r(NULL, ",", &save)) {
		if (i < 3) {
			*dim[i] = strtol(t, &end, 10);
			if (*end != '\0' || *dim[i] < 1)
				return -1;
		} else if (i == 3)
			snprintf(o->type, sizeof o->type, "%s", t);
		else if (strcmp(t, "ta") == 0 || strcmp(t, "tb") == 0)
			*(t[1] == 'a' ? &o->ta : &o->tb) = 1;
		else if (t[0] == 'b' && (o->batch = strtol(t + 1, &end, 10)) >= 1 &&
		    *end == '\0')
			continue;
		else
			return -1;
	}
	return i >= 4 ? 0 : -1;
}

static int
opts_parse(int argc, char **argv, struct stage_opts *o)
{
	int i;

	memset(o, 0, sizeof *o);
	o->seed = 1;
	o->timeout = 300;
	for (i = 1; i + 1 < argc; i += 2) {
		const char *a = argv[i], *v = argv[i + 1];

		if (strcmp(a, "--arch") == 0)
			o->arch = v;
		else if (strcmp(a, "--out") == 0)
			o->out = v;
		else if (strcmp(a, "--work") == 0)
			o->work = v;
		else if (strcmp(a, "--extra") == 0)
			o->extra = v;
		else if (strcmp(a, "--sample") == 0)
			o->sample = atoi(v);
		else if (strcmp(a, "--seed") == 0)
			o->seed = strtoull(v, NULL, 10);
		else if (strcmp(a, "--timeout") == 0)
			o->timeout = atof(v);
		else if (strcmp(a, "--op") == 0) {
			if (op_parse(v, o) != 0)
				return usage("--op: expected M,N,K,TYPE[,bB][,ta]"
				    "[,tb]");
		} else
			return usage("unknown option");
	}
	if (i != argc || o->arch == NULL || o->out == NULL || o->m == 0 ||
	    o->sample < 0 || o->sample > 100000)
		return usage("--arch, --op, --sample and --out are required");
	return 0;
}

/* The type of a rows x cols operand (batch first). Caller frees. */
static char *
tensor_type(const struct stage_opts *o, long rows, long cols, const char *t)
{
	if (o->batch > 0)
		return xasprintf("tensor<%ldx%ldx%ldx%s>", o->batch, rows, cols, t);
	return xasprintf("tensor<%ldx%ldx%s>", rows, cols, t);
}

/* linalg's indexing_maps for the transposes ("" for none). Caller frees. */
static char *
op_maps(const struct stage_opts *o)
{
	const char *d = o->batch > 0 ? "d0, d1, d2, d3" : "d0, d1, d2";
	const char *b = o->batch > 0 ? "d0, " : "";
	const char *m = o->batch > 0 ? "d1" : "d0";
	const char *n = o->batch > 0 ? "d2" : "d1";
	const char *k = o->batch > 0 ? "d3" : "d2";

	if (!o->ta && !o->tb)
		return xstrdup("");
	return xasprintf("indexing_maps = [affine_map<(%s) -> (%s%s, %s)>, "
	    "affine_map<(%s) -> (%s%s, %s)>, affine_map<(%s) -> (%s%s, %s)>] ",
	    d, b, o->ta ? k : m, o->ta ? m : k, d, b, o->tb ? n : k,
	    o->tb ? k : n, d, b, m, n);
}

/*
 * The op as a program: fill + linalg.matmul (or batch_matmul, operands
 * transposed as asked) of the harness's TYPE. Caller frees.
 */
static char *
op_program(const struct stage_opts *o)
{
	const char *in, *acc;
	char *ta, *tb, *tc, *maps, *s;

	if (strcmp(o->type, "f16f32") == 0)
		in = "f16", acc = "f32";
	else if (strcmp(o->type, "f16") == 0)
		in = "f16", acc = "f16";
	else if (strcmp(o->type, "bf16f32") == 0)
		in = "bf16", acc = "f32";
	else if (strcmp(o->type, "f32") == 0)
		in = "f32", acc = "f32";
	else
		return NULL;
	ta = o->ta ? tensor_type(o, o->k, o->m, in) :
	    tensor_type(o, o->m, o->k, in);
	tb = o->tb ? tensor_type(o, o->n, o->k, in) :
	    tensor_type(o, o->k, o->n, in);
	tc = tensor_type(o, o->m, o->n, acc);
	maps = op_maps(o);
	s = xasprintf("func.func @mm(%%a: %s, %%b: %s) -> %s {\n  %%z = "
	    "arith.constant 0.0 : %s\n  %%e = tensor.empty() : %s\n  %%i = "
	    "linalg.fill ins(%%z : %s) outs(%%e : %s) -> %s\n  %%r = linalg.%s "
	    "%sins(%%a, %%b : %s, %s) outs(%%i : %s) -> %s\n  return %%r : "
	    "%s\n}\n", ta, tb, tc, acc, tc, acc, tc, tc, o->batch > 0 ?
	    "batch_matmul" : "matmul", maps, ta, tb, tc, tc, tc);
	free(ta);
	free(tb);
	free(tc);
	free(maps);
	return s;
}

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Short kernel name of c ("iree_default" for IREE's own choice). */
static void
cand_name(const struct config *c, int mma, char *buf, size_t len)
{
	const int64_t *v = c->v;

	if (v[KNOB_TILE_M] == 0) {
		snprintf(buf, len, "iree_default");
		return;
	}
	snprintf(buf, len, "t%lldx%lldx%lld_%s%lldx%lld%s%s",
	    (long long)v[KNOB_TILE_M], (long long)v[KNOB_TILE_N],
	    (long long)v[KNOB_TILE_K], mma ? "w" : "th",
	    (long long)v[KNOB_VECTOR_M], (long long)v[KNOB_VECTOR_N],
	    mma && v[KNOB_PACK_B] == 0 ? "_nopromote" : "",
	    mma && v[KNOB_PAD_SMEM] == 0 ? "_nopad" : "");
}

static void stage_one(const struct backend_ops *, struct backend *,
    const struct config *, int, const char *, FILE *, FILE *, const char *);

/* The --extra configs of s that are points of sp, staged. */
static void
stage_extra(const struct backend_ops *ops, struct backend *be,
    const struct space *sp, const char *s, int mma, const char *dir,
    FILE *man, FILE *ks)
{
	long long v[7];
	struct config c;
	int n;

	while (s != NULL && *s != '\0') {
		v[6] = 1;
		n = sscanf(s, "%lld,%lld,%lld,%lld,%lld,%lld,%lld", &v[0], &v[1],
		    &v[2], &v[3], &v[4], &v[5], &v[6]);
		if (n == 6 || n == 7) {
			memset(&c, 0, sizeof c);
			c.v[KNOB_TILE_M] = v[0], c.v[KNOB_TILE_N] = v[1];
			c.v[KNOB_TILE_K] = v[2], c.v[KNOB_VECTOR_M] = v[3];
			c.v[KNOB_VECTOR_N] = v[4];
			c.v[KNOB_PACK_B] = mma ? v[5] : 0;
			c.v[KNOB_PAD_SMEM] = mma ? v[6] : 0;
			if (space_index(sp, &c) >= 0)
				stage_one(ops, be, &c, mma, dir, man, ks, "pick_");
			else
				fprintf(man, "pick %.*s\tnot_in_space\t0\t\n",
				    (int)strcspn(s, ";"), s);
		}
		s = strchr(s, ';');
		s = s != NULL ? s + 1 : NULL;
	}
}

/* Compile and stage c; one manifest row and (if it compiled) one kernel line. */
static void
stage_one(const struct backend_ops *ops, struct backend *be,
    const struct config *c, int mma, const char *dir, FILE *man, FILE *ks,
    const char *prefix)
{
	struct trial_result res;
	char name[128], *line = NULL, *err = NULL;
	void *art = NULL;

	memset(&res, 0, sizeof res);
	snprintf(name, sizeof name, "%s", prefix);
	cand_name(c, mma, name + strlen(name), sizeof name - strlen(name));
	if (ops->prepare(be, c, &res, &art, &err) != 0) {
		fprintf(man, "%s\terror\t0\t%s\n", name, err ? err : "?");
		fprintf(stderr, "autosched-gpu-stage: %s: %s\n", name, err);
	} else if (art == NULL) {
		fprintf(man, "%s\t%s\t%.2f\t%s\n", name,
		    trial_status_name(res.status), res.compile_s,
		    res.error ? res.error : "");
	} else if (ops->stage(be, art, dir, name, &line, &err) != 0) {
		fprintf(man, "%s\terror\t%.2f\tstage: %s\n", name, res.compile_s,
		    err);
	} else {
		fprintf(man, "%s\tcompiled\t%.2f\t\n", name, res.compile_s);
		fprintf(ks, "%s\n", line);
	}
	fflush(man);
	fflush(ks);
	ops->release(art);
	trial_result_clear(&res);
	free(line);
	free(err);
}

/* The op's first tunable matmul, its backend open. 0, or 2 (said why). */
static int
stage_open(const struct stage_opts *o, const struct backend_ops *ops,
    struct analysis **an, const struct op_desc **op, struct backend **be)
{
	static struct backend_params p;
	char *text = op_program(o), *d = NULL, *err = NULL;
	size_t n, i;

	if (text == NULL)
		return usage("TYPE: expected f16f32, f16, bf16f32 or f32");
	if (analysis_parse("op", text, strlen(text), an, &err) != 0)
		goto fail;
	n = analysis_count(*an);
	for (i = 0, *op = NULL; i < n && *op == NULL; i++)
		if (analysis_op(*an, i)->tunable)
			*op = analysis_op(*an, i);
	if (*op == NULL || analysis_emit_dispatch(*op, &d, &err) != 0)
		goto fail;
	memset(&p, 0, sizeof p);
	p.work_dir = o->work != NULL ? o->work : o->out;
	p.gpu_arch = o->arch;
	p.compile_timeout = o->timeout;
	p.compile_nice = 5;
	if (ops->open(&p, *op, d, be, &err) != 0)
		goto fail;
	free(text);
	free(d);
	return 0;
fail:
	fprintf(stderr, "autosched-gpu-stage: %s\n", err ? err : "no matmul");
	free(text);
	free(d);
	free(err);
	return 2;
}

/* A file of the output folder, written whole by the project's writer. */
static int
stage_write(const char *dir, const char *name, const char *buf, size_t len)
{
	char *p = util_path_join(dir, name), *err = NULL;
	int rc = util_write_file(p, buf, len, &err);

	if (rc != 0)
		fprintf(stderr, "autosched-gpu-stage: %s\n", err);
	free(err);
	free(p);
	return rc;
}

int
main(int argc, char **argv)
{
	const struct backend_ops *ops = &iree_cuda_backend;
	struct stage_opts o;
	struct space_rules rules;
	struct analysis *an = NULL;
	const struct op_desc *op;
	struct backend *be;
	struct space *sp;
	struct config c;
	char *err = NULL, *p;
	uint64_t count, s, *picked;
	FILE *man, *ks;
	char *mbuf = NULL, *kbuf = NULL;
	size_t mlen = 0, klen = 0;
	int i, j, rc, mma, n;

	if ((rc = opts_parse(argc, argv, &o)) != 0)
		return rc;
	if (util_mkdirs(o.out, &err) != 0 || (o.work != NULL &&
	    util_mkdirs(o.work, &err) != 0))
		return fprintf(stderr, "autosched-gpu-stage: %s\n", err), 2;
	if ((rc = stage_open(&o, ops, &an, &op, &be)) != 0)
		return rc;
	ops->rules(op, &rules);
	if (space_new(op, NULL, 0, &rules, &sp, &err) != 0)
		return fprintf(stderr, "autosched-gpu-stage: %s\n", err), 2;
	count = space_count(sp);
	mma = strcmp(o.type, "f32") != 0;
	p = xasprintf("%s\n", o.op);
	if (stage_write(o.out, "op.txt", p, strlen(p)) != 0)
		return 2;
	free(p);
	if ((man = open_memstream(&mbuf, &mlen)) == NULL ||
	    (ks = open_memstream(&kbuf, &klen)) == NULL)
		return fprintf(stderr, "autosched-gpu-stage: out of memory\n"), 2;
	fprintf(man, "# %s %s: %llu configs in the space, %d drawn (seed "
	    "%llu)\n", op->name, o.arch, (unsigned long long)count, o.sample,
	    (unsigned long long)o.seed);
	memset(&c, 0, sizeof c);
	ops->baseline(op, &c);
	stage_one(ops, be, &c, mma, o.out, man, ks, "");
	stage_extra(ops, be, sp, o.extra, mma, o.out, man, ks);
	n = (uint64_t)o.sample < count ? o.sample : (int)count;
	picked = calloc((size_t)n + 1, sizeof *picked);
	s = o.seed * 2654435761u + 1;
	for (i = 0; i < n; i++) {
		do {
			picked[i] = (uint64_t)o.sample < count ?
			    rnd(&s) % count : (uint64_t)i;
			for (j = 0; j < i && picked[j] != picked[i]; j++)
				;
		} while (j < i);
		space_get(sp, picked[i], &c);
		stage_one(ops, be, &c, mma, o.out, man, ks, "");
	}
	fclose(man);
	fclose(ks);
	if (stage_write(o.out, "manifest.tsv", mbuf, mlen) != 0 ||
	    stage_write(o.out, "kernels.txt", kbuf, klen) != 0)
		return 2;
	free(mbuf);
	free(kbuf);
	free(picked);
	space_free(sp);
	ops->close(be);
	analysis_free(an);
	return 0;
}
