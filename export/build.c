/*
 * `autosched build`: the user's whole program compiled to a shared object
 * with the store's best schedule for each tuned op (the backend's default
 * schedule for the others), everything else lowered by a default pipeline,
 * every function exported with MLIR's C interface (_mlir_ciface_NAME).
 * The program is cut into dispatches (one function per op), lowered once,
 * split into pieces that clang compiles at the same time, and linked. A
 * program the analysis lowers first (TOSA) is built from that lowering.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build_config.h"
#include "export/export.h"
#include "export/export_int.h"
#include "util/util.h"

#define BUILD_TIMEOUT	600	/* seconds per tool */
#define BUILD_JOBS_MAX	32	/* tools run at once, at most (util/proc.c tracks 64) */
/*
 * The dispatches are compiled in pieces of at least BUILD_PIECE_MIN
 * functions, BUILD_PIECES_PER_JOB pieces per tool run at once (so that a
 * slow piece does not leave the other CPUs idle at the end).
 */
#define BUILD_PIECE_MIN		32
#define BUILD_PIECES_PER_JOB	4

/* The signal that stops a build (SIGINT, SIGTERM, SIGHUP), or 0. */
static volatile sig_atomic_t build_signal;
/*
 * Set by that signal or by a tool that failed while others ran: no tool
 * starts any more, and those running are killed.
 */
static volatile sig_atomic_t build_stop;
static const int build_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define BUILD_NSIGNALS	(sizeof build_signals / sizeof build_signals[0])

/* The tools running die now; export_build stops at its next step. */
static void
build_on_signal(int sig)
{
	build_signal = sig;
	build_stop = 1;
	proc_kill_current();
}

/*
 * The default pipeline: the transform library (schedules, bufferization),
 * then everything left (fills, elementwise linalg, copies) to loops, and
 * the whole module to the LLVM dialect. Results a function returns are
 * malloc'd buffers the caller owns. Function passes run on the dispatches
 * in parallel. As in the measured kernels' pipeline: a dispatch's result
 * that is its acc argument is dropped (drop-equivalent-buffer-results: no
 * copy of it is returned), and enable-x86vector lowers the bf16 dot
 * kernel's x86vector.avx512.dot. Arith and math ops on whole tensors
 * become linalg.generic first; canonicalize before the schedules folds
 * what the dispatches' splat constants make constant (a gather from one);
 * symbol-dce then drops the constants no code reads. Math ops LLVM has no
 * intrinsic for (erf, cbrt, ...) become calls to libm; on vectors (the rest
 * vectorized), one call per lane, whose extracts and inserts the second
 * convert-vector-to-llvm takes. With the plugin
 * loaded, its quantized-matmul split runs first (%s; a program without
 * such an op is left as it is): a quantized op is then the int8 matmul its
 * schedule was measured on. With --rest vector, the backend's pass (%s,
 * before convert-linalg-to-loops, on memrefs: the tuned matmuls are vector
 * code by then) vectorizes what is left and splits it across threads; what
 * it cannot vectorize still goes to loops. Then the backend's copy pass
 * (%s, whatever --rest says) lowers the copies left on buffers (B's packs
 * among them) as its measured kernels had them lowered. With --math fast,
 * the backend's
 * math pass (%s) turns f32 exp, log, erf, tanh into polynomials on whole
 * vectors before the vectors go to LLVM. With the pool, memref.alloc and
 * dealloc call the library's own functions (use-generic-functions; their
 * definitions are runtime/pool.c, compiled into the library). With
 * --rest-fuse on, the transform library runs linalg-fuse-elementwise-ops
 * on the dispatches of chained elementwise ops (and only there: on the
 * whole program its reshape propagation makes MobileBERT's matmuls
 * generics the schedules no longer match; in a matmul's dispatch it
 * rewrites the epilogue its fused schedule matches).
 */
static const char build_pipeline[] =
    "builtin.module(%s"
    "transform-preload-library{transform-library-paths=%s},"
    "func.func(convert-elementwise-to-linalg,canonicalize),"
    "transform-interpreter,"
    "drop-equivalent-buffer-results,"
    "func.func(canonicalize,cse),"
    "symbol-dce,"
    "buffer-deallocation-pipeline,"
    "convert-bufferization-to-memref,"
    "func.func(%s%sconvert-linalg-to-loops,scf-forall-to-parallel),"
    "convert-scf-to-openmp,"
    "func.func(%sconvert-vector-to-scf{full-unroll=true},"
    "lower-affine,expand-strided-metadata,lower-affine),"
    "convert-vector-to-llvm{enable-x86vector=1},"
    "finalize-memref-to-llvm%s,"
    "func.func(convert-scf-to-cf),"
    "convert-math-to-llvm,"
    "convert-math-to-libm,"
    "convert-vector-to-llvm,"
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
	o.stop = &build_stop;
	if (proc_run(argv, &o, &pr, err) != 0) {
		proc_result_free(&pr);
		return -1;
	}
	if (pr.exited && pr.status == 0 && !build_stop)
		rc = 0;
	else if (build_signal)
		util_seterr(err, "%s: killed: the build was interrupted", what);
	else if (build_stop)
		util_seterr(err, "%s: killed: another step failed", what);
	else if (pr.timed_out)
		util_seterr(err, "%s: killed after %d s", what, BUILD_TIMEOUT);
	else
		util_seterr(err, "%s failed: %.2000s", what, pr.err);
	proc_result_free(&pr);
	return rc;
}

