/*
 * Reading a staged round's folder (measure/batch.h): the manifest, its
 * files' hashes and the results, each line checked, on both sides of the
 * trip.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "measure/batch.h"
#include "util/util.h"

static const char *const outcome_names[] = {
	"exited", "signaled", "timeout", "env_failed", "cancelled",
};

const char *
measure_batch_outcome_name(enum measure_batch_outcome o)
{
	return (size_t)o < sizeof outcome_names / sizeof outcome_names[0] ?
	    outcome_names[o] : "?";
}

int
measure_batch_outcome_lookup(const char *s)
{
	size_t i;

	for (i = 0; s != NULL && i < sizeof outcome_names /
	    sizeof outcome_names[0]; i++) {
		if (strcmp(s, outcome_names[i]) == 0)
			return (int)i;
	}
	return -1;
}

char **
measure_batch_strv_dup(char *const *v)
{
	size_t n = 0, i;
	char **d;

	while (v != NULL && v[n] != NULL)
		n++;
	d = xcalloc(n + 1, sizeof *d);
	for (i = 0; i < n; i++)
		d[i] = xstrdup(v[i]);
	return d;
}

void
measure_batch_strv_free(char **v)
{
	size_t i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

void
measure_batch_free(struct measure_batch *d)
{
	size_t i;

	if (d == NULL)
		return;
	for (i = 0; i < d->n; i++) {
		struct measure_batch_entry *e = &d->v[i];

		free(e->tag);
		free(e->op);
		free(e->harness);
		measure_batch_strv_free(e->argv);
		measure_batch_strv_free(e->env);
		free(e->out);
		free(e->err);
		free(e->why);
	}
	free(d->v);
	free(d->dir);
	free(d->manifest);
	free(d->cfg);
	free(d);
}

/* A JSON array of strings into a NULL-ended copy, or NULL if it is not one. */
static char **
json_strv(json_t *a, size_t max)
{
	size_t i, n;
	char **v;

	if (!json_is_array(a) || (n = json_array_size(a)) > max)
		return NULL;
	v = xcalloc(n + 1, sizeof *v);
	for (i = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(a, i));

		if (s == NULL) {
			measure_batch_strv_free(v);
			return NULL;
		}
		v[i] = xstrdup(s);
	}
	return v;
}

/* A file name of the folder: one path component, no dot first. */
static int
name_ok(const char *s)
{
	return s[0] != '\0' && s[0] != '.' && strchr(s, '/') == NULL &&
	    strlen(s) < 200;
}

/* Every file of entry e's files object is there with its sha256. */
static int
entry_files(struct measure_batch *d, json_t *files, int line, char **err)
{
	const char *name;
	json_t *v;
	char got[65], *p;
	int rc;

	if (!json_is_object(files)) {
		util_seterr(err, "%s:%d: files: expected an object of names and "
		    "sha256s", d->manifest, line);
		return -1;
	}
	json_object_foreach(files, name, v) {
		const char *want = json_string_value(v);

		if (!name_ok(name) || want == NULL || strlen(want) != 64) {
			util_seterr(err, "%s:%d: files: \"%s\": expected a file "
			    "name of the folder and its sha256", d->manifest,
			    line, name);
			return -1;
		}
		p = util_path_join(d->dir, name);
		rc = util_sha256_file(p, MEASURE_BATCH_FILE_MAX, got, err);
		if (rc == 0 && strcmp(got, want) != 0) {
			util_seterr(err, "%s: sha256 %s, but %s:%d says %s: the "
			    "file changed on its way; nothing recorded", p, got,
			    d->manifest, line, want);
			rc = -1;
		}
		free(p);
		if (rc != 0)
			return -1;
	}
	return 0;
}

/*
 * The environment a measurement gets: the thread counts and the sanitizer's
 * options the harnesses are run with, nothing else (no loader variables).
 */
