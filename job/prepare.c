/*
 * Preparing a job, the one validator of run, submit, the spool and the
 * service: the cfg and the program read, the program's ops grouped into
 * distinct ops (kind, shapes, types, layout: each tuned once for all its
 * occurrences), each distinct op's space built, the limits checked (memory,
 * threads, outputs) -- all before anything is written.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "backends/backend.h"
#include "cfg/cfg.h"
#include "executors/executor.h"
#include "generate/generate.h"
#include "html/html.h"
#include "job/job.h"
#include "job/job_int.h"
#include "search/space.h"
#include "store/store.h"
#include "tuners/tuner.h"
#include "util/util.h"

/* The knob lists of the cfg the backend understands; the rest reported once. */
static size_t
job_knob_lists(const struct cfg *cfg, uint32_t knobs, struct knob_values *out,
    const struct backend_ops *be, int warn)
{
	const char *backend = be->name;
	size_t i, n = 0;
	char ignored[512] = "";
	int line = 0;

	for (i = 0; i < cfg->nknobs; i++) {
		const struct cfg_knob *k = &cfg->knobs[i];

		if (knobs & KNOB_BIT(k->knob)) {
			out[n].knob = k->knob;
			out[n].values = k->values;
			out[n].n = k->n;
			n++;
		} else {
			size_t l = strlen(ignored);

			if (line == 0)
				line = k->line;
			snprintf(ignored + l, sizeof ignored - l, "%s%s",
			    l ? ", " : "", space_knob_name(k->knob));
		}
	}
	if (warn && ignored[0] != '\0')
		fprintf(stderr, "autosched: %s:%d: [SearchSpace] %s: not "
		    "applicable to backend %s; ignored\n", cfg->path, line,
		    ignored, backend);
	if (warn && be->knob_note != NULL)
		fprintf(stderr, "autosched: backend %s: %s\n", backend,
		    be->knob_note);
	return n;
}

/* The cfg line that lists knob k, or 0 when it does not. */
static int
job_cfg_line(const struct cfg *cfg, enum knob k)
{
	size_t i;

	for (i = 0; i < cfg->nknobs; i++) {
		if (cfg->knobs[i].knob == k && cfg->knobs[i].n > 0)
			return cfg->knobs[i].line > 0 ? cfg->knobs[i].line : 1;
	}
	return 0;
}

/* 1 if AUTOSCHED_MEMORY_LIMIT holds a limit job_memory_limit takes. */
static int
job_memory_env(unsigned long long *mib)
{
	const char *e = getenv("AUTOSCHED_MEMORY_LIMIT");
	char *end;

	if (e == NULL || *e == '\0' || !isdigit((unsigned char)e[0]))
		return 0;
	errno = 0;
	*mib = strtoull(e, &end, 10);
	return errno == 0 && *end == '\0' && *mib > 0 && *mib < (1ULL << 40);
}

uint64_t
job_memory_limit(void)
{
	static int warned;
	const char *e = getenv("AUTOSCHED_MEMORY_LIMIT");
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	unsigned long long mib;

	if (job_memory_env(&mib))
		return (uint64_t)mib << 20;
	if (e != NULL && *e != '\0' && !warned) {
		warned = 1;
		fprintf(stderr, "autosched: warning: AUTOSCHED_MEMORY_LIMIT=%.32s:"
		    " not a number of MiB from 1 to 2^40; ignored (the limit is"
		    " half of physical memory)\n", e);
	}
	if (pages <= 0 || psize <= 0)
		return (uint64_t)4 << 30;
	return (uint64_t)pages * (uint64_t)psize / 2;
}

/*
 * The bytes of an op's operands and result, plus a second result for the
 * verifier; 0 when the product overflows 64 bits (never fits).
 */
static uint64_t
job_op_bytes(const struct op_desc *op)
{
	uint64_t b = op->batch > 0 ? (uint64_t)op->batch : 1, m = (uint64_t)op->m,
	    n = (uint64_t)op->n, k = (uint64_t)op->k, x, y, z, sum;

	if (op->m <= 0 || op->n <= 0 || op->k <= 0 ||
	    __builtin_mul_overflow(b, m, &x) || __builtin_mul_overflow(x, k, &x) ||
	    __builtin_mul_overflow(x, analysis_elem_size(op->lhs), &x) ||
	    __builtin_mul_overflow(b, k, &y) || __builtin_mul_overflow(y, n, &y) ||
	    __builtin_mul_overflow(y, analysis_elem_size(op->rhs), &y) ||
	    __builtin_mul_overflow(b, m, &z) || __builtin_mul_overflow(z, n, &z) ||
	    __builtin_mul_overflow(z, analysis_elem_size(op->acc), &z) ||
	    __builtin_mul_overflow(z, 2, &z) ||
	    __builtin_add_overflow(x, y, &sum) || __builtin_add_overflow(sum, z, &sum))
		return 0;
	return sum;
}

