/*
 * mlir-cpu compilation: dispatch + schedule -> mlir-opt -> mlir-translate ->
 * clang -> kernel.so, each step a child process with the remaining timeout,
 * the result cached in work_dir under a hash of everything that shapes it.
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/mlir-cpu/mlircpu_int.h"
#include "build_config.h"
#include "util/util.h"

#define ERROR_TAIL	1500	/* bytes of a tool's stderr kept in res->error */

static const char *const step_files[] = {
	"dispatch.mlir", "schedule.mlir", "kernel.ll.mlir", "kernel.ll",
	"kernel.so", NULL,
};

/* Remove a scratch folder made by compile (only the files it writes). */
static void
scratch_remove(const char *dir)
{
	char *p;
	int i;

	for (i = 0; step_files[i] != NULL; i++) {
		p = util_path_join(dir, step_files[i]);
		unlink(p);
		free(p);
	}
	rmdir(dir);
}

/*
 * What to keep of a tool's stderr: all of it if short, else its head (the
 * diagnostic; MLIR follows it with an IR dump) and its last lines. Caller frees.
 */
static char *
excerpt(const char *s)
{
	size_t n = strlen(s), head = ERROR_TAIL * 2 / 3, rest = ERROR_TAIL / 3;

	if (n <= ERROR_TAIL)
		return xstrdup(s);
	return xasprintf("%.*s\n[...]\n%s", (int)head, s, s + n - rest);
}

/*
 * Run one tool step. 0 if it exited 0, else -1 with res->status and
 * res->error set (what the tool said, or that it hung).
 */
static int
step(struct backend *be, const char *what, char *const argv[], double deadline,
    struct trial_result *res)
{
	struct proc_opts o;
	struct proc_result pr;
	char *err = NULL;
	double left = deadline - util_now();
	int rc = -1;

	memset(&o, 0, sizeof o);
	memset(&pr, 0, sizeof pr);
	if (left <= 0) {
		res->status = TRIAL_COMPILE_TIMEOUT;
		util_seterr(&res->error, "%s: compile timeout (%.0f s) reached "
		    "before the step started", what, be->params.compile_timeout);
		return -1;
	}
	o.timeout = be->params.compile_timeout > 0 ? left : 0;
	o.nice = be->params.compile_nice;
	if (proc_run(argv, &o, &pr, &err) != 0) {
		res->status = TRIAL_COMPILE_FAILED;
		res->env_failure = 1;
		util_seterr(&res->error, "%s: %s", what, err);
		free(err);
		return -1;
	}
	if (pr.timed_out) {
		res->status = TRIAL_COMPILE_TIMEOUT;
		util_seterr(&res->error, "%s: killed after %.1f s (compile "
		    "timeout)", what, pr.seconds);
	} else if (pr.exec_failed) {
		res->status = TRIAL_COMPILE_FAILED;
		res->env_failure = 1;
		util_seterr(&res->error, "%s: cannot run %s", what, argv[0]);
	} else if (!pr.exited || pr.status != 0) {
		char *x = excerpt(pr.err);

		res->status = TRIAL_COMPILE_FAILED;
		res->env_failure = mlircpu_env_text(pr.err);
		if (!pr.exited)
			util_seterr(&res->error, "%s: crashed (signal %d): %s",
			    what, pr.signal, x);
		else
			util_seterr(&res->error, "%s: exit %d: %s", what,
			    pr.status, x);
		free(x);
	} else
		rc = 0;
	proc_result_free(&pr);
	return rc;
}

/*
 * Whether the cache holds a kernel this user may run: 1 if dir and its
 * kernel.so are ours (util_trusted), 0 if there is none, or there was an
 * untrusted one, now set aside as dir.untrusted.PID (it is never run nor
 * deleted: someone may want to look at it). -1 with res filled (an
 * environment failure) if the cache root is not ours or the entry cannot
 * be set aside.
 */
static int
cache_lookup(struct backend *be, const char *dir, const char *so,
    struct trial_result *res)
{
	struct stat sb;
	char why[128], *aside;
	int rc;

