/*
 * The batch executor: measurements carried to another host in a folder
 * (its format: measure/batch.h).
 * A run that stages (autosched run --stage DIR) copies what each
 * measurement reads into DIR and answers "staged" (the job stops at the end
 * of its step: exit 3); a run that ingests (--ingest DIR) answers each
 * measurement the job asks for again with the result measured for it
 * there (autosched-measure --batch DIR), matched by the job's tag and the
 * very same command.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "executors/executor_int.h"
#include "measure/batch.h"
#include "util/util.h"

_Static_assert((int)MEASURE_BATCH_EXITED == (int)EXECUTOR_EXITED &&
    (int)MEASURE_BATCH_SIGNALED == (int)EXECUTOR_SIGNALED &&
    (int)MEASURE_BATCH_TIMEOUT == (int)EXECUTOR_TIMEOUT &&
    (int)MEASURE_BATCH_ENV_FAILED == (int)EXECUTOR_ENV_FAILED &&
    (int)MEASURE_BATCH_CANCELLED == (int)EXECUTOR_CANCELLED,
    "a folder's outcomes are the executors'");

struct batch_file {
	char	 name[40];
	char	 sha[65];
	char	*src;
};

struct batch_state {
	struct measure_batch	*in;		/* --ingest DIR, read and checked */
	char			*stage;		/* --stage DIR, or NULL */
	char			*tag;		/* the job's name of what it measures now */
	int			 calls;		/* runs under tag so far */
	char			**lines;	/* staged entries' manifest lines */
	size_t			 nlines;
	int64_t			 staged, served;
	int64_t			 job;
	char			*cfg;
};

/* A measurement's command made portable: the harness, files as "@/NAME". */
struct batch_req {
	const char		*harness;
	char			**argv;		/* after the program */
	struct batch_file	*files;
	size_t			 nfiles;
};

static void
req_free(struct batch_req *q)
{
	size_t i;

	measure_batch_strv_free(q->argv);
	for (i = 0; i < q->nfiles; i++)
		free(q->files[i].src);
	free(q->files);
}

/* A field of an argument that names a file here: "@/NAME" and the file kept. */
static int
req_field(struct batch_req *q, const char *f, size_t flen, char **out,
    size_t *len, char **err)
{
	char *path = xstrndup(f, flen), sha[65];
	const char *base, *dot;
	struct batch_file *bf;
	struct stat sb;
	char *o;

	if (memchr(f, '/', flen) == NULL || stat(path, &sb) != 0 ||
	    !S_ISREG(sb.st_mode)) {
		o = *out = xrealloc(*out, *len + flen + 1);
		memcpy(o + *len, f, flen);
		*len += flen;
		o[*len] = '\0';
		free(path);
		return 0;
	}
	if (util_sha256_file(path, MEASURE_BATCH_FILE_MAX, sha, err) != 0) {
		free(path);
		return -1;
	}
	q->files = xrealloc(q->files, (q->nfiles + 1) * sizeof *q->files);
	bf = &q->files[q->nfiles++];
	base = strrchr(path, '/') + 1;
	dot = strrchr(base, '.');
	snprintf(bf->name, sizeof bf->name, "f-%.16s%s", sha,
	    dot != NULL && strlen(dot) <= 8 ? dot : "");
	memcpy(bf->sha, sha, sizeof sha);
	bf->src = path;
	o = *out = xrealloc(*out, *len + strlen(bf->name) + 3);
	*len += (size_t)sprintf(o + *len, "@/%s", bf->name);
	return 0;
}

/* run's command into q. 0, or -1 with *err. */
static int
req_make(const struct executor_run *run, struct batch_req *q, char **err)
{
	const char *prog = run->argv[0], *base = strrchr(prog, '/');
	size_t n = 0, i, len;
	const char *p, *c;
	char *a;

	memset(q, 0, sizeof q[0]);
	base = base != NULL ? base + 1 : prog;
	if (strcmp(base, "autosched-measure") == 0)
		q->harness = "mlir-cpu";
	else if (strcmp(base, "autosched-gpu-measure") == 0 ||
	    (getenv("AUTOSCHED_GPU_MEASURE") != NULL &&
	    strcmp(prog, getenv("AUTOSCHED_GPU_MEASURE")) == 0))
		q->harness = "gpu";	/* (or the one the backend was told of) */
	else {
		util_seterr(err, "executor batch: cannot carry a run of %s "
		    "(autosched-measure and autosched-gpu-measure only)", prog);
		return -1;
	}
	while (run->argv[n] != NULL)
		n++;
	if (n > MEASURE_BATCH_ARGS_MAX) {
		util_seterr(err, "executor batch: %zu arguments, at most %d",
		    n, MEASURE_BATCH_ARGS_MAX);
		return -1;
	}
	q->argv = xcalloc(n, sizeof *q->argv);
	for (i = 1; i < n; i++) {
		a = xstrdup("");
		len = 0;
		for (p = run->argv[i]; ; p = c + 1) {
			c = strchr(p, ',');
			if (req_field(q, p, c ? (size_t)(c - p) : strlen(p), &a,
			    &len, err) != 0) {
				free(a);
				return -1;
			}
			if (c == NULL)
				break;
			a = xrealloc(a, len + 2);
			a[len++] = ',';
			a[len] = '\0';
		}
		q->argv[i - 1] = a;
	}
	return 0;
}