static int
entry_env_ok(const struct measure_batch *d, const struct measure_batch_entry *e,
    char **err)
{
	static const char *const ok[] = { "OMP_NUM_THREADS=",
	    "OPENBLAS_NUM_THREADS=", "ASAN_OPTIONS=" };
	size_t i, k;

	for (i = 0; e->env[i] != NULL; i++) {
		for (k = 0; k < sizeof ok / sizeof ok[0]; k++) {
			if (strncmp(e->env[i], ok[k], strlen(ok[k])) == 0)
				break;
		}
		if (k == sizeof ok / sizeof ok[0]) {
			util_seterr(err, "%s:%d: env: \"%.60s\": expected "
			    "OMP_NUM_THREADS, OPENBLAS_NUM_THREADS or ASAN_OPTIONS",
			    d->manifest, e->line, e->env[i]);
			return -1;
		}
	}
	return 0;
}

/* Every "@/NAME" field of the arguments names a file the entry lists. */
static int
entry_refs_ok(const struct measure_batch *d, const struct measure_batch_entry *e,
    json_t *files, char **err)
{
	const char *p, *f;
	char name[256];
	size_t i, n;

	for (i = 0; e->argv[i] != NULL; i++) {
		for (p = e->argv[i]; p != NULL; p = (p = strchr(p, ',')) ?
		    p + 1 : NULL) {
			if (strncmp(p, "@/", 2) != 0)
				continue;
			f = p + 2;
			n = strcspn(f, ",");
			if (n >= sizeof name)
				n = sizeof name - 1;
			memcpy(name, f, n);
			name[n] = '\0';
			if (json_object_get(files, name) == NULL) {
				util_seterr(err, "%s:%d: argv: @/%s is not one of "
				    "the entry's files", d->manifest, e->line,
				    name);
				return -1;
			}
		}
	}
	return 0;
}

/* Manifest line `line` (text s) into entry e. 0, or -1 with *err. */
static int
entry_parse(struct measure_batch *d, struct measure_batch_entry *e, const char *s,
    int line, char **err)
{
	json_t *j = json_loads(s, 0, NULL);
	const char *tag, *op, *h;
	int rc = -1;

	memset(e, 0, sizeof *e);
	e->line = line;
	util_sha256_hex(s, strlen(s), e->sha);
	if (!json_is_object(j)) {
		util_seterr(err, "%s:%d: not a JSON object (truncated?)",
		    d->manifest, line);
		goto out;
	}
	e->id = json_integer_value(json_object_get(j, "id"));
	tag = json_string_value(json_object_get(j, "tag"));
	op = json_string_value(json_object_get(j, "op"));
	h = json_string_value(json_object_get(j, "harness"));
	if (e->id != (int64_t)d->n + 1 || tag == NULL || op == NULL ||
	    h == NULL || (strcmp(h, "mlir-cpu") != 0 && strcmp(h, "gpu") != 0)) {
		util_seterr(err, "%s:%d: expected entry %zu with a tag, an op and"
		    " a harness (mlir-cpu or gpu)", d->manifest, line, d->n + 1);
		goto out;
	}
	e->tag = xstrdup(tag);
	e->op = xstrdup(op);
	e->harness = xstrdup(h);
	e->argv = json_strv(json_object_get(j, "argv"), MEASURE_BATCH_ARGS_MAX);
	e->env = json_strv(json_object_get(j, "env"), 16);
	e->threads = (int)json_integer_value(json_object_get(j, "threads"));
	e->timeout = json_number_value(json_object_get(j, "timeout"));
	if (e->argv == NULL || e->env == NULL || e->timeout < 0 ||
	    e->timeout > 86400) {
		util_seterr(err, "%s:%d: argv, env: expected arrays of strings, "
		    "timeout a number of seconds (at most a day)", d->manifest,
		    line);
		goto out;
	}
	if (entry_env_ok(d, e, err) != 0 ||
	    entry_files(d, json_object_get(j, "files"), line, err) != 0 ||
	    entry_refs_ok(d, e, json_object_get(j, "files"), err) != 0)
		goto out;
	rc = 0;
out:
	json_decref(j);
	return rc;
}

