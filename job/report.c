/*
 * What a job shows: the dispatch profiler's block per candidate, a one-line
 * progress display on a terminal, the CSV of output_file, the final summary
 * and the --json document.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/job_int.h"
#include "util/util.h"

static const char *
report_layout(int transposed)
{
	return transposed ? "n" : "t";
}

static const char *
report_verification(const struct trial_result *r)
{
	switch (r->status) {
	case TRIAL_OK:
	case TRIAL_UNSTABLE:
		return r->verified ? "SUCCESS" : "NOT VERIFIED";
	case TRIAL_WRONG_RESULT:
		return "FAILED";
	default:
		return "NOT RUN";
	}
}

void
report_block(struct job_report *rep, const struct op_desc *op,
    const char *config_name, const char *phase, const struct trial_result *r,
    int cached)
{
	if (!rep->blocks)
		return;
	if (rep->progress)
		fputs("\r\033[K", stderr);
	printf("----------------------------------------------------------------\n");
	printf("Dispatch      : %s_%s\n", op->name, config_name);
	printf("Provider      : autosched %s\n", rep->backend);
	printf("OpKind        : %s\n", op->kind);
	printf("Operation     : %s\n", op->name);
	printf("Configuration : %s%s%s\n", config_name,
	    strcmp(phase, "tune") ? " " : "", strcmp(phase, "tune") ? phase : "");
	printf("Arguments     : --batch_count=%lld --m=%lld --n=%lld --k=%lld "
	    "--lhs=%s%s --rhs=%s%s --result=%st\n",
	    (long long)op->batch, (long long)op->m, (long long)op->n,
	    (long long)op->k, analysis_operand_name(op->lhs, op->lhs_unsigned),
	    report_layout(op->transpose_a),
	    analysis_operand_name(op->rhs, op->rhs_unsigned),
	    report_layout(op->transpose_b), analysis_elem_name(op->acc));
	printf("                --split_k_mode=N/A --split_k_slices=N/A\n");
	if (r->checked_by[0] != '\0' && strcmp(r->checked_by, "none") != 0 &&
	    r->verified)
		printf("Verification  : %s (exact, %s)\n", report_verification(r),
		    r->checked_by);
	else
		printf("Verification  : %s\n", report_verification(r));
	if (r->status != TRIAL_OK)
		printf("Status        : %s%s%s%s\n", trial_status_name(r->status),
		    r->error ? " (" : "", r->error ? r->error : "",
		    r->error ? ")" : "");
	if (r->status == TRIAL_OK || r->status == TRIAL_UNSTABLE) {
		printf("Runtime(ms)   : %.4f (cv %.1f%%, %d reps)%s\n",
		    r->median_ms, r->cv * 100, r->reps,
		    cached ? " [from the store]" : "");
		printf("GFLOPs        : %.2f\n", r->gflops);
	} else {
		printf("Runtime(ms)   : N/A%s\n", cached ? " [from the store]" : "");
		printf("GFLOPs        : N/A\n");
	}
	fflush(stdout);
}

/* CSV field: quoted when it holds a comma, quote or newline. */
static void
report_csv_field(FILE *f, const char *s, int last)
{
	if (s == NULL)
		s = "";
	if (strpbrk(s, ",\"\n\r") != NULL) {
		fputc('"', f);
		for (; *s; s++) {
			if (*s == '"')
				fputc('"', f);
			fputc(*s, f);
		}
		fputc('"', f);
	} else
		fputs(s, f);
	fputc(last ? '\n' : ',', f);
}

/*
 * The CSV's Core class: "cpu", or on a GPU (backend iree-cuda) what runs the
 * products, "tensorop" (mma.sync: f16, bf16) or "simt" (f32).
 */
static const char *
report_core_class(const struct job_report *rep, const struct op_desc *op)
{
	if (strcmp(rep->backend, "iree-cuda") != 0)
		return "cpu";
	return op->lhs == ELEM_F16 || op->lhs == ELEM_BF16 ? "tensorop" :
	    "simt";
}

/* A CSV count: empty when 0 (not known). */
static void
report_csv_int(FILE *f, int v, int last)
{
	if (v > 0)
		fprintf(f, "%d", v);
	fputc(last ? '\n' : ',', f);
}

void
report_csv_header(struct job_report *rep)
{
	int k;

	if (rep->csv == NULL)
		return;
	fputs("Provider,op_kind,Operation,bytes,flops,batch_count,m,n,k,lhs,rhs,"
	    "result,split_k_mode,split_k_slices,Tile config,Core class,"
	    "Instruction class,Verification,Runtime(ms),GFLOPs", rep->csv);
	for (k = 0; k < KNOB_COUNT; k++)
		fprintf(rep->csv, ",%s", space_knob_name(k));
	fputs(",phase,status,cv,reps,compile_s,measure_s,error,gpu,sm_mhz,"
	    "mem_mhz,temp_c,power_w\n", rep->csv);
	fflush(rep->csv);
}

