/*
 * `autosched build`: the user's whole program compiled to a shared object
 * with the store's best schedule for each tuned op (the backend's default
 * schedule for the others), everything else lowered by a default pipeline,
 * every function exported with MLIR's C interface (_mlir_ciface_NAME).
 * A program the analysis lowers first (TOSA) is built from that lowering.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build_config.h"
#include "export/export.h"
#include "export/export_int.h"
#include "util/util.h"

#define BUILD_TIMEOUT	600	/* seconds per tool */

/* The signal that stops a build (SIGINT, SIGTERM, SIGHUP), or 0. */
static volatile sig_atomic_t build_signal;
static const int build_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define BUILD_NSIGNALS	(sizeof build_signals / sizeof build_signals[0])

/* The tool running dies now; export_build stops at its next step. */
static void
build_on_signal(int sig)
{
	build_signal = sig;
	proc_kill_current();
}

/*
 * The default pipeline: the transform library (schedules, bufferization),
 * then everything left (fills, elementwise linalg, copies) to loops, and
 * the whole module to the LLVM dialect. Results a function returns are
 * malloc'd buffers the caller owns. enable-x86vector: the bf16 dot kernel's
 * x86vector.avx512.dot, as in the measured kernels' pipeline.
 */
static const char build_pipeline[] =
    "builtin.module(%s"
    "transform-preload-library{transform-library-paths=%s},"
    "transform-interpreter,"
    "canonicalize,cse,"
    "buffer-deallocation-pipeline,"
    "convert-bufferization-to-memref,"
    "convert-linalg-to-loops,"
    "scf-forall-to-parallel,"
    "convert-scf-to-openmp,"
    "convert-vector-to-scf{full-unroll=true},"
    "lower-affine,"
    "expand-strided-metadata,"
    "lower-affine,"
    "convert-vector-to-llvm{enable-x86vector=1},"
    "finalize-memref-to-llvm,"
    "convert-scf-to-cf,"
    "convert-math-to-llvm,"
    "convert-arith-to-llvm,"
    "convert-index-to-llvm,"
    "convert-func-to-llvm,"
    "convert-cf-to-llvm,"
    "convert-ub-to-llvm,"
    "convert-openmp-to-llvm,"
    "reconcile-unrealized-casts)";

/* Run one tool; 0, or -1 with *err holding the head of what it said. */
static int
tool(const char *what, char *const argv[], char **err)
{
	struct proc_opts o;
	struct proc_result pr;
	int rc = -1;

	memset(&o, 0, sizeof o);
	o.timeout = BUILD_TIMEOUT;
	o.stop = &build_signal;
	if (proc_run(argv, &o, &pr, err) != 0) {
		proc_result_free(&pr);
		return -1;
	}
	if (pr.exited && pr.status == 0 && !build_signal)
		rc = 0;
	else if (build_signal)
		util_seterr(err, "%s: killed: the build was interrupted", what);
	else if (pr.timed_out)
		util_seterr(err, "%s: killed after %d s", what, BUILD_TIMEOUT);
	else
		util_seterr(err, "%s failed: %.2000s", what, pr.err);
	proc_result_free(&pr);
	return rc;
}

/*
 * The string every built .so holds (a symbol of its own), by which
 * util_out knows an earlier build at -o. Made at run time so that
 * autosched's own binary does not hold it.
 */
static char *
build_marker(void)
{
	return xasprintf("%s-%s:%d", "autosched", "built-library", 1);
}

/* The guard of -o: export's, with the marker instead of magic lines. */
static void
build_guard(struct util_out_guard *g, const char *db, const char *program,
    const char *marker)
{
	export_guard(g, db, program);
	g->what = "the shared object";
	g->magic[0] = g->magic[1] = NULL;
	g->marker = marker;
	g->mode = 0755;
}

int
export_build_check(const char *out_so, const char *db, const char *program,
    char **err)
{
	struct util_out_guard g;
	char *marker = build_marker();
	int rc;

	build_guard(&g, db, program, marker);
	rc = util_out_check(out_so, &g, err);
	free(marker);
	return rc;
}

/*
 * Why a function named name cannot be exported from the library (it is
 * called from C by that name, and the library's symbols join those of the
 * process that loads it), or NULL when it can.
 */
