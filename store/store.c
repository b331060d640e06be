/*
 * The store's connection: opening (WAL, busy timeout, foreign keys),
 * migrating the schema, the statement cache, targets, ops and the
 * integrity check. Jobs live in job.c, trials in trial.c.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"
#include "build_config.h"
#include "store/store_int.h"

/* Long enough for `autosched status` to wait out the daemon's commit. */
#define STORE_BUSY_MS	5000

sqlite3_stmt *
store_stmt(struct store *s, enum store_stmt id, const char *sql, int *owned,
    char **err)
{
	sqlite3_stmt	*st = s->stmt[id];
	unsigned int	 flags = 0;

	*owned = 0;
	if (st != NULL && !sqlite3_stmt_busy(st))
		return st;
	if (st == NULL)
		flags = SQLITE_PREPARE_PERSISTENT;
	if (sqlite3_prepare_v3(s->db, sql, -1, flags, &st, NULL) != SQLITE_OK) {
		store_fail(s, err, "preparing a statement");
		return NULL;
	}
	if (s->stmt[id] == NULL)
		s->stmt[id] = st;
	else
		*owned = 1;
	return st;
}

void
store_stmt_done(sqlite3_stmt *st, int owned)
{
	if (st == NULL)
		return;
	if (owned)
		sqlite3_finalize(st);
	else {
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
	}
}

int
store_fail(struct store *s, char **err, const char *what)
{
	util_seterr(err, "store %s: %s: %s", s->path, what,
	    s->db != NULL ? sqlite3_errmsg(s->db) : "out of memory");
	return -1;
}

int
store_exec(struct store *s, const char *sql, char **err)
{
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return store_fail(s, err, sql);
	return 0;
}

void
store_rollback(struct store *s)
{
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

int
store_bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v == NULL)
		return sqlite3_bind_null(st, i);
	return sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
}

int
store_bind_id(sqlite3_stmt *st, int i, int64_t id)
{
	if (id <= 0)
		return sqlite3_bind_null(st, i);
	return sqlite3_bind_int64(st, i, id);
}

char *
store_column_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *v = sqlite3_column_text(st, i);

	return v != NULL ? xstrdup((const char *)v) : NULL;
}

/* One integer from a statement without parameters (a PRAGMA, a count). */
static int
store_query_int(struct store *s, const char *sql, int64_t *out, char **err)
{
	sqlite3_stmt	*st = NULL;
	int		 rc;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return store_fail(s, err, sql);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		store_fail(s, err, sql);
		sqlite3_finalize(st);
		return -1;
	}
	*out = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

/* Check a store's version is one we can read; ok_old allows older ones. */
static int
store_check_version(struct store *s, int64_t v, int ok_old, char **err)
{
	int64_t	tables;

	if (v < 0) {
		util_seterr(err, "store %s: schema version %" PRId64 " (PRAGMA"
		    " user_version): not one autosched writes (0 to %d); the"
		    " store was changed by hand", s->path, v,
		    STORE_SCHEMA_VERSION);
		return -1;
	}
	if (v > STORE_SCHEMA_VERSION) {
		util_seterr(err, "store %s: schema version %" PRId64 " is newer "
		    "than this autosched knows (%d); use a newer autosched",
		    s->path, v, STORE_SCHEMA_VERSION);
		return -1;
	}
	if (v == 0) {
		if (store_query_int(s, "SELECT count(*) FROM sqlite_master",
		    &tables, err) != 0)
			return -1;
		if (tables != 0) {
			util_seterr(err, "store %s: not an autosched store "
			    "(tables but no schema version)", s->path);
			return -1;
		}
	}
	if (v < STORE_SCHEMA_VERSION && !ok_old) {
		if (v == 0)
			util_seterr(err, "store %s: empty, not an autosched "
			    "store", s->path);
		else
			util_seterr(err, "store %s: schema version %" PRId64
			    " is older than this autosched's (%d); migrate it"
			    " once, as a user who may write it, with any"
			    " command that writes the store (autosched submit"
			    " or run --db %s, or autoschedd on it)", s->path,
			    v, STORE_SCHEMA_VERSION, s->path);
		return -1;
	}
	return 0;
}

