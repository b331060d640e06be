/*
 * The CUDA target's compile: iree-compile to IREE's executable targets
 * (where the launch shape is written), then on to the module (the PTX
 * dumped beside it), then ptxas -v on the PTX for the registers and
 * spills IREE never checks. Cached under work_dir by a hash of the input
 * and the tools, like the llvm-cpu candidates.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend_int.h"
#include "backends/iree/cuda_int.h"
#include "backends/iree/iree_int.h"
#include "util/util.h"

#define TEXT_MAX	((size_t)64 << 20)

int
cuda_repeat(const struct op_desc *op)
{
	double work = 2.0 * (double)cuda_batch(op) * (double)op->m *
	    (double)op->n * (double)op->k;
	double r = work > 0 ? 4e11 / work : 64;

	return r >= 64 ? 64 : r <= 1 ? 1 : (int)(r + 0.5);
}

/* The value of "%name = arith.constant V : index" in text before end. */
static long
const_value(const char *text, const char *end, const char *name)
{
	char pat[96];
	const char *p, *last = NULL;
	size_t n;

	n = (size_t)snprintf(pat, sizeof pat, "%s = arith.constant ", name);
	for (p = text; (p = strstr(p, pat)) != NULL && p < end; p += n)
		last = p;
	return last != NULL ? strtol(last + n, NULL, 10) : -1;
}

int
cuda_launch_read(const char *t, struct cuda_launch *l, char **err)
{
	const char *ex = strstr(t, "hal.executable.export"), *ret, *ws, *lm;
	char names[3][64];
	long v;
	int i;

	if (ex == NULL || (ret = strstr(ex, "hal.return ")) == NULL ||
	    sscanf(ret, "hal.return %63[^,], %63[^,], %63[^ :]", names[0],
	    names[1], names[2]) != 3 || (ws = strstr(ret,
	    "workgroup_size = [")) == NULL ||
	    sscanf(ws, "workgroup_size = [%u : index, %u : index, %u : index]",
	    &l->block[0], &l->block[1], &l->block[2]) != 3) {
		util_seterr(err, "no launch (hal.executable.export, hal.return, "
		    "workgroup_size) in IREE's executable targets");
		return -1;
	}
	for (i = 0; i < 3; i++) {
		if ((v = const_value(ex, ret, names[i])) < 1 || v > 1L << 31) {
			util_seterr(err, "workgroup count %s is not a constant "
			    "(a dynamic dispatch)", names[i]);
			return -1;
		}
		l->grid[i] = (unsigned)v;
	}
	lm = strstr(ret, "workgroup_local_memory = ");
	l->smem = lm != NULL && lm < strstr(ret, "builtin.module") ?
	    (unsigned)strtoul(lm + 25, NULL, 10) : 0;
	return 0;
}

int
cuda_ptx_entry(const char *ptx, struct cuda_launch *l)
{
	const char *e = strstr(ptx, ".visible .entry ");

	return e == NULL || sscanf(e, ".visible .entry %255[A-Za-z0-9_$]",
	    l->entry) != 1 ? -1 : 0;
}

int
cuda_ptxas_read(const char *text, struct cuda_launch *l)
{
	const char *u = strstr(text, "Used "), *s = strstr(text,
	    "bytes spill stores");
	long st = 0, ld = 0;

	if (u == NULL || sscanf(u, "Used %d registers", &l->regs) != 1)
		return -1;
	/* "N bytes stack frame, S bytes spill stores, L bytes spill loads" */
	if (s != NULL) {
		while (s > text && s[-1] == ' ')
			s--;
		while (s > text && s[-1] >= '0' && s[-1] <= '9')
			s--;
		if (sscanf(s, "%ld bytes spill stores, %ld bytes spill loads",
		    &st, &ld) != 2)
			return -1;
	}
	l->spill_bytes = st + ld;
	return 0;
}

static const char *const cuda_files[] = {
	"module.mlir", "targets.mlir", "kernel.ptx", "bench.vmfb", "launch.txt",
	"ptxas.txt", "kernel.cubin", NULL,
};

/* Remove a scratch entry: the files above and the dump folder. */
static void
cuda_scratch_remove(const char *dir)
{
	iree_scratch_remove(dir, cuda_files, "dump");
}

/* The one .ptx file IREE dumped into dir, moved to to. 0 or -1. */
static int
ptx_take(const char *dir, const char *to)
{
	struct dirent *de;
	char *p;
	size_t n;
	int rc = -1;
	DIR *d;

	if ((d = opendir(dir)) == NULL)
		return -1;
	while (rc != 0 && (de = readdir(d)) != NULL) {
		n = strlen(de->d_name);
		if (n < 5 || strcmp(de->d_name + n - 4, ".ptx") != 0)
			continue;
		p = util_path_join(dir, de->d_name);
		rc = rename(p, to);
		free(p);
	}
	closedir(d);
	return rc;
}

