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

#include "backends/backend_int.h"
#include "backends/mlir-cpu/mlircpu_int.h"
#include "build_config.h"
#include "util/util.h"

static const char *const step_files[] = {
	"dispatch.mlir", "schedule.mlir", "kernel.ll.mlir", "kernel.ll",
	"kernel.so", NULL,
};

/* Remove a scratch folder made by compile (only the files it writes). */
void
mlircpu_scratch_remove(const char *dir)
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

char *
mlircpu_compile(struct backend *be, const char *sched, int threads,
    enum mlircpu_fault fault, struct trial_result *res)
{
	char *key_text = NULL, *dir = NULL, *tmp = NULL, *so = NULL;
	char *in = NULL, *sp = NULL, *llm = NULL, *ll = NULL, *tso = NULL;
	char *pipeline = NULL, *pipe_arg = NULL, *opt = NULL, *translate = NULL;
	char *plugin_arg = NULL;
	char *clang = NULL, *rpath = NULL, *llvm_lib = NULL;
	char *err = NULL;	/* set only when our own files fail: the disk */
	const char *omp = threads > 1 ? "-fopenmp" : "-fno-openmp";
	const char *files[2] = { NULL, NULL };
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
	files[0] = so;
	if ((cached = backend_cache_lookup("mlir-cpu", be->work_dir, dir, files,
	    so, res)) < 0)
		goto fail;
	/* A compile fault must run the real steps, so it bypasses the cache. */
	if (cached && fault != FAULT_COMPILE_FAIL && fault != FAULT_COMPILE_HANG) {
		res->compile_s = 0;
		goto out;
	}

	tmp = backend_side_name(dir, "tmp");
	if (backend_cache_scratch(tmp, mlircpu_scratch_remove, &err) != 0)
		goto fail;
	in = util_path_join(tmp, "dispatch.mlir");
	sp = util_path_join(tmp, "schedule.mlir");
	llm = util_path_join(tmp, "kernel.ll.mlir");
	ll = util_path_join(tmp, "kernel.ll");
	tso = util_path_join(tmp, "kernel.so");
	if (util_write_file(in, be->dispatch, strlen(be->dispatch), &err) != 0 ||
	    util_write_file(sp, sched, strlen(sched), &err) != 0)
		goto fail;

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

		if (backend_compile_step(&be->params, "mlir-opt",
		    fault == FAULT_COMPILE_HANG ? hang : a1, deadline, res) != 0 ||
		    backend_compile_step(&be->params, "mlir-translate", a2,
		    deadline, res) != 0 ||
		    backend_compile_step(&be->params, "clang", a3, deadline,
		    res) != 0)
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
		goto fail;
	}
	if (cached)
		mlircpu_scratch_remove(tmp);
	else if (backend_cache_commit("mlir-cpu", be->work_dir, tmp, dir, files,
	    so, mlircpu_scratch_remove, res) != 0)
		goto fail;
	res->compile_s = util_now() - t0;
	goto out;

fail:
	backend_compile_failed(res, err, t0, tmp, mlircpu_scratch_remove);
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