static int
strv_equal(char *const *a, char *const *b)
{
	size_t i;

	for (i = 0; a[i] != NULL && b[i] != NULL; i++) {
		if (strcmp(a[i], b[i]) != 0)
			return 0;
	}
	return a[i] == NULL && b[i] == NULL;
}

/* The env strings of run, NULL-ended (NULL entries past the first dropped). */
static char **
env_of(const struct executor_run *run)
{
	return measure_batch_strv_dup(run->env);
}

/* Serve the result DIR has for key: 1 served, 0 none, -1 with *err. */
static int
batch_serve(struct batch_state *s, const char *key, const struct batch_req *q,
    struct executor_result *res, char **err)
{
	struct measure_batch_entry *e = NULL;
	size_t i;

	for (i = 0; s->in != NULL && i < s->in->n; i++) {
		if (strcmp(s->in->v[i].tag, key) == 0) {
			e = &s->in->v[i];
			break;
		}
	}
	if (e == NULL)
		return 0;
	if (e->served || strcmp(e->harness, q->harness) != 0 ||
	    !strv_equal(e->argv, q->argv)) {
		util_seterr(err, "%s:%d: entry %lld (%s): the job asks now for "
		    "another measurement under that name (its command or its "
		    "kernel differs): the cfg, the input or the toolchain "
		    "changed since it was staged; nothing more recorded",
		    s->in->manifest, e->line, (long long)e->id, e->tag);
		return -1;
	}
	e->served = 1;
	s->served++;
	/* The outcomes are the executors', in their order (measure/batch.h). */
	res->outcome = (enum executor_outcome)e->outcome;
	res->status = e->status;
	res->signal = e->signal;
	res->seconds = e->seconds;
	res->out = xstrdup(e->out);
	res->err = xstrdup(e->err);
	res->why = e->why != NULL ? xstrdup(e->why) : NULL;
	snprintf(res->host, sizeof res->host, "%s", e->host);
	return 1;
}

/* Copy q's files into the stage folder and keep its manifest line. */
static int
batch_stage(struct batch_state *s, const char *key,
    const struct executor_run *run, const struct batch_req *q, char **err)
{
	json_t *j, *files = json_object(), *argv = json_array(), *env;
	char *p, *buf, got[65];
	char **ev = env_of(run);
	size_t i, len;
	int rc = 0;

	for (i = 0; rc == 0 && i < q->nfiles; i++) {
		p = util_path_join(s->stage, q->files[i].name);
		if (util_sha256_file(p, MEASURE_BATCH_FILE_MAX, got, NULL) != 0 ||
		    strcmp(got, q->files[i].sha) != 0) {
			buf = NULL;
			if ((rc = util_read_file(q->files[i].src, MEASURE_BATCH_FILE_MAX,
			    &buf, &len, err)) == 0)
				rc = util_write_file(p, buf, len, err);
			free(buf);
		}
		json_object_set_new(files, q->files[i].name,
		    json_string(q->files[i].sha));
		free(p);
	}
	for (i = 0; q->argv[i] != NULL; i++)
		json_array_append_new(argv, json_string(q->argv[i]));
	env = json_array();
	for (i = 0; ev[i] != NULL; i++)
		json_array_append_new(env, json_string(ev[i]));
	measure_batch_strv_free(ev);
	j = json_pack("{s:I,s:s,s:s,s:s,s:o,s:o,s:i,s:f,s:o}",
	    "id", (json_int_t)s->nlines + 1, "tag", key, "op",
	    run->label ? run->label : "?", "harness", q->harness,
	    "argv", argv, "env", env, "threads", run->threads,
	    "timeout", run->timeout, "files", files);
	if (rc == 0) {
		s->lines = xrealloc(s->lines, (s->nlines + 1) * sizeof *s->lines);
		s->lines[s->nlines++] = json_dumps(j, JSON_COMPACT |
		    JSON_ENSURE_ASCII);
	}
	json_decref(j);
	return rc;
}