/* ptxas -v of the PTX into its text (under the compile deadline). */
static int
ptxas_run(struct backend *be, const char *ptx, const char *cubin,
    double deadline, char **text, struct trial_result *res)
{
	char arch[32], *err = NULL;
	char *const argv[] = { be->ptxas, arch, "-v", (char *)ptx, "-o",
	    (char *)cubin, NULL };
	struct proc_opts o;
	struct proc_result pr;

	memset(&o, 0, sizeof o);
	memset(&pr, 0, sizeof pr);
	snprintf(arch, sizeof arch, "-arch=%s", be->arch->name);
	o.timeout = deadline - util_now() > 1 ? deadline - util_now() : 1;
	o.nice = be->params.compile_nice;
	if (proc_run(argv, &o, &pr, &err) != 0 || pr.exec_failed) {
		res->status = TRIAL_COMPILE_FAILED;
		res->env_failure = 1;
		util_seterr(&res->error, "ptxas (%s): %s", be->ptxas, err ? err :
		    "cannot run it");
		free(err);
		proc_result_free(&pr);
		return -1;
	}
	if (pr.timed_out || !pr.exited || pr.status != 0) {
		char *x = backend_excerpt(pr.err);

		res->status = pr.timed_out ? TRIAL_COMPILE_TIMEOUT :
		    TRIAL_COMPILE_FAILED;
		util_seterr(&res->error, "ptxas -v: %s", pr.timed_out ?
		    "killed (compile timeout)" : x);
		free(x);
		proc_result_free(&pr);
		return -1;
	}
	*text = pr.err;
	pr.err = NULL;
	proc_result_free(&pr);
	return 0;
}

/* The launch as launch.txt keeps it. */
static char *
launch_text(const struct cuda_launch *l)
{
	return xasprintf("%s %u %u %u %u %u %u %u %d %ld\n", l->entry,
	    l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
	    l->block[2], l->smem, l->regs, l->spill_bytes);
}

static int
launch_parse(const char *s, struct cuda_launch *l)
{
	return sscanf(s, "%255s %u %u %u %u %u %u %u %d %ld", l->entry,
	    &l->grid[0], &l->grid[1], &l->grid[2], &l->block[0], &l->block[1],
	    &l->block[2], &l->smem, &l->regs, &l->spill_bytes) == 10 ? 0 : -1;
}

void
cuda_art_free(struct cuda_art *a)
{
	free(a->dir);
	free(a->ptx);
	free(a->vmfb);
	memset(a, 0, sizeof *a);
}

static void
art_paths(struct cuda_art *a, const char *dir)
{
	a->dir = xstrdup(dir);
	a->ptx = util_path_join(dir, "kernel.ptx");
	a->vmfb = util_path_join(dir, "bench.vmfb");
}

/* The two iree-compile steps in tmp, then the PTX's entry and ptxas -v. */
static int
compile_steps(struct backend *be, const char *tmp, const char *text,
    double deadline, struct cuda_launch *l, struct trial_result *res,
    char **err)
{
	char *in = util_path_join(tmp, "module.mlir");
	char *tg = util_path_join(tmp, "targets.mlir");
	char *vm = util_path_join(tmp, "bench.vmfb");
	char *dump = util_path_join(tmp, "dump");
	char *ptx = util_path_join(tmp, "kernel.ptx");
	char *cubin = util_path_join(tmp, "kernel.cubin");
	char *dump_arg = xasprintf("--iree-hal-dump-executable-binaries-to=%s",
	    dump), *rep = xasprintf("--iree-hal-benchmark-dispatch-repeat-"
	    "count=%d", cuda_repeat(&be->op)), *tgt = xasprintf(
	    "--iree-cuda-target=%s", be->arch->name), *t = NULL, *pt = NULL;
	char *by = be->arch->by_attr ? NULL : "--iree-hal-target-backends=cuda";
	char *const a1[] = { be->tools.compile, in,
	    "--compile-to=executable-targets", "-o", tg, by, tgt, NULL };
	char *const a2[] = { be->tools.compile, tg,
	    "--compile-from=executable-targets", rep, dump_arg, "-o", vm, by,
	    tgt, NULL };
	size_t len;
	int rc = -1;

	if (util_write_file(in, text, strlen(text), err) != 0)
		goto out;
	if (backend_compile_step(&be->params, "iree-compile (to executable "
	    "targets)", a1, deadline, res) != 0 ||
	    util_read_file(tg, TEXT_MAX, &t, &len, err) != 0)
		goto out;
	if (cuda_launch_read(t, l, &res->error) != 0) {
		res->status = TRIAL_COMPILE_FAILED;
		goto out;
	}
	if (backend_compile_step(&be->params, "iree-compile (to the module)",
	    a2, deadline, res) != 0)
		goto out;
	if (ptx_take(dump, ptx) != 0 || util_read_file(ptx, TEXT_MAX, &pt,
	    &len, NULL) != 0 || cuda_ptx_entry(pt, l) != 0) {
		res->status = TRIAL_COMPILE_FAILED;
		util_seterr(&res->error, "iree-compile dumped no PTX with an "
		    "entry into %s", dump);
		goto out;
	}
	free(t);
	t = NULL;
	if (ptxas_run(be, ptx, cubin, deadline, &t, res) != 0)
		goto out;
	if (cuda_ptxas_read(t, l) != 0) {
		res->status = TRIAL_COMPILE_FAILED;
		util_seterr(&res->error, "ptxas -v said no register count");
		goto out;
	}
	rc = 0;
out:
	free(in), free(tg), free(vm), free(dump), free(ptx), free(cubin);
	free(dump_arg), free(rep), free(tgt), free(t), free(pt);
	return rc;
}

