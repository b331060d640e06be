/*
 * What the compiling and measuring backends share (backend_int.h): compile
 * steps with a deadline, the trusted compile cache, helpers and tool
 * versions, the executor of their measurements and a child's outcome.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend_int.h"
#include "build_config.h"
#include "util/util.h"

char *
backend_excerpt(const char *s)
{
	size_t n = strlen(s), head = BACKEND_ERROR_TAIL * 2 / 3;
	size_t rest = BACKEND_ERROR_TAIL / 3;

	if (n <= BACKEND_ERROR_TAIL)
		return xstrdup(s);
	return xasprintf("%.*s\n[...]\n%s", (int)head, s, s + n - rest);
}

int
backend_env_text(const char *text)
{
	static const char *const env[] = {
		"No space left on device", "Disk quota exceeded",
		"Read-only file system", "Too many open files",
		"Cannot allocate memory", "out of memory", "sched_setaffinity",
		"untrusted kernel",
	};
	size_t i;

	for (i = 0; text != NULL && i < sizeof env / sizeof env[0]; i++) {
		if (strstr(text, env[i]) != NULL)
			return 1;
	}
	return 0;
}

int
backend_compile_step(const struct backend_params *params, const char *what,
    char *const argv[], double deadline, struct trial_result *res)
{
	struct proc_opts o;
	struct proc_result pr;
	char *err = NULL, *x;
	double left = deadline - util_now();
	int rc = -1;

	memset(&o, 0, sizeof o);
	memset(&pr, 0, sizeof pr);
	if (left <= 0) {
		res->status = TRIAL_COMPILE_TIMEOUT;
		util_seterr(&res->error, "%s: compile timeout (%.0f s) reached "
		    "before the step started", what, params->compile_timeout);
		return -1;
	}
	o.timeout = params->compile_timeout > 0 ? left : 0;
	o.nice = params->compile_nice;
	if (proc_run(argv, &o, &pr, &err) != 0) {
		res->status = TRIAL_COMPILE_FAILED;
		res->env_failure = 1;
		util_seterr(&res->error, "%s: %s", what, err);
		free(err);
		return -1;
	}
	if (pr.timed_out) {
		res->status = TRIAL_COMPILE_TIMEOUT;
		util_seterr(&res->error, "%s: killed after %.1f s (compile "
		    "timeout)", what, pr.seconds);
	} else if (pr.exec_failed) {
		res->status = TRIAL_COMPILE_FAILED;
		res->env_failure = 1;
		util_seterr(&res->error, "%s: cannot run %s", what, argv[0]);
	} else if (!pr.exited || pr.status != 0) {
		x = backend_excerpt(pr.err);
		res->status = TRIAL_COMPILE_FAILED;
		res->env_failure = backend_env_text(pr.err);
		if (!pr.exited)
			util_seterr(&res->error, "%s: crashed (signal %d): %s",
			    what, pr.signal, x);
		else
			util_seterr(&res->error, "%s: exit %d: %s", what,
			    pr.status, x);
		free(x);
	} else
		rc = 0;
	proc_result_free(&pr);
	return rc;
}

char *
backend_side_name(const char *dir, const char *kind)
{
	static unsigned long uses;

	return xasprintf("%s.%s.%ld.%lu", dir, kind, (long)getpid(),
	    __sync_add_and_fetch(&uses, 1));
}

void
backend_compile_failed(struct trial_result *res, const char *env_err,
    double t0, const char *tmp, void (*remove_fn)(const char *))
{
	if (env_err != NULL) {
		res->status = TRIAL_ERROR;
		res->env_failure = 1;
		util_seterr(&res->error, "%s", env_err);
	}
	res->compile_s = util_now() - t0;
	if (tmp != NULL)
		remove_fn(tmp);
}

int
backend_cache_check(const char *name, const char *root, char **err)
{
	char why[128];

	if (util_trusted(root, 1, why, sizeof why) == 0)
		return 0;
	util_seterr(err, "%s: the compile cache %s is not this user's to "
	    "trust (%s): anyone who can write it chooses the code jobs run. "
	    "Give it to this user alone (chown, chmod go-w) or set "
	    "AUTOSCHED_WORK to a folder only this user can write", name, root,
	    why);
	return -1;
}

int
backend_cache_lookup(const char *name, const char *root, const char *dir,
    const char *const files[], const char *label, struct trial_result *res)
{
	struct stat sb;
	char why[128] = "", *aside;
	int rc, i, trusted;

	if (backend_cache_check(name, root, &res->error) != 0) {
		res->status = TRIAL_ERROR;
		res->env_failure = 1;
		return -1;
	}
	if (lstat(dir, &sb) != 0)
		return 0;
	trusted = util_trusted(dir, 1, why, sizeof why) == 0;
	for (i = 0; trusted && files[i] != NULL; i++)
		trusted = util_trusted(files[i], 0, why, sizeof why) == 0;
	if (trusted)
		return 1;
	aside = backend_side_name(dir, "untrusted");
	rc = rename(dir, aside);
	if (rc == 0)
		fprintf(stderr, "autosched: %s: not used (%s): moved to %s; "
		    "compiled again\n", label, why, aside);
	else if (errno == ENOENT)
		rc = 0;		/* another thread of ours set it aside meanwhile */
	else {
		res->status = TRIAL_ERROR;
		res->env_failure = 1;
		util_seterr(&res->error, "%s: not used (%s), and it cannot be "
		    "set aside: %s", label, why, strerror(errno));
	}
	free(aside);
	return rc == 0 ? 0 : -1;
}

