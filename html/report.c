/*
 * The HTML report: reads jobs, trials and best configs through store.h and
 * writes one page with a sortable summary, a section per job (cfg, target,
 * status counts, times, noise floor) and one per op (convergence, every
 * trial, knobs against GFLOP/s, repeated measurements with their confidence
 * intervals, where the time went). Phases are plotted by name, whatever they
 * are. Every plotted point carries data-trial / data-gflops for checking.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/backend.h"
#include "best/best.h"
#include "build_config.h"
#include "html/html.h"
#include "html/html_int.h"
#include "search/space.h"
#include "store/store.h"
#include "util/util.h"

#define REPORT_PHASE_MAX	16	/* distinct phase names kept; more are "other" */
#define REPORT_CI_MAX		40	/* rows of the repeated-measurement chart */
/*
 * Points one scatter draws: a browser renders a few thousand SVG circles at
 * once; 100,000 trials of one op made a page of 121 MB it could not draw.
 */
#define REPORT_POINTS_MAX	2000

/* One trial as the report keeps it. */
struct rtrial {
	int64_t		 id, job_id, op_id, target_id;
	int		 phase;		/* index into report.phases */
	char		*config;
	struct config	 c;
	int		 status;
	double		 gflops, ms, min_ms, cv, compile_s, measure_s;
};

struct rop {
	int64_t		 id;
	char		*name, *signature;
	char		*ref;	/* the reference's routine, NULL if none */
};

struct report {
	const struct html_opts	*o;
	struct rtrial		*t;
	size_t			 nt, cap;
	struct rop		*ops;
	size_t			 nops;
	char			*phases[REPORT_PHASE_MAX];
	size_t			 nphases;
	struct store_job	*jobs;	/* the selected jobs, oldest first */
	size_t			 njobs;
	int			 too_many;
};

/*
 * A copy of a store string safe to print raw inside HTML text and attribute
 * values: markup characters and control characters become '_'. Caller frees.
 */
static char *
report_clean(const char *s)
{
	char *d = xstrdup(s != NULL ? s : ""), *p;

	for (p = d; *p != '\0'; p++) {
		if (strchr("<>&\"'", *p) != NULL || (unsigned char)*p < 0x20)
			*p = '_';
	}
	return d;
}

static int
report_phase(struct report *r, const char *name)
{
	char *clean = report_clean(name != NULL ? name : "?");
	size_t i;

	for (i = 0; i < r->nphases; i++) {
		if (strcmp(r->phases[i], clean) == 0) {
			free(clean);
			return (int)i;
		}
	}
	if (r->nphases == REPORT_PHASE_MAX) {
		free(clean);
		return (int)r->nphases - 1;
	}
	r->phases[r->nphases] = clean;
	return (int)r->nphases++;
}

static int
report_phase_is(const struct report *r, int p, const char *name)
{
	return strcmp(r->phases[p], name) == 0;
}

static int
report_match_op(const struct report *r, const char *name, const char *sig)
{
	const char *f = r->o->op_filter;

	return f == NULL || *f == '\0' || strstr(name, f) != NULL ||
	    strstr(sig, f) != NULL;
}

static int
report_collect(const struct store_trial *t, const struct op_desc *op,
    void *arg)
{
	struct report *r = arg;
	struct rtrial *x;
	size_t i;

	if (r->o->job_id > 0 && t->job_id != r->o->job_id)
		return 0;
	for (i = 0; i < r->nops; i++) {
		if (r->ops[i].id == t->op_id)
			break;
	}
	if (i == r->nops) {
		char *sig = store_op_signature(op);
		const char *name = op->name ? op->name : sig;

		if (!report_match_op(r, name, sig)) {
			free(sig);
			/* Remember the op as excluded with an empty name. */
			r->ops = xrealloc(r->ops, (r->nops + 1) * sizeof *r->ops);
			r->ops[r->nops].id = t->op_id;
			r->ops[r->nops].name = NULL;
			r->ops[r->nops].signature = NULL;
			r->ops[r->nops].ref = NULL;
			r->nops++;
			return 0;
		}
		r->ops = xrealloc(r->ops, (r->nops + 1) * sizeof *r->ops);
		r->ops[r->nops].id = t->op_id;
		r->ops[r->nops].name = xstrdup(name);
		r->ops[r->nops].signature = sig;
		r->ops[r->nops].ref = NULL;
		r->nops++;
	} else if (r->ops[i].name == NULL)
		return 0;
	if (r->ops[i].ref == NULL && t->result.ref_routine[0] != '\0')
		r->ops[i].ref = report_clean(t->result.ref_routine);
	if (r->nt == HTML_TRIAL_MAX) {
		r->too_many = 1;
		return 1;
	}
	if (r->nt == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 256;
		r->t = xrealloc(r->t, r->cap * sizeof *r->t);
	}
	x = &r->t[r->nt++];
	memset(x, 0, sizeof *x);
	x->id = t->id;
	x->job_id = t->job_id;
	x->op_id = t->op_id;
	x->target_id = t->target_id;
	x->phase = report_phase(r, t->phase);
	x->config = report_clean(t->config_name);
	x->c = t->config;
	x->status = t->result.status;
	x->gflops = t->result.gflops;
	x->ms = t->result.median_ms;
	x->min_ms = t->result.min_ms;
	x->cv = t->result.cv;
	x->compile_s = t->result.compile_s;
	x->measure_s = t->result.measure_s;
	return 0;
}

static void
report_free(struct report *r)
{
	size_t i;

	for (i = 0; i < r->nt; i++)
		free(r->t[i].config);
	free(r->t);
	for (i = 0; i < r->nops; i++) {
		free(r->ops[i].name);
		free(r->ops[i].signature);
		free(r->ops[i].ref);
	}
	free(r->ops);
	for (i = 0; i < r->nphases; i++)
		free(r->phases[i]);
	for (i = 0; i < r->njobs; i++)
		store_job_clear(&r->jobs[i]);
	free(r->jobs);
}

/* A trial whose figures mean something: it ran and verified. */
static int
report_valid(const struct rtrial *t)
{
	return (t->status == TRIAL_OK || t->status == TRIAL_UNSTABLE) &&
	    t->gflops > 0;
}