	if (mlircpu_cache_check(be->work_dir, &res->error) != 0) {
		res->status = TRIAL_ERROR;
		res->env_failure = 1;
		return -1;
	}
	if (lstat(dir, &sb) != 0)
		return 0;
	if (util_trusted(dir, 1, why, sizeof why) == 0 &&
	    util_trusted(so, 0, why, sizeof why) == 0)
		return 1;
	aside = xasprintf("%s.untrusted.%ld", dir, (long)getpid());
	rc = rename(dir, aside);
	if (rc == 0)
		fprintf(stderr, "autosched: %s: not used (%s): moved to %s; "
		    "compiled again\n", so, why, aside);
	else {
		res->status = TRIAL_ERROR;
		res->env_failure = 1;
		util_seterr(&res->error, "%s: not used (%s), and it cannot be "
		    "set aside: %s", so, why, strerror(errno));
	}
	free(aside);
	return rc == 0 ? 0 : -1;
}

int
mlircpu_cache_check(const char *root, char **err)
{
	char why[128];

	if (util_trusted(root, 1, why, sizeof why) == 0)
		return 0;
	util_seterr(err, "mlir-cpu: the compile cache %s is not this user's "
	    "to trust (%s): anyone who can write it chooses the code jobs run."
	    " Give it to this user alone (chown, chmod go-w) or set "
	    "AUTOSCHED_WORK to a folder only this user can write", root, why);
	return -1;
}

int
mlircpu_env_text(const char *text)
{
	static const char *const env[] = {
		"No space left on device", "Disk quota exceeded",
		"Read-only file system", "Too many open files",
		"Cannot allocate memory", "out of memory", "sched_setaffinity",
		"untrusted kernel",
	};
	size_t i;

	for (i = 0; text != NULL && i < sizeof env / sizeof env[0]; i++) {
		if (strstr(text, env[i]) != NULL)
			return 1;
	}
	return 0;
}

char *
mlircpu_compile(struct backend *be, const char *sched, int threads,
    enum mlircpu_fault fault, struct trial_result *res)
{
	char *key_text = NULL, *dir = NULL, *tmp = NULL, *so = NULL;
	char *in = NULL, *sp = NULL, *llm = NULL, *ll = NULL, *tso = NULL;
	char *pipeline = NULL, *pipe_arg = NULL, *opt = NULL, *translate = NULL;
	char *plugin_arg = NULL;
	char *clang = NULL, *rpath = NULL, *err = NULL, *llvm_lib = NULL;
	const char *omp = threads > 1 ? "-fopenmp" : "-fno-openmp";
	char width[40];
	double t0 = util_now(), deadline;
	int cached;

	deadline = t0 + (be->params.compile_timeout > 0 ?
	    be->params.compile_timeout : 1e9);
	/*
	 * The register tiles assume the widest vectors this CPU has: say so to
	 * LLVM, whose tuning for some CPUs would split 512-bit operations.
	 */
	snprintf(width, sizeof width, "-mprefer-vector-width=%d",
	    mlircpu_isa()->vec_bytes * 8);
	/* Everything that shapes the artifact is in the key. */
	key_text = xasprintf("%s\n--\n%s\n--\n%s\n--\n%s %s %s %s\n--\n%s %s "
	    "plugin %s\n", be->dispatch, sched, mlircpu_tpl_lower_pipeline, omp,
	    "-O3 -march=native", width, MLIRCPU_RTLIB, be->toolchain, be->flags,
	    be->plugin_hash);
	util_hash_hex(key_text, strlen(key_text), res->artifact);
	dir = util_path_join(be->work_dir, res->artifact);
	so = util_path_join(dir, "kernel.so");
	if ((cached = cache_lookup(be, dir, so, res)) < 0)
		goto fail;
	/* A compile fault must run the real steps, so it bypasses the cache. */
	if (cached && fault != FAULT_COMPILE_FAIL && fault != FAULT_COMPILE_HANG) {
		res->compile_s = 0;
		goto out;
	}