size_t
backend_cache_sweep(const char *root, void (*remove_fn)(const char *))
{
	DIR *d;
	struct dirent *de;
	const char *t;
	char *end, *p;
	long pid;
	size_t n = 0;

	if ((d = opendir(root)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' ||
		    (t = strstr(de->d_name, ".tmp.")) == NULL)
			continue;
		errno = 0;
		pid = strtol(t + 5, &end, 10);
		if (errno != 0 || end == t + 5 || *end != '.' || pid <= 0 ||
		    pid == (long)getpid())
			continue;
		/* Alive (or not ours to ask): its scratch stays. */
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		p = util_path_join(root, de->d_name);
		remove_fn(p);
		free(p);
		n++;
	}
	closedir(d);
	return n;
}

int
backend_cache_scratch(const char *tmp, void (*remove_fn)(const char *),
    char **err)
{
	remove_fn(tmp);
	if (util_mkdirs(tmp, err) != 0)
		return -1;
	if (chmod(tmp, 0755) != 0) {
		util_seterr(err, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	return 0;
}

int
backend_cache_commit(const char *name, const char *root, const char *tmp,
    const char *dir, const char *const files[], const char *label,
    void (*remove_fn)(const char *), struct trial_result *res)
{
	int e;

	if (rename(tmp, dir) == 0)
		return 0;
	/* Another run of ours cached the same entry meanwhile. */
	e = errno;
	remove_fn(tmp);
	if (backend_cache_lookup(name, root, dir, files, label, res) == 1)
		return 0;
	res->status = TRIAL_ERROR;
	res->env_failure = 1;
	if (res->error == NULL)
		util_seterr(&res->error, "cannot move %s to %s: %s", tmp, dir,
		    strerror(e));
	return -1;
}

char *
backend_find_helper(const char *file, const char *env_name, int mode)
{
	char self[PATH_MAX], *dir, *p;
	const char *env = getenv(env_name);
	ssize_t n;

	if (env != NULL && *env != '\0')
		return xstrdup(env);
	n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = '\0';
		dir = util_dirname(self);
		p = util_path_join(dir, file);
		free(dir);
		if (access(p, mode) == 0)
			return p;
		free(p);
	}
	p = util_path_join(AUTOSCHED_LIBEXEC_DIR, file);
	if (access(p, mode) == 0)
		return p;
	free(p);
	return util_path_join(AUTOSCHED_BINARY_DIR "/backends/mlir-cpu", file);
}

char *
backend_harness(void)
{
	return backend_find_helper("autosched-measure", "AUTOSCHED_MEASURE",
	    X_OK);
}

/* The version in the output of `tool --version` (see backend_tool_version). */
static char *
version_of(char *out, const char *tag)
{
	char *s, *save;

	if (tag != NULL) {
		if ((s = strstr(out, tag)) == NULL)
			return NULL;
		s += strlen(tag);
		return xstrndup(s, strcspn(s, "\n"));
	}
	/* mlir-opt prints a banner line first: take the first one with a digit. */
	for (s = strtok_r(out, "\n", &save); s != NULL;
	    s = strtok_r(NULL, "\n", &save)) {
		while (isspace((unsigned char)*s))
			s++;
		if (strpbrk(s, "0123456789") != NULL)
			return xstrdup(s);
	}
	return NULL;
}

/* backend_tool_version's work, its cache held by the caller's lock. */
static char *
tool_version_locked(const char *tool, const char *tag)
{
	/* The tools asked so far (a handful per process: one per backend's tool). */
	static struct {
		char	*key, *version;
	} done[8];
	static size_t ndone;
	char *const argv[] = { (char *)tool, "--version", NULL };
	struct proc_opts o;
	struct proc_result pr;
	char *err = NULL, *v = NULL, *key;
	size_t i;

	key = xasprintf("%s\n%s", tool, tag != NULL ? tag : "");
	for (i = 0; i < ndone; i++) {
		if (strcmp(done[i].key, key) == 0) {
			free(key);
			return xstrdup(done[i].version);
		}
	}
	memset(&o, 0, sizeof o);
	o.timeout = 60;
	if (proc_run(argv, &o, &pr, &err) != 0) {
		free(err);
		free(key);
		return xstrdup("unknown");
	}
	if (pr.exited && pr.status == 0)
		v = version_of(pr.out, tag);
	proc_result_free(&pr);
	if (v == NULL) {
		free(key);
		return xstrdup("unknown");
	}
	if (ndone < sizeof done / sizeof done[0]) {
		done[ndone].key = key;
		done[ndone++].version = xstrdup(v);
	} else
		free(key);
	return v;
}

char *
backend_tool_version(const char *tool, const char *tag)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	char *v;

	/* Asked once per tool, from any thread. */
	pthread_mutex_lock(&lock);
	v = tool_version_locked(tool, tag);
	pthread_mutex_unlock(&lock);
	return v;
}