/*
 * The guard of one of the job's outputs (csv: output_file, else the HTML
 * report): never the store or its side files, the input, the cfg, the
 * replayed store or the job's other output; an existing file only if it is
 * an earlier one of the same kind. Strings are borrowed from cfg and o.
 */
void
job_out_guard(const struct cfg *cfg, const struct job_opts *o, int csv,
    struct util_out_guard *g)
{
	const char *html = o->report_path != NULL ? o->report_path :
	    cfg->report_file;

	memset(g, 0, sizeof *g);
	g->where = cfg->path;
	g->key = csv ? "[Env] output_file" : o->report_path != NULL ?
	    "the service's report" : "[Env] report_file";
	g->what = csv ? "the CSV report" : "the HTML report";
	g->stores[0] = o->db;
	g->stores[1] = cfg->replay_db;
	g->inputs[0].path = cfg->input_file;
	g->inputs[0].what = "the input MLIR";
	g->inputs[1].path = cfg->path;
	g->inputs[1].what = "the cfg itself";
	g->inputs[2].path = csv ? (cfg->report_file != NULL ? html : NULL) :
	    cfg->output_file;
	g->inputs[2].what = csv ? "the HTML report (report_file)" :
	    "the CSV report (output_file)";
	g->magic[0] = csv ? REPORT_CSV_MAGIC : HTML_MAGIC;
}

/*
 * The job's outputs checked before anything runs: output_file and the HTML
 * report may each name only a new file or an earlier one of the same kind.
 */
static int
job_check_output(const struct cfg *cfg, const struct job_opts *o, char **err)
{
	struct util_out_guard g;
	const char *html = o->report_path != NULL ? o->report_path :
	    cfg->report_file;

	if (cfg->output_file != NULL) {
		job_out_guard(cfg, o, 1, &g);
		if (util_out_check(cfg->output_file, &g, err) != 0)
			return -1;
	}
	if (cfg->report_file != NULL && html != NULL) {
		job_out_guard(cfg, o, 0, &g);
		if (util_out_check(html, &g, err) != 0)
			return -1;
	}
	return 0;
}

/*
 * Threads the cfg does not list are searched over the CPUs measurements use:
 * 1, 2, 4, … up to their count, and the count itself.
 */
static void
job_threads_candidates(const struct job *c, struct space_rules *r)
{
	int n = c->o->cpus != NULL && c->o->ncpus > 0 ? c->o->ncpus : 0, t;
	int *cpus;

	if (!(r->knobs & KNOB_BIT(KNOB_THREADS)) ||
	    job_cfg_line(c->cfg, KNOB_THREADS) > 0)
		return;
	if (c->node_cpus > 0)
		n = c->node_cpus;	/* the nodes', not this machine's */
	if (n == 0) {
		cpus = job_default_cpus(c->cfg, &n);
		free(cpus);
	}
	if (n > SPACE_THREADS_MAX)	/* what a stored config may hold */
		n = SPACE_THREADS_MAX;
	r->ncand[KNOB_THREADS] = 0;
	for (t = 1; t < n && r->ncand[KNOB_THREADS] < SPACE_CANDS_MAX - 1; t *= 2)
		r->cand[KNOB_THREADS][r->ncand[KNOB_THREADS]++] = t;
	r->cand[KNOB_THREADS][r->ncand[KNOB_THREADS]++] = n > 0 ? n : 1;
}

int
job_knob_origin(const struct job *c, int k)
{
	if (k < 0 || k >= KNOB_COUNT || !(c->rep.knobs & KNOB_BIT(k)))
		return -1;
	return job_cfg_line(c->cfg, (enum knob)k);
}

/* The largest threads value of the cfg, and the line giving it (0 if none). */
static int64_t
job_max_threads(const struct cfg *cfg, int *line)
{
	int64_t max = 1;
	size_t k;

	*line = 0;
	for (k = 0; k < cfg->nknobs; k++) {
		if (cfg->knobs[k].knob == KNOB_THREADS && cfg->knobs[k].n > 0) {
			max = cfg->knobs[k].values[cfg->knobs[k].n - 1];
			*line = cfg->knobs[k].line;
		}
	}
	return max;
}

