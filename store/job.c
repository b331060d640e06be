/*
 * Jobs and their queue: adding, claiming (atomically, for several daemons or
 * a daemon and a CLI), state changes, cancelling, and each job's log.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "store/store_int.h"

static const char *const job_states[] = {
	"queued", "running", "done", "failed", "cancelled"
};

int
store_job_state_ok(const char *state)
{
	size_t	i;

	for (i = 0; i < sizeof job_states / sizeof job_states[0]; i++) {
		if (strcmp(state, job_states[i]) == 0)
			return 1;
	}
	return 0;
}

void
store_job_clear(struct store_job *j)
{
	free(j->state);
	free(j->cfg_path);
	free(j->cfg_text);
	free(j->mlir_path);
	free(j->mlir_text);
	free(j->mlir_hash);
	free(j->tuner);
	free(j->error);
	memset(j, 0, sizeof *j);
}

#define JOB_COLUMNS							\
	"id, state, priority, cfg_path, cfg_text, mlir_path, mlir_text, "	\
	"mlir_hash, tuner, n_trial, trials_done, created, started, "	\
	"finished, cancel_requested, error"

/* Fill j (owning copies) from a row selected with JOB_COLUMNS. */
static void
job_from_row(sqlite3_stmt *st, struct store_job *j)
{
	memset(j, 0, sizeof *j);
	j->id = sqlite3_column_int64(st, 0);
	j->state = store_column_dup(st, 1);
	j->priority = sqlite3_column_int(st, 2);
	j->cfg_path = store_column_dup(st, 3);
	j->cfg_text = store_column_dup(st, 4);
	j->mlir_path = store_column_dup(st, 5);
	j->mlir_text = store_column_dup(st, 6);
	j->mlir_hash = store_column_dup(st, 7);
	j->tuner = store_column_dup(st, 8);
	j->n_trial = sqlite3_column_int64(st, 9);
	j->trials_done = sqlite3_column_int64(st, 10);
	j->created = store_column_num(st, 11);
	j->started = store_column_num(st, 12);
	j->finished = store_column_num(st, 13);
	j->cancel_requested = sqlite3_column_int(st, 14);
	j->error = store_column_dup(st, 15);
}

static const char sql_job_add[] =
	"INSERT INTO jobs (state, priority, cfg_path, cfg_text, mlir_path, "
	"mlir_text, mlir_hash, tuner, n_trial, trials_done, created, started, "
	"finished, cancel_requested, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
	"?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)";

int64_t
store_job_add(struct store *s, const struct store_job *j, char **err)
{
	sqlite3_stmt	*st;
	const char	*state = j->state != NULL ? j->state : "queued";
	int64_t		 id = -1;
	int		 owned;

	if (!store_job_state_ok(state)) {
		util_seterr(err, "store %s: bad job state \"%s\"", s->path,
		    state);
		return -1;
	}
	if ((st = store_stmt(s, ST_JOB_ADD, sql_job_add, &owned, err)) == NULL)
		return -1;
	store_bind_text(st, 1, state);
	sqlite3_bind_int(st, 2, j->priority);
	store_bind_text(st, 3, j->cfg_path);
	store_bind_text(st, 4, j->cfg_text);
	store_bind_text(st, 5, j->mlir_path);
	store_bind_text(st, 6, j->mlir_text);
	store_bind_text(st, 7, j->mlir_hash);
	store_bind_text(st, 8, j->tuner);
	sqlite3_bind_int64(st, 9, j->n_trial);
	sqlite3_bind_int64(st, 10, j->trials_done);
	sqlite3_bind_double(st, 11, j->created != 0 ? j->created : util_wall());
	if (j->started != 0)
		sqlite3_bind_double(st, 12, j->started);
	else if (strcmp(state, "running") == 0)
		sqlite3_bind_double(st, 12, util_wall());
	if (j->finished != 0)
		sqlite3_bind_double(st, 13, j->finished);
	else if (strcmp(state, "queued") != 0 && strcmp(state, "running") != 0)
		sqlite3_bind_double(st, 13, util_wall());
	sqlite3_bind_int(st, 14, j->cancel_requested != 0);
	store_bind_text(st, 15, j->error);
	if (sqlite3_step(st) != SQLITE_DONE)
		store_fail(s, err, "adding a job");
	else
		id = sqlite3_last_insert_rowid(s->db);
	store_stmt_done(st, owned);
	return id;
}

static const char sql_job_get[] =
	"SELECT " JOB_COLUMNS " FROM jobs WHERE id = ?1";

