/*
 * Internals shared by the files of store/: the connection, the cache of
 * prepared statements and the error helpers. Nothing outside store/ sees this.
 */
#ifndef AUTOSCHED_STORE_INT_H
#define AUTOSCHED_STORE_INT_H

#include <sqlite3.h>

#include "store/store.h"

/* Every cached statement has a slot; its SQL lives beside the code using it. */
enum store_stmt {
	ST_TARGET_FIND,
	ST_TARGET_ADD,
	ST_OP_FIND,
	ST_OP_ADD,
	ST_JOB_ADD,
	ST_JOB_GET,
	ST_JOB_LIST,
	ST_JOB_NEXT,
	ST_JOB_START,
	ST_JOB_SET_STATE,
	ST_JOB_CANCEL_QUEUED,
	ST_JOB_CANCEL_RUNNING,
	ST_JOB_CANCEL_ASKED,
	ST_JOB_PROGRESS,
	ST_JOB_REQUEUE_CANCELLED,
	ST_JOB_REQUEUE,
	ST_LOG_ADD,
	ST_LOG_LIST,
	ST_TRIAL_ADD,
	ST_TRIAL_FIND,
	ST_TRIAL_WALK,
	ST_TRIAL_COUNT,
	ST_TRIAL_COUNT_ALL,
	ST_BEST,
	ST_JOB_OP_ADD,
	ST_JOB_OP_LIST,
	ST_ALLOC_ADD,
	ST_ALLOC_LIST,
	ST_CHOICE_ADD,
	ST_CHOICE_HAS,
	ST_COUNT
};

struct store {
	sqlite3		*db;
	char		*path;
	int		 readonly;
	sqlite3_stmt	*stmt[ST_COUNT];
};

/*
 * The prepared statement for slot id (SQL sql). The cached one unless it is
 * in use (a callback of a walk calling back into the store), in which case a
 * fresh one is prepared and *owned set. Give it back with store_stmt_done.
 */
sqlite3_stmt	*store_stmt(struct store *, enum store_stmt id, const char *sql,
		    int *owned, char **err);
void		 store_stmt_done(sqlite3_stmt *, int owned);

/* *err = "store PATH: what: sqlite's message". Returns -1 for tail calls. */
int		 store_fail(struct store *, char **err, const char *what);
/* Run SQL without results (BEGIN, COMMIT, …). 0 or -1 with *err. */
int		 store_exec(struct store *, const char *sql, char **err);
/* Roll back the open transaction, if any, keeping the first error. */
void		 store_rollback(struct store *);

/* Bind text, or NULL when s is NULL. */
int		 store_bind_text(sqlite3_stmt *, int i, const char *s);
/* Bind an id, or NULL when id <= 0 (no job, say). */
int		 store_bind_id(sqlite3_stmt *, int i, int64_t id);
/* Step st once: the id in its first column, 0 if no row, -1 with *err. */
int64_t		 store_step_id(struct store *, sqlite3_stmt *, char **err);
/*
 * A number read back from column i: what anyone who can write the store
 * wrote, so a value that is not finite (inf, nan) reads as 0, as a missing
 * measurement does, and never reaches a chart, a ratio or a terminal.
 */
double		 store_column_num(sqlite3_stmt *, int i);
/* A copy of a text column, or NULL for NULL. Caller frees. */
char		*store_column_dup(sqlite3_stmt *, int i);

/* 1 if state is one a job may be in. job.c. */
int		 store_job_state_ok(const char *state);

/*
 * The one check of rows read back (row.c). Each returns 0, or -1 with *err
 * "store PATH: table T, row ID, column C: VALUE: expected …".
 */
int		 store_row_refuse(struct store *, char **err, const char *table,
		    int64_t row, const char *column, const char *fmt, ...)
		    __attribute__((format(printf, 6, 7)));
int		 store_row_int(struct store *, char **err, const char *table,
		    int64_t row, const char *column, int64_t v, int64_t lo,
		    int64_t hi);
int		 store_row_num(struct store *, char **err, const char *table,
		    int64_t row, const char *column, double v, double lo,
		    double hi);
/* A scheduler decision (allocations row). */
int		 store_alloc_check(struct store *, int64_t row,
		    const struct store_alloc *, char **err);
/* An op rebuilt from its ops row (sizes, element types, kind). */
int		 store_op_check(struct store *, int64_t row,
		    const struct op_desc *, char **err);
/* A trial's figures (trials row): each within its physical range. */
int		 store_result_check(struct store *, int64_t row,
		    const struct trial_result *, char **err);

/* The migrations from version v to v + 1, v from 0. schema.c. */
extern const char *const store_migrations[STORE_SCHEMA_VERSION];

#endif