static int
dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
report_median(double *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof *v, dbl_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define REPORT_LEVEL_MAX	8

/* One config's median in a phase: a level drawn across the convergence chart. */
struct rlevel {
	const char	*phase;
	const char	*config;	/* borrowed from the trials */
	double		 median;
	char		 label[64];
};

/*
 * The median GFLOP/s of each config of op measured in phase (the baseline
 * may be measured at several thread counts), into lv; returns how many.
 * label is shown, e.g. "baseline thr_2" when there are several.
 */
static size_t
report_levels(const struct report *r, int64_t op, const char *phase,
    const char *shown, struct rlevel *lv, size_t max)
{
	double *v = xcalloc(r->nt + 1, sizeof *v);
	size_t i, j, k, n = 0, nv;

	for (i = 0; i < r->nt && n < max; i++) {
		const struct rtrial *t = &r->t[i];

		if (t->op_id != op || !report_phase_is(r, t->phase, phase) ||
		    !report_valid(t))
			continue;
		for (j = 0; j < n && strcmp(lv[j].config, t->config) != 0; j++)
			;
		if (j < n)
			continue;
		for (k = i, nv = 0; k < r->nt; k++) {
			if (r->t[k].op_id == op && r->t[k].phase == t->phase &&
			    report_valid(&r->t[k]) &&
			    strcmp(r->t[k].config, t->config) == 0)
				v[nv++] = r->t[k].gflops;
		}
		lv[n].phase = r->phases[t->phase];
		lv[n].config = t->config;
		lv[n].median = report_median(v, nv);
		n++;
	}
	for (j = 0; j < n; j++) {
		const char *thr = strstr(lv[j].config, "thr_");

		if (n > 1 && thr != NULL)
			snprintf(lv[j].label, sizeof lv[j].label, "%s %s", shown,
			    thr);
		else
			snprintf(lv[j].label, sizeof lv[j].label, "%s", shown);
	}
	free(v);
	return n;
}

static void
report_time(FILE *f, double t)
{
	char buf[64];
	time_t s = (time_t)t;
	struct tm tm;

	if (t <= 0) {
		fputs("-", f);
		return;
	}
	gmtime_r(&s, &tm);
	strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
	fputs(buf, f);
}

static void
report_head(FILE *f, const struct report *r)
{
	fputs(HTML_MAGIC "<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	    "<title>autosched report</title>\n<style>\n"
	    "body{font:14px/1.4 sans-serif;margin:24px;color:#222;max-width:1400px}\n"
	    "h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;"
	    "margin-top:32px}h3{font-size:15px;margin:18px 0 6px}\n"
	    "table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ddd;"
	    "padding:3px 8px;text-align:left}th{background:#f3f3f3}\n"
	    "td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
	    "table.sortable th{cursor:pointer}table.sortable th:after{content:' \\2195';"
	    "color:#aaa}\n"
	    "pre{background:#f7f7f7;padding:8px;overflow:auto;max-height:320px}\n"
	    ".charts{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}\n"
	    "svg{background:#fff;border:1px solid #eee}\n"
	    "svg .frame{fill:none;stroke:#999}svg .grid{stroke:#eee}\n"
	    "svg .tk{font-size:10px;fill:#555}svg .ax{font-size:11px;fill:#333}\n"
	    "svg .ttl{font-size:12px;font-weight:bold;fill:#222}\n"
	    ".legend span{display:inline-block;margin-right:14px}\n"
	    ".wrap{overflow-x:auto;max-width:100%}\n"
	    ".sw{display:inline-block;width:10px;height:10px;margin-right:4px;"
	    "border-radius:5px}\n.note{color:#666;font-size:12px}\n"
	    "</style></head>\n", f);
	fprintf(f, "<body data-js-ok=\"0\" data-js-errors=\"0\">\n"
	    "<h1>autosched report</h1>\n<p class=\"note\">Generated by autosched "
	    "%s at ", AUTOSCHED_VERSION);
	report_time(f, util_wall());
	fputs(" from the store <code>", f);
	html_esc(f, r->o->db_path ? r->o->db_path : "?");
	fputs("</code>", f);
	if (r->o->job_id > 0)
		fprintf(f, ", job %lld", (long long)r->o->job_id);
	if (r->o->op_filter != NULL) {
		fputs(", ops matching <code>", f);
		html_esc(f, r->o->op_filter);
		fputs("</code>", f);
	}
	fputs(".</p>\n<p>autosched tunes the matmuls of an MLIR program: for "
	    "each op it compiles and measures candidate schedules (tile sizes, "
	    "register tiles, threads), the <b>tuner</b> choosing what to try next. "
	    "Phases: <b>baseline</b> is the compiler's untuned default, "
	    "<b>tune</b> the search, <b>confirm</b> re-measures the best few "
	    "side by side to choose, <b>final</b> measures the chosen config "
	    "again after the choice (the figure reported), <b>noise</b> "
	    "re-measures the default through the job (how much a figure moves "
	    "by itself), <b>reference</b> is a library on the same shape "
	    "(OpenBLAS or oneDNN on a CPU, cuBLAS on a GPU); any "
	    "other phase in the store is drawn under its own name. "
	    "Higher GFLOP/s is better. Failed trials (did not compile, crashed, "
	    "wrong result, …) are drawn as crosses on the zero line.</p>\n", f);
}

static void
report_legend_phases(FILE *f, const struct report *r, int64_t op)
{
	size_t p, i, n;

	fputs("<div class=\"legend\">", f);
	for (p = 0; p < r->nphases; p++) {
		for (i = n = 0; i < r->nt; i++)
			n += r->t[i].op_id == op && r->t[i].phase == (int)p;
		if (n == 0)
			continue;
		fprintf(f, "<span><i class=\"sw\" style=\"background:%s\"></i>",
		    html_phase_color(r->phases[p]));
		html_esc(f, r->phases[p]);
		fprintf(f, " (%zu)</span>", n);
	}
	fputs("</div>\n", f);
}

/* A figure not measured: "–" and why, in the cell's title and its text. */
static void
report_missing(FILE *f, const char *why)
{
	fputs("<td class=\"n missing\" data-v=\"0\" title=\"", f);
	html_esc(f, why);
	fputs("\">–<br><span class=\"note\">", f);
	html_esc(f, why);
	fputs("</span></td>", f);
}

/* After "vs default": the job's paired ratio with its 95% interval. */
static void
report_summary_ci(FILE *f, const struct store_best *b)
{
	if (b->choice_reason[0] == '\0' || b->speedup_rounds < 2)
		return;
	if (strcmp(b->choice_reason, "faster than the default") == 0)
		fprintf(f, "<br><span class=\"note ci\">%.2fx [%.2f, %.2f] "
		    "over %d rounds</span>", b->speedup, b->speedup_lo,
		    b->speedup_hi, b->speedup_rounds);
	else {
		fputs("<br><span class=\"note ci\">", f);
		html_esc(f, b->choice_reason);
		fprintf(f, " (%.2fx [%.2f, %.2f])</span>", b->speedup,
		    b->speedup_lo, b->speedup_hi);
	}
}

/* The "vs library" and "of peak" cells: measured figures, else "–" and why. */
static void
report_summary_ref(FILE *f, const struct store_best *b)
{
	if (b->reference_gflops > 0) {
		fprintf(f, "<td class=\"n\" data-v=\"%.6f\">%.2fx<br><span "
		    "class=\"note\">", b->gflops / b->reference_gflops,
		    b->gflops / b->reference_gflops);
		html_esc(f, b->reference_routine[0] ? b->reference_routine :
		    "reference");
		fprintf(f, " %.1f GFLOP/s%s</span></td>", b->reference_gflops,
		    b->reference_same ? "" : ", not the op's precision");
	} else
		report_missing(f, "no reference measured in the winning job");
	if (b->peak_gflops > 0) {
		fprintf(f, "<td class=\"n\" data-v=\"%.6f\">%.1f%%<br><span "
		    "class=\"note\">of ", b->gflops / b->peak_gflops,
		    100 * b->gflops / b->peak_gflops);
		html_esc(f, b->peak_routine);
		fprintf(f, " %.1f GFLOP/s</span></td>", b->peak_gflops);
	} else
		report_missing(f, b->gpu[0] != '\0' ? "the harness measured no "
		    "peak for these types" : "no peak measured by this backend");
}

/* The GPU that measured the winner, with its clocks then ("–": not known). */
static void
report_summary_gpu(FILE *f, const struct store_best *b)
{
	if (b->gpu[0] == '\0') {
		report_missing(f, "not measured on a GPU");
		return;
	}
	fputs("<td class=\"gpu\">", f);
	html_esc(f, b->gpu);
	if (b->sm_mhz > 0)
		fprintf(f, "<br>SM %d MHz", b->sm_mhz);
	else
		fputs("<br>SM – (not known: no NVML)", f);
	if (b->mem_mhz > 0)
		fprintf(f, ", memory %d MHz", b->mem_mhz);
	else
		fputs(", memory –", f);
	if (b->temp_c > 0)
		fprintf(f, ", %d °C", b->temp_c);
	else
		fputs(", temperature –", f);
	fputs("</td>", f);
}

/* The summary table: the best config per op, as `autosched best` says. */
static int
report_summary(FILE *f, struct report *r, struct store *st, char **err)
{
	struct store_best *rows = NULL;
	size_t n = 0, i;
	int gpu;

	if (best_configs(st, r->o->op_filter, r->o->job_id, &rows, &n, err) != 0)
		return -1;
	fputs("<h2 id=\"summary\">Summary: the best config of each op</h2>\n"
	    "<p class=\"note\">As <code>autosched best</code>: the figure "
	    "measured after the choice where a job has one (final, else "
	    "confirm: <i>re-measured</i> yes), else the best tune figure. Click "
	    "a column to sort.</p>\n"
	    "<div class=\"wrap\"><table class=\"sortable\" id=\"best\">"
	    "<thead><tr><th>op</th>"
	    "<th>best config</th><th>GFLOP/s</th><th>ms</th><th>vs baseline "
	    "(the job's 95% CI)</th>"
	    "<th>vs library</th><th>of peak</th>"
	    "<th>tune trials</th><th>re-measured</th>"
	    "<th>job</th><th>target</th>", f);
	for (i = gpu = 0; i < n; i++)
		gpu |= rows[i].gpu[0] != '\0';
	if (gpu)
		fputs("<th>GPU (SM clock, memory clock, temperature)</th>", f);
	fputs("</tr></thead><tbody>\n", f);
	for (i = 0; i < n; i++) {
		const struct store_best *b = &rows[i];
		double vb = b->baseline_gflops > 0 ? b->gflops / b->baseline_gflops : 0;

		fputs("<tr><td><a href=\"#op-", f);
		fprintf(f, "%lld\">", (long long)b->op_id);
		html_esc(f, b->op_name);
		fputs("</a></td><td>", f);
		html_esc(f, b->config_name);
		fprintf(f, "</td><td class=\"n\">%.2f</td><td class=\"n\">%.4f</td>",
		    b->gflops, b->median_ms);
		if (vb > 0)
			fprintf(f, "<td class=\"n\">%.2fx", vb);
		else
			fputs("<td class=\"n\" data-v=\"0\">-", f);
		report_summary_ci(f, b);
		fputs("</td>", f);
		report_summary_ref(f, b);
		fprintf(f, "<td class=\"n\">%lld</td><td>%s</td><td class=\"n\">"
		    "%lld</td><td>", (long long)b->trials, b->confirmed ? "yes" :
		    "no", (long long)b->job_id);
		html_esc(f, b->cpu);
		fputs("</td>", f);
		if (gpu)
			report_summary_gpu(f, b);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);
	if (n == 0)
		fputs("<p>Nothing valid was found for this selection yet.</p>\n", f);
	for (i = 0; i < n; i++)
		store_best_clear(&rows[i]);
	free(rows);
	return 0;
}

/* The noise floor of a job's measurements, in words. */
static void
report_noise(FILE *f, const struct report *r, int64_t job)
{
	double *cv = xcalloc(r->nt + 1, sizeof *cv), *g;
	size_t i, j, n = 0, ng = 0;
	int noise = -1, any = 0;

	for (i = 0; i < r->nphases; i++) {
		if (strcmp(r->phases[i], "noise") == 0)
			noise = (int)i;
	}
	fputs("<p><b>Noise floor.</b> ", f);
	if (noise >= 0) {
		/* The same config measured across the job: its spread is the floor. */
		g = xcalloc(r->nt + 1, sizeof *g);
		for (j = 0; j < r->nops; j++) {
			double mean = 0, sd = 0;

			if (r->ops[j].name == NULL)
				continue;
			for (i = ng = 0; i < r->nt; i++) {
				if (r->t[i].job_id == job && r->t[i].op_id ==
				    r->ops[j].id && r->t[i].phase == noise &&
				    report_valid(&r->t[i]))
					g[ng++] = r->t[i].gflops;
			}
			if (ng < 2)
				continue;
			for (i = 0; i < ng; i++)
				mean += g[i] / (double)ng;
			for (i = 0; i < ng; i++)
				sd += (g[i] - mean) * (g[i] - mean) / (double)(ng - 1);
			sd = sqrt(sd);
			html_esc(f, r->ops[j].name);
			fprintf(f, ": one config re-measured %zu times across the "
			    "job varies by %.1f%% (standard deviation / mean). ",
			    ng, mean > 0 ? 100 * sd / mean : 0);
			any = 1;
		}
		free(g);
	}
	/*
	 * Within a trial: the gap between the median and the fastest
	 * repetition is robust to the few slow outliers a shared machine
	 * gives (they inflate the CV, which is shown beside it).
	 */
	g = xcalloc(r->nt + 1, sizeof *g);
	for (i = ng = 0; i < r->nt; i++) {
		const struct rtrial *t = &r->t[i];

		if (t->job_id != job || !report_valid(t))
			continue;
		if (t->cv > 0)
			cv[n++] = t->cv;
		if (t->ms > 0 && t->min_ms > 0 && t->min_ms <= t->ms)
			g[ng++] = (t->ms - t->min_ms) / t->ms;
	}
	if (ng > 0)
		fprintf(f, "Within a trial the median repetition is %.2f%% "
		    "slower than the fastest (median over %zu valid trials); "
		    "differences between configs smaller than a few times this "
		    "are noise. ", 100 * report_median(g, ng), ng);
	if (n > 0)
		fprintf(f, "The median coefficient of variation of the "
		    "repetitions is %.2f%% (slow outliers raise it).",
		    100 * report_median(cv, n));
	free(g);
	if (!any && n == 0 && ng == 0)
		fputs("no valid trial to judge it by.", f);
	fputs("</p>\n", f);
	free(cv);
}

/* Where a job's time went: compile, measure, and the rest (tuner, codegen). */
static void
report_job_time(FILE *f, const struct report *r, const struct store_job *j)
{
	double comp = 0, meas = 0, wall, other, tot;
	struct chart c;
	size_t i;

	for (i = 0; i < r->nt; i++) {
		if (r->t[i].job_id != j->id)
			continue;
		comp += r->t[i].compile_s;
		meas += r->t[i].measure_s;
	}
	wall = j->started > 0 && j->finished > j->started ?
	    j->finished - j->started : 0;
	other = wall > comp + meas ? wall - comp - meas : 0;
	tot = comp + meas + other;
	fprintf(f, "<p><b>Time.</b> compile %.1f s, measure and verify %.1f s",
	    comp, meas);
	if (wall > 0)
		fprintf(f, ", tuner and overhead %.1f s (the rest of %.1f s wall)",
		    other, wall);
	fputs(".</p>\n", f);
	if (tot <= 0)
		return;
	chart_begin(&c, f, 520, 90, "chart-time", "where the job's time went",
	    "seconds", "", 0, chart_nice_max(tot), 0, 1, 0);
	{
		const double v[3] = { comp, meas, other };
		const char *const col[3] = { "#d62728", "#1f77b4", "#bcbd22" };
		const char *const lab[3] = { "compile", "measure", "tuner+other" };
		double x = 0;
		int k;

		for (k = 0; k < 3; k++) {
			if (v[k] <= 0)
				continue;
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			    "height=\"%.1f\" fill=\"%s\"><title>%s %.1f s</title>"
			    "</rect>\n", chart_x(&c, x), chart_y(&c, 0.8),
			    chart_x(&c, x + v[k]) - chart_x(&c, x),
			    chart_y(&c, 0.2) - chart_y(&c, 0.8), col[k], lab[k],
			    v[k]);
			x += v[k];
		}
	}
	chart_end(&c);
	fputs("<div class=\"legend\"><span><i class=\"sw\" style=\"background:"
	    "#d62728\"></i>compile</span><span><i class=\"sw\" style=\""
	    "background:#1f77b4\"></i>measure + verify</span><span><i "
	    "class=\"sw\" style=\"background:#bcbd22\"></i>tuner and overhead"
	    "</span></div>\n", f);
}