const char *
job_input_name(const struct cfg *cfg)
{
	return cfg->input_file != NULL ? cfg->input_file : cfg->path;
}

/*
 * The program's ops as distinct ops: the tunable ones grouped by what
 * tuning sees (analysis_op_same: kind, sizes, types, layout; the store's
 * signature is built from the same fields), each group in the order of its
 * first occurrence; an op that is not tunable stays on its own.
 */
static void
job_group_ops(struct job *c)
{
	size_t n = analysis_count(c->an), i, j;

	c->ops = xcalloc(n ? n : 1, sizeof *c->ops);
	c->nops = 0;
	for (i = 0; i < n; i++) {
		const struct op_desc *op = analysis_op(c->an, i);
		struct job_op *jo = NULL;

		for (j = 0; j < c->nops && jo == NULL; j++) {
			if (analysis_op_same(c->ops[j].op, op))
				jo = &c->ops[j];
		}
		if (jo == NULL) {
			jo = &c->ops[c->nops++];
			jo->op = op;
		}
		jo->uses = xrealloc(jo->uses, (jo->nuses + 1) * sizeof *jo->uses);
		jo->uses[jo->nuses++] = i;
	}
}

/*
 * Under an executor that places its children (slurm: the nodes measure),
 * the threads a candidate may ask are their CPUs (the smallest node of the
 * partition), not this machine's. 0, or -1 with *err when Slurm cannot be
 * asked.
 */
static int
job_node_cpus(struct job *c, char **err)
{
	const struct executor_ops *const *all;
	struct cfg_exec ex = c->cfg->exec;
	struct executor *exe;
	size_t n;

	cfg_exec_merge(&ex, c->o->exec_default);
	c->node_cpus = 0;
	all = executor_all(&n);
	if (ex.executor < 0 || (size_t)ex.executor >= n ||
	    !all[ex.executor]->places)
		return 0;
	if (job_executor(&ex, NULL, c->cfg->timeout, &exe, err) != 0)
		return -1;
	c->node_cpus = executor_node_cpus(exe, err);
	executor_close(exe);
	if (c->node_cpus < 0) {
		c->node_cpus = 0;
		return -1;
	}
	return 0;
}

/*
 * Whether op's buffers can be allocated for a run: their size within 64 bits
 * and the memory limit. A backend with a clock replays: nothing runs here.
 * 0, or -1 with *err.
 */
static int
job_check_memory(const struct job *c, const struct op_desc *op, char **err)
{
	const struct cfg *cfg = c->cfg;

	if (c->be->clock == NULL && job_op_bytes(op) == 0) {
		util_seterr(err, "%s: %s (%s at %s): the sizes of its buffers"
		    " overflow 64 bits (M=%lld N=%lld K=%lld batch=%lld)",
		    job_input_name(cfg), op->name, op->kind, op->loc,
		    (long long)op->m, (long long)op->n, (long long)op->k,
		    (long long)op->batch);
		return -1;
	}
	if (c->be->clock == NULL && job_op_bytes(op) > job_memory_limit()) {
		const char *e = getenv("AUTOSCHED_MEMORY_LIMIT");
		unsigned long long mib;
		char *why = job_memory_env(&mib) ? xstrdup("AUTOSCHED_MEMORY_LIMIT;"
		    " raise it, in MiB") : e != NULL && *e != '\0' ?
		    xasprintf("half of physical memory: AUTOSCHED_MEMORY_LIMIT="
		    "%.32s is not a number of MiB from 1 to 2^40 and was"
		    " ignored", e) : xstrdup("half of physical memory; set"
		    " AUTOSCHED_MEMORY_LIMIT in MiB");

		util_seterr(err, "%s: %s (%s at %s): its buffers need %llu"
		    " MiB, above the memory limit of %llu MiB (%s)",
		    job_input_name(cfg), op->name, op->kind, op->loc,
		    (unsigned long long)(job_op_bytes(op) >> 20),
		    (unsigned long long)(job_memory_limit() >> 20), why);
		free(why);
		return -1;
	}
	return 0;
}

/*
 * Whether the most threads of [SearchSpace] fit the CPUs that measure: the
 * smallest Slurm node, or this machine's. 0, or -1 with *err.
 */
