/*
 * What a job planned and decided, beside its trials: its distinct ops with
 * their occurrences in the program, the scheduler's rounds (so a job run
 * again continues its plan) and the config it chose for each op.
 */
#include <stdlib.h>
#include <string.h>

#include "store/store_int.h"
#include "util/util.h"

static const char sql_job_op_add[] =
	"INSERT INTO job_ops (job_id, op_id, occurrences, locations) "
	"VALUES (?1, ?2, ?3, ?4) ON CONFLICT (job_id, op_id) DO UPDATE SET "
	"occurrences = excluded.occurrences, locations = excluded.locations";

int
store_job_op_add(struct store *s, const struct store_job_op *j, char **err)
{
	sqlite3_stmt	*st;
	int		 owned, rc = 0;

	if ((st = store_stmt(s, ST_JOB_OP_ADD, sql_job_op_add, &owned,
	    err)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, j->job_id);
	sqlite3_bind_int64(st, 2, j->op_id);
	sqlite3_bind_int64(st, 3, j->occurrences);
	store_bind_text(st, 4, j->locations != NULL ? j->locations : "");
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = store_fail(s, err, "recording a job's op");
	store_stmt_done(st, owned);
	return rc;
}

static const char sql_job_op_list[] =
	"SELECT job_id, op_id, occurrences, locations, rowid FROM job_ops "
	"WHERE job_id = ?1 ORDER BY op_id";

int
store_job_op_list(struct store *s, int64_t job_id, struct store_job_op **v,
    size_t *n, char **err)
{
	sqlite3_stmt	*st;
	int		 owned, rc, bad = 0;
	size_t		 cap = 0;

	*v = NULL;
	*n = 0;
	if ((st = store_stmt(s, ST_JOB_OP_LIST, sql_job_op_list, &owned,
	    err)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			*v = xrealloc(*v, cap * sizeof **v);
		}
		(*v)[*n].job_id = sqlite3_column_int64(st, 0);
		(*v)[*n].op_id = sqlite3_column_int64(st, 1);
		(*v)[*n].occurrences = sqlite3_column_int64(st, 2);
		(*v)[*n].locations = store_column_dup(st, 3);
		(*n)++;
		/* The weights of a model's ops: what the job wrote, or refused. */
		if ((bad = store_row_int(s, err, "job_ops", sqlite3_column_int64(st,
		    4), "occurrences", (*v)[*n - 1].occurrences, 1,
		    STORE_TRIALS_MAX)) != 0)
			break;
	}
	store_stmt_done(st, owned);
	if (bad || rc != SQLITE_DONE) {
		while (*n > 0)
			free((*v)[--*n].locations);
		free(*v);
		*v = NULL;
		return bad ? -1 : store_fail(s, err, "reading a job's ops");
	}
	return 0;
}

static const char sql_alloc_add[] =
	"INSERT INTO allocations (job_id, seq, op_id, trials, trials_before, "
	"weight, now_ms, gain, elapsed_s, reason, created) "
	"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";

int64_t
store_alloc_add(struct store *s, const struct store_alloc *a, char **err)
{
	sqlite3_stmt	*st;
	int64_t		 id = -1;
	int		 owned;

	/* What the reader takes back (store_alloc_check), and no more. */
	if (a->trials < 1 || a->trials > STORE_ROUND_TRIALS_MAX) {
		util_seterr(err, "store %s: a scheduler decision of %lld tune"
		    " trials; expected 1 to %d", s->path, (long long)a->trials,
		    STORE_ROUND_TRIALS_MAX);
		return -1;
	}
	if ((st = store_stmt(s, ST_ALLOC_ADD, sql_alloc_add, &owned,
	    err)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, a->job_id);
	sqlite3_bind_int64(st, 2, a->seq);
	sqlite3_bind_int64(st, 3, a->op_id);
	sqlite3_bind_int64(st, 4, a->trials);
	sqlite3_bind_int64(st, 5, a->trials_before);
	sqlite3_bind_int64(st, 6, a->weight);
	sqlite3_bind_double(st, 7, a->now_ms);
	sqlite3_bind_double(st, 8, a->gain);
	sqlite3_bind_double(st, 9, a->elapsed_s);
	store_bind_text(st, 10, a->reason != NULL ? a->reason : "");
	sqlite3_bind_double(st, 11, util_wall());
	if (sqlite3_step(st) == SQLITE_DONE)
		id = sqlite3_last_insert_rowid(s->db);
	else
		store_fail(s, err, "recording a scheduler decision");
	store_stmt_done(st, owned);
	return id;
}

static const char sql_alloc_list[] =
	"SELECT job_id, seq, op_id, trials, trials_before, weight, now_ms, "
	"gain, elapsed_s, id FROM allocations WHERE job_id = ?1 "
	"ORDER BY seq, id";

int
store_alloc_list(struct store *s, int64_t job_id, struct store_alloc **v,
    size_t *n, char **err)
{
	sqlite3_stmt	*st;
	int		 owned, rc, bad = 0;
	size_t		 cap = 0;

	*v = NULL;
	*n = 0;
	if ((st = store_stmt(s, ST_ALLOC_LIST, sql_alloc_list, &owned,
	    err)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_alloc *a;

		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			*v = xrealloc(*v, cap * sizeof **v);
		}
		a = &(*v)[(*n)++];
		memset(a, 0, sizeof *a);
		a->job_id = sqlite3_column_int64(st, 0);
		a->seq = sqlite3_column_int64(st, 1);
		a->op_id = sqlite3_column_int64(st, 2);
		a->trials = sqlite3_column_int64(st, 3);
		a->trials_before = sqlite3_column_int64(st, 4);
		a->weight = sqlite3_column_int64(st, 5);
		a->now_ms = store_column_num(st, 6);
		a->gain = store_column_num(st, 7);
		a->elapsed_s = store_column_num(st, 8);
		a->reason = "";
		/* The job replays these: refused here, never obeyed. */
		if ((bad = store_alloc_check(s, sqlite3_column_int64(st, 9), a,
		    err)) != 0)
			break;
	}
	store_stmt_done(st, owned);
	if (bad || rc != SQLITE_DONE) {
		free(*v);
		*v = NULL;
		*n = 0;
		return bad ? -1 : store_fail(s, err, "reading a job's scheduler"
		    " decisions");
	}
	return 0;
}

static const char sql_choice_has[] =
	"SELECT 1 FROM choices WHERE job_id = ?1 AND op_id = ?2 AND "
	"target_id = ?3 LIMIT 1";

int
store_choice_has(struct store *s, int64_t job_id, int64_t op_id,
    int64_t target_id, char **err)
{
	sqlite3_stmt	*st;
	int		 owned, rc;

	if ((st = store_stmt(s, ST_CHOICE_HAS, sql_choice_has, &owned,
	    err)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, op_id);
	sqlite3_bind_int64(st, 3, target_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		rc = 1;
	else if (rc == SQLITE_DONE)
		rc = 0;
	else
		rc = store_fail(s, err, "looking up a job's choice");
	store_stmt_done(st, owned);
	return rc;
}

static const char sql_choice_add[] =
	"INSERT INTO choices (job_id, op_id, target_id, config_name, reason, "
	"speedup, speedup_lo, speedup_hi, rounds, occurrences, created) "
	"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";

int64_t
store_choice_add(struct store *s, const struct store_choice *c, char **err)
{
	sqlite3_stmt	*st;
	int64_t		 id = -1;
	int		 owned;

	if ((st = store_stmt(s, ST_CHOICE_ADD, sql_choice_add, &owned,
	    err)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, c->job_id);
	sqlite3_bind_int64(st, 2, c->op_id);
	sqlite3_bind_int64(st, 3, c->target_id);
	store_bind_text(st, 4, c->config_name);
	store_bind_text(st, 5, c->reason != NULL ? c->reason : "");
	sqlite3_bind_double(st, 6, c->speedup);
	sqlite3_bind_double(st, 7, c->lo);
	sqlite3_bind_double(st, 8, c->hi);
	sqlite3_bind_int(st, 9, c->rounds);
	sqlite3_bind_int64(st, 10, c->occurrences);
	sqlite3_bind_double(st, 11, util_wall());
	if (sqlite3_step(st) == SQLITE_DONE)
		id = sqlite3_last_insert_rowid(s->db);
	else
		store_fail(s, err, "recording a job's choice");
	store_stmt_done(st, owned);
	return id;
}
