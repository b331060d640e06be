/*
 * iree backend compilation: the candidate's compilation_info set on the
 * dispatch's contraction, iree-compile run twice (a module that runs the
 * dispatch once, for the check, and one that repeats it, for timing), the
 * modules cached in work_dir under a hash of everything that shapes them.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend_int.h"
#include "backends/iree/iree_int.h"
#include "util/util.h"

#define DUMP_MAX	((size_t)16 << 20)

/*
 * The flags of every compile: the host CPU, IREE's llvm-cpu backend, and
 * f64 kept f64 (IREE demotes it to f32 by default: the op as written).
 */
static const char *const target_flags[] = {
	"--iree-hal-target-device=local",
	"--iree-hal-local-target-device-backends=llvm-cpu",
	"--iree-llvmcpu-target-cpu=host",
	"--iree-input-demote-f64-to-f32=false",
	NULL,
};

static const char *const entry_files[] = {
	"dispatch.mlir", "verify.vmfb", "bench.vmfb", "config.txt", NULL,
};

int
iree_repeat(const struct op_desc *op)
{
	double work = 2.0 * (double)op->batch * (double)op->m * (double)op->n *
	    (double)op->k;
	double r = work > 0 ? 1e8 / work : 64;

	return r >= 64 ? 64 : r <= 1 ? 1 : (int)r;
}

/* "1, " when the op has a batch loop (tiled by one), else "". */
static const char *
batch_one(const struct op_desc *op)
{
	return strcmp(op->kind, "batch_matmul") == 0 ? "1, " : "";
}

static const char *
batch_zero(const struct op_desc *op)
{
	return strcmp(op->kind, "batch_matmul") == 0 ? "0, " : "";
}

static long long
clamp(int64_t t, int64_t d)
{
	return (long long)(t < d ? t : d);
}

char *
iree_attr(const struct op_desc *op, const struct config *c,
    enum iree_fault fault)
{
	const int64_t *v = c->v;
	long long tm, tn, tk;

	if (v[KNOB_TILE_M] == 0 && v[KNOB_TILE_N] == 0 &&
	    v[KNOB_TILE_K] == 0 && v[KNOB_VECTOR_M] == 0 &&
	    v[KNOB_VECTOR_N] == 0 && v[KNOB_VECTOR_K] == 0) {
		/* IREE's own choice; a staged failure needs an attribute. */
		if (fault != IREE_FAULT_COMPILE_FAIL)
			return NULL;
		return xstrdup("#iree_codegen.compilation_info<lowering_config "
		    "= #iree_cpu.lowering_config<distribution = [0, 0, 0]>, "
		    "translation_info = #iree_codegen.translation_info<pipeline "
		    "= #iree_cpu.pipeline<AutoschedTestNoSuchPipeline>>>");
	}
	tm = clamp(v[KNOB_TILE_M], op->m);
	tn = clamp(v[KNOB_TILE_N], op->n);
	tk = clamp(v[KNOB_TILE_K], op->k);
	/*
	 * Loops in the op's order (batch,) m, n, k. The cache tiles of M and N
	 * are the workgroup's (distribution) and its cache level, K's the
	 * cache reduction level; the register tile is the vector levels.
	 */
	return xasprintf("#iree_codegen.compilation_info<lowering_config = "
	    "#iree_cpu.lowering_config<distribution = [%s%lld, %lld, 0], "
	    "cache_parallel = [%s%lld, %lld, 0], "
	    "cache_reduction = [%s0, 0, %lld], "
	    "vector_common_parallel = [%s%lld, %lld, 0], "
	    "vector_reduction = [%s0, 0, %lld]>, "
	    "translation_info = #iree_codegen.translation_info<pipeline = "
	    "#iree_cpu.pipeline<%s>, {enable_loop_peeling}>>",
	    batch_one(op), tm, tn, batch_one(op), tm, tn, batch_zero(op), tk,
	    batch_one(op), clamp(v[KNOB_VECTOR_M], tm),
	    clamp(v[KNOB_VECTOR_N], tn), batch_zero(op),
	    clamp(v[KNOB_VECTOR_K], tk),
	    fault == IREE_FAULT_COMPILE_FAIL ? "AutoschedTestNoSuchPipeline" :
	    "DoubleTilingExpert");
}

char *
iree_dispatch_with(const char *dispatch, const char *attr)
{
	const char *it, *end;

	/* analysis_emit_dispatch prints the attribute dict of one generic. */
	if (attr == NULL || (it = strstr(dispatch, "iterator_types = [")) ==
	    NULL || (end = strstr(it, "]}")) == NULL)
		return xstrdup(dispatch);
	end++;
	return xasprintf("%.*s, compilation_info = %s%s", (int)(end - dispatch),
	    dispatch, attr, end);
}

