/*
 * autoschedd.conf: the service's own configuration (INI, libinih), read at
 * start, by -n and on SIGHUP. Errors name file:line: key like the cfg reader.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <ini.h>

#include "cfg/cfg.h"
#include "daemon/daemon_int.h"
#include "util/util.h"

#define CONF_MAX_SIZE	(64 * 1024)
#define CONF_MAX_LINE	190	/* below libinih's own line buffer */

static const char *const conf_keys[] = {
	"database", "spool", "log_level", "cpus", "compile_nice", "poll_interval",
	"output_dir", "executor", "slurm_partition", "slurm_max_steps",
	"slurm_srun_args", "slurm_step_timeout", "compile_jobs", "ops_at_once",
};

static const struct {
	const char	*name;
	int		 level;
} conf_levels[] = {
	{ "err", LOG_ERR },
	{ "error", LOG_ERR },
	{ "warning", LOG_WARNING },
	{ "notice", LOG_NOTICE },
	{ "info", LOG_INFO },
	{ "debug", LOG_DEBUG },
};

/* The state of one parse: the reader's position and the first error. */
struct conf_parse {
	const char		*path;
	char			*dir;
	const char		*p, *end;
	int			 line;		/* the line last handed to libinih */
	int			 seen[sizeof conf_keys / sizeof conf_keys[0]];
	struct service_conf	*conf;
	char			*err;
};

int
service_conf_level(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof conf_levels / sizeof conf_levels[0]; i++) {
		if (strcmp(s, conf_levels[i].name) == 0)
			return conf_levels[i].level;
	}
	return -1;
}

void
service_conf_free(struct service_conf *c)
{
	if (c == NULL)
		return;
	free(c->path);
	free(c->database);
	free(c->spool);
	free(c->output_dir);
	free(c->cpus);
	cfg_exec_clear(&c->exec);
	free(c);
}

static struct service_conf *
conf_defaults(void)
{
	struct service_conf *c = xcalloc(1, sizeof *c);

	c->log_level = LOG_INFO;
	c->compile_nice = 0;
	c->poll = 30;
	return c;
}

static char conf_comments[] = ";#";
static char conf_inline_comments[] = ";";

/*
 * libinih's options are process-wide variables the cfg reader sets too: set
 * every one before each parse (libinih's own defaults, which this format was
 * written for), so a SIGHUP after a job reads the file the same way.
 */
static void
conf_ini_setup(void)
{
	ini_allow_multiline = true;
	ini_allow_bom = true;
	ini_start_comment_prefixes = conf_comments;
	ini_allow_inline_comments = true;
	ini_inline_comment_prefixes = conf_inline_comments;
	ini_use_stack = true;
	ini_max_line = 200;
	ini_allow_realloc = false;
	ini_initial_alloc = 200;
	ini_stop_on_first_error = false;
	ini_allow_no_value = false;
}

/* libinih reads line by line through this, so we know the line of each key. */
static char *
conf_reader(char *str, int num, void *stream)
{
	struct conf_parse *cp = stream;
	size_t n = 0;

	if (cp->p >= cp->end || num < 2)
		return NULL;
	while (cp->p + n < cp->end && n + 1 < (size_t)num) {
		if (cp->p[n++] == '\n')
			break;
	}
	memcpy(str, cp->p, n);
	str[n] = '\0';
	cp->p += n;
	cp->line++;
	return str;
}