/* Bring the schema up to STORE_SCHEMA_VERSION, all steps in one transaction. */
static int
store_migrate(struct store *s, char **err)
{
	sqlite3_stmt	*st = NULL;
	int64_t		 v;
	char		*sql = NULL;
	int		 rc = -1;

	if (store_query_int(s, "PRAGMA user_version", &v, err) != 0)
		return -1;
	if (v == STORE_SCHEMA_VERSION)
		return 0;
	if (store_check_version(s, v, 1, err) != 0)
		return -1;

	/* Another process may be migrating too: look again under the lock. */
	if (store_exec(s, "BEGIN IMMEDIATE", err) != 0)
		return -1;
	if (store_query_int(s, "PRAGMA user_version", &v, err) != 0)
		goto out;
	if (store_check_version(s, v, 1, err) != 0)
		goto out;
	for (; v < STORE_SCHEMA_VERSION; v++) {
		if (sqlite3_exec(s->db, store_migrations[v], NULL, NULL,
		    NULL) != SQLITE_OK) {
			util_seterr(err, "store %s: migrating the schema from"
			    " version %" PRId64 " to %" PRId64 ": %s: its tables"
			    " are not those of version %" PRId64 " (PRAGMA"
			    " user_version changed by hand?); nothing changed",
			    s->path, v, v + 1, sqlite3_errmsg(s->db), v);
			goto out;
		}
	}
	/* PRAGMAs take no parameters; the value is our own constant. */
	sql = xasprintf("PRAGMA user_version = %d", STORE_SCHEMA_VERSION);
	if (store_exec(s, sql, err) != 0)
		goto out;
	if (sqlite3_prepare_v2(s->db, "INSERT INTO meta (key, value) VALUES "
	    "('schema_version', ?1), ('written_by', ?2), ('migrated', ?3) "
	    "ON CONFLICT (key) DO UPDATE SET value = excluded.value", -1, &st,
	    NULL) != SQLITE_OK) {
		store_fail(s, err, "writing meta");
		goto out;
	}
	sqlite3_bind_int(st, 1, STORE_SCHEMA_VERSION);
	sqlite3_bind_text(st, 2, "autosched " AUTOSCHED_VERSION, -1,
	    SQLITE_STATIC);
	sqlite3_bind_double(st, 3, util_wall());
	if (sqlite3_step(st) != SQLITE_DONE) {
		store_fail(s, err, "writing meta");
		goto out;
	}
	if (sqlite3_exec(s->db, "INSERT OR IGNORE INTO meta (key, value) "
	    "SELECT 'created', value FROM meta WHERE key = 'migrated'", NULL,
	    NULL, NULL) != SQLITE_OK) {
		store_fail(s, err, "writing meta");
		goto out;
	}
	if (store_exec(s, "COMMIT", err) != 0)
		goto out;
	rc = 0;
out:
	sqlite3_finalize(st);
	free(sql);
	if (rc != 0)
		store_rollback(s);
	return rc;
}

/*
 * Refuse a store path (or one of SQLite's files beside it) naming something
 * other than a regular file before SQLite opens it: a FIFO would block the
 * open or the first read forever, a device or a folder is never a store.
 * A missing file is fine (SQLite creates it where the caller allows).
 */
static int
store_check_file(const char *path, const char *suffix, const char *what,
    char **err)
{
	struct stat	 sb;
	char		*p = xasprintf("%s%s", path, suffix);
	int		 rc = -1;

	/* SQLite opens its own files beside the store without following links. */
	if ((suffix[0] != '\0' ? lstat(p, &sb) : stat(p, &sb)) != 0) {
		if (errno == ENOENT) {
			rc = 0;
			goto out;
		}
		util_seterr(err, "%s: %s", p, strerror(errno));
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		util_seterr(err, "%s: not a regular file%s; expected %s", p,
		    S_ISLNK(sb.st_mode) ? " (a symbolic link, which SQLite does"
		    " not follow)" : "", what);
		goto out;
	}
	rc = 0;
out:
	free(p);
	return rc;
}

int
store_check_path(const char *path, char **err)
{
	if (store_check_file(path, "", "an SQLite store", err) != 0 ||
	    store_check_file(path, "-wal", "the store's SQLite write-ahead log",
	    err) != 0 ||
	    store_check_file(path, "-shm", "the store's SQLite shared-memory "
	    "index", err) != 0 ||
	    store_check_file(path, "-journal", "the store's SQLite rollback "
	    "journal", err) != 0)
		return -1;
	return 0;
}