/*
 * The attribute "KEY<...>" in text, up to its end (its angle brackets
 * balanced); NULL if text has none. Caller frees.
 */
static char *
config_attr(const char *text, const char *key)
{
	const char *s = strstr(text, key);
	size_t n;
	int depth = 0;

	if (s == NULL)
		return NULL;
	for (n = strlen(key); s[n] != '\0'; n++) {
		if (s[n] == '<')
			depth++;
		else if (s[n] == '>' && --depth == 0) {
			n++;
			break;
		}
	}
	return xstrndup(s, n);
}

char *
iree_config_read(const char *text)
{
	char *l, *t, *out;

	if ((l = config_attr(text, "lowering_config = ")) == NULL)
		return NULL;
	t = config_attr(text, "translation_info = ");
	out = xasprintf("%s%s%s", l, t ? ", " : "", t ? t : "");
	free(l);
	free(t);
	return out;
}

void
iree_art_free(struct iree_art *a)
{
	free(a->dir);
	free(a->verify);
	free(a->bench);
	free(a->chosen);
	memset(a, 0, sizeof *a);
}

void
iree_scratch_remove(const char *dir, const char *const files[],
    const char *dump_name)
{
	char *p, *dump;
	DIR *d;
	struct dirent *de;
	int i;

	for (i = 0; files[i] != NULL; i++) {
		p = util_path_join(dir, files[i]);
		unlink(p);
		free(p);
	}
	dump = util_path_join(dir, dump_name);
	if ((d = opendir(dump)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			p = util_path_join(dump, de->d_name);
			unlink(p);
			free(p);
		}
		closedir(d);
	}
	rmdir(dump);
	free(dump);
	rmdir(dir);
}

/* Remove a scratch entry (only the files compile writes). */
static void
scratch_remove(const char *dir)
{
	iree_scratch_remove(dir, entry_files, "configs");
}

/* The text of the one file iree-compile dumped into dir, or NULL. */
static char *
dump_read(const char *dir)
{
	struct dirent *de;
	char *p, *text = NULL;
	size_t len;
	DIR *d;

	if ((d = opendir(dir)) == NULL)
		return NULL;
	while (text == NULL && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		p = util_path_join(dir, de->d_name);
		if (util_read_file(p, DUMP_MAX, &text, &len, NULL) != 0)
			text = NULL;
		free(p);
	}
	closedir(d);
	return text;
}

/* Whether the cache holds entry dir of a, trusted (backend_cache_lookup). */
static int
cache_lookup(struct backend *be, const char *dir, const struct iree_art *a,
    struct trial_result *res)
{
	const char *files[] = { a->verify, a->bench, NULL };

	return backend_cache_lookup("iree", be->work_dir, dir, files, dir, res);
}

/* Move the finished scratch entry tmp into place (backend_cache_commit). */
static int
cache_commit(struct backend *be, const char *tmp, const char *dir,
    const struct iree_art *a, struct trial_result *res)
{
	const char *files[] = { a->verify, a->bench, NULL };

	return backend_cache_commit("iree", be->work_dir, tmp, dir, files, dir,
	    scratch_remove, res);
}

/* The entry's paths under dir. */
static void
art_paths(struct iree_art *a, const char *dir)
{
	a->verify = util_path_join(dir, "verify.vmfb");
	a->bench = util_path_join(dir, "bench.vmfb");
}

/* Hash everything that shapes the modules of text into the hex key artifact. */
static void
compile_key(const struct backend *be, const char *text, int r, char *artifact)
{
	char *key;

	key = xasprintf("%s\n--\n%s %s %s %s\n--\nrepeat %d\n--\n%s\n", text,
	    target_flags[0], target_flags[1], target_flags[2], target_flags[3],
	    r, be->toolchain);
	util_hash_hex(key, strlen(key), artifact);
	free(key);
}

/* The config IREE chose, kept in cache entry dir, into art->chosen. */
static void
chosen_cached(const char *dir, struct iree_art *art)
{
	char *cfgf = util_path_join(dir, "config.txt"), *chosen = NULL;
	size_t len;

	if (util_read_file(cfgf, DUMP_MAX, &chosen, &len, NULL) == 0 &&
	    *chosen != '\0') {
		art->chosen = chosen;
		chosen = NULL;
	}
	free(cfgf);
	free(chosen);
}

/*
 * Compile dispatch file in into t's two modules: the check's, dumping
 * IREE's configurations into dump, and the timing one, repeating the
 * dispatch r times; then check both came out. -1 on failure: res says
 * why, or *err (caller frees) when our own files failed.
 */