void
report_csv_row(struct job_report *rep, const struct op_desc *op,
    const struct config *cf, const char *config_name, const char *phase,
    const struct trial_result *r)
{
	FILE *f = rep->csv;
	double flops = stats_flops(op);
	double bytes = (double)op->batch * ((double)op->m * (double)op->k *
	    (double)analysis_elem_size(op->lhs) + (double)op->k * (double)op->n *
	    (double)analysis_elem_size(op->rhs) + (double)op->m * (double)op->n *
	    (double)analysis_elem_size(op->acc));
	char prov[64];
	int k, ran = r->status == TRIAL_OK || r->status == TRIAL_UNSTABLE;

	if (f == NULL)
		return;
	snprintf(prov, sizeof prov, "autosched %s", rep->backend);
	report_csv_field(f, prov, 0);
	fprintf(f, "%s,%s,%.0f,%.0f,%lld,%lld,%lld,%lld,%s%s,%s%s,%st,N/A,N/A,",
	    op->kind, op->name, bytes, flops, (long long)op->batch,
	    (long long)op->m, (long long)op->n, (long long)op->k,
	    analysis_operand_name(op->lhs, op->lhs_unsigned),
	    report_layout(op->transpose_a),
	    analysis_operand_name(op->rhs, op->rhs_unsigned),
	    report_layout(op->transpose_b),
	    analysis_elem_name(op->acc));
	report_csv_field(f, config_name, 0);
	fprintf(f, "%s,%s,%s,", report_core_class(rep, op), rep->backend,
	    report_verification(r));
	if (ran)
		fprintf(f, "%.6f,%.3f", r->median_ms, r->gflops);
	else
		fputs(",", f);
	for (k = 0; k < KNOB_COUNT; k++)
		fprintf(f, ",%lld", (long long)cf->v[k]);
	fprintf(f, ",%s,%s,%.4f,%d,%.3f,%.3f,", phase,
	    trial_status_name(r->status), r->cv, r->reps, r->compile_s,
	    r->measure_s);
	report_csv_field(f, r->error, 0);
	/* GPU backends: the GPU and its clocks then; empty when not known. */
	report_csv_field(f, r->gpu, 0);
	report_csv_int(f, r->sm_mhz, 0);
	report_csv_int(f, r->mem_mhz, 0);
	report_csv_int(f, r->temp_c, 0);
	report_csv_int(f, r->power_w, 1);
	fflush(f);
}

void
report_progress(struct job_report *rep, const char *line)
{
	if (!rep->progress)
		return;
	if (line == NULL)
		fputs("\r\033[K", stderr);
	else
		fprintf(stderr, "\r\033[K%.*s", 150, line);
	fflush(stderr);
}

double
report_noise_floor(const struct job_op *ops, size_t n, int *nmeas)
{
	double cv[256];
	size_t i;
	int k = 0;

	*nmeas = 0;
	for (i = 0; i < n && k < 256; i++) {
		if (ops[i].nnoise >= 3) {
			cv[k++] = ops[i].noise_cv;
			*nmeas += ops[i].nnoise;
		}
	}
	return stats_median(cv, k);
}

/* "1.12x [1.08, 1.16]": a paired ratio and its 95% interval. */
static void
report_ratio(FILE *f, const struct stats_ratio *r)
{
	if (r->n >= 2)
		fprintf(f, "%.2fx [%.2f, %.2f] 95%% CI", r->est, r->lo, r->hi);
	else
		fprintf(f, "%.2fx (one round: no interval)", r->est);
}

/* " (SM 1755-1980 MHz" and so on: a range of a figure, or "–" when unknown. */
static void
report_range(FILE *f, const char *what, int lo, int hi, const char *unit)
{
	if (hi <= 0)
		fprintf(f, "%s – (not known: no NVML)", what);
	else if (lo > 0 && lo != hi)
		fprintf(f, "%s %d-%d %s", what, lo, hi, unit);
	else
		fprintf(f, "%s %d %s", what, hi, unit);
}

/*
 * A GPU op's lines: the library (cuBLAS) ratio, the share of the device's
 * measured peak, the GPU and its clocks in the final rounds. A figure not
 * measured is "–" with the reason, never made up.
 */