/* A tool's command line, built word by word; the words are owned. */
struct build_cmd {
	const char	*what;		/* the tool, for messages */
	char		**argv;		/* NULL-ended */
	size_t		 n, cap;
};

static void
cmd_add(struct build_cmd *c, const char *word)
{
	if (c->n + 2 > c->cap) {
		c->cap = c->cap ? c->cap * 2 : 32;
		c->argv = xrealloc(c->argv, c->cap * sizeof *c->argv);
	}
	c->argv[c->n++] = xstrdup(word);
	c->argv[c->n] = NULL;
}

static void PRINTFLIKE(2, 3)
cmd_addf(struct build_cmd *c, const char *fmt, ...)
{
	va_list ap;
	char *w;

	va_start(ap, fmt);
	if (vasprintf(&w, fmt, ap) < 0) {
		fprintf(stderr, "autosched: out of memory\n");
		abort();
	}
	va_end(ap);
	cmd_add(c, w);
	free(w);
}

/* The words of s, separated by blanks (the backend's flags). */
static void
cmd_words(struct build_cmd *c, const char *s)
{
	char *copy = xstrdup(s), *w, *save;

	for (w = strtok_r(copy, " ", &save); w != NULL;
	    w = strtok_r(NULL, " ", &save))
		cmd_add(c, w);
	free(copy);
}

static void
cmd_free(struct build_cmd *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->argv[i]);
	free(c->argv);
	memset(c, 0, sizeof *c);
}

/* Commands run at once (build_run): the next to start, the first failure. */
struct build_pool {
	struct build_cmd	*cmds;
	size_t			 n;
	size_t			 next;
	pthread_mutex_t		 lock;
	char			*err;
};

/* Run the pool's commands one after the other until none is left. */
static void *
build_worker(void *arg)
{
	struct build_pool *p = arg;
	char *e;
	size_t i;

	for (;;) {
		pthread_mutex_lock(&p->lock);
		i = p->next < p->n && !build_stop ? p->next++ : p->n;
		pthread_mutex_unlock(&p->lock);
		if (i == p->n)
			return NULL;
		e = NULL;
		if (tool(p->cmds[i].what, p->cmds[i].argv, &e) != 0) {
			pthread_mutex_lock(&p->lock);
			if (p->err == NULL) {
				p->err = e;
				e = NULL;
			}
			pthread_mutex_unlock(&p->lock);
			/* What the others make is of no use now. */
			__atomic_store_n(&build_stop, 1, __ATOMIC_SEQ_CST);
			proc_kill_current();
		}
		free(e);
	}
}

/*
 * Run the n commands, up to jobs at a time (this thread and jobs - 1
 * others, each running one tool after another). 0, or -1 with *err from
 * the first that failed (the others are killed) or saying the build was
 * interrupted.
 */
static int
build_run(struct build_cmd *cmds, size_t n, int jobs, char **err)
{
	pthread_t th[BUILD_JOBS_MAX];
	struct build_pool p;
	int i, started = 0;

	memset(&p, 0, sizeof p);
	p.cmds = cmds;
	p.n = n;
	pthread_mutex_init(&p.lock, NULL);
	if ((size_t)jobs > n)
		jobs = (int)n;
	if (jobs > BUILD_JOBS_MAX)
		jobs = BUILD_JOBS_MAX;
	/* A thread that cannot be made leaves its share to the others. */
	for (i = 1; i < jobs; i++) {
		if (pthread_create(&th[started], NULL, build_worker, &p) != 0)
			break;
		started++;
	}
	build_worker(&p);
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&p.lock);
	if (p.err != NULL) {
		util_seterr(err, "%s", p.err);
		free(p.err);
		return -1;
	}
	if (build_stop) {
		util_seterr(err, "interrupted");
		return -1;
	}
	return 0;
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
	    "_fini", "memrefCopy", "autosched_pool_release",
	    "autosched_pool_free", NULL };
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
	/* The marker every built library carries (build_marker). */
	if (strcmp(name, "autosched_built_library") == 0)
		return "taken by the marker autosched puts in every library it"
		    " builds";
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