static int
job_check_threads(const struct job *c, const struct space_rules *rules,
    char **err)
{
	const struct cfg *cfg = c->cfg;
	int tline;
	int64_t tmax;

	if (c->be->clock != NULL || !(rules->knobs & KNOB_BIT(KNOB_THREADS)))
		return 0;
	tmax = job_max_threads(cfg, &tline);
	if (c->node_cpus > 0 && tmax > c->node_cpus) {
		util_seterr(err, "%s:%d: [SearchSpace] threads: %lld"
		    " threads, but the Slurm nodes that measure have"
		    " %d CPU%s (the smallest node of the partition);"
		    " expected at most %d", cfg->path, tline,
		    (long long)tmax, c->node_cpus,
		    c->node_cpus == 1 ? "" : "s", c->node_cpus);
		return -1;
	}
	if (c->node_cpus == 0 && tmax > c->ncpus) {
		util_seterr(err, "%s:%d: [SearchSpace] threads: %lld"
		    " threads on the %d CPU%s measurements use win"
		    " nothing; expected at most %d (or more CPUs:"
		    " --cpus, or cpus in autoschedd.conf)", cfg->path,
		    tline, (long long)tmax, c->ncpus,
		    c->ncpus == 1 ? "" : "s", c->ncpus);
		return -1;
	}
	return 0;
}

/*
 * An empty space for jo: a sweep's odd shape is skipped with why (0), any
 * other op's is an error (-1 with *err).
 */
static int
job_space_empty(const struct job *c, struct job_op *jo,
    const struct space_rules *rules, char **err)
{
	const struct cfg *cfg = c->cfg;
	const struct op_desc *op = jo->op;

	if (cfg->problem != NULL) {
		/* A sweep's odd shape does not sink the sweep. */
		space_free(jo->sp);
		jo->sp = NULL;
		jo->skipped = 1;
		jo->skip_reason = rules->ragged == 0 ?
		    "no config of [SearchSpace] fits this shape (cache "
		    "tiles must divide M, N and K)" :
		    "no config of [SearchSpace] fits this shape (a "
		    "register tile must fit in its cache tile, M, N and "
		    "K, and the vector registers)";
		return 0;
	}
	util_seterr(err, "%s: [SearchSpace] has no valid config "
	    "for %s (%s at %s): %s (M=%lld N=%lld K=%lld); widen "
	    "the lists, or leave them out for the backend's own",
	    cfg->path, op->name, op->kind, op->loc,
	    rules->ragged == 0 ? "every cache tile must divide "
	    "its dimension and every register tile its cache "
	    "tile" : "every register tile must fit in its cache "
	    "tile and the op, and in the vector registers",
	    (long long)op->m, (long long)op->n, (long long)op->k);
	return -1;
}

/*
 * The limits and the space of distinct op jo (skipped, with why, when a
 * sweep's shape fits no config). 0, or -1 with *err.
 */
static int
job_prepare_op(struct job *c, struct job_op *jo, struct knob_values *lists,
    int *warned, char **err)
{
	const struct cfg *cfg = c->cfg;
	const struct op_desc *op = jo->op;
	struct space_rules rules;
	size_t nl;

	if (job_check_memory(c, op, err) != 0)
		return -1;
	memset(&rules, 0, sizeof rules);
	c->be->rules(op, &rules);
	if (job_check_threads(c, &rules, err) != 0)
		return -1;
	c->rep.knobs = rules.knobs;
	job_threads_candidates(c, &rules);
	nl = job_knob_lists(cfg, rules.knobs, lists, c->be,
	    !*warned && !c->o->json);
	*warned = 1;
	if (space_new(op, lists, nl, &rules, &jo->sp, err) != 0) {
		char *m = xasprintf("%s: [SearchSpace] for %s: %s",
		    cfg->path, op->name, *err);

		free(*err);
		*err = m;
		return -1;
	}
	if (space_count(jo->sp) == 0)
		return job_space_empty(c, jo, &rules, err);
	jo->space_count = space_count(jo->sp);
	return 0;
}

/*
 * executor batch goes with `run --stage`/`--ingest` and the other way
 * round; its time is spent on another host, so no time limits; a stage
 * folder is new (its manifest not yet written). 0, or -1 with *err.
 */