int
store_job_get(struct store *s, int64_t id, struct store_job *j, char **err)
{
	sqlite3_stmt	*st;
	int		 owned, rc;

	memset(j, 0, sizeof *j);
	if ((st = store_stmt(s, ST_JOB_GET, sql_job_get, &owned, err)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		job_from_row(st, j);
		rc = 1;
	} else if (rc == SQLITE_DONE)
		rc = 0;
	else
		rc = store_fail(s, err, "reading a job");
	store_stmt_done(st, owned);
	return rc;
}

static const char sql_job_list[] =
	"SELECT " JOB_COLUMNS " FROM jobs ORDER BY id DESC";

int
store_job_list(struct store *s, struct store_job **jobs, size_t *n, char **err)
{
	sqlite3_stmt	*st;
	struct store_job *v = NULL;
	size_t		 len = 0, cap = 0, i;
	int		 owned, rc;

	*jobs = NULL;
	*n = 0;
	if ((st = store_stmt(s, ST_JOB_LIST, sql_job_list, &owned,
	    err)) == NULL)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			cap = cap ? cap * 2 : 16;
			v = xrealloc(v, cap * sizeof *v);
		}
		job_from_row(st, &v[len++]);
	}
	if (rc != SQLITE_DONE) {
		store_fail(s, err, "listing jobs");
		store_stmt_done(st, owned);
		for (i = 0; i < len; i++)
			store_job_clear(&v[i]);
		free(v);
		return -1;
	}
	store_stmt_done(st, owned);
	*jobs = v;
	*n = len;
	return 0;
}

static const char sql_job_next[] =
	"SELECT id FROM jobs WHERE state = 'queued' "
	"ORDER BY priority DESC, created ASC, id ASC LIMIT 1";
static const char sql_job_start[] =
	"UPDATE jobs SET state = 'running', started = ?2, finished = NULL "
	"WHERE id = ?1 AND state = 'queued'";

int
store_job_claim(struct store *s, struct store_job *j, char **err)
{
	sqlite3_stmt	*st = NULL;
	int64_t		 id;
	int		 owned = 0, rc = -1;

	memset(j, 0, sizeof *j);
	/* IMMEDIATE: take the write lock before looking, so no one else can. */
	if (store_exec(s, "BEGIN IMMEDIATE", err) != 0)
		return -1;
	if ((st = store_stmt(s, ST_JOB_NEXT, sql_job_next, &owned,
	    err)) == NULL)
		goto out;
	id = store_step_id(s, st, err);
	store_stmt_done(st, owned);
	st = NULL;
	if (id < 0)
		goto out;
	if (id == 0) {
		rc = 0;
		goto out;
	}
	if ((st = store_stmt(s, ST_JOB_START, sql_job_start, &owned,
	    err)) == NULL)
		goto out;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_double(st, 2, util_wall());
	if (sqlite3_step(st) != SQLITE_DONE) {
		store_fail(s, err, "claiming a job");
		goto out;
	}
	store_stmt_done(st, owned);
	st = NULL;
	if (store_job_get(s, id, j, err) != 1)
		goto out;
	if (store_exec(s, "COMMIT", err) != 0) {
		store_job_clear(j);
		goto out;
	}
	return 1;
out:
	store_stmt_done(st, owned);
	if (rc == 0) {
		if (store_exec(s, "COMMIT", err) != 0)
			rc = -1;
	}
	if (rc != 0)
		store_rollback(s);
	return rc;
}

static const char sql_job_set_state[] =
	"UPDATE jobs SET state = ?2, error = ?3, "
	"started = CASE WHEN ?2 = 'queued' THEN NULL "
	"  WHEN ?2 = 'running' THEN coalesce(started, ?4) ELSE started END, "
	"finished = CASE WHEN ?2 IN ('done', 'failed', 'cancelled') THEN ?4 "
	"  ELSE NULL END, "
	"cancel_requested = CASE WHEN ?2 = 'queued' THEN 0 "
	"  ELSE cancel_requested END "
	"WHERE id = ?1";