/* Remove the scratch folder of a build and every file in it (all ours). */
static void
scratch_remove(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d != NULL && (de = readdir(d)) != NULL) {
		char *p;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		p = util_path_join(dir, de->d_name);
		unlink(p);
		free(p);
	}
	if (d != NULL)
		closedir(d);
	rmdir(dir);
}

/*
 * An op's default config at the build's threads: a backend with the
 * threads knob (its default 1: the tuning job adds the CPUs it measures
 * on) runs the default schedule on the rest's threads (--rest-threads) as
 * far as the op has the work for them (space_default_threads; the job's
 * confirm step lets the same default compete).
 */
static void
build_default(const struct backend_ops *be, const struct op_desc *op,
    int threads, struct config *c)
{
	be->baseline(op, c);
	if (c->v[KNOB_THREADS] == 1)
		c->v[KNOB_THREADS] = space_default_threads(op, threads);
}

/*
 * The configs to build with: for each tunable op of the program, its entry
 * in s (unless untuned) or the backend's default (build_default, at
 * threads). *ntuned counts the former.
 */
static struct export_set *
build_set(const struct export_set *s, const struct analysis *an,
    const struct backend_ops *be, int untuned, int threads, size_t *ntuned)
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
			build_default(be, op, threads, &e->best.config);
			e->best.config_name = xstrdup("default");
			if (!untuned)
				fprintf(stderr, "autosched: warning: %s (%s): not "
				    "in the store; default schedule\n", op->name,
				    op->loc);
		}
	}
	return b;
}

/* The scratch files of a build, in its folder (owned). */
struct build_files {
	char	*outlined;	/* the program cut into dispatches */
	char	*lib;		/* the transform library */
	char	*llm;		/* the module in the LLVM dialect */
	char	*raw;	/* LLVM IR as mlir-translate writes it */
	char	*ll;		/* the same, its unnamed globals named (bitcode) */
	char	*glue;		/* the program's own functions (bitcode) */
	char	*rest;		/* everything else: dispatches, helpers */
	char	*marker;	/* marker.c */
	char	*pool;		/* pool.c: the buffer pool (runtime/pool.c) */
	char	*pool_o;	/* its object */
	char	*exports;	/* the linker's version script */
	char	*so;
};

static void
files_free(struct build_files *f)
{
	free(f->outlined);
	free(f->lib);
	free(f->llm);
	free(f->raw);
	free(f->ll);
	free(f->glue);
	free(f->rest);
	free(f->marker);
	free(f->pool);
	free(f->pool_o);
	free(f->exports);
	free(f->so);
}

/*
 * The linker's version script: the library exports the program's
 * functions (NAME and _mlir_ciface_NAME) and its marker, nothing else.
 * Caller frees.
 */
static char *
exports_text(const struct analysis *an, int pool)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL) {
		fprintf(stderr, "autosched: out of memory\n");
		abort();
	}
	fprintf(f, "/* autosched build: what the library exports. */\n{\n"
	    "  global:\n    autosched_built_library;\n");
	if (pool)
		fprintf(f, "    autosched_pool_release;\n"
		    "    autosched_pool_free;\n");
	for (i = 0; i < analysis_function_count(an); i++) {
		const char *fn = analysis_function(an, i, NULL);

		fprintf(f, "    %s;\n    _mlir_ciface_%s;\n", fn, fn);
	}
	fprintf(f, "  local: *;\n};\n");
	fclose(f);
	return buf;
}

/* --load-pass-plugin for each plugin of the n (NULL: none), each once. */
static void
cmd_plugins(struct build_cmd *c, char *const *plugins, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < i && plugins[i] != NULL; j++) {
			if (plugins[j] != NULL && strcmp(plugins[i],
			    plugins[j]) == 0)
				break;
		}
		if (plugins[i] != NULL && j == i)
			cmd_addf(c, "--load-pass-plugin=%s", plugins[i]);
	}
}

/* clang's command for the buffer pool (src, C) into obj. */
static void
cmd_pool(struct build_cmd *c, const char *ccp, const char *src,
    const char *obj)
{
	c->what = "clang (pool)";
	cmd_add(c, ccp);
	cmd_add(c, "-O2");
	cmd_add(c, "-std=c11");
	cmd_add(c, "-D_GNU_SOURCE");
	cmd_add(c, "-fPIC");
	cmd_add(c, "-pthread");
	cmd_add(c, "-c");
	cmd_add(c, "-x");
	cmd_add(c, "c");
	cmd_add(c, src);
	cmd_add(c, "-o");
	cmd_add(c, obj);
}