/* Open path with sqlite flags; the shared half of both store_open*. */
static struct store *
store_connect(const char *path, int flags, char **err)
{
	struct store	*s;

	if (store_check_path(path, err) != 0)
		return NULL;
	/*
	 * A new store is made here, not by SQLite (0644 whatever the umask):
	 * 0666 less the umask, so a service run with UMask=0007 for a group
	 * makes one its group can write (SQLite gives the -wal and -shm the
	 * store's mode).
	 */
	if ((flags & SQLITE_OPEN_CREATE) != 0) {
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0666);

		if (fd != -1)
			close(fd);
		else if (errno != EEXIST) {
			util_seterr(err, "%s: %s", path, strerror(errno));
			return NULL;
		}
	}
	s = xcalloc(1, sizeof *s);
	s->path = xstrdup(path);
	s->readonly = (flags & SQLITE_OPEN_READONLY) != 0;
	if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK) {
		store_fail(s, err, "cannot open");
		store_close(s);
		return NULL;
	}
	sqlite3_busy_timeout(s->db, STORE_BUSY_MS);
	return s;
}

const char *
store_default_path(void)
{
	const char *e = getenv("AUTOSCHED_DB");

	return e != NULL && *e != '\0' ? e : "autosched.db";
}

int
store_open(const char *path, struct store **out, char **err)
{
	struct store	*s;
	sqlite3_stmt	*st = NULL;
	const char	*mode;
	int		 rc, waited;

	*out = NULL;
	if ((s = store_connect(path, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE, err)) == NULL)
		return -1;
	if (store_exec(s, "PRAGMA foreign_keys = ON", err) != 0)
		goto fail;

	/*
	 * Readers (status) never block the writer (the daemon), nor it them.
	 * Switching a new store to WAL is answered SQLITE_BUSY at once, without
	 * the busy handler, while another process makes it too: tried again
	 * until the busy timeout.
	 */
	if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st,
	    NULL) != SQLITE_OK) {
		store_fail(s, err, "setting WAL mode");
		goto fail;
	}
	for (waited = 0; (rc = sqlite3_step(st)) == SQLITE_BUSY &&
	    waited < STORE_BUSY_MS; waited += 10) {
		sqlite3_reset(st);
		usleep(10000);
	}
	if (rc != SQLITE_ROW) {
		store_fail(s, err, "setting WAL mode");
		goto fail;
	}
	mode = (const char *)sqlite3_column_text(st, 0);
	if (mode == NULL || strcmp(mode, "wal") != 0) {
		util_seterr(err, "store %s: cannot use WAL mode (journal mode "
		    "stays \"%s\"); is it on a network file system?", path,
		    mode != NULL ? mode : "?");
		goto fail;
	}
	sqlite3_finalize(st);
	st = NULL;

	/*
	 * NORMAL in WAL: a commit is in the WAL (the OS's page cache) before
	 * COMMIT returns, so kill -9 loses nothing committed; only a power cut
	 * can lose the last commits (never corrupting). FULL would fsync every
	 * trial, which hurts replay runs doing thousands per second.
	 */
	if (store_exec(s, "PRAGMA synchronous = NORMAL", err) != 0)
		goto fail;
	if (store_migrate(s, err) != 0)
		goto fail;
	*out = s;
	return 0;
fail:
	sqlite3_finalize(st);
	store_close(s);
	return -1;
}

/*
 * A reader that cannot make the store's -shm (a read-only file system, a
 * folder it cannot write) reads it as immutable, when no write-ahead log
 * holds commits the file lacks. 0, or -1 with *err saying what to do.
 */
static int
store_reopen_immutable(struct store *s, char **err)
{
	struct stat	 sb;
	char		*wal = xasprintf("%s-wal", s->path), *uri;
	size_t		 i, n = 0;
	int		 busy;

	busy = stat(wal, &sb) == 0 && sb.st_size > 0;
	free(wal);
	if (busy) {
		util_seterr(err, "store %s: cannot be read here: its write-ahead"
		    " log %s-wal holds commits the store lacks, and SQLite"
		    " cannot make its shared-memory file %s-shm (a read-only"
		    " folder or file system); read it once where it can be"
		    " written (autosched status --db %s) to fold them in",
		    s->path, s->path, s->path, s->path);
		return -1;
	}
	/* file: URI, with what a URI gives meaning to escaped. */
	uri = xmalloc(strlen(s->path) * 3 + 32);
	n = (size_t)sprintf(uri, "file:");
	for (i = 0; s->path[i] != '\0'; i++) {
		if (strchr("%?#", s->path[i]) != NULL)
			n += (size_t)sprintf(uri + n, "%%%02X",
			    (unsigned char)s->path[i]);
		else
			uri[n++] = s->path[i];
	}
	snprintf(uri + n, 16, "?immutable=1");
	sqlite3_close_v2(s->db);
	s->db = NULL;
	if (sqlite3_open_v2(uri, &s->db, SQLITE_OPEN_READONLY |
	    SQLITE_OPEN_URI, NULL) != SQLITE_OK) {
		free(uri);
		return store_fail(s, err, "cannot open");
	}
	free(uri);
	return 0;
}