static int
job_check_batch(const struct cfg *cfg, const struct job_opts *o, char **err)
{
	struct cfg_exec ex = cfg->exec;
	struct stat sb;
	char *m;
	int held;

	cfg_exec_merge(&ex, o->exec_default);
	if (ex.executor != CFG_EXEC_BATCH) {
		if (o->stage_dir == NULL && o->ingest_dir == NULL)
			return 0;
		util_seterr(err, "%s: --stage and --ingest are for [Env] executor"
		    " = batch; this cfg measures with executor %s", cfg->path,
		    ex.executor == CFG_EXEC_SLURM ? "slurm" : "local");
		return -1;
	}
	if (o->stage_dir == NULL && o->ingest_dir == NULL) {
		util_seterr(err, "%s: [Env] executor = batch: its measurements "
		    "are carried in a folder: run `autosched run %s --stage DIR`"
		    " (the service cannot carry them)", cfg->path, cfg->path);
		return -1;
	}
	if (cfg->time_limit > 0 || cfg->time_budget > 0) {
		util_seterr(err, "%s: [Env] %s with executor = batch: the "
		    "measurements' time is spent on another host, between runs;"
		    " give trial budgets instead", cfg->path, cfg->time_limit > 0 ?
		    "time_limit" : "time_budget");
		return -1;
	}
	if (o->stage_dir == NULL)
		return 0;
	m = util_path_join(o->stage_dir, "manifest");
	held = lstat(m, &sb) == 0;
	free(m);
	if (held) {
		util_seterr(err, "--stage %s: already holds a staged round (its "
		    "manifest): stage into a new folder", o->stage_dir);
		return -1;
	}
	return 0;
}

/*
 * Read and parse the program of job c: a [Problem] sweep's generated ops,
 * the text given, or input_file (never for a stored job). 0, or -1 with *err.
 */
static int
job_prepare_input(struct job *c, char **err)
{
	const struct cfg *cfg = c->cfg;
	const struct job_opts *o = c->o;
	size_t len;

	if (cfg->problem != NULL) {
		/* A [Problem] sweep: its ops, generated, are the input. */
		char *note = xasprintf("the [Problem] sweep of %s", cfg->path);
		char *name = xasprintf("%s[Problem]", cfg->path);
		int bad = o->mlir_text == NULL && generate_module(cfg->problem,
		    note, &c->mlir_text, err) != 0;
		const char *text = o->mlir_text ? o->mlir_text : c->mlir_text;

		bad = bad || analysis_parse(name, text, strlen(text), &c->an,
		    err) != 0;
		free(note);
		free(name);
		if (bad)
			return -1;
	} else if (o->mlir_text != NULL) {
		if (analysis_parse(cfg->input_file, o->mlir_text,
		    strlen(o->mlir_text), &c->an, err) != 0)
			return -1;
	} else if (o->job_id > 0) {
		/* A stored job runs its snapshot, never what its path holds now. */
		util_seterr(err, "job %lld: no snapshot of its program; the"
		    " service never reads a job's program from its path (submit"
		    " the job again)", (long long)o->job_id);
		return -1;
	} else {
		if (util_read_file(cfg->input_file, ANALYSIS_INPUT_MAX, &c->mlir_text, &len,
		    err) != 0)
			return -1;
		if (analysis_parse(cfg->input_file, c->mlir_text, len, &c->an,
		    err) != 0)
			return -1;
	}
	return 0;
}

/*
 * Find the backend of job c. A run (a work folder given) needs the backend's
 * tools: said now, while nothing is written (`space` only lists configs).
 * 0, or -1 with *err.
 */
static int
job_prepare_backend(struct job *c, char **err)
{
	const struct cfg *cfg = c->cfg;
	const struct job_opts *o = c->o;

	if ((c->be = backend_find(cfg->backend)) == NULL) {
		util_seterr(err, "%s: unknown backend \"%s\"", cfg->path,
		    cfg->backend);
		return -1;
	}
	if (o->work_dir != NULL && c->be->available != NULL) {
		struct backend_params p;

		memset(&p, 0, sizeof p);
		p.work_dir = o->work_dir;
		p.iree_bin = cfg->iree_bin;
		p.gpu_arch = cfg->gpu_arch;
		if (c->be->available(&p, err) != 0) {
			char *e = xasprintf("%s: %s", cfg->path, *err);

			free(*err);
			*err = e;
			return -1;
		}
	}
	return 0;
}

/*
 * Each distinct op of job c: skipped with why when not tunable or not the
 * backend's, else its limits and space; counts the tunable ops and their
 * uses. 0, or -1 with *err.
 */