static void
report_gpu(FILE *f, const struct job_op *jo)
{
	if (jo->reference_gflops > 0)
		fprintf(f, "  vs library  : %.2fx (%s: %.2f GFLOP/s, median of "
		    "the final rounds)\n", jo->best_gflops / jo->reference_gflops,
		    jo->reference_name, jo->reference_gflops);
	else
		fprintf(f, "  vs library  : – (no valid reference measurement "
		    "in the final rounds)\n");
	if (jo->peak_gflops > 0)
		fprintf(f, "  of peak     : %.1f%% (%s: %.2f GFLOP/s, measured "
		    "beside the reference)\n", 100 * jo->best_gflops /
		    jo->peak_gflops, jo->peak_name, jo->peak_gflops);
	else
		fprintf(f, "  of peak     : – (the harness measured no peak for "
		    "this op's types)\n");
	fprintf(f, "  GPU         : %s (", jo->gpu);
	report_range(f, "SM", jo->sm_mhz_lo, jo->sm_mhz_hi, "MHz");
	report_range(f, ", memory", jo->mem_mhz, jo->mem_mhz, "MHz");
	report_range(f, ",", jo->temp_lo, jo->temp_hi, "°C");
	fprintf(f, " in the final rounds)\n");
}

/* The line naming a summary's op and where it is used. */
static void
report_summary_title(FILE *f, const struct job_op *jo)
{
	if (jo->nuses > 1)
		fprintf(f, "[%s] x%zu: %s at %s and %zu more\n",
		    jo->op->name, jo->nuses, jo->op->kind, jo->op->loc,
		    jo->nuses - 1);
	else
		fprintf(f, "[%s] %s at %s\n", jo->op->name,
		    jo->op->kind, jo->op->loc);
}

/*
 * The one line of an op with no choice to show (skipped, not reached, no
 * valid config); returns 1 when it wrote it, 0 when the op has a best.
 */
static int
report_summary_unchosen(FILE *f, const struct job_op *jo)
{
	if (jo->skipped) {
		fprintf(f, "  not tuned: %s\n", jo->skip_reason ?
		    jo->skip_reason : "not supported");
		return 1;
	}
	if (!jo->finished) {
		/* The job stopped before this op's choice. */
		fprintf(f, "  not reached: the job stopped before %s "
		    "(%lld trials done)\n", jo->reached ?
		    "its choice" : "its search began",
		    (long long)jo->trials);
		return 1;
	}
	if (!jo->have_best) {
		fprintf(f, "  no valid config found in %lld trials "
		    "(%lld measured)\n", (long long)jo->trials,
		    (long long)jo->measured);
		return 1;
	}
	return 0;
}

/* The chosen config's lines: its name, a kept default, its GFLOP/s. */
static void
report_summary_best(FILE *f, const struct job_op *jo)
{
	fprintf(f, "  best        : %s%s\n", jo->best_name,
	    jo->kept_default ? " (the default, kept)" :
	    jo->trials == 0 ? " (the default: no search round reached "
	    "this op)" : jo->default_best ? " (the default itself)" :
	    "");
	if (jo->kept_default) {
		fprintf(f, "  kept default: the search's best, %s, was ",
		    jo->winner_name);
		report_ratio(f, &jo->winner_speedup);
		fprintf(f, " of the default: not measurably faster\n");
	}
	fprintf(f, "  GFLOP/s     : %.2f (%.4f ms; median of %d rounds "
	    "measured after the choice, cv %.1f%%)\n", jo->best_gflops,
	    jo->best_ms, jo->final_rounds, jo->best_cv * 100);
}

/* The choice against the default, at its threads and at 1, and the library. */
static void
report_summary_versus(FILE *f, const struct job_op *jo)
{
	if (jo->speedup.n > 0) {
		fprintf(f, "  vs default  : ");
		report_ratio(f, &jo->speedup);
		if (jo->gpu[0] != '\0')
			fprintf(f, " (the default: %.2f GFLOP/s, "
			    "interleaved)\n", jo->base_thr_gflops);
		else
			fprintf(f, " (the default at %d thread%s: %.2f "
			    "GFLOP/s, interleaved)\n", jo->base_threads,
			    jo->base_threads == 1 ? "" : "s",
			    jo->base_thr_gflops);
	}
	if (jo->base_threads != 1 && jo->speedup1.n > 0) {
		fprintf(f, "  vs default@1: ");
		report_ratio(f, &jo->speedup1);
		fprintf(f, " (the default at 1 thread: %.2f GFLOP/s)\n",
		    jo->base1_gflops);
	}
	if (jo->gpu[0] != '\0')
		report_gpu(f, jo);
	else if (jo->reference_gflops > 0)
		fprintf(f, "  %-12s: %.2fx (%s, %d thread%s: %.2f GFLOP/s%s)\n",
		    jo->reference_same ? "vs library" : "of library",
		    jo->best_gflops / jo->reference_gflops,
		    jo->reference_name, jo->base_threads,
		    jo->base_threads == 1 ? "" : "s", jo->reference_gflops,
		    jo->reference_same ? "" : "; not the op's precision, "
		    "so not like for like");
}

