/*
 * Trials: recording one (its own committed transaction), finding a config
 * already measured (resume), walking them (replay, reports) and picking the
 * best config per op and target.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "store/store_int.h"

#define KNOB_COLUMNS							\
	"tile_m, tile_n, tile_k, vector_m, vector_n, vector_k, threads, "	\
	"block_dim_x, block_dim_y, block_dim_z, pipeline_depth, pack_b, "	\
	"pad_smem, pack_a"
#define RESULT_COLUMNS							\
	"status, runtime_ms, min_ms, max_ms, cv, reps, gflops, compile_s, "	\
	"measure_s, verified, max_err, artifact, error, checked_by, "	\
	"ref_routine, ref_same_precision, reps_dropped, context_switches, "	\
	"cpu_migrations, page_faults, task_clock_ns, cycles, instructions, "	\
	"cache_misses, host, gpu, sm_mhz, mem_mhz, temp_c, power_w, "	\
	"peak_gflops, peak_routine"
/* How many RESULT_COLUMNS there are: the counters, host, then the GPU's. */
#define RESULT_NCOLS	(18 + TRIAL_CTR_COUNT + RESULT_GPU_NCOLS)
#define RESULT_GPU_NCOLS	7
_Static_assert(TRIAL_CTR_COUNT == 7, "a new counter needs a column");

static const char *const trial_phases[] = {
	"baseline", "tune", "confirm", "final", "noise", "reference"
};

static int
trial_phase_ok(const char *phase)
{
	size_t	i;

	for (i = 0; i < sizeof trial_phases / sizeof trial_phases[0]; i++) {
		if (strcmp(phase, trial_phases[i]) == 0)
			return 1;
	}
	return 0;
}

/* The element type called name (as analysis_elem_name spells it). */
static enum elem_type
trial_elem_lookup(const char *name)
{
	int	t;

	if (name == NULL)
		return ELEM_UNKNOWN;
	for (t = ELEM_UNKNOWN + 1; t <= ELEM_I64; t++) {
		if (strcmp(analysis_elem_name(t), name) == 0)
			return t;
	}
	return ELEM_UNKNOWN;
}

/*
 * The op of a row from OP_COLUMNS at column col; its strings are borrowed
 * from the statement (function and loc are "").
 */
#define OP_COLUMNS							\
	"o.name, o.kind, o.op_name, o.batch, o.m, o.n, o.k, o.lhs, o.rhs, "\
	"o.acc, o.transpose_a, o.transpose_b, o.lhs_unsigned, o.rhs_unsigned"

static void
op_from_row(sqlite3_stmt *st, int col, struct op_desc *op)
{
	memset(op, 0, sizeof *op);
	op->name = (const char *)sqlite3_column_text(st, col);
	op->kind = (const char *)sqlite3_column_text(st, col + 1);
	op->op_name = (const char *)sqlite3_column_text(st, col + 2);
	op->batch = sqlite3_column_int64(st, col + 3);
	op->m = sqlite3_column_int64(st, col + 4);
	op->n = sqlite3_column_int64(st, col + 5);
	op->k = sqlite3_column_int64(st, col + 6);
	op->lhs = trial_elem_lookup((const char *)
	    sqlite3_column_text(st, col + 7));
	op->rhs = trial_elem_lookup((const char *)
	    sqlite3_column_text(st, col + 8));
	op->acc = trial_elem_lookup((const char *)
	    sqlite3_column_text(st, col + 9));
	op->transpose_a = sqlite3_column_int(st, col + 10);
	op->transpose_b = sqlite3_column_int(st, col + 11);
	op->lhs_unsigned = sqlite3_column_int(st, col + 12);
	op->rhs_unsigned = sqlite3_column_int(st, col + 13);
	op->function = "";
	op->loc = "";
}

static void
config_from_row(sqlite3_stmt *st, int col, struct config *c)
{
	int	k;

	for (k = 0; k < KNOB_COUNT; k++)
		c->v[k] = sqlite3_column_int64(st, col + k);
}