/*
 * One build's state from its checks to its library: what is built, the
 * scratch folder and its files, the tools and their flags.
 */
struct build {
	const char		*program;
	const struct export_rest *rest;
	struct export_build_info *info;
	const struct backend_ops *be;
	struct analysis		*an;
	struct export_set	*b;		/* the schedules built in */
	size_t			 nfuncs, npieces, ncc;
	int			 omp, jobs;
	char			*dir;		/* the scratch folder */
	struct build_files	 fl;
	char			*marker;
	char			*plugin;	/* the schedules' plugin, or NULL */
	char			*rest_pass, *rest_plugin;
	char			*math_pass, *math_plugin;
	char			*copy_pass, *copy_plugin;
	char			*optp, *trp, *ccp, *extp, *splitp, *anonp;
	char			*cflags;
	struct build_cmd	 opt, tr, anon, ext[2], split, link, *cc;
};

static void
build_free(struct build *bd)
{
	const char *keep = getenv("AUTOSCHED_BUILD_KEEP");
	size_t i;

	if (bd->dir != NULL && keep != NULL && *keep != '\0')
		fprintf(stderr, "autosched: scratch files kept in %s "
		    "(AUTOSCHED_BUILD_KEEP)\n", bd->dir);
	else if (bd->dir != NULL)
		scratch_remove(bd->dir);
	for (i = 0; i < bd->ncc; i++)
		cmd_free(&bd->cc[i]);
	free(bd->cc);
	cmd_free(&bd->opt);
	cmd_free(&bd->tr);
	cmd_free(&bd->ext[0]);
	cmd_free(&bd->ext[1]);
	cmd_free(&bd->split);
	cmd_free(&bd->anon);
	cmd_free(&bd->link);
	files_free(&bd->fl);
	export_free(bd->b);
	analysis_free(bd->an);
	free(bd->dir);
	free(bd->marker);
	free(bd->plugin);
	free(bd->rest_pass);
	free(bd->rest_plugin);
	free(bd->math_pass);
	free(bd->math_plugin);
	free(bd->copy_pass);
	free(bd->copy_plugin);
	free(bd->optp);
	free(bd->trp);
	free(bd->ccp);
	free(bd->extp);
	free(bd->splitp);
	free(bd->anonp);
	free(bd->cflags);
}

/*
 * A signal kills the tools running and stops the build at its next step;
 * the scratch folder is removed on the way out. The handlers before go to
 * old, for build_signals_off.
 */
static void
build_signals_on(struct sigaction old[BUILD_NSIGNALS])
{
	build_signal = 0;
	build_stop = 0;
	/* Ignored when we started (nohup, a background job): still so. */
	util_signals_catch(build_signals, BUILD_NSIGNALS, build_on_signal, 1,
	    old);
}

static void
build_signals_off(const struct sigaction old[BUILD_NSIGNALS])
{
	util_signals_restore(build_signals, BUILD_NSIGNALS, old);
}

/*
 * The program loaded and checked: one module of functions, each a name
 * the built library can export. 0, or -1 with *err at the program's line.
 */
static int
build_load(struct build *bd, char **err)
{
	const struct analysis_lowering *how;
	char *folds;
	size_t i;

	if (analysis_load(bd->program, &bd->an, err) != 0)
		return -1;
	/*
	 * The outliner lowers and folds it as the analysis did; locations stay
	 * the user's.
	 */
	if ((how = analysis_lowered(bd->an, NULL)) != NULL)
		fprintf(stderr, "autosched: %s: lowered %s to linalg before the "
		    "build, as mlir-opt --pass-pipeline='%s' does\n",
		    bd->program, how->from, how->pipeline);
	if ((folds = analysis_folded_said(bd->an)) != NULL)
		fprintf(stderr, "autosched: %s: %s\n", bd->program, folds);
	free(folds);
	/* Said at its line, not at a deleted temporary's after compiling. */
	if (analysis_nested_module(bd->an) != NULL) {
		util_seterr(err, "%s: a module inside the program's module (or a"
		    " second top-level module); build compiles one module of"
		    " functions: expected the functions at the top level (build"
		    " each module from its own file)",
		    analysis_nested_module(bd->an));
		return -1;
	}
	bd->nfuncs = analysis_function_count(bd->an);
	for (i = 0; i < bd->nfuncs; i++) {
		const char *loc, *fn = analysis_function(bd->an, i, &loc);
		const char *why = name_unusable(fn);

		if (why != NULL) {
			util_seterr(err, "%s: function @\"%.200s\": %s; expected "
			    "a C identifier that is not a keyword, reserved "
			    "name or C library function the built library "
			    "would clash with (rename it)", loc, fn, why);
			return -1;
		}
	}
	return 0;
}