/* The manifest's first line: the folder's version, job and cfg. */
static int
header_parse(struct measure_batch *d, const char *s, size_t *entries, char **err)
{
	json_t *j = json_loads(s, 0, NULL);
	const char *cfg = json_string_value(json_object_get(j, "cfg"));
	json_int_t n = json_integer_value(json_object_get(j, "entries"));
	int rc = -1;

	if (!json_is_object(j) || json_integer_value(json_object_get(j,
	    "autosched_batch")) != MEASURE_BATCH_VERSION || cfg == NULL || n < 0 ||
	    n > MEASURE_BATCH_ENTRIES_MAX) {
		util_seterr(err, "%s:1: not the header of an autosched batch "
		    "(version %d): {\"autosched_batch\":%d,\"job\":…,\"cfg\":…,"
		    "\"entries\":…}", d->manifest, MEASURE_BATCH_VERSION, MEASURE_BATCH_VERSION);
		goto out;
	}
	d->job = json_integer_value(json_object_get(j, "job"));
	d->cfg = xstrdup(cfg);
	*entries = (size_t)n;
	rc = 0;
out:
	json_decref(j);
	return rc;
}

/* Split buf into lines (NUL-terminated in place); *n lines. */
static char **
split_lines(char *buf, size_t len, size_t *n, int *complete)
{
	char **v = NULL, *p = buf, *e;
	size_t cap = 0;

	*n = 0;
	*complete = len == 0 || buf[len - 1] == '\n';
	while (p < buf + len) {
		if ((e = memchr(p, '\n', (size_t)(buf + len - p))) != NULL)
			*e = '\0';
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			v = xrealloc(v, cap * sizeof *v);
		}
		v[(*n)++] = p;
		if (e == NULL)
			break;
		p = e + 1;
	}
	return v;
}

static int
manifest_read(struct measure_batch *d, char **err)
{
	char *buf = NULL, **lines = NULL;
	size_t len, n, want = 0, i;
	int complete, rc = -1;

	if (util_read_file(d->manifest, MEASURE_BATCH_FILE_MAX, &buf, &len, err) != 0)
		return -1;
	util_sha256_hex(buf, len, d->msha);
	lines = split_lines(buf, len, &n, &complete);
	if (n == 0 || header_parse(d, lines[0], &want, err) != 0) {
		if (n == 0)
			util_seterr(err, "%s: empty", d->manifest);
		goto out;
	}
	if (!complete || n != want + 1) {
		util_seterr(err, "%s:%zu: truncated: %zu entries of the %zu its "
		    "header announces", d->manifest, n, n - 1, want);
		goto out;
	}
	d->v = xcalloc(want ? want : 1, sizeof *d->v);
	for (i = 1; i < n; i++) {
		if (entry_parse(d, &d->v[d->n], lines[i], (int)i + 1, err) != 0) {
			d->n++;
			goto out;
		}
		d->n++;
	}
	rc = 0;
out:
	free(lines);
	free(buf);
	return rc;
}

/* Results line `line` (text s) into its entry. 0, or -1 with *err. */
static int
result_parse(struct measure_batch *d, const char *path, const char *s, int line,
    char **err)
{
	json_t *j = json_loads(s, 0, NULL);
	struct measure_batch_entry *e;
	const char *sha, *op, *out, *er, *why, *host;
	json_int_t id;
	int oc, rc = -1;

	if (!json_is_object(j)) {
		util_seterr(err, "%s:%d: not a JSON object (truncated?); nothing "
		    "recorded", path, line);
		goto out;
	}
	id = json_integer_value(json_object_get(j, "id"));
	if (id < 1 || (size_t)id > d->n) {
		util_seterr(err, "%s:%d: id %lld: no such entry in %s (1 to %zu);"
		    " nothing recorded", path, line, (long long)id, d->manifest,
		    d->n);
		goto out;
	}
	e = &d->v[id - 1];
	sha = json_string_value(json_object_get(j, "entry"));
	op = json_string_value(json_object_get(j, "op"));
	oc = measure_batch_outcome_lookup(json_string_value(json_object_get(j,
	    "outcome")));
	out = json_string_value(json_object_get(j, "out"));
	er = json_string_value(json_object_get(j, "err"));
	why = json_string_value(json_object_get(j, "why"));
	host = json_string_value(json_object_get(j, "host"));
	if (e->have) {
		util_seterr(err, "%s:%d: entry %lld again (its result is line %d):"
		    " a duplicate; nothing recorded", path, line, (long long)id,
		    e->rline);
		goto out;
	}
	if (sha == NULL || strcmp(sha, e->sha) != 0) {
		util_seterr(err, "%s:%d: entry %lld: hash %s is not the sha256 of"
		    " %s:%d (%s): a result of another manifest; nothing recorded",
		    path, line, (long long)id, sha ? sha : "(none)", d->manifest,
		    e->line, e->sha);
		goto out;
	}
	if (op == NULL || strcmp(op, e->op) != 0) {
		util_seterr(err, "%s:%d: entry %lld: op \"%s\", but %s:%d measures"
		    " \"%s\"; nothing recorded", path, line, (long long)id,
		    op ? op : "(none)", d->manifest, e->line, e->op);
		goto out;
	}
	if (oc < 0 || out == NULL || er == NULL) {
		util_seterr(err, "%s:%d: entry %lld: expected outcome (exited, "
		    "signaled, timeout, env_failed), out and err; nothing "
		    "recorded", path, line, (long long)id);
		goto out;
	}
	e->have = 1;
	e->rline = line;
	e->outcome = (enum measure_batch_outcome)oc;
	e->status = (int)json_integer_value(json_object_get(j, "status"));
	e->signal = (int)json_integer_value(json_object_get(j, "signal"));
	e->seconds = json_number_value(json_object_get(j, "seconds"));
	e->out = xstrdup(out);
	e->err = xstrdup(er);
	e->why = why != NULL ? xstrdup(why) : NULL;
	snprintf(e->host, sizeof e->host, "%s", host ? host : "");
	rc = 0;
out:
	json_decref(j);
	return rc;
}