static const char *
name_unusable(const char *name)
{
	static const char *const keywords[] = { "alignas", "alignof", "auto",
	    "bool", "break", "case", "char", "const", "constexpr", "continue",
	    "default", "do", "double", "else", "enum", "extern", "false",
	    "float", "for", "goto", "if", "inline", "int", "long", "nullptr",
	    "register", "restrict", "return", "short", "signed", "sizeof",
	    "static", "static_assert", "struct", "switch", "thread_local",
	    "true", "typedef", "typeof", "typeof_unqual", "union", "unsigned",
	    "void", "volatile", "while", NULL };
	/* The program's entry point, the C runtime's, MLIR's and OpenMP's. */
	static const char *const taken[] = { "main", "_start", "_init",
	    "_fini", "memrefCopy", NULL };
	static const char *const prefixes[] = { "_mlir_", "omp_", "kmp_",
	    "ompt_", NULL };
	static const char *const libs[] = { "libc.so.6", "libm.so.6", NULL };
	const char *p;
	size_t i;

	if (!isalpha((unsigned char)name[0]) && name[0] != '_')
		return "not a C identifier (a letter or _, then letters, "
		    "digits, _)";
	for (p = name; *p != '\0'; p++) {
		if (!isalnum((unsigned char)*p) && *p != '_')
			return "not a C identifier (a letter or _, then "
			    "letters, digits, _)";
	}
	for (i = 0; keywords[i] != NULL; i++) {
		if (strcmp(name, keywords[i]) == 0)
			return "a C keyword";
	}
	if (name[0] == '_' && (name[1] == '_' || isupper((unsigned char)name[1])))
		return "reserved in C (_ then an uppercase letter or _)";
	for (i = 0; taken[i] != NULL; i++) {
		if (strcmp(name, taken[i]) == 0)
			return "taken by the program's or a runtime's own symbol";
	}
	for (i = 0; prefixes[i] != NULL; i++) {
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return "in the namespace of MLIR's C interface or of "
			    "the OpenMP runtime";
	}
	/* The library would stand in for libc's or libm's own. */
	for (i = 0; libs[i] != NULL; i++) {
		void *h = dlopen(libs[i], RTLD_LAZY | RTLD_LOCAL);
		int found = h != NULL && dlsym(h, name) != NULL;

		if (h != NULL)
			dlclose(h);
		if (found)
			return i == 0 ? "a C library function (libc)" :
			    "a C math library function (libm)";
	}
	return NULL;
}

/* Remove the scratch folder of a build. */
static void
scratch_remove(const char *dir)
{
	static const char *const files[] = { "lib.mlir", "program.mlir",
	    "program.ll.mlir",
	    "program.ll", "program.so", "marker.c", NULL };
	size_t i;

	for (i = 0; files[i] != NULL; i++) {
		char *p = util_path_join(dir, files[i]);

		unlink(p);
		free(p);
	}
	rmdir(dir);
}

/*
 * The configs to build with: for each tunable op of the program, its entry
 * in s (unless untuned) or the backend's default. *ntuned counts the former.
 */
static struct export_set *
build_set(const struct export_set *s, const struct analysis *an,
    const struct backend_ops *be, int untuned, size_t *ntuned)
{
	struct export_set *b = xcalloc(1, sizeof *b);
	size_t i, j, n = analysis_count(an);

	*ntuned = 0;
	b->e = xcalloc(n ? n : 1, sizeof *b->e);
	for (i = 0; i < n; i++) {
		const struct op_desc *op = analysis_op(an, i);
		struct export_entry *e;
		const char *reason;
		char *sig;
		ssize_t k = -1;

		if (!op->tunable)
			continue;
		if (!be->supports(op, &reason)) {
			fprintf(stderr, "autosched: warning: %s (%s): %s; left to "
			    "the default pipeline\n", op->name, op->loc, reason);
			continue;
		}
		sig = store_op_signature(op);
		for (j = 0; j < b->n; j++) {
			if (strcmp(b->e[j].sig, sig) == 0)
				break;
		}
		if (j < b->n) {		/* the same op again: one schedule serves both */
			free(sig);
			continue;
		}
		for (j = 0; !untuned && s != NULL && j < s->n; j++) {
			if (strcmp(s->e[j].sig, sig) == 0)
				k = (ssize_t)j;
		}
		e = &b->e[b->n++];
		e->sig = sig;
		e->be = be;
		e->op = *op;
		e->op.kind = xstrdup(op->kind);
		e->op.op_name = xstrdup(op->op_name);
		e->op.name = xstrdup(op->name);
		e->op.function = "";
		e->op.loc = "";
		e->best.backend = xstrdup(be->name);
		e->best.cpu = xstrdup("");
		e->best.toolchain = xstrdup("");
		e->best.op_name = xstrdup(op->name);
		e->best.op_signature = xstrdup(sig);
		if (k >= 0) {
			e->best.config = s->e[k].best.config;
			e->best.config_name = xstrdup(s->e[k].best.config_name);
			e->best.gflops = s->e[k].best.gflops;
			(*ntuned)++;
		} else {
			be->baseline(op, &e->best.config);
			e->best.config_name = xstrdup("default");
			if (!untuned)
				fprintf(stderr, "autosched: warning: %s (%s): not "
				    "in the store; default schedule\n", op->name,
				    op->loc);
		}
	}
	return b;
}