/* The median GFLOP/s of op's valid trials of job in phase at threads (0 any). */
static double
report_phase_median(const struct report *r, int64_t job, int64_t op,
    const char *phase, int64_t threads)
{
	double *v = xcalloc(r->nt + 1, sizeof *v), m;
	size_t i, n = 0;

	for (i = 0; i < r->nt; i++) {
		const struct rtrial *t = &r->t[i];

		if (t->job_id == job && t->op_id == op && report_valid(t) &&
		    report_phase_is(r, t->phase, phase) &&
		    (threads == 0 || t->c.v[KNOB_THREADS] == threads))
			v[n++] = t->gflops;
	}
	m = report_median(v, n);
	free(v);
	return m;
}

/* The best row of op in rows, or NULL when it has none. */
static const struct store_best *
report_model_best(const struct store_best *rows, size_t nrows, int64_t op)
{
	size_t k;

	for (k = 0; k < nrows && rows[k].op_id != op; k++)
		;
	return k < nrows ? &rows[k] : NULL;
}

/*
 * Each op's time in the model before (occurrences x the untuned default at 1
 * thread) and after (occurrences x the chosen config), per unit of work, into
 * before and after; their sums into *tb and *ta.
 */
static void
report_model_times(const struct report *r, const struct store_job *j,
    const struct store_job_op *jo, size_t njo, const struct store_best *rows,
    size_t nrows, double *before, double *after, double *tb, double *ta)
{
	const struct store_best *b;
	size_t i;

	for (i = 0; i < njo; i++) {
		double g0 = report_phase_median(r, j->id, jo[i].op_id,
		    "baseline", 1);

		b = report_model_best(rows, nrows, jo[i].op_id);
		/* Times as flop counts over GFLOP/s: the same unit both sides. */
		if (g0 > 0)
			before[i] = (double)jo[i].occurrences / g0;
		if (b != NULL && b->gflops > 0)
			after[i] = (double)jo[i].occurrences / b->gflops;
		else
			after[i] = before[i];
	}
	/* Per unit of work: scale each op's 1/GFLOP/s by its flops. */
	for (i = 0; i < njo; i++) {
		double fl = 0;

		b = report_model_best(rows, nrows, jo[i].op_id);
		if (b != NULL && b->gflops > 0 && b->median_ms > 0)
			fl = b->gflops * b->median_ms;	/* MFLOP */
		before[i] *= fl;
		after[i] *= fl;
		*tb += before[i];
		*ta += after[i];
	}
}