/* An int column; -1 (refused by the row check) when outside an int. */
static int
gpu_column_int(sqlite3_stmt *st, int col)
{
	int64_t	v = sqlite3_column_int64(st, col);

	return v >= 0 && v <= INT32_MAX ? (int)v : -1;
}

/* Text column col into buf of len bytes ("" for NULL), cut to fit. */
static void
column_copy(sqlite3_stmt *st, int col, char *buf, size_t len)
{
	const char *text = (const char *)sqlite3_column_text(st, col);

	snprintf(buf, len, "%s", text ? text : "");
}

/* The GPU's columns (NULL in CPU rows and rows before version 8: "", 0). */
static void
gpu_from_row(sqlite3_stmt *st, int col, struct trial_result *r)
{
	column_copy(st, col, r->gpu, sizeof r->gpu);
	r->sm_mhz = gpu_column_int(st, col + 1);
	r->mem_mhz = gpu_column_int(st, col + 2);
	r->temp_c = gpu_column_int(st, col + 3);
	r->power_w = gpu_column_int(st, col + 4);
	r->peak_gflops = store_column_num(st, col + 5);
	column_copy(st, col + 6, r->peak_routine, sizeof r->peak_routine);
}

/* Bind the GPU's columns from i on: "" and 0 (not known) as NULL. */
static void
gpu_bind(sqlite3_stmt *st, int i, const char *phase,
    const struct trial_result *r)
{
	const int	 v[4] = { r->sm_mhz, r->mem_mhz, r->temp_c, r->power_w };
	int		 k, ref = strcmp(phase, "reference") == 0;

	sqlite3_bind_text(st, i, r->gpu, (int)strnlen(r->gpu, sizeof r->gpu),
	    SQLITE_TRANSIENT);
	if (r->gpu[0] == '\0')
		sqlite3_bind_null(st, i);
	for (k = 0; k < 4; k++) {
		if (v[k] > 0)
			sqlite3_bind_int(st, i + 1 + k, v[k]);
		else
			sqlite3_bind_null(st, i + 1 + k);
	}
	/* The peak belongs to reference rows only. */
	if (ref && r->peak_gflops > 0 && r->peak_routine[0] != '\0') {
		sqlite3_bind_double(st, i + 5, r->peak_gflops);
		sqlite3_bind_text(st, i + 6, r->peak_routine, (int)strnlen(
		    r->peak_routine, sizeof r->peak_routine), SQLITE_TRANSIENT);
	} else {
		sqlite3_bind_null(st, i + 5);
		sqlite3_bind_null(st, i + 6);
	}
}

/*
 * Fill r from RESULT_COLUMNS starting at col. The error text is copied when
 * copy is set (caller clears), else borrowed from the statement.
 */
static void
result_from_row(sqlite3_stmt *st, int col, struct trial_result *r, int copy)
{
	const char	*status, *error;
	int		 s, c;

	memset(r, 0, sizeof *r);
	status = (const char *)sqlite3_column_text(st, col);
	s = status != NULL ? trial_status_lookup(status) : -1;
	r->status = s >= 0 ? (enum trial_status)s : TRIAL_ERROR;
	r->median_ms = store_column_num(st, col + 1);
	r->min_ms = store_column_num(st, col + 2);
	r->max_ms = store_column_num(st, col + 3);
	r->cv = store_column_num(st, col + 4);
	r->reps = sqlite3_column_int(st, col + 5);
	r->gflops = store_column_num(st, col + 6);
	r->compile_s = store_column_num(st, col + 7);
	r->measure_s = store_column_num(st, col + 8);
	r->verified = sqlite3_column_int(st, col + 9);
	r->max_err = store_column_num(st, col + 10);
	column_copy(st, col + 11, r->artifact, sizeof r->artifact);
	error = (const char *)sqlite3_column_text(st, col + 12);
	if (error != NULL)
		r->error = copy ? xstrdup(error) : (char *)error;
	column_copy(st, col + 13, r->checked_by, sizeof r->checked_by);
	column_copy(st, col + 14, r->ref_routine, sizeof r->ref_routine);
	r->ref_same_precision = sqlite3_column_int(st, col + 15);
	r->reps_dropped = sqlite3_column_int(st, col + 16);
	for (c = 0; c < TRIAL_CTR_COUNT; c++) {
		if (sqlite3_column_type(st, col + 17 + c) == SQLITE_NULL)
			continue;
		r->counters[c] = sqlite3_column_int64(st, col + 17 + c);
		r->counters_have |= 1u << c;
	}
	column_copy(st, col + 17 + TRIAL_CTR_COUNT, r->host, sizeof r->host);
	gpu_from_row(st, col + 18 + TRIAL_CTR_COUNT, r);
}