int
export_build(const struct export_set *s, const char *program, int untuned,
    const char *out_so, const char *db, size_t *ntuned, char **err)
{
	const struct backend_ops *be = backend_find("mlir-cpu");
	struct analysis *an = NULL;
	struct export_set *b = NULL;
	const struct analysis_lowering *how = NULL;
	const char *input = program;
	char *dir = NULL, *lib = NULL, *llm = NULL, *ll = NULL, *so = NULL;
	char *lowered = NULL, *low = NULL;
	char *text = NULL, *pipe = NULL, *opt = NULL, *tr = NULL, *cc = NULL;
	char *plugin = NULL, *plugin_arg = NULL;
	char *rpath = NULL, *tmpl = NULL, *cflags = NULL;
	char *marker = build_marker(), *mc = NULL, *mtext = NULL, *buf = NULL;
	struct util_out_guard g;
	size_t len;
	const char *bin = getenv("AUTOSCHED_LLVM_BIN");
	const char *tmpdir = getenv("TMPDIR");
	struct sigaction sa, old[BUILD_NSIGNALS];
	int rc = -1, omp = 0;
	size_t i;

	*ntuned = 0;
	/*
	 * A signal kills the tool running and stops the build at its next
	 * step; the scratch folder is removed on the way out.
	 */
	build_signal = 0;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = build_on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < BUILD_NSIGNALS; i++) {
		sigaction(build_signals[i], &sa, &old[i]);
		/* Ignored when we started (nohup, a background job): still so. */
		if (old[i].sa_handler == SIG_IGN)
			sigaction(build_signals[i], &old[i], NULL);
	}
	build_guard(&g, db, program, marker);
	if (util_out_check(out_so, &g, err) != 0 ||
	    analysis_lower(program, &lowered, &how, err) != 0)
		goto out;
	/*
	 * The program as the analysis saw it: lowered, its ops' locations
	 * still in the program (so are mlir-opt's messages about them).
	 */
	if (lowered != NULL) {
		fprintf(stderr, "autosched: %s: lowered %s to linalg before the "
		    "build, as mlir-opt --pass-pipeline='%s' does\n", program,
		    how->from, how->pipeline);
		if (analysis_parse(program, lowered, strlen(lowered), &an,
		    err) != 0)
			goto out;
	} else if (analysis_load(program, &an, err) != 0)
		goto out;
	for (i = 0; i < analysis_function_count(an); i++) {
		const char *loc, *fn = analysis_function(an, i, &loc);
		const char *why = name_unusable(fn);

		if (why != NULL) {
			util_seterr(err, "%s: function @\"%.200s\": %s; expected "
			    "a C identifier that is not a keyword, reserved "
			    "name or C library function the built library "
			    "would clash with (rename it)", loc, fn, why);
			goto out;
		}
	}
	b = build_set(s, an, be, untuned, ntuned);
	for (i = 0; i < b->n; i++) {
		if (b->e[i].best.config.v[KNOB_THREADS] > 1)
			omp = 1;
	}
	if (!untuned && *ntuned == 0) {
		util_seterr(err, "%s: the store has no best config for any op "
		    "of it (build --untuned for default schedules)", program);
		rc = 1;
		goto out;
	}
	if (tmpdir == NULL || *tmpdir == '\0')
		tmpdir = "/tmp";
	tmpl = util_path_join(tmpdir, "autosched-build-XXXXXX");
	if (build_signal)
		goto out;
	if (mkdtemp(tmpl) == NULL) {
		util_seterr(err, "mkdtemp %s: %s", tmpl, strerror(errno));
		goto out;
	}
	dir = tmpl;
	tmpl = NULL;
	lib = util_path_join(dir, "lib.mlir");
	llm = util_path_join(dir, "program.ll.mlir");
	ll = util_path_join(dir, "program.ll");
	so = util_path_join(dir, "program.so");
	mc = util_path_join(dir, "marker.c");
	if (lowered != NULL) {
		low = util_path_join(dir, "program.mlir");
		if (util_write_file(low, lowered, strlen(lowered), err) != 0)
			goto out;
		input = low;
	}
	text = export_transform_text(b, be, 1, &plugin);
	mtext = xasprintf("/* Marks the library as autosched's (util_out). */\n"
	    "__attribute__((used, visibility(\"default\")))\n"
	    "const char autosched_built_library[] = \"%s\";\n", marker);
	if (util_write_file(lib, text, strlen(text), err) != 0 ||
	    util_write_file(mc, mtext, strlen(mtext), err) != 0)
		goto out;
	if (plugin != NULL)
		plugin_arg = xasprintf("--load-pass-plugin=%s", plugin);
	pipe = xasprintf("--pass-pipeline=%s", build_pipeline);
	{
		/*
		 * With the plugin, its quantized-matmul split runs first (a
		 * program without such an op is left as it is): a quantized
		 * op is then the int8 matmul its schedule was measured on.
		 */
		char *p = xasprintf(pipe, plugin != NULL ?
		    "autosched-quantized-matmul,cse," : "", lib);

		free(pipe);
		pipe = p;
	}
	if (bin == NULL || *bin == '\0')
		bin = AUTOSCHED_LLVM_BIN;
	opt = util_path_join(bin, "mlir-opt");
	tr = util_path_join(bin, "mlir-translate");
	cc = util_path_join(bin, "clang-" AUTOSCHED_LLVM_VERSION);
	rpath = xasprintf("-Wl,-rpath,%s", AUTOSCHED_LLVM_LIB);
	/* The kernels' own flags, so the program runs what was measured. */
	cflags = be->export_cflags != NULL ? be->export_cflags() :
	    xstrdup("-O3");
	{
		/* The plugin when a schedule runs one of its passes. */
		char *const a1p[] = { opt, plugin_arg, (char *)input, pipe,
		    "-o", llm, NULL };
		char *const a1n[] = { opt, (char *)input, pipe, "-o", llm,
		    NULL };
		char *const *a1 = plugin_arg != NULL ? a1p : a1n;
		char *const a2[] = { tr, "--mlir-to-llvmir", llm, "-o", ll, NULL };
		char *a3[32] = { cc, "-O3", "-march=native" };
		size_t n3 = 3;
		char *w, *save;

		/* The backend's flags are words separated by blanks. */
		for (w = strtok_r(cflags, " ", &save); w != NULL && n3 < 20;
		    w = strtok_r(NULL, " ", &save))
			a3[n3++] = w;
		a3[n3++] = "-shared";
		a3[n3++] = "-fPIC";
		a3[n3++] = omp ? "-fopenmp" : "-fno-openmp";
		a3[n3++] = rpath;
		a3[n3++] = "-Wno-override-module";
		a3[n3++] = ll;
		a3[n3++] = mc;
		a3[n3++] = "-o";
		a3[n3++] = so;
		a3[n3] = NULL;
		if (tool("mlir-opt", a1, err) != 0 ||
		    tool("mlir-translate", a2, err) != 0 ||
		    tool("clang", a3, err) != 0)
			goto out;
	}
	if (build_signal)
		goto out;
	/* Copied beside out_so through util_out: never over what it refuses. */
	if (util_read_file(so, 1u << 30, &buf, &len, err) != 0 ||
	    util_out_write(out_so, buf, len, &g, err) != 0)
		goto out;
	rc = 0;
out:
	if (dir != NULL)
		scratch_remove(dir);
	for (i = 0; i < BUILD_NSIGNALS; i++)
		sigaction(build_signals[i], &old[i], NULL);
	if (rc != 0 && build_signal) {
		util_seterr(err, "%s: interrupted (signal %d); nothing written",
		    program, (int)build_signal);
		rc = 128 + build_signal;
	}
	export_free(b);
	analysis_free(an);
	free(dir);
	free(tmpl);
	free(lib);
	free(lowered);
	free(low);
	free(llm);
	free(ll);
	free(so);
	free(text);
	free(plugin);
	free(plugin_arg);
	free(pipe);
	free(opt);
	free(tr);
	free(cc);
	free(rpath);
	free(cflags);
	free(marker);
	free(mc);
	free(mtext);
	free(buf);
	return rc;
}