	tmp = xasprintf("%s.tmp.%ld", dir, (long)getpid());
	scratch_remove(tmp);
	/* Writable by us alone, whatever the umask: the cache runs what it holds. */
	if (util_mkdirs(tmp, &err) != 0)
		goto fail_err;
	if (chmod(tmp, 0755) != 0) {
		err = xasprintf("%s: %s", tmp, strerror(errno));
		goto fail_err;
	}
	in = util_path_join(tmp, "dispatch.mlir");
	sp = util_path_join(tmp, "schedule.mlir");
	llm = util_path_join(tmp, "kernel.ll.mlir");
	ll = util_path_join(tmp, "kernel.ll");
	tso = util_path_join(tmp, "kernel.so");
	if (util_write_file(in, be->dispatch, strlen(be->dispatch), &err) != 0 ||
	    util_write_file(sp, sched, strlen(sched), &err) != 0)
		goto fail_err;

	pipeline = mlircpu_pipeline(sp, analysis_kind_quantized(be->op.kind));
	pipe_arg = xasprintf("--pass-pipeline=%s", pipeline);
	plugin_arg = xasprintf("--load-pass-plugin=%s", be->plugin);
	opt = util_path_join(be->llvm_bin, "mlir-opt");
	translate = util_path_join(be->llvm_bin, "mlir-translate");
	clang = util_path_join(be->llvm_bin, "clang-" AUTOSCHED_LLVM_VERSION);
	llvm_lib = xasprintf("%s/../lib", be->llvm_bin);
	rpath = xasprintf("-Wl,-rpath,%s", llvm_lib);
	{
		char *const hang[] = { be->harness, "--hang", NULL };
		char *const a1[] = { opt, plugin_arg, in, pipe_arg, "-o", llm,
		    NULL };
		char *const a2[] = { translate, "--mlir-to-llvmir", llm, "-o", ll,
		    NULL };
		char *const a3[] = { clang, "-O3", "-march=native", width,
		    MLIRCPU_RTLIB,
		    "-shared", "-fPIC", (char *)omp, rpath, "-Wno-override-module",
		    ll, "-o", tso, NULL };

		if (step(be, "mlir-opt", fault == FAULT_COMPILE_HANG ? hang : a1,
		    deadline, res) != 0 ||
		    step(be, "mlir-translate", a2, deadline, res) != 0 ||
		    step(be, "clang", a3, deadline, res) != 0)
			goto fail;
	}
	/* A compile succeeds only if the artifact exists. */
	if (access(tso, R_OK) != 0) {
		res->status = TRIAL_COMPILE_FAILED;
		util_seterr(&res->error, "clang exited 0 but %s is missing", tso);
		goto fail;
	}
	if (chmod(tso, 0755) != 0) {
		err = xasprintf("%s: %s", tso, strerror(errno));
		goto fail_err;
	}
	if (cached)
		scratch_remove(tmp);
	else if (rename(tmp, dir) != 0) {
		/* Another run of ours cached the same artifact meanwhile. */
		int e = errno;

		scratch_remove(tmp);
		if (cache_lookup(be, dir, so, res) != 1) {
			res->status = TRIAL_ERROR;
			res->env_failure = 1;
			if (res->error == NULL)
				util_seterr(&res->error, "cannot move %s to %s: %s",
				    tmp, dir, strerror(e));
			goto fail;
		}
	}
	res->compile_s = util_now() - t0;
	goto out;

fail_err:
	/* Our own scratch files could not be written: the disk, not the config. */
	res->status = TRIAL_ERROR;
	res->env_failure = 1;
	util_seterr(&res->error, "%s", err);
fail:
	res->compile_s = util_now() - t0;
	if (tmp != NULL)
		scratch_remove(tmp);
	free(so);
	so = NULL;
out:
	free(key_text);
	free(dir);
	free(tmp);
	free(in);
	free(sp);
	free(llm);
	free(ll);
	free(tso);
	free(pipeline);
	free(pipe_arg);
	free(plugin_arg);
	free(opt);
	free(translate);
	free(clang);
	free(llvm_lib);
	free(rpath);
	free(err);
	return so;
}