static int
compile_modules(struct backend *be, const char *in, const char *dump, int r,
    const struct iree_art *t, double deadline, struct trial_result *res,
    char **err)
{
	char *dump_arg, *rep_arg, *p;
	int i, rc = -1;

	dump_arg = xasprintf("--iree-hal-dump-executable-configurations-to=%s",
	    dump);
	rep_arg = xasprintf("--iree-hal-benchmark-dispatch-repeat-count=%d", r);
	{
		char *const a1[] = { be->tools.compile, (char *)in,
		    (char *)target_flags[0], (char *)target_flags[1],
		    (char *)target_flags[2], (char *)target_flags[3], dump_arg,
		    "-o", t->verify, NULL };
		char *const a2[] = { be->tools.compile, (char *)in,
		    (char *)target_flags[0], (char *)target_flags[1],
		    (char *)target_flags[2], (char *)target_flags[3], rep_arg,
		    "-o", t->bench, NULL };

		if (backend_compile_step(&be->params, "iree-compile", a1,
		    deadline, res) != 0 ||
		    backend_compile_step(&be->params, "iree-compile (timing "
		    "module)", a2, deadline, res) != 0)
			goto out;
	}
	for (i = 0; i < 2; i++) {
		p = i == 0 ? t->verify : t->bench;
		if (access(p, R_OK) != 0) {
			res->status = TRIAL_COMPILE_FAILED;
			util_seterr(&res->error, "iree-compile exited 0 but %s "
			    "is missing", p);
			goto out;
		}
		if (chmod(p, 0644) != 0) {
			*err = xasprintf("%s: %s", p, strerror(errno));
			goto out;
		}
	}
	rc = 0;
out:
	free(dump_arg);
	free(rep_arg);
	return rc;
}

/*
 * What IREE compiled: the config it chose (dumped into dump), or ours as
 * it read it, kept in cfgf and art->chosen; with attr set, it must be
 * ours. -1 on failure: res says why, or *err (caller frees).
 */
static int
chosen_check(const char *attr, const char *dump, const char *cfgf,
    struct iree_art *art, struct trial_result *res, char **err)
{
	char *dumped, *chosen = NULL;
	int rc = -1;

	if ((dumped = dump_read(dump)) != NULL &&
	    (chosen = iree_config_read(dumped)) != NULL) {
		if (util_write_file(cfgf, chosen, strlen(chosen), err) != 0)
			goto out;
		art->chosen = chosen;
		chosen = NULL;
	}
	if (attr != NULL && (art->chosen == NULL ||
	    strstr(art->chosen, "vector_common_parallel") == NULL)) {
		res->status = TRIAL_COMPILE_FAILED;
		util_seterr(&res->error, "iree-compile did not apply the "
		    "lowering_config (it compiled: %s)", art->chosen ?
		    art->chosen : "no configuration dumped");
		goto out;
	}
	rc = 0;
out:
	free(dumped);
	free(chosen);
	return rc;
}

int
iree_compile(struct backend *be, const char *attr, struct iree_art *art,
    struct trial_result *res)
{
	char *text = iree_dispatch_with(be->dispatch, attr), *dir = NULL;
	char *tmp = NULL, *in = NULL, *dump = NULL, *cfgf = NULL;
	char *err = NULL;	/* set only when our own files fail: the disk */
	struct iree_art t;
	double t0 = util_now(), deadline;
	int cached, rc = -1, r = iree_repeat(&be->op);

	memset(art, 0, sizeof *art);
	memset(&t, 0, sizeof t);
	deadline = t0 + (be->params.compile_timeout > 0 ?
	    be->params.compile_timeout : 1e9);
	compile_key(be, text, r, res->artifact);
	dir = util_path_join(be->work_dir, res->artifact);
	art_paths(art, dir);
	art->dir = xstrdup(dir);
	if ((cached = cache_lookup(be, dir, art, res)) < 0)
		goto fail;
	if (cached) {
		chosen_cached(dir, art);
		res->compile_s = 0;
		rc = 0;
		goto out;
	}

	tmp = backend_side_name(dir, "tmp");
	if (backend_cache_scratch(tmp, scratch_remove, &err) != 0)
		goto fail;
	art_paths(&t, tmp);
	in = util_path_join(tmp, "dispatch.mlir");
	dump = util_path_join(tmp, "configs");
	cfgf = util_path_join(tmp, "config.txt");
	if (util_write_file(in, text, strlen(text), &err) != 0 ||
	    compile_modules(be, in, dump, r, &t, deadline, res, &err) != 0 ||
	    chosen_check(attr, dump, cfgf, art, res, &err) != 0 ||
	    cache_commit(be, tmp, dir, art, res) != 0)
		goto fail;
	res->compile_s = util_now() - t0;
	rc = 0;
	goto out;

fail:
	backend_compile_failed(res, err, t0, tmp, scratch_remove);
	iree_art_free(art);
out:
	iree_art_free(&t);
	free(text);
	free(dir);
	free(tmp);
	free(in);
	free(dump);
	free(cfgf);
	free(err);
	return rc;
}