/*
 * What goes in: the schedules (the store's best, else the defaults), the
 * rest's and the math's passes where the backend has them, OpenMP when a
 * schedule or the rest runs threads. 0, or 1 with *err when nothing of the
 * program is tuned and defaults were not asked for.
 */
static int
build_choose(struct build *bd, const struct export_set *s, int untuned,
    char **err)
{
	const struct export_rest *rest = bd->rest;
	struct export_build_info *info = bd->info;
	size_t i;

	bd->b = build_set(s, bd->an, bd->be, untuned,
	    rest->mode == EXPORT_REST_VECTOR ? rest->threads : 1,
	    &info->ntuned);
	for (i = 0; i < bd->b->n; i++) {
		if (bd->b->e[i].best.config.v[KNOB_THREADS] > 1)
			bd->omp = 1;
	}
	info->rest = *rest;
	if (rest->mode == EXPORT_REST_VECTOR &&
	    bd->be->export_rest_pass != NULL)
		bd->rest_pass = bd->be->export_rest_pass(rest->threads,
		    &bd->rest_plugin);
	if (bd->rest_pass == NULL)
		info->rest.mode = EXPORT_REST_LOOPS;
	else if (rest->threads > 1)
		bd->omp = 1;
	if (rest->math == EXPORT_MATH_FAST && bd->be->export_math_pass != NULL)
		bd->math_pass = bd->be->export_math_pass(&bd->math_plugin);
	if (bd->math_pass == NULL)
		info->rest.math = EXPORT_MATH_EXACT;
	if (bd->be->export_copy_pass != NULL)
		bd->copy_pass = bd->be->export_copy_pass(&bd->copy_plugin);
	if (bd->be->export_op_fused == NULL)
		info->rest.fuse = 0;
	if (!untuned && info->ntuned == 0) {
		util_seterr(err, "%s: the store has no best config for any op "
		    "of it (build --untuned for default schedules)", bd->program);
		return 1;
	}
	return 0;
}

/* The scratch folder (TMPDIR's) and the names of its files. 0/-1. */
static int
build_scratch(struct build *bd, char **err)
{
	const char *tmpdir = getenv("TMPDIR");
	struct build_files *fl = &bd->fl;
	char *tmpl;

	if (tmpdir == NULL || *tmpdir == '\0')
		tmpdir = "/tmp";
	tmpl = util_path_join(tmpdir, "autosched-build-XXXXXX");
	if (mkdtemp(tmpl) == NULL) {
		util_seterr(err, "mkdtemp %s: %s", tmpl, strerror(errno));
		free(tmpl);
		return -1;
	}
	bd->dir = tmpl;
	fl->outlined = util_path_join(bd->dir, "program.mlir");
	fl->lib = util_path_join(bd->dir, "lib.mlir");
	fl->llm = util_path_join(bd->dir, "program.ll.mlir");
	fl->raw = util_path_join(bd->dir, "program.ll");
	fl->ll = util_path_join(bd->dir, "program.bc");
	fl->glue = util_path_join(bd->dir, "glue.bc");
	fl->rest = util_path_join(bd->dir, "rest.bc");
	fl->marker = util_path_join(bd->dir, "marker.c");
	fl->pool = util_path_join(bd->dir, "pool.c");
	fl->pool_o = util_path_join(bd->dir, "pool.o");
	fl->exports = util_path_join(bd->dir, "exports.map");
	fl->so = util_path_join(bd->dir, "program.so");
	return 0;
}