static int
batch_run(struct executor *ex, const struct executor_run *run,
    struct executor_result *res, char **err)
{
	struct batch_state *s = ex->state;
	struct batch_req q;
	char *key;
	int r;

	if (req_make(run, &q, err) != 0) {
		req_free(&q);
		return -1;
	}
	key = xasprintf("%s#%d", s->tag ? s->tag : "untagged", s->calls++);
	if ((r = batch_serve(s, key, &q, res, err)) != 0)
		goto out;
	if (s->stage != NULL && (r = batch_stage(s, key, run, &q, err)) != 0)
		goto out;
	s->staged++;
	res->outcome = EXECUTOR_ENV_FAILED;
	res->why = xasprintf("staged for measurement in %s", s->stage ?
	    s->stage : "(no --stage folder)");
	res->out = xstrdup("");
	res->err = xstrdup("");
out:
	free(key);
	req_free(&q);
	return r < 0 ? -1 : 0;
}

static void batch_close(struct executor *);

static int
batch_open(struct executor *ex, char **err)
{
	struct batch_state *s = xcalloc(1, sizeof *s);

	ex->state = s;
	s->job = ex->cfg.batch_job;
	s->cfg = xstrdup(ex->cfg.batch_cfg ? ex->cfg.batch_cfg : "");
	if (ex->cfg.stage_dir != NULL) {
		s->stage = xstrdup(ex->cfg.stage_dir);
		if (util_mkdirs(s->stage, err) != 0)
			goto fail;
	}
	if (ex->cfg.ingest_dir != NULL &&
	    measure_batch_read(ex->cfg.ingest_dir, 1, &s->in, err) != 0)
		goto fail;
	return 0;
fail:
	batch_close(ex);
	return -1;
}

static void
batch_close(struct executor *ex)
{
	struct batch_state *s = ex->state;
	size_t i;

	if (s == NULL)
		return;
	measure_batch_free(s->in);
	for (i = 0; i < s->nlines; i++)
		free(s->lines[i]);
	free(s->lines);
	free(s->stage);
	free(s->tag);
	free(s->cfg);
	free(s);
	ex->state = NULL;
}

const struct executor_ops executor_batch = {
	.name = "batch",
	.description = "measurements staged into a folder, measured elsewhere "
	    "(autosched-measure --batch), ingested back",
	.places = 0,
	.open = batch_open,
	.close = batch_close,
	.run = batch_run,
};

void
executor_tag(struct executor *ex, const char *tag)
{
	struct batch_state *s;

	if (ex == NULL || ex->ops != &executor_batch)
		return;
	s = ex->state;
	free(s->tag);
	s->tag = tag != NULL ? xstrdup(tag) : NULL;
	s->calls = 0;
}

int64_t
executor_staged(const struct executor *ex)
{
	if (ex == NULL || ex->ops != &executor_batch)
		return 0;
	return ((const struct batch_state *)ex->state)->staged;
}

int64_t
executor_served(const struct executor *ex, int64_t *entries)
{
	const struct batch_state *s;

	*entries = 0;
	if (ex == NULL || ex->ops != &executor_batch)
		return 0;
	s = ex->state;
	*entries = s->in != NULL ? (int64_t)s->in->n : 0;
	return s->served;
}

int
executor_flush(struct executor *ex, char **err)
{
	struct batch_state *s;
	char *p, *buf, *h, *q;
	json_t *js;
	size_t len, i;
	int rc;

	if (ex == NULL || ex->ops != &executor_batch)
		return 0;
	s = ex->state;
	if (s->stage == NULL || s->nlines == 0)
		return 0;
	js = json_string(s->cfg);
	q = json_dumps(js, JSON_ENCODE_ANY | JSON_ENSURE_ASCII);
	json_decref(js);
	h = xasprintf("{\"autosched_batch\":%d,\"job\":%lld,\"cfg\":%s,"
	    "\"entries\":%zu,\"data\":\"made by the harness from each entry's"
	    " --shape or --op, --types and --seed (small integers, checked "
	    "exactly)\"}\n", MEASURE_BATCH_VERSION, (long long)s->job, q, s->nlines);
	free(q);
	buf = h;
	len = strlen(h);
	for (i = 0; i < s->nlines; i++) {
		buf = xrealloc(buf, len + strlen(s->lines[i]) + 2);
		len += (size_t)sprintf(buf + len, "%s\n", s->lines[i]);
	}
	p = util_path_join(s->stage, MEASURE_BATCH_MANIFEST);
	rc = util_write_file(p, buf, len, err);
	free(p);
	free(buf);
	return rc;
}
