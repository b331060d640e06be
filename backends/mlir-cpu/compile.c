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

/*
 * Hash everything that shapes the artifact of schedule sched into the
 * hex key artifact.
 */
static void
compile_key(const struct backend *be, const char *sched, const char *omp,
    const char *width, char *artifact)
{
	char *key_text;

	key_text = xasprintf("%s\n--\n%s\n--\n%s\n--\n%s -O3 %s %s %s\n--\n%s "
	    "%s plugin %s\n", be->dispatch, sched, mlircpu_tpl_lower_pipeline,
	    omp, mlircpu_isa_march(), width, MLIRCPU_RTLIB, be->toolchain,
	    be->flags, be->plugin_hash);
	util_hash_hex(key_text, strlen(key_text), artifact);
	free(key_text);
}

/* The files of a scratch folder, step by step (all owned). */
struct compile_files {
	char	*in, *sp, *llm, *ll, *tso;
};

/*
 * Run the steps on f's dispatch and schedule into f's kernel.so:
 * mlir-opt (or the test's hang), mlir-translate and clang, each with what
 * is left until deadline. -1 when one fails (res says why).
 */
static int
compile_run(struct backend *be, const struct compile_files *f,
    const char *omp, const char *width, enum mlircpu_fault fault,
    double deadline, struct trial_result *res)
{
	char *pipeline, *pipe_arg, *plugin_arg;
	char *opt, *translate, *clang, *llvm_lib, *rpath;
	int rc = -1;

	pipeline = mlircpu_pipeline(f->sp, analysis_kind_quantized(be->op.kind));
	pipe_arg = xasprintf("--pass-pipeline=%s", pipeline);
	plugin_arg = xasprintf("--load-pass-plugin=%s", be->plugin);
	opt = util_path_join(be->llvm_bin, "mlir-opt");
	translate = util_path_join(be->llvm_bin, "mlir-translate");
	clang = util_path_join(be->llvm_bin, "clang-" AUTOSCHED_LLVM_VERSION);
	llvm_lib = xasprintf("%s/../lib", be->llvm_bin);
	rpath = xasprintf("-Wl,-rpath,%s", llvm_lib);
	{
		char *const hang[] = { be->harness, "--hang", NULL };
		char *const a1[] = { opt, plugin_arg, f->in, pipe_arg, "-o",
		    f->llm, NULL };
		char *const a2[] = { translate, "--mlir-to-llvmir", f->llm, "-o",
		    f->ll, NULL };
		char *const a3[] = { clang, "-O3", (char *)mlircpu_isa_march(),
		    (char *)width, MLIRCPU_RTLIB,
		    "-shared", "-fPIC", (char *)omp, rpath, "-Wno-override-module",
		    f->ll, "-o", f->tso, NULL };

		if (backend_compile_step(&be->params, "mlir-opt",
		    fault == FAULT_COMPILE_HANG ? hang : a1, deadline, res) != 0 ||
		    backend_compile_step(&be->params, "mlir-translate", a2,
		    deadline, res) != 0 ||
		    backend_compile_step(&be->params, "clang", a3, deadline,
		    res) != 0)
			goto out;
	}
	rc = 0;
out:
	free(pipeline);
	free(pipe_arg);
	free(plugin_arg);
	free(opt);
	free(translate);
	free(clang);
	free(llvm_lib);
	free(rpath);
	return rc;
}

/*
 * Build schedule sched into scratch folder tmp: write its inputs, run the
 * steps, and check that kernel.so came out. -1 on failure: res says why,
 * or *err (caller frees) when our own files failed.
 */
static int
compile_scratch(struct backend *be, const char *sched, const char *tmp,
    const char *omp, const char *width, enum mlircpu_fault fault,
    double deadline, struct trial_result *res, char **err)
{
	struct compile_files f;
	int rc = -1;

	f.in = util_path_join(tmp, "dispatch.mlir");
	f.sp = util_path_join(tmp, "schedule.mlir");
	f.llm = util_path_join(tmp, "kernel.ll.mlir");
	f.ll = util_path_join(tmp, "kernel.ll");
	f.tso = util_path_join(tmp, "kernel.so");
	if (util_write_file(f.in, be->dispatch, strlen(be->dispatch), err) != 0 ||
	    util_write_file(f.sp, sched, strlen(sched), err) != 0)
		goto out;
	if (compile_run(be, &f, omp, width, fault, deadline, res) != 0)
		goto out;
	/* A compile succeeds only if the artifact exists. */
	if (access(f.tso, R_OK) != 0) {
		res->status = TRIAL_COMPILE_FAILED;
		util_seterr(&res->error, "clang exited 0 but %s is missing",
		    f.tso);
		goto out;
	}
	if (chmod(f.tso, 0755) != 0) {
		*err = xasprintf("%s: %s", f.tso, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(f.in);
	free(f.sp);
	free(f.llm);
	free(f.ll);
	free(f.tso);
	return rc;
}

char *
mlircpu_compile(struct backend *be, const char *sched, int threads,
    enum mlircpu_fault fault, struct trial_result *res)
{
	char *dir = NULL, *tmp = NULL, *so = NULL;
	char *err = NULL;	/* set only when our own files fail: the disk */
	const char *omp = threads > 1 ? "-fopenmp" : "-fno-openmp";
	const char *files[2] = { NULL, NULL };
	char width[40];
	double t0 = util_now(), deadline;
	int cached;

	deadline = t0 + (be->params.compile_timeout > 0 ?
	    be->params.compile_timeout : 1e9);
	/*
	 * The register tiles assume the widest vectors of the ISA (this CPU's,
	 * or the cap's: -march then names it): say so to LLVM, whose tuning
	 * for some CPUs would split 512-bit operations.
	 */
	snprintf(width, sizeof width, "-mprefer-vector-width=%d",
	    mlircpu_isa()->vec_bytes * 8);
	/* Everything that shapes the artifact is in the key. */
	compile_key(be, sched, omp, width, res->artifact);
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
	if (backend_cache_scratch(tmp, mlircpu_scratch_remove, &err) != 0 ||
	    compile_scratch(be, sched, tmp, omp, width, fault, deadline, res,
	    &err) != 0)
		goto fail;
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
	free(dir);
	free(tmp);
	free(err);
	return so;
}