static const char sql_trial_add[] =
	"INSERT INTO trials (job_id, op_id, target_id, phase, config_name, "
	KNOB_COLUMNS ", " RESULT_COLUMNS ", created) VALUES (?1, ?2, ?3, ?4, "
	"?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
	"?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, "
	"?32, ?33, ?34, ?35, ?36, ?37, ?38, ?39, ?40, ?41, ?42, ?43, ?44, "
	"?45, ?46, ?47, ?48, ?49, ?50, ?51, ?52)";

/* Bind fixed buffer buf (it may lack the NUL) at i: NULL when empty. */
static void
buf_bind(sqlite3_stmt *st, int i, const char *buf, size_t size)
{
	if (buf[0] == '\0')
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_text(st, i, buf, (int)strnlen(buf, size),
		    SQLITE_TRANSIENT);
}

/*
 * Bind result r of a trial of phase from column col on, as result_from_row
 * reads it back. Empty strings, counters not read and the reference-only
 * fields of other phases are NULL.
 */
static void
result_bind(sqlite3_stmt *st, int col, const char *phase,
    const struct trial_result *r)
{
	int k;

	store_bind_text(st, col, trial_status_name(r->status));
	sqlite3_bind_double(st, col + 1, r->median_ms);
	sqlite3_bind_double(st, col + 2, r->min_ms);
	sqlite3_bind_double(st, col + 3, r->max_ms);
	sqlite3_bind_double(st, col + 4, r->cv);
	sqlite3_bind_int(st, col + 5, r->reps);
	sqlite3_bind_double(st, col + 6, r->gflops);
	sqlite3_bind_double(st, col + 7, r->compile_s);
	sqlite3_bind_double(st, col + 8, r->measure_s);
	sqlite3_bind_int(st, col + 9, r->verified);
	sqlite3_bind_double(st, col + 10, r->max_err);
	/* artifact is a fixed buffer: bound its length, it may lack the NUL. */
	sqlite3_bind_text(st, col + 11, r->artifact, (int)strnlen(r->artifact,
	    sizeof r->artifact), SQLITE_TRANSIENT);
	store_bind_text(st, col + 12, r->error);
	buf_bind(st, col + 13, r->checked_by, sizeof r->checked_by);
	if (strcmp(phase, "reference") == 0 && r->ref_routine[0] != '\0') {
		sqlite3_bind_text(st, col + 14, r->ref_routine, (int)strnlen(
		    r->ref_routine, sizeof r->ref_routine), SQLITE_TRANSIENT);
		sqlite3_bind_int(st, col + 15, r->ref_same_precision);
	} else {
		sqlite3_bind_null(st, col + 14);
		sqlite3_bind_null(st, col + 15);
	}
	sqlite3_bind_int(st, col + 16, r->reps_dropped);
	for (k = 0; k < TRIAL_CTR_COUNT; k++) {
		if (r->counters_have & (1u << k))
			sqlite3_bind_int64(st, col + 17 + k, r->counters[k]);
		else
			sqlite3_bind_null(st, col + 17 + k);
	}
	buf_bind(st, col + 17 + TRIAL_CTR_COUNT, r->host, sizeof r->host);
	gpu_bind(st, col + 18 + TRIAL_CTR_COUNT, phase, r);
}