/* One op's row of the model's table: its uses, tune trials, times, speedup. */
static void
report_model_op(FILE *f, const struct report *r, const struct store_job *j,
    const struct store_job_op *jo, double before, double after, double tb,
    double ta)
{
	const char *name = "?";
	size_t t, k, nt;

	for (t = 0; t < r->nops; t++) {
		if (r->ops[t].id == jo->op_id && r->ops[t].name != NULL)
			name = r->ops[t].name;
	}
	for (nt = 0, k = 0; k < r->nt; k++) {
		if (r->t[k].job_id == j->id && r->t[k].op_id ==
		    jo->op_id && report_phase_is(r, r->t[k].phase,
		    "tune"))
			nt++;
	}
	fprintf(f, "<tr data-op=\"%lld\"><td>", (long long)jo->op_id);
	html_esc(f, name);
	fprintf(f, "</td><td class=\"n\">%lld</td><td class=\"n\">%zu"
	    "</td><td class=\"n\">%.3f</td><td class=\"n\">%.1f%%</td>"
	    "<td class=\"n\">%.3f</td><td class=\"n\">%.1f%%</td>"
	    "<td class=\"n\">%.2fx</td></tr>\n",
	    (long long)jo->occurrences, nt, before,
	    tb > 0 ? 100 * before / tb : 0, after,
	    ta > 0 ? 100 * after / ta : 0,
	    after > 0 ? before / after : 0);
}

/*
 * The model (a job that recorded its distinct ops): per op its occurrences,
 * the trials the scheduler gave it, its share of the model's matmul time
 * before (occurrences x the untuned default at 1 thread) and after
 * (occurrences x the chosen config), and its speedup.
 */
static void
report_model(FILE *f, const struct report *r, struct store *st,
    const struct store_job *j)
{
	struct store_job_op *jo = NULL;
	struct store_best *rows = NULL;
	size_t njo = 0, nrows = 0, i;
	double *before, *after, tb = 0, ta = 0;
	char *err = NULL;

	if (store_job_op_list(st, j->id, &jo, &njo, &err) != 0 || njo == 0)
		goto out;
	if (best_configs(st, NULL, j->id, &rows, &nrows, &err) != 0)
		goto out;
	before = xcalloc(njo, sizeof *before);
	after = xcalloc(njo, sizeof *after);
	report_model_times(r, j, jo, njo, rows, nrows, before, after, &tb,
	    &ta);
	fputs("<h3>The model: where its matmul time goes</h3>\n"
	    "<p class=\"note\">Each distinct op once, with how many times the "
	    "program uses it; time = occurrences x one run, before (the "
	    "untuned default, 1 thread) and after (the config chosen). Trials: "
	    "what the scheduler gave the op.</p>\n<table class=\"sortable "
	    "model\"><thead><tr><th>op</th><th>uses</th><th>tune trials</th>"
	    "<th>ms before</th><th>share before</th><th>ms after</th>"
	    "<th>share after</th><th>speedup</th></tr></thead><tbody>\n", f);
	for (i = 0; i < njo; i++)
		report_model_op(f, r, j, &jo[i], before[i], after[i], tb, ta);
	fprintf(f, "</tbody><tfoot><tr><th>all</th><td></td><td></td>"
	    "<td class=\"n\">%.3f</td><td></td><td class=\"n\">%.3f</td>"
	    "<td></td><td class=\"n\">%.2fx</td></tr></tfoot></table>\n", tb,
	    ta, ta > 0 ? tb / ta : 0);
	free(before);
	free(after);
out:
	for (i = 0; i < nrows; i++)
		store_best_clear(&rows[i]);
	free(rows);
	for (i = 0; i < njo; i++)
		free(jo[i].locations);
	free(jo);
	free(err);
}

/* A row of a job's facts: name, then the time *t, or else text escaped. */
static void
report_fact(FILE *f, const char *name, const char *text, const double *t)
{
	fprintf(f, "<tr><th>%s</th><td>", name);
	if (t != NULL)
		report_time(f, *t);
	else
		html_esc(f, text);
	fputs("</td></tr>", f);
}

/* A job's facts: its state, cfg, input, tuner, trials and times. */
static void
report_job_facts(FILE *f, const struct store_job *j)
{
	fputs("<tr><th>state</th><td>", f);
	html_esc(f, j->state);
	if (j->error != NULL) {
		fputs(" (", f);
		html_esc(f, j->error);
		fputs(")", f);
	}
	fputs("</td></tr>", f);
	report_fact(f, "cfg", j->cfg_path, NULL);
	report_fact(f, "input", j->mlir_path, NULL);
	report_fact(f, "tuner", j->tuner, NULL);
	fprintf(f, "<tr><th>trials</th><td>%lld of %lld</td></tr>",
	    (long long)j->trials_done, (long long)j->n_trial);
	report_fact(f, "created", NULL, &j->created);
	report_fact(f, "started", NULL, &j->started);
	report_fact(f, "finished", NULL, &j->finished);
}

/* A job's target row: the CPU, backend, toolchain and GPU of its best rows. */
static void
report_job_target(FILE *f, struct store *st, const struct store_job *j)
{
	struct store_best *rows = NULL;
	size_t nrows = 0, i;
	char *err = NULL;

	if (best_configs(st, NULL, j->id, &rows, &nrows, &err) == 0 && nrows > 0) {
		fputs("<tr><th>target</th><td>", f);
		html_esc(f, rows[0].cpu);
		fputs("; backend ", f);
		html_esc(f, rows[0].backend);
		fputs("; toolchain ", f);
		html_esc(f, rows[0].toolchain);
		if (rows[0].gpu[0] != '\0') {
			fputs("; measured on ", f);
			html_esc(f, rows[0].gpu);
		}
		fputs("</td></tr>", f);
	}
	for (i = 0; i < nrows; i++)
		store_best_clear(&rows[i]);
	free(rows);
	free(err);
}

