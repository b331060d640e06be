/*
 * The one check of rows read back. Whoever may write the store (the README's
 * group) may write anything into it with sqlite3: every value that steers the
 * service or a reader is held here to what autosched's writers write, and
 * the first one outside is refused, naming the table, the row and the column.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_int.h"
#include "util/util.h"

int
store_row_refuse(struct store *s, char **err, const char *table, int64_t row,
    const char *column, const char *fmt, ...)
{
	va_list	 ap;
	char	*why;

	va_start(ap, fmt);
	if (vasprintf(&why, fmt, ap) == -1)
		why = NULL;
	va_end(ap);
	util_seterr(err, "store %s: table %s, row %" PRId64 ", column %s: %s",
	    s->path, table, row, column, why != NULL ? why : "refused");
	free(why);
	return -1;
}

int
store_row_int(struct store *s, char **err, const char *table, int64_t row,
    const char *column, int64_t v, int64_t lo, int64_t hi)
{
	if (v >= lo && v <= hi)
		return 0;
	return store_row_refuse(s, err, table, row, column, "%" PRId64
	    ": expected %" PRId64 " to %" PRId64 " (a value autosched never"
	    " writes; the row was changed by hand)", v, lo, hi);
}

int
store_row_num(struct store *s, char **err, const char *table, int64_t row,
    const char *column, double v, double lo, double hi)
{
	if (v >= lo && v <= hi)
		return 0;
	return store_row_refuse(s, err, table, row, column, "%.6g: expected"
	    " %.6g to %.6g (outside any physical range; the row was changed"
	    " by hand)", v, lo, hi);
}

int
store_alloc_check(struct store *s, int64_t row, const struct store_alloc *a,
    char **err)
{
	const char *t = "allocations";

	if (store_row_int(s, err, t, row, "seq", a->seq, 1, INT64_MAX) != 0 ||
	    store_row_int(s, err, t, row, "op_id", a->op_id, 1,
	    INT64_MAX) != 0 ||
	    store_row_int(s, err, t, row, "trials", a->trials, 1,
	    STORE_ROUND_TRIALS_MAX) != 0 ||
	    store_row_int(s, err, t, row, "trials_before", a->trials_before, 0,
	    STORE_TRIALS_MAX) != 0 ||
	    store_row_int(s, err, t, row, "weight", a->weight, 1,
	    STORE_TRIALS_MAX) != 0 ||
	    store_row_num(s, err, t, row, "elapsed_s", a->elapsed_s, 0,
	    STORE_SECONDS_MAX) != 0 ||
	    store_row_num(s, err, t, row, "now_ms", a->now_ms, 0,
	    STORE_MS_MAX) != 0)
		return -1;
	return 0;
}

int
store_op_check(struct store *s, int64_t row, const struct op_desc *op,
    char **err)
{
	const char *t = "ops";

	if (store_row_int(s, err, t, row, "batch", op->batch, 1,
	    STORE_DIM_MAX) != 0 ||
	    store_row_int(s, err, t, row, "m", op->m, 1, STORE_DIM_MAX) != 0 ||
	    store_row_int(s, err, t, row, "n", op->n, 1, STORE_DIM_MAX) != 0 ||
	    store_row_int(s, err, t, row, "k", op->k, 1, STORE_DIM_MAX) != 0)
		return -1;
	if (op->lhs == ELEM_UNKNOWN || op->rhs == ELEM_UNKNOWN ||
	    op->acc == ELEM_UNKNOWN)
		return store_row_refuse(s, err, t, row, op->lhs == ELEM_UNKNOWN ?
		    "lhs" : op->rhs == ELEM_UNKNOWN ? "rhs" : "acc", "not an"
		    " element type autosched writes (f32, f16, bf16, i8, …)");
	if (op->kind == NULL || op->kind[0] == '\0')
		return store_row_refuse(s, err, t, row, "kind", "empty;"
		    " expected the op's kind (matmul, batch_matmul, …)");
	return 0;
}

int
store_result_check(struct store *s, int64_t row, const struct trial_result *r,
    char **err)
{
	const char *t = "trials";

	if (store_row_num(s, err, t, row, "gflops", r->gflops, 0,
	    STORE_GFLOPS_MAX) != 0 ||
	    store_row_num(s, err, t, row, "runtime_ms", r->median_ms, 0,
	    STORE_MS_MAX) != 0 ||
	    store_row_num(s, err, t, row, "min_ms", r->min_ms, 0,
	    STORE_MS_MAX) != 0 ||
	    store_row_num(s, err, t, row, "max_ms", r->max_ms, 0,
	    STORE_MS_MAX) != 0 ||
	    store_row_num(s, err, t, row, "cv", r->cv, 0, STORE_CV_MAX) != 0 ||
	    store_row_int(s, err, t, row, "reps", r->reps, 0, INT32_MAX) != 0 ||
	    store_row_num(s, err, t, row, "compile_s", r->compile_s, 0,
	    STORE_SECONDS_MAX) != 0 ||
	    store_row_num(s, err, t, row, "measure_s", r->measure_s, 0,
	    STORE_SECONDS_MAX) != 0 ||
	    store_row_int(s, err, t, row, "sm_mhz", r->sm_mhz, 0,
	    STORE_MHZ_MAX) != 0 ||
	    store_row_int(s, err, t, row, "mem_mhz", r->mem_mhz, 0,
	    STORE_MHZ_MAX) != 0 ||
	    store_row_int(s, err, t, row, "temp_c", r->temp_c, 0,
	    STORE_TEMP_MAX) != 0 ||
	    store_row_int(s, err, t, row, "power_w", r->power_w, 0,
	    STORE_POWER_MAX) != 0 ||
	    store_row_num(s, err, t, row, "peak_gflops", r->peak_gflops, 0,
	    STORE_GFLOPS_MAX) != 0)
		return -1;
	return 0;
}

int
store_job_check(struct store *s, const struct store_job *j, char **err)
{
	const char *t = "jobs";

	if (j->state == NULL || store_job_state_ok(j->state) == 0)
		return store_row_refuse(s, err, t, j->id, "state", "not a job"
		    " state (queued, running, done, failed, cancelled)");
	if (j->cfg_text == NULL)
		return store_row_refuse(s, err, t, j->id, "cfg_text", "NULL;"
		    " expected the cfg's text as submitted (its snapshot);"
		    " submit the job again");
	if (j->mlir_text == NULL)
		return store_row_refuse(s, err, t, j->id, "mlir_text", "NULL;"
		    " expected the program's text as submitted (its snapshot:"
		    " the service never reads a job's program from its path);"
		    " submit the job again");
	if (store_row_int(s, err, t, j->id, "n_trial", j->n_trial, 0,
	    STORE_TRIALS_MAX) != 0 ||
	    store_row_int(s, err, t, j->id, "trials_done", j->trials_done, 0,
	    STORE_TRIALS_MAX) != 0)
		return -1;
	return 0;
}