/* What ptxas and the launch read back say against the knobs; NULL if fine. */
static char *
after_rules(const struct op_desc *op, const struct config *c,
    const struct cuda_launch *l)
{
	unsigned t = l->block[0] * l->block[1] * l->block[2];
	int64_t wg;

	if (l->spill_bytes > 0)
		return xasprintf("rule spills: ptxas -v: %ld bytes of register "
		    "spills (%d registers)", l->spill_bytes, l->regs);
	if ((long)l->regs * t > 65536)
		return xasprintf("rule registers: %d registers x %u threads > "
		    "65536 a block (the launch would fail)", l->regs, t);
	if (c->v[KNOB_TILE_M] == 0)
		return NULL;
	if ((int64_t)t != cuda_block_threads(op, c))
		return xasprintf("launch read back: %u threads a block, the knobs"
		    " say %lld", t, (long long)cuda_block_threads(op, c));
	/*
	 * A tile that does not divide its dimension is padded: one more. A
	 * batch matmul's workgroups take one matrix each.
	 */
	wg = cuda_batch(op) *
	    ((op->m + c->v[KNOB_TILE_M] - 1) / c->v[KNOB_TILE_M]) *
	    ((op->n + c->v[KNOB_TILE_N] - 1) / c->v[KNOB_TILE_N]);
	if ((int64_t)l->grid[0] * l->grid[1] * l->grid[2] != wg)
		return xasprintf("launch read back: %u workgroups, the tiles say "
		    "%lld", l->grid[0] * l->grid[1] * l->grid[2], (long long)wg);
	return NULL;
}

int
cuda_compile(struct backend *be, const struct config *cfg,
    struct cuda_art *art, struct trial_result *res)
{
	char *text = cuda_module(&be->op, cfg, be->arch), *key, *dir, *tmp = NULL;
	char *lt = NULL, *lf = NULL, *err = NULL, *why;
	const char *files[4];
	double t0 = util_now(), deadline = t0 + (be->params.compile_timeout > 0 ?
	    be->params.compile_timeout : 1e9);
	size_t len;
	int cached, rc = -1;

	memset(art, 0, sizeof *art);
	key = xasprintf("%s\n--\n%s repeat %d\n--\n%s\n--\n%s\n", text,
	    be->arch->name, cuda_repeat(&be->op), be->toolchain, be->ptxas);
	util_hash_hex(key, strlen(key), res->artifact);
	dir = util_path_join(be->work_dir, res->artifact);
	art_paths(art, dir);
	lf = util_path_join(dir, "launch.txt");
	files[0] = art->ptx, files[1] = art->vmfb, files[2] = lf, files[3] = NULL;
	if ((cached = backend_cache_lookup("iree", be->work_dir, dir, files,
	    dir, res)) < 0)
		goto fail;
	if (!cached) {
		tmp = backend_side_name(dir, "tmp");
		if (backend_cache_scratch(tmp, cuda_scratch_remove, &err) != 0 ||
		    compile_steps(be, tmp, text, deadline, &art->l, res,
		    &err) != 0)
			goto fail;
		free(lf);
		lf = util_path_join(tmp, "launch.txt");
		lt = launch_text(&art->l);
		if (util_write_file(lf, lt, strlen(lt), &err) != 0)
			goto fail;
		free(lf);
		lf = util_path_join(dir, "launch.txt");
		if (backend_cache_commit("iree", be->work_dir, tmp, dir, files,
		    dir, cuda_scratch_remove, res) != 0)
			goto fail;
		res->compile_s = util_now() - t0;
	} else if (util_read_file(lf, 4096, &lt, &len, &err) != 0 ||
	    launch_parse(lt, &art->l) != 0) {
		util_seterr(&err, "%s: unreadable launch", lf);
		goto fail;
	}
	if ((why = after_rules(&be->op, cfg, &art->l)) != NULL) {
		res->status = TRIAL_COMPILE_FAILED;
		util_seterr(&res->error, "refused: %s", why);
		free(why);
		goto fail;
	}
	rc = 0;
	goto out;
fail:
	backend_compile_failed(res, err, t0, tmp, cuda_scratch_remove);
out:
	free(text), free(key), free(dir), free(tmp), free(lt), free(lf);
	free(err);
	return rc;
}