/* A job's trial status counts, phase by phase. */
static void
report_job_counts(FILE *f, const struct report *r, const struct store_job *j)
{
	size_t i, p;
	int s;

	fputs("<table class=\"counts\"><tr><th>phase</th>", f);
	for (s = 0; s < TRIAL_STATUS_COUNT; s++)
		fprintf(f, "<th>%s</th>", trial_status_name(s));
	fputs("<th>total</th></tr>\n", f);
	for (p = 0; p < r->nphases; p++) {
		size_t cnt[TRIAL_STATUS_COUNT + 1] = { 0 }, tot = 0;

		for (i = 0; i < r->nt; i++) {
			if (r->t[i].job_id != j->id || r->t[i].phase != (int)p)
				continue;
			s = r->t[i].status;
			cnt[s >= 0 && s < TRIAL_STATUS_COUNT ? s :
			    TRIAL_STATUS_COUNT]++;
			tot++;
		}
		if (tot == 0)
			continue;
		fputs("<tr><td>", f);
		html_esc(f, r->phases[p]);
		fputs("</td>", f);
		for (s = 0; s < TRIAL_STATUS_COUNT; s++)
			fprintf(f, "<td class=\"n\" data-status=\"%s\">%zu</td>",
			    trial_status_name(s), cnt[s]);
		fprintf(f, "<td class=\"n\">%zu</td></tr>\n", tot);
	}
	fputs("</table>\n", f);
}

/* A job's section: its facts, counts, model, noise, time and cfg. */
static void
report_job(FILE *f, const struct report *r, struct store *st,
    const struct store_job *j)
{
	fprintf(f, "<h2 id=\"job-%lld\">Job %lld</h2>\n<table>", (long long)j->id,
	    (long long)j->id);
	report_job_facts(f, j);
	report_job_target(f, st, j);
	fputs("</table>\n", f);
	report_job_counts(f, r, j);
	report_model(f, r, st, j);
	report_noise(f, r, j->id);
	report_job_time(f, r, j);
	fputs("<details><summary>the cfg as run</summary><pre>", f);
	html_esc(f, j->cfg_text);
	fputs("</pre></details>\n", f);
}

/* Convergence: best so far of the tune trials per job, and the levels. */
static void
report_convergence(FILE *f, const struct report *r, int64_t op,
    const struct rlevel *lv, size_t nlv, double ymax)
{
	static const char *const cols[] = { "#1f77b4", "#d62728", "#2ca02c",
	    "#9467bd", "#ff7f0e", "#17becf" };
	struct chart c;
	size_t i, j, n, xmax = 1;

	for (j = 0; j < r->njobs; j++) {
		for (i = n = 0; i < r->nt; i++)
			n += r->t[i].op_id == op && r->t[i].job_id == r->jobs[j].id &&
			    report_phase_is(r, r->t[i].phase, "tune");
		if (n > xmax)
			xmax = n;
	}
	chart_begin(&c, f, 560, 300, "chart-conv", "convergence: best so far",
	    "tune trial #", "GFLOP/s", 0, (double)xmax, 0, ymax, 1);
	for (i = 0; i < nlv; i++)
		chart_hline(&c, lv[i].median, html_phase_color(lv[i].phase),
		    lv[i].label);
	for (j = 0; j < r->njobs; j++) {
		const char *col = cols[j % (sizeof cols / sizeof cols[0])];
		double best = 0;
		int started = 0;

		n = 0;
		for (i = 0; i < r->nt; i++) {
			const struct rtrial *t = &r->t[i];

			if (t->op_id != op || t->job_id != r->jobs[j].id ||
			    !report_phase_is(r, t->phase, "tune"))
				continue;
			n++;
			if (report_valid(t) && t->gflops > best) {
				if (!started)
					fprintf(f, "<polyline class=\"conv\" "
					    "data-job=\"%lld\" fill=\"none\" "
					    "stroke=\"%s\" stroke-width=\"2\" "
					    "points=\"", (long long)r->jobs[j].id,
					    col);
				else
					fprintf(f, " %.1f,%.1f", chart_x(&c,
					    (double)n), chart_y(&c, best));
				best = t->gflops;
				fprintf(f, " %.1f,%.1f", chart_x(&c, (double)n),
				    chart_y(&c, best));
				started = 1;
			}
		}
		if (started) {
			fprintf(f, " %.1f,%.1f\"><title>job %lld (", chart_x(&c,
			    (double)n), chart_y(&c, best),
			    (long long)r->jobs[j].id);
			html_esc(f, r->jobs[j].tuner);
			fprintf(f, "): best %.2f GFLOP/s</title></polyline>\n",
			    best);
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\" "
			    "fill=\"%s\">job %lld ", c.ml + 6,
			    c.mt + 14 + 12 * (double)j, col,
			    (long long)r->jobs[j].id);
			html_esc(f, r->jobs[j].tuner);
			fputs("</text>\n", f);
		}
	}
	chart_end(&c);
}

/* The trials a chart is about (r is one op's view). */
static int
pick_any(const struct report *r, const struct rtrial *t)
{
	(void)r;
	(void)t;
	return 1;
}

static int
pick_tune_valid(const struct report *r, const struct rtrial *t)
{
	return report_phase_is(r, t->phase, "tune") && report_valid(t);
}

/*
 * Which trials of the op r views a chart draws, a flag per trial: every one
 * pick accepts when they are at most REPORT_POINTS_MAX; else each that
 * improved the best so far (at most half the points: evenly thinned, the
 * best kept) and an even sample of the others. *nshown of *ntotal are drawn.
 * Caller frees.
 */
static unsigned char *
report_thin(const struct report *r,
    int (*pick)(const struct report *, const struct rtrial *),
    size_t *nshown, size_t *ntotal)
{
	unsigned char *keep = xcalloc(r->nt + 1, 1);
	size_t i, n = 0, ni = 0, j, stride, budget;
	double best = 0;

	for (i = 0; i < r->nt; i++) {
		if (!pick(r, &r->t[i]))
			continue;
		n++;
		keep[i] = 1;
		if (report_valid(&r->t[i]) && r->t[i].gflops > best) {
			best = r->t[i].gflops;
			keep[i] = 2;		/* an improvement */
			ni++;
		}
	}
	*ntotal = n;
	*nshown = n;
	if (n <= REPORT_POINTS_MAX) {
		for (i = 0; i < r->nt; i++)
			keep[i] = keep[i] != 0;
		return keep;
	}
	/* The improvements: every stride-th, and the last (the best). */
	budget = REPORT_POINTS_MAX / 2;
	stride = (ni + budget - 1) / budget;
	*nshown = 0;
	for (i = j = 0; i < r->nt; i++) {
		if (keep[i] != 2)
			continue;
		keep[i] = (j % stride == 0 || j == ni - 1) ? 3 : 1;
		*nshown += keep[i] == 3;
		j++;
	}
	/* The others: an even sample filling the rest of the points. */
	budget = REPORT_POINTS_MAX - *nshown;
	stride = (n - *nshown + budget - 1) / budget;
	for (i = j = 0; i < r->nt; i++) {
		if (keep[i] == 3)
			keep[i] = 1;
		else if (keep[i] == 1) {
			keep[i] = j % stride == 0;
			*nshown += keep[i];
			j++;
		}
	}
	return keep;
}