/* An op's closing lines: the default's noise and drift, the trial counts. */
static void
report_summary_counts(FILE *f, const struct job_op *jo)
{
	if (jo->nnoise >= 3)
		fprintf(f, "  noise       : cv %.1f%% over %d measurements "
		    "of the default across the job; %s\n",
		    jo->noise_cv * 100, jo->nnoise, jo->drift.drift ?
		    "DRIFT: it moved more than its noise explains" :
		    "no drift beyond its noise");
	fprintf(f, "  trials      : %lld (%lld measured now, %lld valid) "
	    "in %d round%s, space %llu configs\n", (long long)jo->trials,
	    (long long)jo->measured, (long long)jo->ok, jo->rounds,
	    jo->rounds == 1 ? "" : "s",
	    (unsigned long long)jo->space_count);
}

void
report_summary(FILE *f, const struct job_op *ops, size_t n)
{
	size_t i;
	double floor;
	int nm;

	fprintf(f, "\n********************************************************\n");
	for (i = 0; i < n; i++) {
		const struct job_op *jo = &ops[i];

		report_summary_title(f, jo);
		if (report_summary_unchosen(f, jo))
			continue;
		report_summary_best(f, jo);
		report_summary_versus(f, jo);
		report_summary_counts(f, jo);
	}
	floor = report_noise_floor(ops, n, &nm);
	if (nm > 0)
		fprintf(f, "noise floor : cv %.1f%% (median over ops of the "
		    "default re-measured across the job; %d measurements)\n",
		    floor * 100, nm);
	fprintf(f, "********************************************************\n");
	fflush(f);
}

/* The GPU fields of a --json op: null for CPU ops and figures not known. */
static void
report_json_gpu(json_t *o, const struct job_op *jo)
{
	json_t *g;

	if (jo->gpu[0] == '\0') {
		json_object_set_new(o, "gpu", json_null());
		return;
	}
	g = json_object();
	json_object_set_new(g, "name", json_string(jo->gpu));
	json_object_set_new(g, "sm_mhz_min", jo->sm_mhz_lo > 0 ?
	    json_integer(jo->sm_mhz_lo) : json_null());
	json_object_set_new(g, "sm_mhz_max", jo->sm_mhz_hi > 0 ?
	    json_integer(jo->sm_mhz_hi) : json_null());
	json_object_set_new(g, "mem_mhz", jo->mem_mhz > 0 ?
	    json_integer(jo->mem_mhz) : json_null());
	json_object_set_new(g, "temp_c_min", jo->temp_lo > 0 ?
	    json_integer(jo->temp_lo) : json_null());
	json_object_set_new(g, "temp_c_max", jo->temp_hi > 0 ?
	    json_integer(jo->temp_hi) : json_null());
	json_object_set_new(o, "gpu", g);
	json_object_set_new(o, "peak", jo->peak_gflops > 0 ?
	    json_string(jo->peak_name) : json_null());
	json_object_set_new(o, "peak_gflops", jo->peak_gflops > 0 ?
	    json_real(jo->peak_gflops) : json_null());
	json_object_set_new(o, "of_peak", jo->peak_gflops > 0 &&
	    jo->have_best ? json_real(jo->best_gflops / jo->peak_gflops) :
	    json_null());
}

static json_t *
report_json_ratio(const struct stats_ratio *r)
{
	if (r->n == 0)
		return json_null();
	return json_pack("{s:f, s:f, s:f, s:i}", "est", r->est, "lo", r->lo,
	    "hi", r->hi, "rounds", r->n);
}

/* A --json op's identity: where it is, how often used, whether tuned. */
static void
report_json_title(json_t *o, const struct job_op *jo)
{
	json_object_set_new(o, "index", json_integer(jo->op->index));
	json_object_set_new(o, "name", json_string(jo->op->name));
	json_object_set_new(o, "kind", json_string(jo->op->kind));
	json_object_set_new(o, "loc", json_string(jo->op->loc));
	json_object_set_new(o, "occurrences", json_integer(
	    (json_int_t)jo->nuses));
	json_object_set_new(o, "tuned", json_boolean(!jo->skipped));
}

