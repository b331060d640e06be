/*
 * autosched-measure --batch DIR (and autosched-gpu-measure --batch DIR):
 * every measurement of a staged round run here, one after the other, each with its own deadline (proc_run), its
 * files read from DIR; a crash, a timeout or a wrong answer is that entry's
 * result. The results file is written whole at the end, atomically: one
 * line per manifest entry, then the end line with the manifest's sha256.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/batch.h"
#include "util/util.h"

/*
 * The program that runs entries of harness kind name ("autosched-measure"
 * for mlir-cpu, "autosched-gpu-measure" for gpu): self when it is that
 * program; else env (for the GPU one, AUTOSCHED_GPU_MEASURE), the program
 * beside self, the build tree's (backends/mlir-cpu and measure, side by
 * side), else on PATH. NULL when none. Caller frees.
 */
static char *
harness_find(const char *self, const char *name, const char *env,
    const char *build_dir)
{
	const char *base = strrchr(self, '/') ? strrchr(self, '/') + 1 : self;
	const char *e = env != NULL ? getenv(env) : NULL;
	char *dir, *p;

	if (strcmp(base, name) == 0)
		return xstrdup(self);
	if (e != NULL && *e != '\0')
		return xstrdup(e);
	dir = util_dirname(self);
	p = util_path_join(dir, name);
	if (access(p, X_OK) != 0) {
		/* The build tree's root is one or two folders up. */
		free(p);
		p = xasprintf("%s/../%s/%s", dir, build_dir, name);
		if (access(p, X_OK) != 0) {
			free(p);
			p = xasprintf("%s/../../%s/%s", dir, build_dir, name);
		}
		if (access(p, X_OK) != 0) {
			free(p);
			p = util_program_find(name);
		}
	}
	free(dir);
	return p;
}

/* "@/NAME" fields (comma-separated) of arg made DIR/NAME. Caller frees. */
static char *
arg_resolve(const char *arg, const char *dir)
{
	size_t cap = strlen(arg) + 1, len = 0;
	char *s = xmalloc(cap);
	const char *p = arg;

	while (*p != '\0') {
		if (strncmp(p, "@/", 2) == 0 && (p == arg || p[-1] == ',')) {
			cap += strlen(dir) + 1;
			s = xrealloc(s, cap);
			len += (size_t)sprintf(s + len, "%s/", dir);
			p += 2;
			continue;
		}
		s[len++] = *p++;
	}
	s[len] = '\0';
	return s;
}

/* One entry run to its end into e. 0, or -1 when it could not start. */
static int
entry_run(struct measure_batch_entry *e, const char *prog, const char *dir)
{
	struct proc_opts o;
	struct proc_result pr;
	char *argv[MEASURE_BATCH_ARGS_MAX + 2], *perr = NULL;
	size_t i, n = 0;
	int rc = 0;

	argv[n++] = (char *)prog;
	for (i = 0; e->argv[i] != NULL; i++)
		argv[n++] = arg_resolve(e->argv[i], dir);
	argv[n] = NULL;
	memset(&o, 0, sizeof o);
	/* Its own limit, and a minute more for the data; never without one. */
	o.timeout = e->timeout > 0 ? e->timeout : 600;
	o.env = e->env;
	if (gethostname(e->host, sizeof e->host) != 0)
		e->host[0] = '\0';
	e->host[sizeof e->host - 1] = '\0';
	if (proc_run(argv, &o, &pr, &perr) != 0) {
		e->outcome = MEASURE_BATCH_ENV_FAILED;
		e->why = xasprintf("cannot run %s: %s", prog, perr);
		e->out = xstrdup("");
		e->err = xstrdup("");
		free(perr);
		rc = -1;
		goto out;
	}
	e->seconds = pr.seconds;
	if (pr.timed_out)
		e->outcome = MEASURE_BATCH_TIMEOUT;
	else if (pr.exec_failed) {
		e->outcome = MEASURE_BATCH_ENV_FAILED;
		e->why = xasprintf("cannot run %s", prog);
	} else if (!pr.exited) {
		e->outcome = MEASURE_BATCH_SIGNALED;
		e->signal = pr.signal;
	} else {
		e->outcome = MEASURE_BATCH_EXITED;
		e->status = pr.status;
	}
	e->out = pr.out != NULL ? pr.out : xstrdup("");
	e->err = pr.err != NULL ? pr.err : xstrdup("");
	pr.out = pr.err = NULL;
	proc_result_free(&pr);
out:
	for (i = 1; i < n; i++)
		free(argv[i]);
	e->have = 1;
	return rc;
}