/* Under a thinned chart: how many points it draws of how many. */
static void
report_thin_note(FILE *f, size_t nshown, size_t ntotal)
{
	if (nshown == ntotal)
		return;
	fprintf(f, "<p class=\"note thinned\" data-shown=\"%zu\" "
	    "data-total=\"%zu\">%zu of %zu trials drawn: every improvement of "
	    "the best so far and an even sample of the others (all of them "
	    "are in the store: <code>autosched best --all --format csv</code> "
	    "for the best, the job's output_file CSV for every trial).</p>\n",
	    nshown, ntotal, nshown, ntotal);
}

/* Every trial of op in store order, coloured by phase; failures on zero. */
static void
report_trials(FILE *f, const struct report *r, int64_t op, double ymax)
{
	struct chart c;
	size_t i, n = 0, nfail[TRIAL_STATUS_COUNT] = { 0 }, nshown, ntotal;
	unsigned char *keep = report_thin(r, pick_any, &nshown, &ntotal);
	int s;

	for (i = 0; i < r->nt; i++)
		n += r->t[i].op_id == op;
	chart_begin(&c, f, 560, 300, "chart-trials", nshown < ntotal ?
	    "every trial (thinned)" : "every trial",
	    "trial # (all phases, in order)", "GFLOP/s", 0, (double)n + 1, 0,
	    ymax, 1);
	for (i = 0, n = 0; i < r->nt; i++) {
		const struct rtrial *t = &r->t[i];
		double x, y;

		if (t->op_id != op)
			continue;
		n++;
		if (!report_valid(t)) {
			s = t->status >= 0 && t->status < TRIAL_STATUS_COUNT ?
			    t->status : TRIAL_ERROR;
			nfail[s]++;	/* counted whether drawn or not */
		}
		if (!keep[i])
			continue;
		x = chart_x(&c, (double)n);
		if (report_valid(t)) {
			y = chart_y(&c, t->gflops);
			fprintf(f, "<circle class=\"pt\" data-trial=\"%lld\" "
			    "data-gflops=\"%.6g\" data-phase=\"", (long long)t->id,
			    t->gflops);
			html_esc(f, r->phases[t->phase]);
			fprintf(f, "\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" "
			    "fill=\"%s\"><title>#%lld ", x, y,
			    html_phase_color(r->phases[t->phase]),
			    (long long)t->id);
			html_esc(f, r->phases[t->phase]);
			fputs(" ", f);
			html_esc(f, t->config);
			fprintf(f, ": %.2f GFLOP/s</title></circle>\n",
			    t->gflops);
		} else {
			y = chart_y(&c, 0);
			s = t->status >= 0 && t->status < TRIAL_STATUS_COUNT ?
			    t->status : TRIAL_ERROR;
			fprintf(f, "<path class=\"fail\" data-trial=\"%lld\" "
			    "data-status=\"%s\" d=\"M%.1f %.1fl6 -6m-6 0l6 6\" "
			    "transform=\"translate(-3 3)\" stroke=\"%s\" "
			    "stroke-width=\"2\"><title>#%lld ", (long long)t->id,
			    trial_status_name(s), x, y, html_status_color(s),
			    (long long)t->id);
			html_esc(f, r->phases[t->phase]);
			fputs(" ", f);
			html_esc(f, t->config);
			fprintf(f, ": %s</title></path>\n",
			    trial_status_name(s));
		}
	}
	chart_end(&c);
	free(keep);
	report_thin_note(f, nshown, ntotal);
	fputs("<div class=\"legend\">", f);
	for (s = 0; s < TRIAL_STATUS_COUNT; s++) {
		if (nfail[s] == 0)
			continue;
		fprintf(f, "<span><i class=\"sw\" style=\"background:%s\"></i>"
		    "&#x2715; %s (%zu)</span>", html_status_color(s),
		    trial_status_name(s), nfail[s]);
	}
	fputs("</div>\n", f);
}

/* One small scatter per knob in use: its value against GFLOP/s (tune trials). */
static void
report_knobs(FILE *f, const struct report *r, int64_t op, double ymax)
{
	size_t i, nshown, ntotal;
	unsigned char *keep = report_thin(r, pick_tune_valid, &nshown, &ntotal);
	int k;

	report_thin_note(f, nshown, ntotal);
	fputs("<div class=\"charts\">\n", f);
	for (k = 0; k < KNOB_COUNT; k++) {
		int64_t vals[64];
		const char *labels[64];
		char lbuf[64][24], title[64];
		size_t nv = 0, v;
		struct chart c;

		for (i = 0; i < r->nt; i++) {
			const struct rtrial *t = &r->t[i];

			if (t->op_id != op || t->c.v[k] == 0 ||
			    !report_phase_is(r, t->phase, "tune"))
				continue;
			for (v = 0; v < nv && vals[v] != t->c.v[k]; v++)
				;
			if (v == nv && nv < 64)
				vals[nv++] = t->c.v[k];
		}
		if (nv == 0)
			continue;
		/* sort the distinct values */
		for (i = 1; i < nv; i++) {
			int64_t x = vals[i];

			for (v = i; v > 0 && vals[v - 1] > x; v--)
				vals[v] = vals[v - 1];
			vals[v] = x;
		}
		for (v = 0; v < nv; v++) {
			snprintf(lbuf[v], sizeof lbuf[v], "%lld", (long long)vals[v]);
			labels[v] = lbuf[v];
		}
		snprintf(title, sizeof title, "%s", space_knob_name(k));
		chart_begin(&c, f, 260, 190, "chart-knob", title, title,
		    "GFLOP/s", -0.5, (double)nv - 0.5, 0, ymax, -1);
		chart_xlabels(&c, labels, nv);
		for (i = 0; i < r->nt; i++) {
			const struct rtrial *t = &r->t[i];
			double jit;

			if (t->op_id != op || t->c.v[k] == 0 || !keep[i] ||
			    !report_phase_is(r, t->phase, "tune") ||
			    !report_valid(t))
				continue;
			for (v = 0; v < nv && vals[v] != t->c.v[k]; v++)
				;
			if (v == nv)
				continue;
			/* A small fixed jitter so equal values do not hide each other. */
			jit = ((double)((uint64_t)t->id * 2654435761u % 1000) /
			    1000 - 0.5) * 0.4;
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" "
			    "fill=\"#1f77b4\" fill-opacity=\"0.6\"><title>",
			    chart_x(&c, (double)v + jit), chart_y(&c, t->gflops));
			html_esc(f, t->config);
			fprintf(f, ": %.2f GFLOP/s</title></circle>\n",
			    t->gflops);
		}
		chart_end(&c);
	}
	fputs("</div>\n", f);
	free(keep);
}

/* Two-sided 95% Student t for n-1 degrees of freedom. */
static double
report_t95(size_t n)
{
	static const double t[] = { 0, 12.71, 4.30, 3.18, 2.78, 2.57, 2.45,
	    2.36, 2.31, 2.26, 2.23, 2.20, 2.18, 2.16, 2.14, 2.13, 2.12, 2.11,
	    2.10, 2.09, 2.09 };

	if (n < 2)
		return 0;
	if (n - 1 < sizeof t / sizeof t[0])
		return t[n - 1];
	return n < 60 ? 2.0 : 1.96;
}

struct rgroup {
	int		 phase;
	const char	*config;
	size_t		 n;
	double		 mean, lo, hi, median;
};

static int
rgroup_cmp(const void *a, const void *b)
{
	const struct rgroup *x = a, *y = b;

	if (x->phase != y->phase)
		return x->phase - y->phase;
	return (x->median < y->median) - (x->median > y->median);
}

/* Group g's mean, 95% interval of the mean and median, of its nv values v. */
static void
report_rgroup_stats(struct rgroup *g, double *v, size_t nv)
{
	double mean = 0, sd = 0, half;
	size_t k;

	for (k = 0; k < nv; k++)
		mean += v[k] / (double)nv;
	for (k = 0; nv > 1 && k < nv; k++)
		sd += (v[k] - mean) * (v[k] - mean) /
		    (double)(nv - 1);
	half = report_t95(nv) * sqrt(sd) / sqrt((double)nv);
	g->n = nv;
	g->mean = mean;
	/* GFLOP/s are positive: the interval stops at 0. */
	g->lo = mean - half > 0 ? mean - half : 0;
	g->hi = mean + half;
	g->median = report_median(v, nv);
}