/* 1. The program cut into dispatches, the library, the exports. 0/-1. */
static int
build_outline(struct build *bd, char **err)
{
	const struct build_files *fl = &bd->fl;
	char *otext = NULL, *text, *mtext, *map;
	double t = util_now();
	int rc = -1;

	struct analysis_fused fused;

	/* Row groups: the rest's plugin runs them (autosched-fuse-rows). */
	int rows = bd->info->rest.rest_fuse && bd->rest_plugin != NULL &&
	    bd->info->rest.mode == EXPORT_REST_VECTOR;

	/* Made uniform for the fusions: no reshape or tensor op cuts them. */
	if (analysis_outline_fused(bd->program, 1, (bd->info->rest.fuse ?
	    ANALYSIS_FUSE_EPILOGUE : 0) | (bd->info->rest.rest_fuse ?
	    ANALYSIS_FUSE_CHAINS : 0) | (rows ? ANALYSIS_FUSE_ROWS : 0) |
	    (bd->info->rest.fuse || bd->info->rest.rest_fuse ?
	    ANALYSIS_FUSE_NORMALIZE : 0), &otext,
	    &bd->info->ndispatches, &fused, err) != 0)
		return -1;
	bd->info->nconverted = fused.nconverted;
	bd->info->nreshapes = fused.nreshapes;
	bd->info->nfused_ops = fused.nops;
	bd->info->nfused = fused.nconsumers;
	bd->info->nchains = fused.nchains;
	bd->info->nchained = fused.nchained;
	bd->info->nrows = fused.nrows;
	bd->info->nrowed = fused.nrowed;
	bd->info->ninits = fused.ninits;
	bd->info->nslices = fused.nslices;
	bd->info->ninserts = fused.ninserts;
	text = export_transform_text(bd->b, bd->be, (bd->info->rest.fuse ?
	    EXPORT_TX_EPILOGUE : 0) | (bd->info->rest.rest_fuse ?
	    EXPORT_TX_CHAINS : 0) | (fused.nrows > 0 ? EXPORT_TX_ROWS : 0) |
	    (fused.ninits > 0 ? EXPORT_TX_INITS : 0), &bd->plugin);
	mtext = xasprintf("/* Marks the library as autosched's (util_out). */\n"
	    "__attribute__((used, visibility(\"default\")))\n"
	    "const char autosched_built_library[] = \"%s\";\n", bd->marker);
	map = exports_text(bd->an, bd->rest->pool);
	if (util_write_file(fl->outlined, otext, strlen(otext), err) != 0 ||
	    util_write_file(fl->lib, text, strlen(text), err) != 0 ||
	    util_write_file(fl->marker, mtext, strlen(mtext), err) != 0 ||
	    util_write_file(fl->exports, map, strlen(map), err) != 0 ||
	    (bd->rest->pool && util_write_file(fl->pool, export_pool_source,
	    strlen(export_pool_source), err) != 0))
		goto out;
	bd->info->outline_s = util_now() - t;
	rc = 0;
out:
	free(otext);
	free(text);
	free(mtext);
	free(map);
	return rc;
}

/* The tools (AUTOSCHED_LLVM_BIN, else LLVM's) and the kernels' flags. */
static void
build_tools(struct build *bd)
{
	const char *bin = getenv("AUTOSCHED_LLVM_BIN");

	if (bin == NULL || *bin == '\0')
		bin = AUTOSCHED_LLVM_BIN;
	bd->optp = util_path_join(bin, "mlir-opt");
	bd->trp = util_path_join(bin, "mlir-translate");
	bd->extp = util_path_join(bin, "llvm-extract");
	bd->splitp = util_path_join(bin, "llvm-split");
	bd->anonp = util_path_join(bin, "opt");
	bd->ccp = util_path_join(bin, "clang-" AUTOSCHED_LLVM_VERSION);
	/* The kernels' own flags, so the program runs what was measured. */
	bd->cflags = bd->be->export_cflags != NULL ? bd->be->export_cflags() :
	    xstrdup("-O3");
}

/* 2. Scheduled and lowered to LLVM IR, the whole module at once. 0/-1. */
static int
build_lower(struct build *bd, char **err)
{
	char *plugins[4], *pipe, *rest_text = NULL, *math_text = NULL;
	char *copy_text = NULL;
	double t = util_now();
	int r;

	bd->opt.what = "mlir-opt";
	cmd_add(&bd->opt, bd->optp);
	/* The plugin when a schedule, the rest, math or copies run its passes. */
	plugins[0] = bd->plugin;
	plugins[1] = bd->rest_plugin;
	plugins[2] = bd->math_plugin;
	plugins[3] = bd->copy_plugin;
	cmd_plugins(&bd->opt, plugins, 4);
	if (bd->rest_pass != NULL)
		rest_text = xasprintf("%s,", bd->rest_pass);
	if (bd->math_pass != NULL)
		math_text = xasprintf("%s,", bd->math_pass);
	if (bd->copy_pass != NULL)
		copy_text = xasprintf("%s,", bd->copy_pass);
	pipe = xasprintf(build_pipeline, bd->plugin != NULL ?
	    "autosched-quantized-matmul,cse," : "", bd->fl.lib,
	    rest_text != NULL ? rest_text : "",
	    copy_text != NULL ? copy_text : "",
	    math_text != NULL ? math_text : "",
	    bd->rest->pool ? "{use-generic-functions=1}" : "");
	cmd_add(&bd->opt, bd->fl.outlined);
	cmd_addf(&bd->opt, "--pass-pipeline=%s", pipe);
	cmd_add(&bd->opt, "-o");
	cmd_add(&bd->opt, bd->fl.llm);
	free(pipe);
	free(rest_text);
	free(math_text);
	free(copy_text);
	if (tool(bd->opt.what, bd->opt.argv, err) != 0)
		return -1;
	bd->info->opt_s = util_now() - t;
	t = util_now();
	bd->tr.what = "mlir-translate";
	cmd_add(&bd->tr, bd->trp);
	cmd_add(&bd->tr, "--mlir-to-llvmir");
	cmd_add(&bd->tr, bd->fl.llm);
	cmd_add(&bd->tr, "-o");
	cmd_add(&bd->tr, bd->fl.raw);
	if (tool(bd->tr.what, bd->tr.argv, err) != 0)
		return -1;
	/*
	 * Unnamed globals (OpenMP's ident_t locations) named: llvm-extract
	 * and llvm-split make a piece's private globals hidden externals,
	 * and each piece would name an unnamed one __unnamed_N by its own
	 * count, so one piece's reference missed another's definition at
	 * the link (the DeepSeek decode step).
	 */
	bd->anon.what = "opt";
	cmd_add(&bd->anon, bd->anonp);
	cmd_add(&bd->anon, "--passes=name-anon-globals");
	cmd_add(&bd->anon, bd->fl.raw);
	cmd_add(&bd->anon, "-o");
	cmd_add(&bd->anon, bd->fl.ll);
	r = tool(bd->anon.what, bd->anon.argv, err);
	bd->info->translate_s = util_now() - t;
	return r != 0 ? -1 : 0;
}