/* Entry e's results line (no newline). Caller frees. */
static char *
entry_line(const struct measure_batch_entry *e)
{
	json_t *j = json_pack("{s:I,s:s,s:s,s:s,s:i,s:i,s:f,s:s,s:s,s:s}",
	    "id", (json_int_t)e->id, "entry", e->sha, "op", e->op,
	    "outcome", measure_batch_outcome_name(e->outcome),
	    "status", e->status, "signal", e->signal,
	    "seconds", e->seconds, "host", e->host,
	    "out", e->out ? e->out : "",
	    "err", e->err ? e->err : "");
	char *s;

	if (e->why != NULL)
		json_object_set_new(j, "why", json_string(e->why));
	s = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(j);
	return s;
}

static int
results_write(struct measure_batch *d, char **err)
{
	char *path = util_path_join(d->dir, MEASURE_BATCH_RESULTS), *buf = NULL, *l;
	size_t len = 0, i;
	int rc;

	for (i = 0; i < d->n; i++) {
		l = entry_line(&d->v[i]);
		buf = xrealloc(buf, len + strlen(l) + 2);
		len += (size_t)sprintf(buf + len, "%s\n", l);
		free(l);
	}
	l = xasprintf("{\"end\":%zu,\"manifest\":\"%s\"}\n", d->n, d->msha);
	buf = xrealloc(buf, len + strlen(l) + 1);
	len += (size_t)sprintf(buf + len, "%s", l);
	free(l);
	rc = util_write_file(path, buf, len, err);
	free(buf);
	free(path);
	return rc;
}

int
measure_batch_run(const char *dir, const char *self, char **err)
{
	struct measure_batch *d = NULL;
	char *abs = NULL, *gpu = NULL, *cpu = NULL, *rp;
	const char *me = strrchr(self, '/') ? strrchr(self, '/') + 1 : self;
	size_t i;
	int rc = -1;

	if ((rp = realpath(dir, NULL)) == NULL) {
		util_seterr(err, "%s: no such folder", dir);
		return -1;
	}
	abs = rp;
	if (measure_batch_read(abs, 0, &d, err) != 0)
		goto out;
	for (i = 0; i < d->n; i++) {
		struct measure_batch_entry *e = &d->v[i];
		int g = strcmp(e->harness, "gpu") == 0;
		char **prog = g ? &gpu : &cpu;

		if (*prog == NULL && (*prog = harness_find(self, g ?
		    "autosched-gpu-measure" : "autosched-measure", g ?
		    "AUTOSCHED_GPU_MEASURE" : NULL, g ? "measure" :
		    "backends/mlir-cpu")) == NULL) {
			util_seterr(err, "%s:%d: needs %s: not beside %s nor on "
			    "PATH%s; nothing written", d->manifest, e->line, g ?
			    "autosched-gpu-measure" : "autosched-measure", self,
			    g ? " (set AUTOSCHED_GPU_MEASURE)" : "");
			goto out;
		}
		fprintf(stderr, "%s: %zu/%zu %s (%s)\n", me, i + 1, d->n,
		    e->op, e->tag);
		(void)entry_run(e, *prog, abs);
	}
	if (results_write(d, err) != 0)
		goto out;
	fprintf(stderr, "%s: %zu results written to %s/%s\n", me, d->n, abs,
	    MEASURE_BATCH_RESULTS);
	rc = 0;
out:
	measure_batch_free(d);
	free(gpu);
	free(cpu);
	free(abs);
	return rc;
}

int
measure_batch_main(const char *prog, const char *dir)
{
	char *self = realpath("/proc/self/exe", NULL), *err = NULL;
	int rc = 0;

	if (self == NULL) {
		fprintf(stderr, "%s: /proc/self/exe: %s\n", prog, strerror(errno));
		return 2;
	}
	if (measure_batch_run(dir, self, &err) != 0) {
		fprintf(stderr, "%s: %s\n", prog, err);
		rc = 2;
	}
	free(err);
	free(self);
	return rc;
}