/* A whole integer in [lo, hi], or -1. */
static int
conf_int(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* "0", "0,1", "2-3,6": CPUs this process may use, no repeats (util's parser). */
static int
conf_cpus(struct conf_parse *cp, const char *value, const char *key)
{
	char *why = NULL;
	int *cpus = NULL, n = 0;

	if (util_parse_cpus(value, &cpus, &n, &why) != 0) {
		util_seterr(&cp->err, "%s:%d: %s: %s", cp->path, cp->line, key,
		    why);
		free(why);
		return -1;
	}
	free(cp->conf->cpus);
	cp->conf->cpus = cpus;
	cp->conf->ncpus = n;
	return 0;
}

/* One key = value; returns 0 to stop at the first error. */
static int
conf_handler(void *user, const char *section, const char *name,
    const char *value)
{
	struct conf_parse *cp = user;
	struct service_conf *c = cp->conf;
	const char *best = NULL;
	char why[256];
	size_t i, nkeys = sizeof conf_keys / sizeof conf_keys[0], d, bestd = 3;
	long v;

	if (cp->err != NULL)
		return 0;
	if (*section != '\0' && strcmp(section, "autoschedd") != 0) {
		util_seterr(&cp->err, "%s:%d: [%s]: unknown section (expected"
		    " [autoschedd])", cp->path, cp->line, section);
		return 0;
	}
	for (i = 0; i < nkeys; i++) {
		if (strcmp(name, conf_keys[i]) == 0)
			break;
		if ((d = util_edit_distance(name, conf_keys[i])) < bestd) {
			bestd = d;
			best = conf_keys[i];
		}
	}
	if (i == nkeys) {
		if (best != NULL)
			util_seterr(&cp->err, "%s:%d: %s: unknown key (did you"
			    " mean %s?)", cp->path, cp->line, name, best);
		else
			util_seterr(&cp->err, "%s:%d: %s: unknown key (expected"
			    " database, spool, output_dir, log_level, cpus,"
			    " compile_nice, poll_interval, executor,"
			    " slurm_partition, slurm_max_steps, slurm_srun_args,"
			    " slurm_step_timeout, compile_jobs or ops_at_once)",
			    cp->path,
			    cp->line, name);
		return 0;
	}
	if (cp->seen[i] != 0) {
		util_seterr(&cp->err, "%s:%d: %s: given twice (first on line"
		    " %d)", cp->path, cp->line, name, cp->seen[i]);
		return 0;
	}
	cp->seen[i] = cp->line;

	/* The jobs' default executor: the cfg reader's own check. */
	switch (cfg_exec_key(&c->exec, name, value, why, sizeof why)) {
	case 0:
		if (c->exec.executor != CFG_EXEC_BATCH)
			return 1;
		util_seterr(&cp->err, "%s:%d: %s: batch carries measurements in a"
		    " folder by hand (autosched run --stage); the service measures"
		    " with local or slurm", cp->path, cp->line, name);
		return 0;
	case -1:
		util_seterr(&cp->err, "%s:%d: %s: %s", cp->path, cp->line,
		    name, why);
		return 0;
	}

	if (strcmp(name, "database") == 0 || strcmp(name, "spool") == 0 ||
	    strcmp(name, "output_dir") == 0) {
		char **dst = (*name == 'd') ? &c->database : (*name == 's') ?
		    &c->spool : &c->output_dir;

		if (*value == '\0') {
			util_seterr(&cp->err, "%s:%d: %s: empty path", cp->path,
			    cp->line, name);
			return 0;
		}
		free(*dst);
		*dst = util_path_join(cp->dir, value);
	} else if (strcmp(name, "log_level") == 0) {
		if ((c->log_level = service_conf_level(value)) < 0) {
			util_seterr(&cp->err, "%s:%d: %s: \"%s\" is not a level"
			    " (expected err, warning, notice, info or debug)",
			    cp->path, cp->line, name, value);
			return 0;
		}
	} else if (strcmp(name, "cpus") == 0) {
		if (conf_cpus(cp, value, name) != 0)
			return 0;
	} else if (strcmp(name, "compile_nice") == 0) {
		if (conf_int(value, 0, 19, &v) != 0) {
			util_seterr(&cp->err, "%s:%d: %s: \"%s\" is not a"
			    " niceness (expected 0 to 19)", cp->path, cp->line,
			    name, value);
			return 0;
		}
		c->compile_nice = (int)v;
	} else {
		if (conf_int(value, 1, 3600, &v) != 0) {
			util_seterr(&cp->err, "%s:%d: %s: \"%s\" is not a number"
			    " of seconds (expected 1 to 3600)", cp->path,
			    cp->line, name, value);
			return 0;
		}
		c->poll = (double)v;
	}
	return 1;
}

int
service_conf_parse(const char *path, const char *text, size_t len,
    struct service_conf **out, char **err)
{
	struct conf_parse cp;
	const char *p, *nl;
	int line = 1, rc;

	memset(&cp, 0, sizeof cp);
	*out = NULL;

	/* libinih would cut long lines silently: refuse them instead. */
	for (p = text; p < text + len; p = nl + 1, line++) {
		if ((nl = memchr(p, '\n', (size_t)(text + len - p))) == NULL)
			nl = text + len;
		if (nl - p > CONF_MAX_LINE) {
			util_seterr(err, "%s:%d: line too long (at most %d"
			    " characters)", path, line, CONF_MAX_LINE);
			return -1;
		}
		if (memchr(p, '\0', (size_t)(nl - p)) != NULL) {
			util_seterr(err, "%s:%d: NUL byte in a text file", path,
			    line);
			return -1;
		}
	}

	cp.path = path;
	cp.dir = util_dirname(path);
	cp.p = text;
	cp.end = text + len;
	cp.conf = conf_defaults();
	conf_ini_setup();
	rc = ini_parse_stream(conf_reader, &cp, conf_handler, &cp);
	if (cp.err == NULL && rc > 0)
		util_seterr(&cp.err, "%s:%d: syntax error (expected [section]"
		    " or key = value)", path, rc);
	else if (cp.err == NULL && rc < 0)
		util_seterr(&cp.err, "%s: cannot parse (libinih error %d)",
		    path, rc);
	free(cp.dir);
	if (cp.err != NULL) {
		service_conf_free(cp.conf);
		if (err != NULL) {
			free(*err);
			*err = cp.err;
		} else
			free(cp.err);
		return -1;
	}
	cp.conf->path = xstrdup(path);
	*out = cp.conf;
	return 0;
}

int
service_conf_load(const char *path, int missing_ok, struct service_conf **out,
    char **err)
{
	char *text = NULL;
	size_t len;
	int rc;

	*out = NULL;
	if (missing_ok && access(path, F_OK) != 0 && errno == ENOENT) {
		*out = conf_defaults();
		return 0;
	}
	if (util_read_file(path, CONF_MAX_SIZE, &text, &len, err) != 0)
		return -1;
	rc = service_conf_parse(path, text, len, out, err);
	free(text);
	return rc;
}