int
store_open_readonly(const char *path, struct store **out, char **err)
{
	struct store	*s;
	int64_t		 v;
	int		 ec;

	*out = NULL;
	if ((s = store_connect(path, SQLITE_OPEN_READONLY, err)) == NULL)
		return -1;
	if (store_query_int(s, "PRAGMA user_version", &v, NULL) != 0) {
		ec = sqlite3_errcode(s->db) & 0xff;
		if ((ec != SQLITE_CANTOPEN && ec != SQLITE_READONLY) ||
		    store_reopen_immutable(s, err) != 0) {
			if (ec != SQLITE_CANTOPEN && ec != SQLITE_READONLY)
				store_fail(s, err, "PRAGMA user_version");
			goto fail;
		}
		if (store_query_int(s, "PRAGMA user_version", &v, err) != 0)
			goto fail;
	}
	if (store_check_version(s, v, 0, err) != 0)
		goto fail;
	*out = s;
	return 0;
fail:
	store_close(s);
	return -1;
}

const char *
store_path(const struct store *s)
{
	return s->path;
}

void
store_close(struct store *s)
{
	int	i;

	if (s == NULL)
		return;
	for (i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(s->stmt[i]);
	sqlite3_close_v2(s->db);
	free(s->path);
	free(s);
}

int
store_schema_version(struct store *s, char **err)
{
	int64_t	v;

	if (store_query_int(s, "PRAGMA user_version", &v, err) != 0)
		return -1;
	return (int)v;
}

int64_t
store_step_id(struct store *s, sqlite3_stmt *st, char **err)
{
	int	rc;

	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		return sqlite3_column_int64(st, 0);
	if (rc == SQLITE_DONE)
		return 0;
	return store_fail(s, err, "looking up an id");
}

static const char sql_target_find[] =
	"SELECT id FROM targets WHERE cpu = ?1 AND flags = ?2 AND "
	"toolchain = ?3 AND backend = ?4";
static const char sql_target_add[] =
	"INSERT INTO targets (cpu, flags, toolchain, backend) "
	"VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING";

int64_t
store_target(struct store *s, const char *cpu, const char *flags,
    const char *toolchain, const char *backend, char **err)
{
	const char	*v[4] = { cpu, flags, toolchain, backend };
	sqlite3_stmt	*st;
	int64_t		 id = -1;
	int		 owned, i, pass;

	/* Look, insert if missing (another process may win), look again. */
	for (pass = 0; pass < 2; pass++) {
		st = store_stmt(s, ST_TARGET_FIND, sql_target_find, &owned, err);
		if (st == NULL)
			return -1;
		for (i = 0; i < 4; i++)
			store_bind_text(st, i + 1, v[i] != NULL ? v[i] : "");
		id = store_step_id(s, st, err);
		store_stmt_done(st, owned);
		if (id != 0 || pass == 1)
			break;

		st = store_stmt(s, ST_TARGET_ADD, sql_target_add, &owned, err);
		if (st == NULL)
			return -1;
		for (i = 0; i < 4; i++)
			store_bind_text(st, i + 1, v[i] != NULL ? v[i] : "");
		if (sqlite3_step(st) != SQLITE_DONE) {
			store_fail(s, err, "adding a target");
			store_stmt_done(st, owned);
			return -1;
		}
		store_stmt_done(st, owned);
	}
	if (id == 0) {
		util_seterr(err, "store %s: target vanished", s->path);
		return -1;
	}
	return id;
}

char *
store_op_signature(const struct op_desc *op)
{
	const char	*kind = op->kind != NULL ? op->kind : "op";
	const char	*lhs, *rhs;
	char		*dims, *sig;

	/* Built from the fields, not op->name, so it survives renamings. */
	if (op->batch != 1 || analysis_kind_batch(kind))
		dims = xasprintf("%" PRId64 "x%" PRId64 "x%" PRId64 "x%" PRId64,
		    op->batch, op->m, op->n, op->k);
	else
		dims = xasprintf("%" PRId64 "x%" PRId64 "x%" PRId64, op->m,
		    op->n, op->k);
	lhs = analysis_operand_name(op->lhs, op->lhs_unsigned);
	rhs = analysis_operand_name(op->rhs, op->rhs_unsigned);
	sig = xasprintf("%s_%s_%st_%st_%st%s%s", kind, dims, lhs, rhs,
	    analysis_elem_name(op->acc), op->transpose_a ? "_ta" : "",
	    op->transpose_b ? "_tb" : "");
	free(dims);
	return sig;
}

static const char sql_op_find[] =
	"SELECT id FROM ops WHERE signature = ?1";
static const char sql_op_add[] =
	"INSERT INTO ops (signature, name, kind, op_name, batch, m, n, k, "
	"lhs, rhs, acc, transpose_a, transpose_b, lhs_unsigned, rhs_unsigned) "
	"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
	"?15) ON CONFLICT DO NOTHING";

int64_t
store_op(struct store *s, const struct op_desc *op, char **err)
{
	sqlite3_stmt	*st;
	char		*sig;
	int64_t		 id = -1;
	int		 owned, pass;

	sig = store_op_signature(op);
	for (pass = 0; pass < 2; pass++) {
		if ((st = store_stmt(s, ST_OP_FIND, sql_op_find, &owned,
		    err)) == NULL)
			goto out;
		store_bind_text(st, 1, sig);
		id = store_step_id(s, st, err);
		store_stmt_done(st, owned);
		if (id != 0 || pass == 1)
			break;

		if ((st = store_stmt(s, ST_OP_ADD, sql_op_add, &owned,
		    err)) == NULL) {
			id = -1;
			goto out;
		}
		store_bind_text(st, 1, sig);
		store_bind_text(st, 2, op->name != NULL ? op->name : sig);
		store_bind_text(st, 3, op->kind != NULL ? op->kind : "op");
		store_bind_text(st, 4, op->op_name != NULL ? op->op_name : "");
		sqlite3_bind_int64(st, 5, op->batch);
		sqlite3_bind_int64(st, 6, op->m);
		sqlite3_bind_int64(st, 7, op->n);
		sqlite3_bind_int64(st, 8, op->k);
		store_bind_text(st, 9, analysis_elem_name(op->lhs));
		store_bind_text(st, 10, analysis_elem_name(op->rhs));
		store_bind_text(st, 11, analysis_elem_name(op->acc));
		sqlite3_bind_int(st, 12, op->transpose_a != 0);
		sqlite3_bind_int(st, 13, op->transpose_b != 0);
		sqlite3_bind_int(st, 14, op->lhs_unsigned != 0);
		sqlite3_bind_int(st, 15, op->rhs_unsigned != 0);
		if (sqlite3_step(st) != SQLITE_DONE) {
			store_fail(s, err, "adding an op");
			store_stmt_done(st, owned);
			id = -1;
			goto out;
		}
		store_stmt_done(st, owned);
	}
	if (id == 0) {
		util_seterr(err, "store %s: op %s vanished", s->path, sig);
		id = -1;
	}
out:
	free(sig);
	return id;
}

/* Append the rows of a checking PRAGMA to *msg; returns how many. */
static int
store_check_rows(struct store *s, const char *sql, int skip_ok, char **msg,
    char **err)
{
	sqlite3_stmt	*st = NULL;
	const char	*row;
	char		*m;
	int		 rc, n = 0;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return store_fail(s, err, sql);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		row = (const char *)sqlite3_column_text(st, 0);
		if (row == NULL)
			row = "?";
		if (skip_ok && strcmp(row, "ok") == 0)
			continue;
		if (n++ >= 10)	/* the first few say enough */
			continue;
		if (sqlite3_column_count(st) > 1)	/* foreign_key_check */
			m = xasprintf("%s%s%s row %lld lacks its %s", *msg ? *msg :
			    "", *msg ? "; " : "", row,
			    (long long)sqlite3_column_int64(st, 1),
			    (const char *)sqlite3_column_text(st, 2));
		else
			m = xasprintf("%s%s%s", *msg ? *msg : "", *msg ? "; " :
			    "", row);
		free(*msg);
		*msg = m;
	}
	if (rc != SQLITE_DONE) {
		store_fail(s, err, sql);
		n = -1;
	}
	sqlite3_finalize(st);
	return n;
}

int
store_check(struct store *s, char **err)
{
	char	*msg = NULL;
	int	 n, rc = -1;

	if ((n = store_check_rows(s, "PRAGMA integrity_check", 1, &msg,
	    err)) < 0)
		goto out;
	if (n == 0 && (n = store_check_rows(s, "PRAGMA foreign_key_check", 0,
	    &msg, err)) < 0)
		goto out;
	if (n > 0) {
		util_seterr(err, "store %s: damaged: %s", s->path, msg);
		goto out;
	}
	rc = 0;
out:
	free(msg);
	return rc;
}

double
store_column_num(sqlite3_stmt *st, int i)
{
	double v = sqlite3_column_double(st, i);

	return isfinite(v) ? v : 0;
}