int
store_job_set_state(struct store *s, int64_t id, const char *state,
    const char *error, char **err)
{
	sqlite3_stmt	*st;
	int		 owned, rc = -1;

	if (state == NULL || !store_job_state_ok(state)) {
		util_seterr(err, "store %s: bad job state \"%s\"", s->path,
		    state != NULL ? state : "(null)");
		return -1;
	}
	if ((st = store_stmt(s, ST_JOB_SET_STATE, sql_job_set_state, &owned,
	    err)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	store_bind_text(st, 2, state);
	store_bind_text(st, 3, error);
	sqlite3_bind_double(st, 4, util_wall());
	if (sqlite3_step(st) != SQLITE_DONE)
		store_fail(s, err, "setting a job's state");
	else if (sqlite3_changes(s->db) == 0)
		util_seterr(err, "store %s: no job %" PRId64, s->path, id);
	else
		rc = 0;
	store_stmt_done(st, owned);
	return rc;
}

/*
 * Run a cached update, binding ?1 = id and ?2 = now if it has them. Returns
 * the rows changed, or -1.
 */
static int
job_update(struct store *s, enum store_stmt slot, const char *sql, int64_t id,
    char **err)
{
	sqlite3_stmt	*st;
	int		 owned, rc;

	if ((st = store_stmt(s, slot, sql, &owned, err)) == NULL)
		return -1;
	if (sqlite3_bind_parameter_count(st) >= 1)
		sqlite3_bind_int64(st, 1, id);
	if (sqlite3_bind_parameter_count(st) >= 2)
		sqlite3_bind_double(st, 2, util_wall());
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = store_fail(s, err, "updating jobs");
	else
		rc = sqlite3_changes(s->db);
	store_stmt_done(st, owned);
	return rc;
}

/* A killed daemon's jobs: asked to stop means stopped, the rest run again. */
static const char sql_job_requeue_cancelled[] =
	"UPDATE jobs SET state = 'cancelled', finished = ?2 "
	"WHERE state = 'running' AND cancel_requested";
static const char sql_job_requeue[] =
	"UPDATE jobs SET state = 'queued', started = NULL "
	"WHERE state = 'running'";

int
store_job_requeue_running(struct store *s, char **err)
{
	int	n;

	if (store_exec(s, "BEGIN IMMEDIATE", err) != 0)
		return -1;
	if (job_update(s, ST_JOB_REQUEUE_CANCELLED, sql_job_requeue_cancelled,
	    0, err) < 0 ||
	    (n = job_update(s, ST_JOB_REQUEUE, sql_job_requeue, 0, err)) < 0 ||
	    store_exec(s, "COMMIT", err) != 0) {
		store_rollback(s);
		return -1;
	}
	return n;
}

static const char sql_job_cancel_queued[] =
	"UPDATE jobs SET state = 'cancelled', finished = ?2 "
	"WHERE id = ?1 AND state = 'queued'";
static const char sql_job_cancel_running[] =
	"UPDATE jobs SET cancel_requested = 1 "
	"WHERE id = ?1 AND state = 'running'";

int
store_job_cancel(struct store *s, int64_t id, char **err)
{
	struct store_job j;
	int		 n, found;

	memset(&j, 0, sizeof j);
	/* One transaction, so a claim cannot slip between the two updates. */
	if (store_exec(s, "BEGIN IMMEDIATE", err) != 0)
		return -1;
	if ((n = job_update(s, ST_JOB_CANCEL_QUEUED, sql_job_cancel_queued, id,
	    err)) < 0)
		goto fail;
	if (n == 0 && (n = job_update(s, ST_JOB_CANCEL_RUNNING,
	    sql_job_cancel_running, id, err)) < 0)
		goto fail;
	if (n == 0) {
		if ((found = store_job_get(s, id, &j, err)) < 0)
			goto fail;
		if (found == 0)
			util_seterr(err, "store %s: no job %" PRId64, s->path,
			    id);
		else
			util_seterr(err, "store %s: job %" PRId64 " is already "
			    "%s", s->path, id, j.state);
		goto fail;
	}
	if (store_exec(s, "COMMIT", err) != 0)
		goto fail;
	return 0;
fail:
	store_job_clear(&j);
	store_rollback(s);
	return -1;
}

static const char sql_job_cancel_asked[] =
	"SELECT cancel_requested FROM jobs WHERE id = ?1";

int
store_job_cancel_requested(struct store *s, int64_t id)
{
	sqlite3_stmt	*st;
	int		 owned, rc;

	if ((st = store_stmt(s, ST_JOB_CANCEL_ASKED, sql_job_cancel_asked,
	    &owned, NULL)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		rc = sqlite3_column_int(st, 0) != 0;
	else if (rc == SQLITE_DONE)
		rc = 0;
	else
		rc = -1;
	store_stmt_done(st, owned);
	return rc;
}

static const char sql_job_progress[] =
	"UPDATE jobs SET trials_done = ?2 WHERE id = ?1";

int
store_job_set_progress(struct store *s, int64_t id, int64_t done, char **err)
{
	sqlite3_stmt	*st;
	int		 owned, rc = 0;

	if ((st = store_stmt(s, ST_JOB_PROGRESS, sql_job_progress, &owned,
	    err)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, done);
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = store_fail(s, err, "setting a job's progress");
	store_stmt_done(st, owned);
	return rc;
}

static const char sql_log_add[] =
	"INSERT INTO job_log (job_id, time, level, message) "
	"VALUES (?1, ?2, ?3, ?4)";

int
store_log(struct store *s, int64_t job_id, const char *level, const char *msg)
{
	sqlite3_stmt	*st;
	int		 owned, rc = 0;

	if ((st = store_stmt(s, ST_LOG_ADD, sql_log_add, &owned, NULL)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_double(st, 2, util_wall());
	store_bind_text(st, 3, level != NULL ? level : "info");
	store_bind_text(st, 4, msg != NULL ? msg : "");
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = -1;
	store_stmt_done(st, owned);
	return rc;
}

static const char sql_log_list[] =
	"SELECT time, level, message FROM job_log WHERE job_id = ?1 "
	"ORDER BY id";

int
store_log_foreach(struct store *s, int64_t job_id,
    void (*fn)(double, const char *, const char *, void *), void *arg,
    char **err)
{
	sqlite3_stmt	*st;
	int		 owned, rc;

	if ((st = store_stmt(s, ST_LOG_LIST, sql_log_list, &owned,
	    err)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		fn(store_column_num(st, 0),
		    (const char *)sqlite3_column_text(st, 1),
		    (const char *)sqlite3_column_text(st, 2), arg);
	}
	if (rc != SQLITE_DONE)
		rc = store_fail(s, err, "reading a job's log");
	else
		rc = 0;
	store_stmt_done(st, owned);
	return rc;
}