/* A --json op's choice: the best config, its knobs and figures, or null. */
static void
report_json_best(json_t *o, const struct job_op *jo)
{
	json_t *kn;
	int k;

	if (!jo->have_best) {
		json_object_set_new(o, "best", json_null());
		return;
	}
	kn = json_object();
	json_object_set_new(o, "best", json_string(jo->best_name));
	for (k = 0; k < KNOB_COUNT; k++) {
		if (jo->best.v[k] != 0)
			json_object_set_new(kn, space_knob_name(k),
			    json_integer(jo->best.v[k]));
	}
	json_object_set_new(o, "knobs", kn);
	json_object_set_new(o, "gflops", json_real(jo->best_gflops));
	json_object_set_new(o, "gflops_cv", json_real(jo->best_cv));
	json_object_set_new(o, "final_rounds",
	    json_integer(jo->final_rounds));
	json_object_set_new(o, "runtime_ms", json_real(jo->best_ms));
	json_object_set_new(o, "default_is_best",
	    json_boolean(jo->default_best));
	json_object_set_new(o, "default_kept",
	    json_boolean(jo->kept_default));
	if (jo->kept_default) {
		json_object_set_new(o, "search_best",
		    json_string(jo->winner_name));
		json_object_set_new(o, "search_best_speedup_ci",
		    report_json_ratio(&jo->winner_speedup));
	}
}

/*
 * A --json op's comparisons: the default at the winner's thread count after
 * the choice and at 1 thread, its noise and drift, the library reference.
 */
static void
report_json_versus(json_t *o, const struct job_op *jo)
{
	json_object_set_new(o, "baseline_threads",
	    json_integer(jo->base_threads));
	json_object_set_new(o, "baseline_gflops",
	    json_real(jo->base_thr_gflops));
	json_object_set_new(o, "speedup", json_real(jo->speedup.est));
	json_object_set_new(o, "speedup_ci",
	    report_json_ratio(&jo->speedup));
	json_object_set_new(o, "baseline1_gflops",
	    json_real(jo->base1_gflops));
	json_object_set_new(o, "speedup_vs_1thread",
	    report_json_ratio(&jo->speedup1));
	json_object_set_new(o, "first_baseline_gflops",
	    json_real(jo->baseline_gflops));
	json_object_set_new(o, "noise_cv", json_real(jo->noise_cv));
	json_object_set_new(o, "noise_measurements",
	    json_integer(jo->nnoise));
	json_object_set_new(o, "baseline_drift",
	    json_boolean(jo->drift.drift));
	json_object_set_new(o, "reference", json_string(
	    jo->reference_name));
	json_object_set_new(o, "reference_same_precision",
	    json_boolean(jo->reference_same));
	json_object_set_new(o, "reference_gflops",
	    json_real(jo->reference_gflops));
	json_object_set_new(o, "vs_reference", json_real(
	    jo->reference_gflops > 0 ? jo->best_gflops /
	    jo->reference_gflops : 0));
}

/* One op's --json object; the caller owns the new reference. */
static json_t *
report_json_op(const struct job_op *jo)
{
	json_t *o = json_object();

	report_json_title(o, jo);
	if (jo->skipped) {
		json_object_set_new(o, "reason", json_string(
		    jo->skip_reason ? jo->skip_reason : ""));
		return o;
	}
	json_object_set_new(o, "reached", json_boolean(jo->finished));
	json_object_set_new(o, "trials", json_integer(jo->trials));
	json_object_set_new(o, "measured", json_integer(jo->measured));
	json_object_set_new(o, "valid", json_integer(jo->ok));
	json_object_set_new(o, "space",
	    json_integer((json_int_t)jo->space_count));
	report_json_best(o, jo);
	report_json_versus(o, jo);
	report_json_gpu(o, jo);
	json_object_set_new(o, "tuner_seconds", json_real(jo->tuner_s));
	return o;
}

char *
report_json(int64_t job_id, const struct job_op *ops, size_t n, int outcome)
{
	json_t *root = json_object(), *arr = json_array();
	char *s;
	size_t i;
	double floor;
	int nm;

	json_object_set_new(root, "job_id", json_integer(job_id));
	json_object_set_new(root, "outcome", json_integer(outcome));
	for (i = 0; i < n; i++)
		json_array_append_new(arr, report_json_op(&ops[i]));
	json_object_set_new(root, "ops", arr);
	floor = report_noise_floor(ops, n, &nm);
	json_object_set_new(root, "noise_floor_cv", json_real(floor));
	json_object_set_new(root, "noise_measurements", json_integer(nm));
	s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return s;
}