static int
job_prepare_ops(struct job *c, char **err)
{
	struct knob_values lists[KNOB_COUNT];
	size_t i;
	int warned = 0;

	for (i = 0; i < c->nops; i++) {
		struct job_op *jo = &c->ops[i];
		const struct op_desc *op = jo->op;
		const char *why = NULL;

		jo->backend = c->be->name;
		if (!op->tunable) {
			jo->skipped = 1;
			jo->skip_reason = op->reason;
			continue;
		}
		if (!c->be->supports(op, &why)) {
			jo->skipped = 1;
			jo->skip_reason = why;
			continue;
		}
		if (job_prepare_op(c, jo, lists, &warned, err) != 0)
			return -1;
		if (jo->sp != NULL) {
			c->ntunable++;
			c->nuses += jo->nuses;
		}
	}
	return 0;
}

/*
 * The tuner's own keys, checked now while nothing is written: a tuner is
 * made for the first op with a space and dropped. 0, or -1 with *err.
 */
static int
job_check_tuner(const struct job *c, char **err)
{
	const struct cfg *cfg = c->cfg;
	size_t i;

	for (i = 0; i < c->nops; i++) {
		struct tuner_params tp;
		struct tuner t;
		const char **ek, **ev;
		int *el, bad;

		if (c->ops[i].sp == NULL)
			continue;
		steps_tuner_params(cfg, &tp, &ek, &ev, &el);
		bad = tuner_create(tuner_find(cfg->tuner), &tp, c->ops[i].op,
		    c->ops[i].sp, &t, err) != 0;
		if (!bad)
			tuner_destroy(&t);
		free(ek);
		free(ev);
		free(el);
		return bad ? -1 : 0;
	}
	return 0;
}

int
job_prepare(const struct cfg *cfg, const struct job_opts *o, struct job **out,
    char **err)
{
	struct job *c = xcalloc(1, sizeof *c);

	*out = NULL;
	c->cfg = cfg;
	c->o = o;
	c->run_lock = c->job_lock = c->op_lock = -1;
	c->lanes = 1;
	/*
	 * The ISA mlir-cpu builds for, before any op's rules: the cfg's cap,
	 * else AUTOSCHED_ISA's (run and space alike).
	 */
	backend_cpu_isa_set(cfg->isa);
	if (job_check_output(cfg, o, err) != 0 ||
	    job_check_batch(cfg, o, err) != 0)
		goto fail;
	if (job_prepare_input(c, err) != 0 ||
	    job_prepare_backend(c, err) != 0)
		goto fail;
	c->ncpus = o->cpus != NULL ? o->ncpus : util_ncpus();
	if (job_node_cpus(c, err) != 0)
		goto fail;
	job_group_ops(c);
	if (job_prepare_ops(c, err) != 0 || job_check_tuner(c, err) != 0)
		goto fail;
	if (c->ntunable == 0) {
		util_seterr(err, "%s: no op the %s backend can tune (%zu "
		    "matmul-like op%s found%s%s)", job_input_name(cfg),
		    c->be->name, analysis_count(c->an),
		    analysis_count(c->an) == 1 ? "" : "s",
		    c->nops ? "; first: " : "",
		    c->nops ? (c->ops[0].skip_reason ? c->ops[0].skip_reason :
		    "") : "");
		goto fail;
	}
	*out = c;
	return 0;
fail:
	job_free(c);
	return -1;
}

int *
job_default_cpus(const struct cfg *cfg, int *ncpus)
{
	int have = util_ncpus(), need = have, *cpus, i;
	size_t k;

	/* Threads listed: as many CPUs as the most threads; else all of them. */
	for (k = 0; k < cfg->nknobs; k++) {
		if (cfg->knobs[k].knob == KNOB_THREADS && cfg->knobs[k].n > 0)
			need = (int)cfg->knobs[k].values[cfg->knobs[k].n - 1];
	}
	if (need > have)
		need = have;
	if (need < 1)
		need = 1;
	cpus = xcalloc((size_t)need, sizeof *cpus);
	for (i = 0; i < need; i++)
		cpus[i] = i;
	*ncpus = need;
	return cpus;
}

size_t
job_nops(const struct job *c)
{
	return c->nops;
}

const struct op_desc *
job_op(const struct job *c, size_t i, const struct space **space,
    const char **skipped)
{
	*space = c->ops[i].sp;
	*skipped = c->ops[i].skipped ? (c->ops[i].skip_reason ?
	    c->ops[i].skip_reason : "not supported") : NULL;
	return c->ops[i].op;
}

size_t
job_op_uses(const struct job *c, size_t i, const size_t **idx)
{
	if (idx != NULL)
		*idx = c->ops[i].uses;
	return c->ops[i].nuses;
}

uint32_t
job_knobs(const struct job *c)
{
	return c->rep.knobs;
}