int64_t
store_trial_add(struct store *s, const struct store_trial *t, char **err)
{
	sqlite3_stmt	*st;
	char		 name[256];
	const char	*config_name = t->config_name;
	uint32_t	 knobs = 0;
	int64_t		 id = -1;
	int		 owned, k;

	if (t->phase == NULL || !trial_phase_ok(t->phase)) {
		util_seterr(err, "store %s: bad trial phase \"%s\"", s->path,
		    t->phase != NULL ? t->phase : "(null)");
		return -1;
	}
	if (config_name == NULL) {
		for (k = 0; k < KNOB_COUNT; k++) {
			if (t->config.v[k] != 0)
				knobs |= KNOB_BIT(k);
		}
		space_config_name(&t->config, knobs, name, sizeof name);
		config_name = name;
	}

	if ((st = store_stmt(s, ST_TRIAL_ADD, sql_trial_add, &owned,
	    err)) == NULL)
		return -1;
	store_bind_id(st, 1, t->job_id);
	sqlite3_bind_int64(st, 2, t->op_id);
	sqlite3_bind_int64(st, 3, t->target_id);
	store_bind_text(st, 4, t->phase);
	store_bind_text(st, 5, config_name);
	for (k = 0; k < KNOB_COUNT; k++)
		sqlite3_bind_int64(st, 6 + k, t->config.v[k]);
	result_bind(st, 6 + KNOB_COUNT, t->phase, &t->result);
	sqlite3_bind_double(st, 6 + KNOB_COUNT + RESULT_NCOLS, t->created != 0 ?
	    t->created : util_wall());

	/* Autocommit: the row is durable (against kill -9) once step returns. */
	if (sqlite3_step(st) != SQLITE_DONE)
		store_fail(s, err, "adding a trial");
	else
		id = sqlite3_last_insert_rowid(s->db);
	store_stmt_done(st, owned);
	return id;
}

static const char sql_trial_find[] =
	"SELECT " RESULT_COLUMNS ", id FROM trials WHERE op_id = ?1 AND "
	"target_id = ?2 AND config_name = ?3 AND phase = 'tune' "
	"AND status <> 'error' ORDER BY id DESC LIMIT 1";

int
store_trial_find(struct store *s, int64_t op_id, int64_t target_id,
    const char *config_name, struct trial_result *res, char **err)
{
	sqlite3_stmt	*st;
	int		 owned, rc;

	memset(res, 0, sizeof *res);
	if ((st = store_stmt(s, ST_TRIAL_FIND, sql_trial_find, &owned,
	    err)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, op_id);
	sqlite3_bind_int64(st, 2, target_id);
	store_bind_text(st, 3, config_name);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		result_from_row(st, 0, res, 1);
		/* A resumed job takes it as measured: held to the writer's. */
		rc = store_result_check(s, sqlite3_column_int64(st,
		    RESULT_NCOLS), res, err) == 0 ? 1 : -1;
		if (rc < 0)
			trial_result_clear(res);
	} else if (rc == SQLITE_DONE)
		rc = 0;
	else
		rc = store_fail(s, err, "looking up a trial");
	store_stmt_done(st, owned);
	return rc;
}

/* Ranges rather than "?1 = 0 OR op_id = ?1", so the index serves both. */
static const char sql_trial_walk[] =
	"SELECT t.id, t.job_id, t.op_id, t.target_id, t.phase, t.config_name, "
	"t.tile_m, t.tile_n, t.tile_k, t.vector_m, t.vector_n, t.vector_k, "
	"t.threads, t.block_dim_x, t.block_dim_y, t.block_dim_z, "
	"t.pipeline_depth, t.pack_b, t.pad_smem, t.pack_a, " RESULT_COLUMNS ", t.created, "
	OP_COLUMNS " FROM trials t JOIN ops o ON o.id = t.op_id "
	"WHERE t.op_id BETWEEN ?1 AND ?2 AND t.target_id BETWEEN ?3 AND ?4 "
	"AND (?5 IS NULL OR t.phase = ?5) ORDER BY t.id";