char *
backend_cpu_model(void)
{
	char *buf = NULL, *line, *save, *colon, *model = NULL;

	if (util_read_file("/proc/cpuinfo", 4 << 20, &buf, NULL, NULL) == 0) {
		for (line = strtok_r(buf, "\n", &save); line != NULL &&
		    model == NULL; line = strtok_r(NULL, "\n", &save)) {
			if (strncmp(line, "model name", 10) != 0 ||
			    (colon = strchr(line, ':')) == NULL)
				continue;
			colon += colon[1] == ' ' ? 2 : 1;
			model = xstrdup(colon);
		}
	}
	free(buf);
	return model != NULL ? model : xstrdup("unknown");
}

int
backend_test_fault(const char *name, const char *const kinds[], size_t n)
{
	const char *f = getenv("AUTOSCHED_TEST_FAULT"), *colon;
	size_t i;

	if (f == NULL || (colon = strchr(f, ':')) == NULL)
		return 0;
	/* KIND:TEXT aims at the configs whose name holds TEXT, KIND:!TEXT at
	 * the others (the default among them, whatever this CPU makes it). */
	if (colon[1] == '!' ? strstr(name, colon + 2) != NULL :
	    strstr(name, colon + 1) == NULL)
		return 0;
	for (i = 1; i < n; i++) {
		if (strlen(kinds[i]) == (size_t)(colon - f) &&
		    strncmp(f, kinds[i], (size_t)(colon - f)) == 0)
			return (int)i;
	}
	return 0;
}

/* 1 if op's element types (lhs, rhs, acc) are ones backend_shape_ok takes. */
static int
types_ok(const struct op_desc *op, int bf16_acc)
{
	static const struct {
		enum elem_type l, r, a;
	} types[] = {
		{ ELEM_F32, ELEM_F32, ELEM_F32 },
		{ ELEM_F64, ELEM_F64, ELEM_F64 },
		{ ELEM_F16, ELEM_F16, ELEM_F32 },
		{ ELEM_F16, ELEM_F16, ELEM_F16 },
		{ ELEM_BF16, ELEM_BF16, ELEM_F32 },
		{ ELEM_I8, ELEM_I8, ELEM_I32 },
		{ ELEM_BF16, ELEM_BF16, ELEM_BF16 },	/* last: bf16_acc */
	};
	size_t i, n = sizeof types / sizeof types[0] - (bf16_acc ? 0 : 1);

	for (i = 0; i < n; i++) {
		if (op->lhs == types[i].l && op->rhs == types[i].r &&
		    op->acc == types[i].a)
			return 1;
	}
	return 0;
}

int
backend_shape_ok(const struct op_desc *op, int bf16_acc, const char *shape_why,
    const char *types_why, const char **reason)
{
	if (op->m < 1 || op->n < 1 || op->k < 1 || op->batch < 1) {
		*reason = shape_why;
		return 0;
	}
	if (!types_ok(op, bf16_acc)) {
		*reason = types_why;
		return 0;
	}
	*reason = NULL;
	return 1;
}

void
backend_cand_add(struct space_rules *r, enum knob k, int64_t v)
{
	size_t i;

	if (v < (k == KNOB_PACK_B || k == KNOB_PAD_SMEM || k == KNOB_PACK_A ?
	    0 : 1))
		return;
	for (i = 0; i < r->ncand[k]; i++) {
		if (r->cand[k][i] == v)
			return;
	}
	if (r->ncand[k] < SPACE_CANDS_MAX)
		r->cand[k][r->ncand[k]++] = v;
}

int
backend_executor(const struct backend_params *params, struct executor **ex,
    int *owned, char **err)
{
	*owned = 0;
	if (params->exec != NULL) {
		*ex = params->exec;
		return 0;
	}
	if (executor_open(&executor_local, NULL, ex, err) != 0)
		return -1;
	*owned = 1;
	return 0;
}