/*
 * 3. The program's own functions (after outlining, the calls between
 * dispatches) apart from the rest, and the rest in pieces. 0/-1.
 */
static int
build_split(struct build *bd, char **err)
{
	double t = util_now();
	size_t i, j;

	if (bd->nfuncs > 0) {
		for (j = 0; j < 2; j++) {
			struct build_cmd *e = &bd->ext[j];

			e->what = "llvm-extract";
			cmd_add(e, bd->extp);
			if (j == 1)
				cmd_add(e, "--delete");
			for (i = 0; i < bd->nfuncs; i++) {
				const char *fn = analysis_function(bd->an, i,
				    NULL);

				cmd_addf(e, "--func=%s", fn);
				cmd_addf(e, "--func=_mlir_ciface_%s", fn);
			}
			cmd_add(e, bd->fl.ll);
			cmd_add(e, "-o");
			cmd_add(e, j == 0 ? bd->fl.glue : bd->fl.rest);
		}
		if (build_run(bd->ext, 2, bd->jobs, err) != 0)
			return -1;
	} else {
		free(bd->fl.rest);
		bd->fl.rest = xstrdup(bd->fl.ll);
	}
	bd->npieces = bd->info->ndispatches / BUILD_PIECE_MIN;
	if (bd->npieces > (size_t)bd->jobs * BUILD_PIECES_PER_JOB)
		bd->npieces = (size_t)bd->jobs * BUILD_PIECES_PER_JOB;
	if (bd->npieces < 1)
		bd->npieces = 1;
	if (bd->npieces > 1) {
		char *prefix = util_path_join(bd->dir, "piece.");

		bd->split.what = "llvm-split";
		cmd_add(&bd->split, bd->splitp);
		cmd_addf(&bd->split, "-j%zu", bd->npieces);
		cmd_add(&bd->split, "--round-robin");
		cmd_add(&bd->split, bd->fl.rest);
		cmd_add(&bd->split, "-o");
		cmd_add(&bd->split, prefix);
		free(prefix);
		if (tool(bd->split.what, bd->split.argv, err) != 0)
			return -1;
	}
	bd->info->split_s = util_now() - t;
	return 0;
}

/*
 * 4. The pieces compiled at the same time, up to one per CPU: the
 * dispatches as the measured kernels were (-O3, the backend's flags), the
 * program's functions at -O0 (what is left in them is calls, buffer views
 * and frees; -O1's register allocation alone takes 15 s on MobileBERT's
 * 3,000 calls, for code of the same size). 0/-1.
 */
static int
build_compile(struct build *bd, char **err)
{
	double t = util_now();
	size_t i, n = bd->npieces;

	bd->cc = xcalloc(n + 2, sizeof *bd->cc);
	for (i = 0; i < n + (bd->nfuncs > 0); i++) {
		struct build_cmd *c = &bd->cc[bd->ncc++];
		int is_glue = i == n;
		char *in = is_glue ? xstrdup(bd->fl.glue) : n == 1 ?
		    xstrdup(bd->fl.rest) : xasprintf("%s/piece.%zu", bd->dir, i);

		c->what = "clang";
		cmd_add(c, bd->ccp);
		cmd_add(c, is_glue ? "-O0" : "-O3");
		cmd_add(c, "-march=native");
		cmd_words(c, bd->cflags);
		cmd_add(c, "-fPIC");
		cmd_add(c, bd->omp ? "-fopenmp" : "-fno-openmp");
		cmd_add(c, "-Wno-override-module");
		cmd_add(c, "-Wno-unused-command-line-argument");
		cmd_add(c, "-c");
		cmd_add(c, "-x");
		cmd_add(c, "ir");
		cmd_add(c, in);
		cmd_add(c, "-o");
		cmd_addf(c, "%s/piece.%zu.o", bd->dir, i);
		free(in);
	}
	if (bd->rest->pool)
		cmd_pool(&bd->cc[bd->ncc++], bd->ccp, bd->fl.pool, bd->fl.pool_o);
	bd->info->npieces = bd->ncc;
	if (build_run(bd->cc, bd->ncc, bd->jobs, err) != 0)
		return -1;
	bd->info->compile_s = util_now() - t;
	return 0;
}