/*
 * The groups of op's valid rows of every phase but tune, one per phase and
 * config, in the order first seen; *ng gets their count. Caller frees.
 */
static struct rgroup *
report_rgroups(const struct report *r, int64_t op, size_t *ng)
{
	struct rgroup *g = NULL;
	double *v = xcalloc(r->nt + 1, sizeof *v);
	size_t i, j, k, nv;

	*ng = 0;
	for (i = 0; i < r->nt; i++) {
		const struct rtrial *t = &r->t[i];

		if (t->op_id != op || report_phase_is(r, t->phase, "tune") ||
		    !report_valid(t))
			continue;
		for (j = 0; j < *ng; j++) {
			if (g[j].phase == t->phase && strcmp(g[j].config,
			    t->config) == 0)
				break;
		}
		if (j < *ng)
			continue;
		g = xrealloc(g, (*ng + 1) * sizeof *g);
		memset(&g[*ng], 0, sizeof *g);
		g[*ng].phase = t->phase;
		g[*ng].config = t->config;
		for (k = i, nv = 0; k < r->nt; k++) {
			if (r->t[k].op_id == op && r->t[k].phase == t->phase &&
			    report_valid(&r->t[k]) && strcmp(r->t[k].config,
			    t->config) == 0)
				v[nv++] = r->t[k].gflops;
		}
		report_rgroup_stats(&g[*ng], v, nv);
		(*ng)++;
	}
	free(v);
	return g;
}

/* A group's label, escaped: its phase and its config. */
static void
report_rgroup_name(FILE *f, const struct report *r, const struct rgroup *g)
{
	html_esc(f, r->phases[g->phase]);
	fputs(" ", f);
	html_esc(f, g->config);
}

/* The chart of the ng groups g: each mean and its interval, one per line. */
static void
report_repeated_chart(FILE *f, const struct report *r,
    const struct rgroup *g, size_t ng, double ymax)
{
	struct chart c;
	size_t i;
	int h;

	h = 64 + 24 * (int)ng;
	chart_begin_margin(&c, 300, f, 820, h, "chart-ci", "repeated "
	    "measurements: mean and 95% confidence interval of the mean",
	    "GFLOP/s", "", 0, ymax, -0.5, (double)ng - 0.5, 0);
	for (i = 0; i < ng; i++) {
		const char *col = html_phase_color(r->phases[g[i].phase]);
		double y = chart_y(&c, (double)(ng - 1 - i));

		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
		    "stroke=\"%s\" stroke-width=\"2\"/>", chart_x(&c, g[i].lo),
		    chart_x(&c, g[i].hi), y, y, col);
		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
		    "y2=\"%.1f\" class=\"grid\"/>", c.ml, c.w - c.mr, y, y);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\" "
		    "text-anchor=\"end\">", c.ml - 6, y + 4);
		report_rgroup_name(f, r, &g[i]);
		fputs("</text>", f);
		fputs("<circle class=\"ci\" data-phase=\"", f);
		html_esc(f, r->phases[g[i].phase]);
		fprintf(f, "\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\">"
		    "<title>", chart_x(&c, g[i].mean), y, col);
		report_rgroup_name(f, r, &g[i]);
		fprintf(f, ": mean %.2f, 95%% CI [%.2f, %.2f], %zu run%s"
		    "</title></circle>\n", g[i].mean, g[i].lo, g[i].hi, g[i].n,
		    g[i].n == 1 ? "" : "s");
	}
	chart_end(&c);
}