/* The results end line: every entry's, of this manifest. */
static int
results_end(struct measure_batch *d, const char *path, const char *s, int line,
    char **err)
{
	json_t *j = json_loads(s, 0, NULL);
	const char *m = json_string_value(json_object_get(j, "manifest"));
	json_int_t n = json_integer_value(json_object_get(j, "end"));
	int rc = -1;

	if (!json_is_object(j) || json_object_get(j, "end") == NULL) {
		util_seterr(err, "%s:%d: truncated: no end line after the results"
		    " (autosched-measure --batch did not finish); nothing "
		    "recorded", path, line);
	} else if (m == NULL || strcmp(m, d->msha) != 0)
		util_seterr(err, "%s:%d: manifest hash %s is not the sha256 of %s"
		    " (%s); nothing recorded", path, line, m ? m : "(none)",
		    d->manifest, d->msha);
	else if (n != (json_int_t)d->n)
		util_seterr(err, "%s:%d: end of %lld results, but %s has %zu "
		    "entries; nothing recorded", path, line, (long long)n,
		    d->manifest, d->n);
	else
		rc = 0;
	json_decref(j);
	return rc;
}

static int
results_read(struct measure_batch *d, char **err)
{
	char *path = util_path_join(d->dir, MEASURE_BATCH_RESULTS);
	char *buf = NULL, **lines = NULL;
	size_t len, n, i;
	int complete, rc = -1;

	if (util_read_file(path, MEASURE_BATCH_FILE_MAX, &buf, &len, err) != 0)
		goto out;
	lines = split_lines(buf, len, &n, &complete);
	if (!complete) {
		util_seterr(err, "%s:%zu: truncated: the line does not end; "
		    "nothing recorded", path, n);
		goto out;
	}
	for (i = 0; i + 1 < n; i++) {
		if (result_parse(d, path, lines[i], (int)i + 1, err) != 0)
			goto out;
	}
	if (n == 0 || results_end(d, path, lines[n - 1], (int)n, err) != 0) {
		if (n == 0)
			util_seterr(err, "%s: empty; nothing recorded", path);
		goto out;
	}
	for (i = 0; i < d->n; i++) {
		if (!d->v[i].have) {
			util_seterr(err, "%s: no result for entry %lld (%s:%d); "
			    "nothing recorded", path, (long long)d->v[i].id,
			    d->manifest, d->v[i].line);
			goto out;
		}
	}
	rc = 0;
out:
	free(lines);
	free(buf);
	free(path);
	return rc;
}

int
measure_batch_read(const char *dir, int results, struct measure_batch **out,
    char **err)
{
	struct measure_batch *d = xcalloc(1, sizeof *d);

	*out = NULL;
	d->dir = xstrdup(dir);
	d->manifest = util_path_join(dir, MEASURE_BATCH_MANIFEST);
	if (manifest_read(d, err) != 0 || (results && results_read(d,
	    err) != 0)) {
		measure_batch_free(d);
		return -1;
	}
	*out = d;
	return 0;
}