int
store_trial_foreach(struct store *s, int64_t op_id, int64_t target_id,
    const char *phase,
    int (*fn)(const struct store_trial *, const struct op_desc *, void *),
    void *arg, char **err)
{
	struct store_trial	 t;
	struct op_desc		 op;
	sqlite3_stmt		*st;
	int			 owned, rc, col, stop = 0;

	if ((st = store_stmt(s, ST_TRIAL_WALK, sql_trial_walk, &owned,
	    err)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, op_id > 0 ? op_id : 1);
	sqlite3_bind_int64(st, 2, op_id > 0 ? op_id : INT64_MAX);
	sqlite3_bind_int64(st, 3, target_id > 0 ? target_id : 1);
	sqlite3_bind_int64(st, 4, target_id > 0 ? target_id : INT64_MAX);
	store_bind_text(st, 5, phase);
	while (stop == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		memset(&t, 0, sizeof t);
		t.id = sqlite3_column_int64(st, 0);
		t.job_id = sqlite3_column_int64(st, 1);
		t.op_id = sqlite3_column_int64(st, 2);
		t.target_id = sqlite3_column_int64(st, 3);
		t.phase = (const char *)sqlite3_column_text(st, 4);
		t.config_name = (const char *)sqlite3_column_text(st, 5);
		config_from_row(st, 6, &t.config);
		result_from_row(st, 6 + KNOB_COUNT, &t.result, 0);
		col = 6 + KNOB_COUNT + RESULT_NCOLS;
		t.created = store_column_num(st, col);

		op_from_row(st, col + 1, &op);
		op.tunable = 1;
		/* Refused here: no reader of the walk sees it. */
		if (store_op_check(s, t.op_id, &op, err) != 0 ||
		    store_result_check(s, t.id, &t.result, err) != 0) {
			stop = -1;
			break;
		}

		stop = fn(&t, &op, arg);
	}
	if (stop != 0)
		rc = stop;
	else if (rc != SQLITE_DONE)
		rc = store_fail(s, err, "walking trials");
	else
		rc = 0;
	store_stmt_done(st, owned);
	return rc;
}

static const char sql_trial_count[] =
	"SELECT count(*) FROM trials WHERE job_id BETWEEN ?1 AND ?2 "
	"AND (?3 IS NULL OR phase = ?3)";
static const char sql_trial_count_all[] =
	"SELECT count(*) FROM trials WHERE (?3 IS NULL OR phase = ?3)";

int64_t
store_trial_count(struct store *s, int64_t job_id, const char *phase)
{
	sqlite3_stmt	*st;
	int64_t		 n;
	int		 owned;

	/* job 0 counts trials without a job too, which BETWEEN would miss. */
	if (job_id > 0)
		st = store_stmt(s, ST_TRIAL_COUNT, sql_trial_count, &owned,
		    NULL);
	else
		st = store_stmt(s, ST_TRIAL_COUNT_ALL, sql_trial_count_all,
		    &owned, NULL);
	if (st == NULL)
		return -1;
	if (job_id > 0) {
		sqlite3_bind_int64(st, 1, job_id);
		sqlite3_bind_int64(st, 2, job_id);
	}
	store_bind_text(st, 3, phase);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	else
		n = -1;
	store_stmt_done(st, owned);
	return n;
}

void
store_best_clear(struct store_best *b)
{
	free(b->op_signature);
	free(b->op_name);
	free(b->config_name);
	free(b->cpu);
	free(b->toolchain);
	free(b->backend);
	free(b->gpu);
	free(b->peak_routine);
	free(b->reference_routine);
	free(b->choice_reason);
	free((char *)b->op.kind);
	free((char *)b->op.op_name);
	memset(b, 0, sizeof *b);
}

/*
 * What store_best adds after OP_COLUMNS: the winner's GPU and clocks, the
 * job's mean peak and what it timed, the reference's routine, and the
 * job's choice for the op (its reason and paired ratio to the default).
 */
#define BEST_REF(WHAT)							\
	"(SELECT " WHAT " FROM trials b WHERE b.op_id = r.op_id"		\
	" AND b.target_id = r.target_id AND b.job_id IS r.job_id"		\
	" AND b.phase = 'reference' AND max(b.threads, 1) = max(r.threads, 1)"	\
	" AND b.status IN ('ok','unstable')"
#define BEST_CHOICE(WHAT)						\
	"(SELECT " WHAT " FROM choices ch WHERE ch.job_id IS r.job_id"	\
	" AND ch.op_id = r.op_id AND ch.target_id = r.target_id"		\
	" AND ch.config_name = r.config_name ORDER BY ch.id DESC LIMIT 1)"
#define BEST_GPU_COLUMNS						\
	" r.gpu, r.sm_mhz, r.mem_mhz, r.temp_c, "				\
	BEST_REF("avg(b.peak_gflops)") "), "				\
	BEST_REF("b.peak_routine") " AND b.peak_routine IS NOT NULL"	\
	" ORDER BY b.id DESC LIMIT 1), "					\
	BEST_REF("b.ref_routine") " ORDER BY b.id DESC LIMIT 1), "	\
	BEST_REF("b.ref_same_precision") " ORDER BY b.id DESC LIMIT 1), "	\
	BEST_CHOICE("ch.reason") ", " BEST_CHOICE("ch.speedup") ", "	\
	BEST_CHOICE("ch.speedup_lo") ", " BEST_CHOICE("ch.speedup_hi") ", "	\
	BEST_CHOICE("ch.rounds")

/*
 * The winner per op and target. Within one job, the figure measured after
 * the choice ("final", the median of its rounds) counts; else, in a job that
 * confirmed, only its confirm figures (the tune maximum is the luckiest of
 * many noisy draws), each config by the median of its confirm rounds; a job
 * that did neither offers its best tune figure. Across jobs, the highest of
 * those. The baseline and the reference are the means of the winning job's
 * measurements of them at the winner's thread count (the engine measures
 * both in every final round). The schema's view "best" is the same query
 * without the job filter (?2).
 */
static const char sql_best[] =
	"WITH valid AS ("
	" SELECT t.*, row_number() OVER (PARTITION BY t.job_id, t.op_id,"
	"  t.target_id, t.phase, t.config_name ORDER BY t.gflops, t.id) AS mr,"
	"  count(*) OVER (PARTITION BY t.job_id, t.op_id, t.target_id, t.phase,"
	"  t.config_name) AS mc,"
	"  EXISTS (SELECT 1 FROM choices ch WHERE ch.job_id = t.job_id"
	"  AND ch.op_id = t.op_id AND ch.target_id = t.target_id"
	"  AND ch.config_name = t.config_name) AS chosen FROM trials t"
	"  WHERE t.status IN ('ok','unstable')"
	"  AND (t.phase IN ('tune', 'confirm', 'final') OR (t.phase = 'baseline'"
	"  AND EXISTS (SELECT 1 FROM choices ch WHERE ch.job_id = t.job_id"
	"  AND ch.op_id = t.op_id AND ch.target_id = t.target_id"
	"  AND ch.config_name = t.config_name)))"
	"  AND (?2 = 0 OR t.job_id = ?2)),"
	" per_job AS ("
	" SELECT valid.*, row_number() OVER (PARTITION BY op_id, target_id,"
	"  job_id ORDER BY chosen DESC, phase IN ('final', 'baseline') DESC,"
	"  phase = 'confirm' DESC, gflops DESC, id DESC)"
	"  AS jr FROM valid WHERE phase = 'tune' OR mr = (mc + 1) / 2),"
	" ranked AS ("
	" SELECT per_job.*, row_number() OVER (PARTITION BY op_id, target_id"
	"  ORDER BY gflops DESC, id DESC) AS rn FROM per_job WHERE jr = 1)"
	"SELECT r.op_id, o.signature, o.name, r.config_name, "
	" r.tile_m, r.tile_n, r.tile_k, r.vector_m, r.vector_n, r.vector_k,"
	" r.threads, r.block_dim_x, r.block_dim_y, r.block_dim_z,"
	" r.pipeline_depth, r.pack_b, r.pad_smem, r.pack_a, r.gflops,"
	" r.runtime_ms, r.cv,"
	" (SELECT avg(b.gflops) FROM trials b WHERE b.op_id = r.op_id"
	"  AND b.target_id = r.target_id AND b.job_id IS r.job_id"
	"  AND b.phase = 'baseline' AND b.threads = r.threads"
	"  AND b.status IN ('ok','unstable')),"
	" (SELECT avg(b.gflops) FROM trials b WHERE b.op_id = r.op_id"
	"  AND b.target_id = r.target_id AND b.job_id IS r.job_id"
	"  AND b.phase = 'reference' AND max(b.threads, 1) = max(r.threads, 1)"
	"  AND b.status IN ('ok','unstable')),"
	" (SELECT count(*) FROM trials c WHERE c.op_id = r.op_id"
	"  AND c.target_id = r.target_id AND c.phase = 'tune'"
	"  AND (?2 = 0 OR c.job_id = ?2)),"
	" g.cpu, g.toolchain, g.backend, r.job_id, r.target_id, r.id,"
	" r.phase IN ('confirm', 'final') OR r.chosen, " OP_COLUMNS ", "
	BEST_GPU_COLUMNS " "
	"FROM ranked r JOIN ops o ON o.id = r.op_id"
	" JOIN targets g ON g.id = r.target_id "
	"WHERE r.rn = 1 AND (?1 IS NULL OR instr(o.name, ?1) > 0"
	" OR instr(o.signature, ?1) > 0) "
	"ORDER BY o.name, o.signature, r.target_id";

/* A text column copied, "" when NULL. Caller frees. */
static char *
best_text(sqlite3_stmt *st, int col)
{
	char	*v = store_column_dup(st, col);

	return v != NULL ? v : xstrdup("");
}

/* BEST_GPU_COLUMNS from col on into b. */
static void
best_gpu_from_row(sqlite3_stmt *st, int col, struct store_best *b)
{
	b->gpu = best_text(st, col);
	b->sm_mhz = gpu_column_int(st, col + 1);
	b->mem_mhz = gpu_column_int(st, col + 2);
	b->temp_c = gpu_column_int(st, col + 3);
	b->peak_gflops = store_column_num(st, col + 4);
	b->peak_routine = best_text(st, col + 5);
	b->reference_routine = best_text(st, col + 6);
	b->reference_same = sqlite3_column_int(st, col + 7);
	b->choice_reason = best_text(st, col + 8);
	b->speedup = store_column_num(st, col + 9);
	b->speedup_lo = store_column_num(st, col + 10);
	b->speedup_hi = store_column_num(st, col + 11);
	b->speedup_rounds = gpu_column_int(st, col + 12);
}

/* The winning row's figures, and the baseline's and the reference's. */
static int
store_best_figures_check(struct store *s, const struct store_best *b,
    char **err)
{
	struct trial_result r;

	memset(&r, 0, sizeof r);
	r.gflops = b->gflops;
	r.median_ms = b->median_ms;
	r.cv = b->cv;
	if (store_result_check(s, b->trial_id, &r, err) != 0)
		return -1;
	/* Means of the job's rows: no one row to name, the column to look at. */
	if (store_row_num(s, err, "trials", b->trial_id, "gflops (the mean of"
	    " the job's baseline rows)", b->baseline_gflops, 0,
	    STORE_GFLOPS_MAX) != 0 ||
	    store_row_num(s, err, "trials", b->trial_id, "gflops (the mean of"
	    " the job's reference rows)", b->reference_gflops, 0,
	    STORE_GFLOPS_MAX) != 0 ||
	    store_row_num(s, err, "trials", b->trial_id, "peak_gflops (the "
	    "mean of the job's reference rows)", b->peak_gflops, 0,
	    STORE_GFLOPS_MAX) != 0 ||
	    store_row_int(s, err, "trials", b->trial_id, "sm_mhz", b->sm_mhz,
	    0, STORE_MHZ_MAX) != 0 ||
	    store_row_int(s, err, "trials", b->trial_id, "mem_mhz",
	    b->mem_mhz, 0, STORE_MHZ_MAX) != 0 ||
	    store_row_int(s, err, "trials", b->trial_id, "temp_c", b->temp_c,
	    0, STORE_TEMP_MAX) != 0 ||
	    store_row_num(s, err, "choices", b->trial_id, "speedup (of the "
	    "winning row's job)", b->speedup, 0, STORE_GFLOPS_MAX) != 0 ||
	    store_row_num(s, err, "choices", b->trial_id, "speedup_lo",
	    b->speedup_lo, 0, STORE_GFLOPS_MAX) != 0 ||
	    store_row_num(s, err, "choices", b->trial_id, "speedup_hi",
	    b->speedup_hi, 0, STORE_GFLOPS_MAX) != 0)
		return -1;
	return 0;
}

int
store_best(struct store *s, const char *op_filter, int64_t job_id,
    struct store_best **rows, size_t *n, char **err)
{
	sqlite3_stmt		*st;
	struct store_best	*v = NULL, *b;
	struct op_desc		 op;
	size_t			 len = 0, cap = 0, i;
	int			 owned, rc, bad = 0, c = 4 + KNOB_COUNT;

	*rows = NULL;
	*n = 0;
	/* One answer for a job that is not there, whoever asks. */
	if (job_id > 0) {
		struct store_job j;

		if ((rc = store_job_get(s, job_id, &j, err)) < 0)
			return -1;
		store_job_clear(&j);
		if (rc == 0) {
			util_seterr(err, "store %s: no job %lld (autosched status"
			    " --db %s lists the jobs)", s->path,
			    (long long)job_id, s->path);
			return -1;
		}
	}
	if ((st = store_stmt(s, ST_BEST, sql_best, &owned, err)) == NULL)
		return -1;
	store_bind_text(st, 1, op_filter != NULL && *op_filter != '\0' ?
	    op_filter : NULL);
	sqlite3_bind_int64(st, 2, job_id > 0 ? job_id : 0);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			cap = cap ? cap * 2 : 16;
			v = xrealloc(v, cap * sizeof *v);
		}
		b = &v[len++];
		memset(b, 0, sizeof *b);
		b->op_id = sqlite3_column_int64(st, 0);
		b->op_signature = store_column_dup(st, 1);
		b->op_name = store_column_dup(st, 2);
		b->config_name = store_column_dup(st, 3);
		config_from_row(st, 4, &b->config);
		b->gflops = store_column_num(st, c);
		b->median_ms = store_column_num(st, c + 1);
		b->cv = store_column_num(st, c + 2);
		b->baseline_gflops = store_column_num(st, c + 3);
		b->reference_gflops = store_column_num(st, c + 4);
		b->trials = sqlite3_column_int64(st, c + 5);
		b->cpu = store_column_dup(st, c + 6);
		b->toolchain = store_column_dup(st, c + 7);
		b->backend = store_column_dup(st, c + 8);
		b->job_id = sqlite3_column_int64(st, c + 9);
		b->target_id = sqlite3_column_int64(st, c + 10);
		b->trial_id = sqlite3_column_int64(st, c + 11);
		b->confirmed = sqlite3_column_int(st, c + 12);
		op_from_row(st, c + 13, &op);
		best_gpu_from_row(st, c + 27, b);
		/* Refused here, no reader of the best configs ever sees it. */
		if ((bad = store_op_check(s, b->op_id, &op, err)) != 0 ||
		    (bad = store_best_figures_check(s, b, err)) != 0)
			break;
		b->op = op;
		b->op.name = b->op_name;
		b->op.kind = xstrdup(op.kind != NULL ? op.kind : "");
		b->op.op_name = xstrdup(op.op_name != NULL ? op.op_name : "");
	}
	if (bad || rc != SQLITE_DONE) {
		if (!bad)
			store_fail(s, err, "finding the best configs");
		store_stmt_done(st, owned);
		for (i = 0; i < len; i++)
			store_best_clear(&v[i]);
		free(v);
		return -1;
	}
	store_stmt_done(st, owned);
	*rows = v;
	*n = len;
	return 0;
}