/* The table of the ng groups g: runs, mean and interval of each. */
static void
report_repeated_table(FILE *f, const struct report *r,
    const struct rgroup *g, size_t ng)
{
	size_t i;

	fputs("<table><tr><th>phase</th><th>config</th><th>runs</th>"
	    "<th>mean GFLOP/s</th><th>95% CI</th></tr>\n", f);
	for (i = 0; i < ng; i++) {
		fputs("<tr><td>", f);
		html_esc(f, r->phases[g[i].phase]);
		fputs("</td><td>", f);
		html_esc(f, g[i].config);
		fprintf(f, "</td><td class=\"n\">%zu</td><td class=\"n\">%.2f</td>",
		    g[i].n, g[i].mean);
		if (g[i].n > 1)
			fprintf(f, "<td class=\"n\">%.2f – %.2f</td></tr>\n",
			    g[i].lo, g[i].hi);
		else
			fputs("<td class=\"n\">one run</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

/*
 * The repeated measurements: every phase but tune, each config with the mean
 * of its valid rows and a 95% confidence interval of that mean.
 */
static void
report_repeated(FILE *f, const struct report *r, int64_t op, double ymax)
{
	struct rgroup *g;
	size_t ng;

	g = report_rgroups(r, op, &ng);
	if (ng == 0) {
		fputs("<p class=\"note\">No repeated measurement (confirm, "
		    "baseline, reference) for this op.</p>\n", f);
		return;
	}
	qsort(g, ng, sizeof *g, rgroup_cmp);
	if (ng > REPORT_CI_MAX)
		ng = REPORT_CI_MAX;
	report_repeated_chart(f, r, g, ng, ymax);
	report_repeated_table(f, r, g, ng);
	free(g);
}

/* Compile and measure seconds of op, phase by phase. */
static void
report_op_time(FILE *f, const struct report *r, int64_t op)
{
	size_t p, i;

	fputs("<table><tr><th>phase</th><th>trials</th><th>compile s</th>"
	    "<th>measure + verify s</th></tr>\n", f);
	for (p = 0; p < r->nphases; p++) {
		double comp = 0, meas = 0;
		size_t n = 0;

		for (i = 0; i < r->nt; i++) {
			if (r->t[i].op_id != op || r->t[i].phase != (int)p)
				continue;
			n++;
			comp += r->t[i].compile_s;
			meas += r->t[i].measure_s;
		}
		if (n == 0)
			continue;
		fputs("<tr><td>", f);
		html_esc(f, r->phases[p]);
		fprintf(f, "</td><td class=\"n\">%zu</td><td class=\"n\">%.2f</td>"
		    "<td class=\"n\">%.2f</td></tr>\n", n, comp, meas);
	}
	fputs("</table>\n", f);
}

static void
report_op(FILE *f, const struct report *r, const struct rop *op)
{
	struct rlevel lv[3 * REPORT_LEVEL_MAX];
	double ymax = 0;
	size_t i, nlv;

	/* The levels: the default, the figure reported after the choice, the library. */
	nlv = report_levels(r, op->id, "baseline", "baseline", lv,
	    REPORT_LEVEL_MAX);
	nlv += report_levels(r, op->id, "final", "final (chosen)", lv + nlv,
	    REPORT_LEVEL_MAX);
	nlv += report_levels(r, op->id, "reference", op->ref != NULL ?
	    op->ref : "reference", lv + nlv,
	    REPORT_LEVEL_MAX);
	for (i = 0; i < r->nt; i++) {
		if (r->t[i].op_id == op->id && report_valid(&r->t[i]) &&
		    r->t[i].gflops > ymax)
			ymax = r->t[i].gflops;
	}
	ymax = chart_nice_max(ymax * 1.05);
	fprintf(f, "<h2 id=\"op-%lld\" class=\"op\" data-op=\"", (long long)op->id);
	html_esc(f, op->name);
	fputs("\">", f);
	html_esc(f, op->name);
	fputs("</h2>\n<p class=\"note\">signature <code>", f);
	html_esc(f, op->signature);
	fputs("</code>", f);
	for (i = 0; i < nlv; i++) {
		fputs("; ", f);
		html_esc(f, lv[i].label);
		fprintf(f, " %.2f GFLOP/s (median)", lv[i].median);
	}
	fputs("</p>\n", f);
	report_legend_phases(f, r, op->id);
	fputs("<div class=\"charts\">\n", f);
	report_convergence(f, r, op->id, lv, nlv, ymax);
	report_trials(f, r, op->id, ymax);
	fputs("</div>\n<h3>Each knob against GFLOP/s (tune trials)</h3>\n", f);
	report_knobs(f, r, op->id, ymax);
	fputs("<h3>Repeated measurements</h3>\n", f);
	report_repeated(f, r, op->id, ymax);
	fputs("<h3>Where the time went</h3>\n", f);
	report_op_time(f, r, op->id);
}

/* The sortable table and the error trap the browser test reads. */
static void
report_script(FILE *f)
{
	fputs("<script>\n"
	    "window.onerror=function(){var b=document.body;"
	    "b.dataset.jsErrors=String(+b.dataset.jsErrors+1);};\n"
	    "function cellv(td){var v=td.dataset.v!==undefined?td.dataset.v:"
	    "td.textContent;var n=parseFloat(v);return isNaN(n)?v.toLowerCase():n;}\n"
	    "document.querySelectorAll('table.sortable').forEach(function(t){\n"
	    " t.querySelectorAll('th').forEach(function(th,i){\n"
	    "  th.addEventListener('click',function(){\n"
	    "   var tb=t.tBodies[0],rows=Array.from(tb.rows);\n"
	    "   var asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';\n"
	    "   rows.sort(function(a,b){var x=cellv(a.cells[i]),y=cellv(b.cells[i]);"
	    "return (x<y?-1:x>y?1:0)*(asc?1:-1);});\n"
	    "   rows.forEach(function(r){tb.appendChild(r);});});});});\n"
	    "document.body.dataset.jsOk='1';\n"
	    "</script>\n", f);
}

/* By op, then in store order. */
static int
rtrial_cmp(const void *a, const void *b)
{
	const struct rtrial *x = a, *y = b;

	if (x->op_id != y->op_id)
		return (x->op_id > y->op_id) - (x->op_id < y->op_id);
	return (x->id > y->id) - (x->id < y->id);
}

/* Whether the job asked (if any) is in all: 0, or -1 with *err. */
static int
report_check_job(const struct store_job *all, size_t nall,
    const struct html_opts *o, char **err)
{
	size_t i;

	if (o->job_id <= 0)
		return 0;
	for (i = 0; i < nall && all[i].id != o->job_id; i++)
		;
	if (i < nall)
		return 0;
	/* As every reader of a job says it (store_best). */
	if (o->db_path != NULL)
		util_seterr(err, "store %s: no job %lld (autosched"
		    " status --db %s lists the jobs)", o->db_path,
		    (long long)o->job_id, o->db_path);
	else
		util_seterr(err, "no job %lld in the store",
		    (long long)o->job_id);
	return -1;
}

/*
 * The selected jobs into r->jobs, oldest first: the one asked, or those with
 * trials. Each one kept moves out of all (its slot zeroed).
 */
static void
report_select_jobs(struct report *r, struct store_job *all, size_t nall)
{
	const struct html_opts *o = r->o;
	size_t i, j;

	r->jobs = xcalloc(nall + 1, sizeof *r->jobs);
	for (i = nall; i-- > 0;) {
		int keep;

		if (o->job_id > 0)
			keep = all[i].id == o->job_id;
		else {
			keep = o->op_filter == NULL;
			for (j = 0; !keep && j < r->nt; j++)
				keep = r->t[j].job_id == all[i].id;
		}
		if (keep) {
			r->jobs[r->njobs++] = all[i];
			memset(&all[i], 0, sizeof all[i]);
		}
	}
}

/* The contents line: the summary, each job, each op. */
static void
report_contents(FILE *f, const struct report *r)
{
	size_t i;

	fputs("<p>Contents: <a href=\"#summary\">summary</a>", f);
	for (i = 0; i < r->njobs; i++)
		fprintf(f, " · <a href=\"#job-%lld\">job %lld</a>",
		    (long long)r->jobs[i].id, (long long)r->jobs[i].id);
	for (i = 0; i < r->nops; i++) {
		if (r->ops[i].name == NULL)
			continue;
		fprintf(f, " · <a href=\"#op-%lld\">",
		    (long long)r->ops[i].id);
		html_esc(f, r->ops[i].name);
		fputs("</a>", f);
	}
	fputs("</p>\n", f);
}

/* The index of op's first trial in r's trials, sorted by op. */
static size_t
report_first_trial(const struct report *r, int64_t op)
{
	size_t lo = 0, hi = r->nt;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->t[mid].op_id < op)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Each op's section. Each op sees only its own trials (a sweep has thousands
 * of ops): sorted by op, then in store order, each op's slice is a view.
 */
static void
report_ops(FILE *f, struct report *r)
{
	size_t i, j, b;

	if (r->nt > 1)
		qsort(r->t, r->nt, sizeof *r->t, rtrial_cmp);
	for (i = 0; i < r->nops; i++) {
		struct report v = *r;

		if (r->ops[i].name == NULL)
			continue;
		b = report_first_trial(r, r->ops[i].id);
		for (j = b; j < r->nt && r->t[j].op_id == r->ops[i].id; j++)
			;
		v.t = r->t + b;
		v.nt = j - b;
		report_op(f, &v, &r->ops[i]);
	}
}

int
html_report_text(struct store *st, const struct html_opts *o, char **text,
    size_t *len, char **err)
{
	struct report r;
	struct store_job *all = NULL;
	size_t nall = 0, i;
	FILE *f = NULL;
	char *buf = NULL;
	size_t blen = 0;
	int rc = -1;

	memset(&r, 0, sizeof r);
	r.o = o;
	*text = NULL;
	if (store_trial_foreach(st, 0, 0, NULL, report_collect, &r, err) < 0)
		goto out;
	if (r.too_many) {
		util_seterr(err, "more than %d trials to report: choose a job "
		    "(--job) or ops (--op)", HTML_TRIAL_MAX);
		goto out;
	}
	if (store_job_list(st, &all, &nall, err) != 0 ||
	    report_check_job(all, nall, o, err) != 0)
		goto out;
	report_select_jobs(&r, all, nall);
	if ((f = open_memstream(&buf, &blen)) == NULL) {
		util_seterr(err, "open_memstream failed");
		goto out;
	}
	report_head(f, &r);
	report_contents(f, &r);
	if (report_summary(f, &r, st, err) != 0)
		goto out;
	for (i = 0; i < r.njobs; i++)
		report_job(f, &r, st, &r.jobs[i]);
	report_ops(f, &r);
	if (r.nt == 0)
		fputs("<p>No trial in the store matches this selection.</p>\n", f);
	report_script(f);
	fputs("</body></html>\n", f);
	rc = util_memstream_close(f, &buf, text, "the report", err);
	f = NULL;
	if (rc == 0)
		*len = blen;
out:
	if (f != NULL)
		fclose(f);
	free(buf);
	for (i = 0; i < nall; i++)
		store_job_clear(&all[i]);
	free(all);
	report_free(&r);
	return rc;
}

int
html_report(struct store *st, const struct html_opts *o, const char *path,
    const struct util_out_guard *g, char **err)
{
	struct util_out_guard mine = *g;
	char *text = NULL;
	size_t len = 0;
	int rc;

	mine.magic[0] = HTML_MAGIC;
	if (util_out_check(path, &mine, err) != 0)
		return -1;
	if (html_report_text(st, o, &text, &len, err) != 0)
		return -1;
	rc = util_out_write(path, text, len, &mine, err);
	free(text);
	return rc;
}