/*
 * 5. Linked with what the lowered code calls: libm (math ops), MLIR's C
 * runner utilities (memrefCopy, for copies of strided memrefs), each only
 * if used; OpenMP (-fopenmp) for threads > 1; compiler-rt's builtins
 * through the backend's flags. 0/-1.
 */
static int
build_link(struct build *bd, char **err)
{
	struct build_cmd *l = &bd->link;
	double t = util_now();
	size_t i;

	l->what = "clang (link)";
	cmd_add(l, bd->ccp);
	cmd_add(l, "-march=native");
	cmd_words(l, bd->cflags);
	cmd_add(l, "-shared");
	cmd_add(l, "-fPIC");
	cmd_add(l, bd->omp ? "-fopenmp" : "-fno-openmp");
	cmd_addf(l, "-Wl,-rpath,%s", AUTOSCHED_LLVM_LIB);
	cmd_addf(l, "-Wl,--version-script=%s", bd->fl.exports);
	for (i = 0; i < bd->ncc - (bd->rest->pool != 0); i++)
		cmd_addf(l, "%s/piece.%zu.o", bd->dir, i);
	if (bd->rest->pool) {
		cmd_add(l, "-pthread");
		cmd_add(l, bd->fl.pool_o);
	}
	cmd_add(l, bd->fl.marker);
	cmd_addf(l, "-L%s", AUTOSCHED_LLVM_LIB);
	cmd_add(l, "-Wl,--as-needed");
	cmd_add(l, "-lmlir_c_runner_utils");
	cmd_add(l, "-lm");
	cmd_add(l, "-Wl,--no-as-needed");
	cmd_add(l, "-o");
	cmd_add(l, bd->fl.so);
	if (tool(l->what, l->argv, err) != 0)
		return -1;
	bd->info->link_s = util_now() - t;
	return 0;
}

int
export_build(const struct export_set *s, const char *program, int untuned,
    const struct export_rest *rest, const char *out_so, const char *db,
    struct export_build_info *info, char **err)
{
	struct build bd;
	struct util_out_guard g;
	struct sigaction old[BUILD_NSIGNALS];
	char *buf = NULL;
	size_t len;
	int rc = -1;

	memset(info, 0, sizeof *info);
	memset(&bd, 0, sizeof bd);
	bd.program = program;
	bd.rest = rest;
	bd.info = info;
	bd.be = backend_emitter();
	bd.marker = build_marker();
	if (bd.be == NULL) {
		util_seterr(err, "no backend of this build emits whole programs "
		    "(a transform library's parts)");
		free(bd.marker);
		return -1;
	}
	bd.jobs = util_ncpus();
	if (bd.jobs < 1)
		bd.jobs = 1;
	if (bd.jobs > BUILD_JOBS_MAX)
		bd.jobs = BUILD_JOBS_MAX;
	info->jobs = bd.jobs;
	build_signals_on(old);
	build_guard(&g, db, program, bd.marker);
	if (util_out_check(out_so, &g, err) != 0 || build_load(&bd, err) != 0)
		goto out;
	if ((rc = build_choose(&bd, s, untuned, err)) != 0)
		goto out;
	rc = -1;
	if (build_signal || build_scratch(&bd, err) != 0 ||
	    build_outline(&bd, err) != 0)
		goto out;
	build_tools(&bd);
	if (build_lower(&bd, err) != 0 || build_split(&bd, err) != 0 ||
	    build_compile(&bd, err) != 0 || build_link(&bd, err) != 0 ||
	    build_signal)
		goto out;
	/* Copied beside out_so through util_out: never over what it refuses. */
	if (util_read_file(bd.fl.so, 1u << 30, &buf, &len, err) != 0 ||
	    util_out_write(out_so, buf, len, &g, err) != 0)
		goto out;
	rc = 0;
out:
	build_free(&bd);
	build_signals_off(old);
	if (rc != 0 && build_signal) {
		util_seterr(err, "%s: interrupted (signal %d); nothing written",
		    program, (int)build_signal);
		rc = 128 + build_signal;
	}
	free(buf);
	return rc;
}