int
backend_open_base(const char *name,
    int (*supports)(const struct op_desc *, const char **),
    const struct backend_params *params, const struct op_desc *op,
    char **work_dir, char **harness, struct executor **exec, int *owned,
    char **err)
{
	const char *reason;

	*work_dir = *harness = NULL;
	*exec = NULL;
	*owned = 0;
	if (!supports(op, &reason)) {
		util_seterr(err, "%s: %s: %s", name, op->name ? op->name : "op",
		    reason);
		return -1;
	}
	if (params->work_dir == NULL) {
		util_seterr(err, "%s: no work folder", name);
		return -1;
	}
	*work_dir = util_path_join(params->work_dir, name);
	*harness = backend_harness();
	if (util_mkdirs(*work_dir, err) != 0)
		goto fail;
	if (access(*harness, X_OK) != 0) {
		util_seterr(err, "%s: measurement harness %s not found (set "
		    "AUTOSCHED_MEASURE)", name, *harness);
		goto fail;
	}
	if (backend_executor(params, exec, owned, err) != 0)
		goto fail;
	return 0;
fail:
	free(*work_dir);
	free(*harness);
	*work_dir = *harness = NULL;
	return -1;
}

int
backend_run_failed(const char *what, const struct executor_result *x,
    struct trial_result *res)
{
	char *e;

	switch (x->outcome) {
	case EXECUTOR_EXITED:
		return 0;
	case EXECUTOR_TIMEOUT:
		res->status = TRIAL_TIMEOUT;
		util_seterr(&res->error, "%s killed after %.1f s (timeout%s%s)",
		    what, x->seconds, x->why ? ", " : "", x->why ? x->why : "");
		break;
	case EXECUTOR_SIGNALED:
		res->status = TRIAL_CRASHED;
		e = backend_excerpt(x->why != NULL ? x->why : x->err);
		util_seterr(&res->error, "%s crashed (signal %d)%s%s", what,
		    x->signal, x->why != NULL ? " " : *e ? ": " : "", e);
		free(e);
		break;
	case EXECUTOR_ENV_FAILED:
		res->status = TRIAL_ERROR;
		res->env_failure = 1;
		util_seterr(&res->error, "%s", x->why ? x->why : "?");
		break;
	case EXECUTOR_CANCELLED:
		res->status = TRIAL_ERROR;
		util_seterr(&res->error, "%s", x->why ? x->why :
		    "measurement stopped");
		break;
	}
	if (res->host[0] == '\0')
		snprintf(res->host, sizeof res->host, "%s", x->host);
	return 1;
}

double
backend_json_num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : 0;
}

void
backend_json_str(json_t *o, const char *key, char *buf, size_t len)
{
	const char *v = json_string_value(json_object_get(o, key));

	snprintf(buf, len, "%s", v != NULL ? v : "");
}

json_t *
backend_last_json(const char *text)
{
	const char *line = text;
	json_error_t jerr;

	while (strchr(line, '\n') != NULL && strchr(line, '\n')[1] != '\0')
		line = strchr(line, '\n') + 1;
	return json_loads(line, 0, &jerr);
}

void
backend_harness_result(json_t *j, const struct op_desc *op,
    struct trial_result *res)
{
	json_t *c = json_object_get(j, "counters"), *v;
	int i;

	res->verified = (int)backend_json_num(j, "verified");
	res->max_err = backend_json_num(j, "max_err");
	res->reps = (int)backend_json_num(j, "reps");
	res->median_ms = backend_json_num(j, "median_ms");
	res->min_ms = backend_json_num(j, "min_ms");
	res->max_ms = backend_json_num(j, "max_ms");
	res->cv = backend_json_num(j, "cv");
	res->reps_dropped = (int)backend_json_num(j, "reps_dropped");
	backend_json_str(j, "checked_by", res->checked_by,
	    sizeof res->checked_by);
	backend_json_str(j, "host", res->host, sizeof res->host);
	backend_json_str(j, "ref_routine", res->ref_routine,
	    sizeof res->ref_routine);
	res->ref_same_precision = (int)backend_json_num(j,
	    "ref_same_precision");
	/* The counters: a number is measured, null or absent is not. */
	for (i = 0; i < TRIAL_CTR_COUNT; i++) {
		v = json_object_get(c, trial_counter_name(i));
		if (json_is_integer(v) && json_integer_value(v) >= 0) {
			res->counters[i] = (int64_t)json_integer_value(v);
			res->counters_have |= 1u << i;
		}
	}
	if (res->median_ms > 0)
		res->gflops = 2.0 * (double)(op->batch > 0 ? op->batch : 1) *
		    (double)op->m * (double)op->n * (double)op->k /
		    (res->median_ms * 1e6);
}
