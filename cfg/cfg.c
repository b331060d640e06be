/*
 * The auto-scheduler.cfg reader. libinih splits the text into sections and
 * key = value pairs; our line reader feeds it (counting lines, bounding them,
 * checking section names) and the handler checks every key and value.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backends/backend.h"
#include "cfg/cfg.h"
#include "cfg/cfg_int.h"
#include "executors/executor.h"
#include "generate/generate.h"
#include "tuners/tuner.h"
#include "util/util.h"

enum cfg_section {
	SEC_NONE = -1,
	SEC_ENV,
	SEC_SPACE,
	SEC_STRATEGY,
	SEC_MEASURE,
	SEC_PROBLEM,
	SEC_COUNT
};
static const char *const cfg_sections[SEC_COUNT + 1] = {
	"Env", "SearchSpace", "SearchStrategy", "Measure", "Problem", NULL
};

static const char *const env_keys[] = {
	"input_file", "output_file", "backend", "database", "iree_bin",
	"replay_db", "report_file", "executor", "slurm_partition",
	"slurm_max_steps", "slurm_srun_args", "slurm_step_timeout",
	"compile_jobs", "ops_at_once", NULL
};
/* [Env] keys read apart from env_keys (their value is checked on its own). */
static const char *const env_own_keys[] = { "gpu_arch", "isa", NULL };
static const char *const strategy_keys[] = {
	"tuner", "n_trial", "time_limit", "early_stopping", "seed",
	"trial_budget", "time_budget", NULL
};
static const char *const measure_keys[] = {
	"min_time", "warmup", "min_reps", "max_reps", "timeout",
	"compile_timeout", "cv_max", "confirm_top", "verify", NULL
};
static const char *const problem_keys[] = {
	"problem_m", "problem_n", "problem_k", "batch", "dtype", "transpose",
	"kind", NULL
};

#define CFG_KEY_MAX	64		/* longer keys are unknown by length */
#define CFG_QUOTE	64		/* keys and values are cut to this in messages */
#define CFG_TRIAL_MAX	1000000000	/* n_trial */

/* A key seen so far, to warn when it comes again. */
struct cfg_seen {
	int	 section;
	char	*key;
	int	 line;
};

/* The state of one pass over the text. */
struct cfg_reader {
	struct cfg	*cfg;
	const char	*p, *end;	/* the text not yet handed to inih */
	int		 line;		/* the line being read */
	int		 midline;	/* inih is taking the line in pieces */
	int		 section;	/* enum cfg_section */
	int		 section_line[SEC_COUNT];

	/*
	 * Pass 1 only looks for the tuner, so that pass 2 can judge a
	 * tuner-specific key met before the tuner line.
	 */
	int		 prescan;
	int		 submitted;	/* CFG_SUBMITTED or CFG_STORED */
	int		 stored;	/* CFG_STORED */
	int		 stopped;	/* pass 1 met a bad line */
	char		*prescan_tuner;
	const struct tuner_ops *tuner;	/* NULL: judge tuner keys at the end */

	struct cfg_seen	*seen;
	size_t		 nseen;
	/* The line of each env_keys[i], 0 if absent. */
	int		 env_line[sizeof env_keys / sizeof env_keys[0]];
	int		 knob_line[KNOB_COUNT];
	int		 max_reps_line;
	int		 problem_kind_line;	/* [Problem] kind = given */
	char		*err;
};

static int	cfg_fail(struct cfg_reader *, int, int, const char *,
		    const char *, ...) PRINTFLIKE(5, 6);

static char cfg_inline_comments[] = ";#";
static char cfg_start_comments[] = ";#";

/*
 * Debian's libinih takes its options at run time, in process-wide variables
 * the daemon's own config reader sets too: so every parse sets all of them.
 * Inline comments start with ';' or '#' after a space (as the seed writes
 * them), an indented line is a key (no continuation lines), lines go up to
 * CFG_LINE_MAX, first error stops.
 */
static void
cfg_ini_setup(void)
{
	ini_start_comment_prefixes = cfg_start_comments;
	ini_allow_multiline = false;
	ini_allow_bom = true;
	ini_allow_inline_comments = true;
	ini_inline_comment_prefixes = cfg_inline_comments;
	ini_use_stack = false;
	ini_allow_realloc = true;
	ini_initial_alloc = 256;
	ini_max_line = CFG_LINE_MAX + 3;	/* '\r', '\n' and '\0' */
	ini_stop_on_first_error = true;
	ini_allow_no_value = false;
}

/*
 * Record the first error as "path:line: [Section] key: message"; line 0,
 * section SEC_NONE or key NULL leave that part out. Returns -1.
 */
static int
cfg_fail(struct cfg_reader *r, int line, int section, const char *key,
    const char *fmt, ...)
{
	char msg[1024], where[32] = "", sec[32] = "", k[CFG_QUOTE + 4] = "";
	va_list ap;

	if (r->prescan) {
		r->stopped = 1;
		return -1;
	}
	if (r->err != NULL)
		return -1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(where, sizeof where, ":%d", line);
	if (section >= 0 && section < SEC_COUNT)
		snprintf(sec, sizeof sec, "[%s] ", cfg_sections[section]);
	if (key != NULL)
		snprintf(k, sizeof k, "%.*s: ", CFG_QUOTE, key);
	r->err = xasprintf("%s%s: %s%s%s", r->cfg->path, where, sec, k, msg);
	return -1;
}

static void
cfg_warn(struct cfg_reader *r, const char *msg)
{
	struct cfg *cfg = r->cfg;

	if (r->prescan || cfg->nwarnings > CFG_WARN_MAX)
		return;
	cfg->warnings = xrealloc(cfg->warnings,
	    (cfg->nwarnings + 1) * sizeof *cfg->warnings);
	if (cfg->nwarnings == CFG_WARN_MAX)
		msg = "(more warnings not shown)";
	cfg->warnings[cfg->nwarnings++] = xstrdup(msg);
}

/* The candidate nearest to word, if near enough to be a plausible typo. */
static const char *
cfg_nearest(const char *word, const char *const *cands)
{
	const char *best = NULL;
	size_t d, bestd = (size_t)-1;

	if (cands == NULL)
		return NULL;
	for (; *cands != NULL; cands++) {
		d = util_edit_distance(word, *cands);
		if (d < bestd) {
			bestd = d;
			best = *cands;
		}
	}
	/* About one edit in three: "inptu_file", not "AnnealTuner" for random. */
	if (best == NULL || bestd > (strlen(best) + 2) / 3)
		return NULL;
	return best;
}

/* " (did you mean X?)" or "", in buf. */
static const char *
cfg_hint(char *buf, size_t len, const char *near, const char *open,
    const char *close)
{
	if (near == NULL)
		return "";
	snprintf(buf, len, " (did you mean %s%s%s?)", open, near, close);
	return buf;
}

/* "a, b, c" of a NULL-ended list, in buf. */
static const char *
cfg_join(char *buf, size_t len, const char *const *names)
{
	size_t off = 0;

	buf[0] = '\0';
	for (; names != NULL && *names != NULL && off < len; names++) {
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
		    off == 0 ? "" : ", ", *names);
	}
	return buf;
}

static int
cfg_in_list(const char *key, const char *const *list)
{
	for (; list != NULL && *list != NULL; list++) {
		if (strcmp(key, *list) == 0)
			return 1;
	}
	return 0;
}

/*
 * Check a "[Section]" line (s points after the '[', e at the line's end) and
 * make it the current section.
 */
static int
cfg_section_line(struct cfg_reader *r, const char *s, const char *e)
{
	const char *close, *ns, *ne, *near;
	char name[CFG_KEY_MAX], hint[96];
	int i;

	close = memchr(s, ']', (size_t)(e - s));
	if (close == NULL)
		return cfg_fail(r, r->line, SEC_NONE, NULL,
		    "section line without ']'; expected [Env], [SearchSpace], "
		    "[SearchStrategy], [Measure] or [Problem]");
	for (ne = close + 1; ne < e && isspace((unsigned char)*ne); ne++)
		;
	if (ne < e && *ne != ';' && *ne != '#')
		return cfg_fail(r, r->line, SEC_NONE, NULL,
		    "unexpected text after ']' (comments start with ; or #)");
	ns = s;
	ne = close;
	while (ns < ne && isspace((unsigned char)*ns))
		ns++;
	while (ne > ns && isspace((unsigned char)ne[-1]))
		ne--;
	if ((size_t)(ne - ns) < sizeof name) {
		memcpy(name, ns, (size_t)(ne - ns));
		name[ne - ns] = '\0';
		for (i = 0; i < SEC_COUNT; i++) {
			if (strcmp(name, cfg_sections[i]) == 0) {
				r->section = i;
				r->section_line[i] = r->line;
				return 0;
			}
		}
		near = cfg_nearest(name, cfg_sections);
	} else {
		snprintf(name, sizeof name, "%.*s…", CFG_QUOTE / 2, ns);
		near = NULL;
	}
	return cfg_fail(r, r->line, SEC_NONE, NULL,
	    "unknown section [%s]%s; expected [Env], [SearchSpace], "
	    "[SearchStrategy], [Measure] or [Problem]", name,
	    cfg_hint(hint, sizeof hint, near, "[", "]"));
}

/* Check a line before inih sees it: size, bytes, section name. */
static int
cfg_check_line(struct cfg_reader *r)
{
	const char *nl, *s, *e;

	nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
	e = nl != NULL ? nl : r->end;
	if (e - r->p > CFG_LINE_MAX)
		return cfg_fail(r, r->line, SEC_NONE, NULL,
		    "line longer than %d bytes", CFG_LINE_MAX);
	if (memchr(r->p, '\0', (size_t)(e - r->p)) != NULL)
		return cfg_fail(r, r->line, SEC_NONE, NULL,
		    "NUL byte in the line (a cfg is a text file)");
	s = r->p;
	if (r->line == 1 && e - s >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
		s += 3;
	while (s < e && isspace((unsigned char)*s))
		s++;
	if (s < e && *s == '[')
		return cfg_section_line(r, s + 1, e);
	return 0;
}

/* The ini_reader: hand inih the next line, or as much of it as fits in buf. */
static char *
cfg_read_line(char *buf, int num, void *stream)
{
	struct cfg_reader *r = stream;
	const char *nl;
	size_t want, n;

	if (r->err != NULL || r->stopped || r->p >= r->end || num < 2)
		return NULL;
	if (!r->midline) {
		r->line++;
		if (cfg_check_line(r) != 0)
			return NULL;
	}
	nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
	want = nl != NULL ? (size_t)(nl + 1 - r->p) : (size_t)(r->end - r->p);
	n = want < (size_t)num - 1 ? want : (size_t)num - 1;
	memcpy(buf, r->p, n);
	buf[n] = '\0';
	r->p += n;
	r->midline = n < want;
	return buf;
}

/* Warn if key was seen before in this section; remember it otherwise. */
static void
cfg_note_key(struct cfg_reader *r, const char *key)
{
	struct cfg_seen *s;
	char *msg;
	size_t i;

	for (i = 0; i < r->nseen; i++) {
		s = &r->seen[i];
		if (s->section == r->section && strcmp(s->key, key) == 0) {
			msg = xasprintf("%s:%d: [%s] %s repeated (first at line "
			    "%d); the last value is used", r->cfg->path, r->line,
			    cfg_sections[r->section], key, s->line);
			cfg_warn(r, msg);
			free(msg);
			return;
		}
	}
	r->seen = xrealloc(r->seen, (r->nseen + 1) * sizeof *r->seen);
	s = &r->seen[r->nseen++];
	s->section = r->section;
	s->key = xstrdup(key);
	s->line = r->line;
}

static void
cfg_set(char **slot, char *value)
{
	free(*slot);
	*slot = value;
}

static int
cfg_unknown_key(struct cfg_reader *r, const char *key, const char *const *keys)
{
	char hint[96], all[256];

	return cfg_fail(r, r->line, r->section, key, "unknown key%s; expected "
	    "one of %s", cfg_hint(hint, sizeof hint, cfg_nearest(key, keys),
	    "", ""), cfg_join(all, sizeof all, keys));
}

/*
 * The srun options slurm_srun_args may carry: accounting and the node's
 * resources, whose meaning autosched knows. Nothing that changes the
 * command, the task or CPU count, binding, node choice, user, prolog or
 * epilog, folder, environment or output files: those are the executor's.
 * Each is "--opt=value"; value takes the characters of its kind.
 */
static const struct {
	const char	*opt;		/* with its '=' */
	const char	*chars;		/* besides letters and digits */
	int		 size;		/* a memory size: digits and a unit */
} srun_allowed[] = {
	{ "--account=", "._-", 0 },
	{ "--qos=", "._-", 0 },
	{ "--reservation=", "._-", 0 },
	{ "--constraint=", "._-&|[]*", 0 },
	{ "--comment=", "._-:+@", 0 },
	{ "--mem=", "", 1 },
	{ "--mem-per-cpu=", "", 1 },
	/* The node's GPUs a step takes (a GPU partition: --gres=gpu:1, gpu:h100:1). */
	{ "--gres=", "._-:,", 0 },
};

#define SRUN_VALUE_MAX	64	/* characters of one option's value */

/* "--account=, --qos=, …" in buf. */
static const char *
cfg_srun_allowed(char *buf, size_t len)
{
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof srun_allowed / sizeof srun_allowed[0] &&
	    off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
		    i == 0 ? "" : ", ", srun_allowed[i].opt);
	return buf;
}

/* 0 if the value of an allowed option has only the characters of its kind. */
static int
cfg_srun_value(const char *v, size_t n, const char *chars, int size)
{
	size_t i;

	if (n == 0 || n > SRUN_VALUE_MAX)
		return -1;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];

		if (size) {
			if (isdigit(c))
				continue;
			/* One unit at the end: 4096, 4G, 512M. */
			if (i > 0 && i == n - 1 && strchr("KMGT", c) != NULL)
				continue;
			return -1;
		}
		if (!isalnum(c) && (c == '\0' || strchr(chars, c) == NULL))
			return -1;
	}
	return 0;
}

/*
 * Check every blank-separated word of slurm_srun_args against srun_allowed:
 * 0, or -1 with the first word refused in why.
 */
static int
cfg_srun_args(const char *value, char *why, size_t len)
{
	const char *w = value, *e, *eq;
	char allowed[256];
	size_t i, n, ol;

	for (;;) {
		while (*w == ' ' || *w == '\t')
			w++;
		if (*w == '\0')
			return 0;
		for (e = w; *e != '\0' && *e != ' ' && *e != '\t'; e++)
			;
		n = (size_t)(e - w);
		for (i = 0; i < sizeof srun_allowed / sizeof srun_allowed[0];
		    i++) {
			ol = strlen(srun_allowed[i].opt);
			if (n > ol && strncmp(w, srun_allowed[i].opt, ol) == 0)
				break;
		}
		if (i == sizeof srun_allowed / sizeof srun_allowed[0]) {
			snprintf(why, len, "'%.*s' is not an option autosched "
			    "passes to srun; allowed: %s", (int)(n < CFG_QUOTE ?
			    n : CFG_QUOTE), w, cfg_srun_allowed(allowed,
			    sizeof allowed));
			return -1;
		}
		eq = w + ol;
		if (cfg_srun_value(eq, (size_t)(e - eq), srun_allowed[i].chars,
		    srun_allowed[i].size) != 0) {
			if (srun_allowed[i].size)
				snprintf(why, len, "'%.*s': expected %s a size "
				    "(digits and an optional K, M, G or T)",
				    (int)(n < CFG_QUOTE ? n : CFG_QUOTE), w,
				    srun_allowed[i].opt);
			else
				snprintf(why, len, "'%.*s': expected %s a name of"
				    " at most %d letters, digits or %s",
				    (int)(n < CFG_QUOTE ? n : CFG_QUOTE), w,
				    srun_allowed[i].opt, SRUN_VALUE_MAX,
				    srun_allowed[i].chars);
			return -1;
		}
		w = e;
	}
}

/* executor: a name in the executors' registry, kept as its position there. */
static int
cfg_executor_name(struct cfg_exec *e, const char *value, char *why,
    size_t len)
{
	const struct executor_ops *const *all;
	char names[256];
	size_t i, n, at = 0;

	all = executor_all(&n);
	for (i = 0; i < n; i++) {
		if (strcmp(all[i]->name, value) == 0) {
			e->executor = (int)i;
			e->executor_set = 1;
			return 0;
		}
	}
	/* "local or slurm", "local, slurm or batch". */
	names[0] = '\0';
	for (i = 0; i < n && at < sizeof names; i++)
		at += (size_t)snprintf(names + at, sizeof names - at, "%s%s",
		    i == 0 ? "" : i + 1 == n ? " or " : ", ", all[i]->name);
	snprintf(why, len, "unknown executor '%.*s'; expected %s", CFG_QUOTE,
	    value, names);
	return -1;
}

int
cfg_exec_key(struct cfg_exec *e, const char *key, const char *value,
    char *why, size_t len)
{
	int64_t v;

	if (strcmp(key, "executor") == 0)
		return cfg_executor_name(e, value, why, len);
	if (strcmp(key, "slurm_partition") == 0) {
		if (*value == '\0' || strlen(value) > 64 ||
		    strpbrk(value, " \t,") != NULL) {
			snprintf(why, len, "'%.*s' is not a partition name (one "
			    "word, at most 64 characters)", CFG_QUOTE, value);
			return -1;
		}
		free(e->slurm_partition);
		e->slurm_partition = xstrdup(value);
		return 0;
	}
	if (strcmp(key, "slurm_srun_args") == 0) {
		if (strlen(value) > 512) {
			snprintf(why, len, "too long (at most 512 characters)");
			return -1;
		}
		if (cfg_srun_args(value, why, len) != 0)
			return -1;
		free(e->slurm_srun_args);
		e->slurm_srun_args = xstrdup(value);
		return 0;
	}
	if (strcmp(key, "slurm_max_steps") == 0) {
		if (cfg_value_int(value, 1, 4096, &v, why, len) != 0)
			return -1;
		e->slurm_max_steps = (int)v;
		return 0;
	}
	if (strcmp(key, "slurm_step_timeout") == 0)
		return cfg_value_seconds(value, 0.001, 86400,
		    &e->slurm_step_timeout, why, len) != 0 ? -1 : 0;
	if (strcmp(key, "compile_jobs") == 0) {
		if (cfg_value_int(value, 1, 1024, &v, why, len) != 0)
			return -1;
		e->compile_jobs = (int)v;
		return 0;
	}
	if (strcmp(key, "ops_at_once") == 0) {
		if (cfg_value_int(value, 1, 64, &v, why, len) != 0)
			return -1;
		e->ops_at_once = (int)v;
		return 0;
	}
	return 1;
}

void
cfg_exec_merge(struct cfg_exec *e, const struct cfg_exec *d)
{
	if (d == NULL)
		return;
	if (!e->executor_set) {
		e->executor = d->executor;
		e->executor_set = d->executor_set;
	}
	if (e->slurm_partition == NULL)
		e->slurm_partition = d->slurm_partition;
	if (e->slurm_srun_args == NULL)
		e->slurm_srun_args = d->slurm_srun_args;
	if (e->slurm_max_steps == 0)
		e->slurm_max_steps = d->slurm_max_steps;
	if (e->slurm_step_timeout == 0)
		e->slurm_step_timeout = d->slurm_step_timeout;
	if (e->compile_jobs == 0)
		e->compile_jobs = d->compile_jobs;
	if (e->ops_at_once == 0)
		e->ops_at_once = d->ops_at_once;
}

void
cfg_exec_clear(struct cfg_exec *e)
{
	free(e->slurm_partition);
	free(e->slurm_srun_args);
	memset(e, 0, sizeof *e);
}

const char *
cfg_submitted_why(const char *key)
{
	if (strcmp(key, "iree_bin") == 0)
		return "names a program; a submitted job may not (the service"
		    " runs only its own tools)";
	if (strcmp(key, "replay_db") == 0)
		return "names a store the service would open when the job runs,"
		    " with its own rights; a submitted job may not (replay with"
		    " autosched run)";
	return "set by the service (autoschedd.conf), not by a submitted job";
}

const char *
cfg_drop_submitted(struct cfg *cfg)
{
	const char *key = cfg->service_key;

	cfg_exec_clear(&cfg->exec);
	free(cfg->iree_bin);
	cfg->iree_bin = NULL;
	free(cfg->replay_db);
	cfg->replay_db = NULL;
	cfg->service_key = NULL;
	cfg->service_key_line = 0;
	return key;
}

/* executor and its slurm_* keys ([Env]). */
static int
cfg_executor(struct cfg_reader *r, const char *key, const char *value)
{
	char why[256];

	if (cfg_exec_key(&r->cfg->exec, key, value, why, sizeof why) != 0)
		return cfg_fail(r, r->line, r->section, key, "%s", why);
	return 0;
}

/* [Env] gpu_arch: the NVIDIA GPU backend iree compiles for. */
static int
cfg_gpu_arch(struct cfg_reader *r, const char *key, const char *value)
{
	if (!backend_gpu_arch_known(value))
		return cfg_fail(r, r->line, r->section, key, "'%.*s'; expected "
		    "auto or one of %s", CFG_QUOTE, value, backend_gpu_arches());
	cfg_set(&r->cfg->gpu_arch, xstrdup(value));
	r->cfg->gpu_arch_line = r->line;
	return 0;
}

/*
 * [Env] isa: the x86 vector ISA mlir-cpu's kernels are built for, this
 * CPU's or one below it (backend_cpu_isa_check, AUTOSCHED_ISA's check too).
 */
static int
cfg_isa(struct cfg_reader *r, const char *key, const char *value)
{
	char why[160];

	if (backend_cpu_isa_check(value, why, sizeof why) != 0)
		return cfg_fail(r, r->line, r->section, key, "%s", why);
	cfg_set(&r->cfg->isa, xstrdup(value));
	return 0;
}

static int
cfg_env(struct cfg_reader *r, const char *key, const char *value)
{
	struct cfg *cfg = r->cfg;
	const struct backend_ops *const *all;
	const struct backend_ops *b;
	const char *names[32], *near;
	char hint[96], list[256];
	size_t i, n;
	int k, svc;

	if (strcmp(key, env_own_keys[0]) == 0)
		return cfg_gpu_arch(r, key, value);
	if (strcmp(key, env_own_keys[1]) == 0)
		return cfg_isa(r, key, value);
	for (k = 0; env_keys[k] != NULL; k++) {
		if (strcmp(key, env_keys[k]) == 0)
			break;
	}
	if (env_keys[k] == NULL)
		return cfg_unknown_key(r, key, env_keys);
	if (value[0] == '\0')
		return cfg_fail(r, r->line, r->section, key, "no value; expected %s",
		    k == 2 ? "a backend name" : k >= 7 ? "a value" : "a path");
	r->env_line[k] = r->line;
	svc = k >= 7 || strcmp(key, "iree_bin") == 0 ||
	    strcmp(key, "replay_db") == 0;
	if (svc && (cfg->service_key == NULL ||
	    r->line < cfg->service_key_line)) {
		cfg->service_key = env_keys[k];
		cfg->service_key_line = r->line;
	}
	/* A stored job's: dropped, the service's own settings apply. */
	if (svc && r->stored)
		return 0;
	if (svc && r->submitted)
		return cfg_fail(r, r->line, r->section, key, "%s",
		    cfg_submitted_why(key));
	if (k >= 7)
		return cfg_executor(r, key, value);
	if (strcmp(key, "backend") != 0) {
		char **slot[] = { &cfg->input_file, &cfg->output_file, NULL,
		    &cfg->database, &cfg->iree_bin, &cfg->replay_db,
		    &cfg->report_file };

		cfg_set(slot[k], util_path_join(cfg->dir, value));
		return 0;
	}
	if ((b = backend_find(value)) != NULL) {
		cfg_set(&cfg->backend, xstrdup(b->name));
		return 0;
	}
	all = backend_all(&n);
	if (n > sizeof names / sizeof names[0] - 1)
		n = sizeof names / sizeof names[0] - 1;
	for (i = 0; i < n; i++)
		names[i] = all[i]->name;
	names[n] = NULL;
	near = cfg_nearest(value, names);
	return cfg_fail(r, r->line, r->section, key, "unknown backend '%.*s'%s; "
	    "expected one of: %s", CFG_QUOTE, value,
	    cfg_hint(hint, sizeof hint, near, "", ""),
	    n == 0 ? "(no backend registered)" : cfg_join(list, sizeof list, names));
}

static int
cfg_space(struct cfg_reader *r, const char *key, const char *value)
{
	struct cfg *cfg = r->cfg;
	struct cfg_knob *kn = NULL;
	const char *names[KNOB_COUNT + 1];
	char why[256], hint[96], all[256];
	int64_t *v;
	size_t n, i;
	int k;

	if ((k = space_knob_lookup(key)) < 0) {
		for (i = 0; i < KNOB_COUNT; i++)
			names[i] = space_knob_name((enum knob)i);
		names[KNOB_COUNT] = NULL;
		return cfg_fail(r, r->line, r->section, key, "unknown knob%s; "
		    "expected one of %s", cfg_hint(hint, sizeof hint,
		    cfg_nearest(key, names), "", ""),
		    cfg_join(all, sizeof all, names));
	}
	if (k == KNOB_PACK_B) {
		if (cfg_value_list_in(value, 0, 1, &v, &n, why, sizeof why) != 0)
			return cfg_fail(r, r->line, r->section, key, "%s; expected "
			    "1 (B packed into register-tile panels), 0 (B read in "
			    "place) or the list [0,1]", why);
	} else if (k == KNOB_PAD_SMEM) {
		if (cfg_value_list_in(value, 0, 1, &v, &n, why, sizeof why) != 0)
			return cfg_fail(r, r->line, r->section, key, "%s; expected "
			    "1 (shared-memory rows padded), 0 (not padded) or the "
			    "list [0,1]", why);
	} else if (k == KNOB_PACK_A) {
		if (cfg_value_list_in(value, 0, 1, &v, &n, why, sizeof why) != 0)
			return cfg_fail(r, r->line, r->section, key, "%s; expected "
			    "1 (A packed into register-tile panels), 0 (A read in "
			    "place) or the list [0,1]", why);
	} else if (k == KNOB_THREADS) {
		if (cfg_value_list_in(value, 1, SPACE_THREADS_MAX, &v, &n, why,
		    sizeof why) != 0)
			return cfg_fail(r, r->line, r->section, key, "%s; expected "
			    "1 to %d threads, a list [1,2,4] or a range "
			    "start:stop:step (stop exclusive)", why,
			    SPACE_THREADS_MAX);
	} else if (cfg_value_list(value, &v, &n, why, sizeof why) != 0)
		return cfg_fail(r, r->line, r->section, key, "%s; expected a "
		    "positive integer, a list [64,128] or a range start:stop:step "
		    "(stop exclusive)", why);
	if (k == KNOB_BLOCK_DIM_Z && (n != 1 || v[0] != 1)) {
		free(v);
		return cfg_fail(r, r->line, r->section, key, "must be [1] "
		    "(expected workgroup size in z-dim = 1)");
	}
	for (i = 0; i < cfg->nknobs; i++) {
		if (cfg->knobs[i].knob == (enum knob)k) {
			kn = &cfg->knobs[i];
			free(kn->values);
			break;
		}
	}
	if (kn == NULL) {
		cfg->knobs = xrealloc(cfg->knobs,
		    (cfg->nknobs + 1) * sizeof *cfg->knobs);
		kn = &cfg->knobs[cfg->nknobs++];
		kn->knob = (enum knob)k;
	}
	kn->values = v;
	kn->n = n;
	kn->line = r->line;
	r->knob_line[k] = r->line;
	return 0;
}

/* The tuner names, short and long, NULL-ended in names[max]. */
static void
cfg_tuner_names(const char **names, size_t max)
{
	const struct tuner_ops *const *all;
	size_t i, n, j = 0;

	all = tuner_all(&n);
	for (i = 0; i < n && j + 2 < max; i++) {
		names[j++] = all[i]->long_name;
		names[j++] = all[i]->name;
	}
	names[j] = NULL;
}

/* Judge a tuner-specific key against the tuner the cfg uses. */
static int
cfg_check_extra(struct cfg_reader *r, const struct tuner_ops *t,
    const char *key, int line)
{
	const struct tuner_ops *const *all;
	const char *keys[64];
	char hint[96], list[512];
	size_t i, n, j = 0;

	if (t != NULL && cfg_in_list(key, t->keys))
		return 0;
	all = tuner_all(&n);
	for (i = 0; i < n; i++) {
		if (all[i] != t && cfg_in_list(key, all[i]->keys))
			return cfg_fail(r, line, SEC_STRATEGY, key, "read by tuner "
			    "%s only, and this cfg uses tuner %s", all[i]->name,
			    t != NULL ? t->name : r->cfg->tuner);
	}
	for (i = 0; strategy_keys[i] != NULL; i++)
		keys[j++] = strategy_keys[i];
	for (i = 0; t != NULL && t->keys != NULL && t->keys[i] != NULL &&
	    j + 1 < sizeof keys / sizeof keys[0]; i++)
		keys[j++] = t->keys[i];
	keys[j] = NULL;
	return cfg_fail(r, line, SEC_STRATEGY, key, "unknown key%s; expected one "
	    "of %s", cfg_hint(hint, sizeof hint, cfg_nearest(key, keys), "", ""),
	    cfg_join(list, sizeof list, keys));
}

static int
cfg_extra_key(struct cfg_reader *r, const char *key, const char *value)
{
	struct cfg *cfg = r->cfg;
	struct cfg_kv *kv = NULL;
	size_t i;

	if (r->tuner != NULL && cfg_check_extra(r, r->tuner, key, r->line) != 0)
		return -1;
	for (i = 0; i < cfg->nextra; i++) {
		if (strcmp(cfg->extra[i].key, key) == 0) {
			kv = &cfg->extra[i];
			break;
		}
	}
	if (kv == NULL) {
		if (cfg->nextra == CFG_EXTRA_MAX)
			return cfg_fail(r, r->line, r->section, key, "more than %d "
			    "tuner-specific keys", CFG_EXTRA_MAX);
		cfg->extra = xrealloc(cfg->extra,
		    (cfg->nextra + 1) * sizeof *cfg->extra);
		kv = &cfg->extra[cfg->nextra++];
		kv->key = xstrdup(key);
		kv->value = NULL;
	}
	cfg_set(&kv->value, xstrdup(value));
	kv->line = r->line;
	return 0;
}

static int
cfg_strategy(struct cfg_reader *r, const char *key, const char *value)
{
	struct cfg *cfg = r->cfg;
	const struct tuner_ops *t;
	const char *names[64];
	char why[256], hint[96], list[512];
	int64_t v;

	if (strcmp(key, "tuner") == 0) {
		if ((t = tuner_find(value)) != NULL) {
			cfg_set(&cfg->tuner, xstrdup(t->name));
			return 0;
		}
		cfg_tuner_names(names, sizeof names / sizeof names[0]);
		return cfg_fail(r, r->line, r->section, key, "unknown tuner "
		    "'%.*s'%s; expected one of %s", CFG_QUOTE, value,
		    cfg_hint(hint, sizeof hint, cfg_nearest(value, names), "", ""),
		    names[0] == NULL ? "(no tuner registered)" :
		    cfg_join(list, sizeof list, names));
	}
	if (strcmp(key, "n_trial") == 0) {
		if (cfg_value_int(value, 1, CFG_TRIAL_MAX, &v, why, sizeof why) != 0)
			goto bad;
		cfg->n_trial = v;
		cfg->n_trial_set = 1;
	} else if (strcmp(key, "trial_budget") == 0) {
		if (cfg_value_int(value, 0, CFG_TRIAL_MAX, &v, why, sizeof why) != 0)
			goto bad;
		cfg->trial_budget = v;
	} else if (strcmp(key, "time_budget") == 0) {
		if (cfg_value_seconds(value, 0, 1e9, &cfg->time_budget, why,
		    sizeof why) != 0)
			goto bad;
	} else if (strcmp(key, "time_limit") == 0) {
		if (cfg_value_seconds(value, 0, 1e9, &cfg->time_limit, why,
		    sizeof why) != 0)
			goto bad;
	} else if (strcmp(key, "early_stopping") == 0) {
		if (cfg_value_int(value, 0, CFG_TRIAL_MAX, &v, why, sizeof why) != 0)
			goto bad;
		cfg->early_stop = v;
	} else if (strcmp(key, "seed") == 0) {
		if (cfg_value_int(value, 0, CFG_SEED_MAX, &v, why, sizeof why) != 0)
			goto bad;
		cfg->seed = (uint64_t)v;
	} else
		return cfg_extra_key(r, key, value);
	return 0;
bad:
	return cfg_fail(r, r->line, r->section, key, "%s", why);
}

/* [Problem]: a shape sweep, generated instead of read from input_file. */
static int
cfg_problem(struct cfg_reader *r, const char *key, const char *value)
{
	struct generate_sweep *sw;
	char why[256], *err = NULL;
	int64_t **list = NULL;
	size_t *n = NULL;
	int rc = 0, k;

	for (k = 0; problem_keys[k] != NULL; k++) {
		if (strcmp(key, problem_keys[k]) == 0)
			break;
	}
	if (problem_keys[k] == NULL)
		return cfg_unknown_key(r, key, problem_keys);
	if (r->cfg->problem == NULL)
		r->cfg->problem = xcalloc(1, sizeof *r->cfg->problem);
	sw = r->cfg->problem;
	switch (k) {
	case 0: list = &sw->m; n = &sw->nm; break;
	case 1: list = &sw->n; n = &sw->nn; break;
	case 2: list = &sw->k; n = &sw->nk; break;
	case 3: list = &sw->batch; n = &sw->nbatch; break;
	case 4: rc = generate_parse_dtypes(value, &sw->dtypes, &err); break;
	case 5: rc = generate_parse_transpose(value, &sw->transpose_a,
		    &sw->transpose_b, &err); break;
	default: rc = generate_parse_kind(value, &sw->batch_matmul, &err);
		r->problem_kind_line = r->line;
		break;
	}
	if (list != NULL) {
		int64_t *v;
		size_t nv;

		if (cfg_value_list(value, &v, &nv, why, sizeof why) != 0)
			return cfg_fail(r, r->line, r->section, key, "%s; expected "
			    "a value, a list [a, b] or start:stop:step (stop "
			    "exclusive)", why);
		free(*list);
		*list = v;
		*n = nv;
		if (k == 3 && r->problem_kind_line == 0)
			sw->batch_matmul = 1;	/* a batch says batch_matmul */
		return 0;
	}
	if (rc != 0) {
		cfg_fail(r, r->line, r->section, key, "%s", err);
		free(err);
		return -1;
	}
	return 0;
}

static int
cfg_measure(struct cfg_reader *r, const char *key, const char *value)
{
	struct cfg *cfg = r->cfg;
	char why[256];
	int64_t v;
	int rc = 0;

	if (strcmp(key, "min_time") == 0)
		rc = cfg_value_seconds(value, 0, CFG_MIN_TIME_MAX,
		    &cfg->min_time, why, sizeof why);
	else if (strcmp(key, "timeout") == 0)
		rc = cfg_value_seconds(value, 0.001, 86400, &cfg->timeout, why,
		    sizeof why);
	else if (strcmp(key, "compile_timeout") == 0)
		rc = cfg_value_seconds(value, 0.001, 86400, &cfg->compile_timeout,
		    why, sizeof why);
	else if (strcmp(key, "cv_max") == 0)
		rc = cfg_value_number(value, 0, 100, &cfg->cv_max, why, sizeof why);
	else if (strcmp(key, "verify") == 0)
		rc = cfg_value_bool(value, &cfg->verify, why, sizeof why);
	else if (strcmp(key, "warmup") == 0) {
		if ((rc = cfg_value_int(value, 0, CFG_WARMUP_MAX, &v, why,
		    sizeof why)) == 0)
			cfg->warmup = (int)v;
	} else if (strcmp(key, "min_reps") == 0) {
		if ((rc = cfg_value_int(value, 1, CFG_REPS_MAX, &v, why,
		    sizeof why)) == 0)
			cfg->min_reps = (int)v;
	} else if (strcmp(key, "max_reps") == 0) {
		if ((rc = cfg_value_int(value, 1, CFG_REPS_MAX, &v, why,
		    sizeof why)) == 0)
			cfg->max_reps = (int)v;
		r->max_reps_line = r->line;
	} else if (strcmp(key, "confirm_top") == 0) {
		if ((rc = cfg_value_int(value, 0, 1000, &v, why, sizeof why)) == 0)
			cfg->confirm_top = (int)v;
	} else
		return cfg_unknown_key(r, key, measure_keys);
	if (rc != 0)
		return cfg_fail(r, r->line, r->section, key, "%s", why);
	return 0;
}

/* The ini_handler: one key = value of the current section. */
static int
cfg_handler(void *user, const char *section, const char *name,
    const char *value)
{
	struct cfg_reader *r = user;
	char key[CFG_KEY_MAX];
	size_t i, n = strlen(name);
	int rc;

	(void)section;	/* r->section, checked by the reader, is the same */
	if (r->prescan) {
		if (r->section == SEC_STRATEGY && strcasecmp(name, "tuner") == 0)
			cfg_set(&r->prescan_tuner, xstrdup(value));
		return 1;
	}
	if (r->err != NULL)
		return 0;
	if (r->section == SEC_NONE) {
		cfg_fail(r, r->line, SEC_NONE, name, "key outside any section; "
		    "expected a section line ([Env], [SearchSpace], "
		    "[SearchStrategy], [Measure] or [Problem]) first");
		return 0;
	}
	if (n == 0) {
		cfg_fail(r, r->line, r->section, NULL, "no key before '='");
		return 0;
	}
	/* Keys are case-insensitive, as in the seed's Python configparser. */
	if (n >= sizeof key) {
		cfg_fail(r, r->line, r->section, name, "unknown key (too long)");
		return 0;
	}
	for (i = 0; i <= n; i++)
		key[i] = (char)tolower((unsigned char)name[i]);

	switch (r->section) {
	case SEC_ENV:
		rc = cfg_env(r, key, value);
		break;
	case SEC_SPACE:
		rc = cfg_space(r, key, value);
		break;
	case SEC_STRATEGY:
		rc = cfg_strategy(r, key, value);
		break;
	case SEC_PROBLEM:
		rc = cfg_problem(r, key, value);
		break;
	default:
		rc = cfg_measure(r, key, value);
		break;
	}
	if (rc == 0)
		cfg_note_key(r, key);
	return rc == 0;
}

/* One pass of inih over the text. */
static void
cfg_pass(struct cfg_reader *r, const char *text, size_t len)
{
	int rc;

	r->p = text;
	r->end = text + len;
	r->line = 0;
	r->midline = 0;
	r->section = SEC_NONE;
	rc = ini_parse_stream(cfg_read_line, r, cfg_handler, r);
	if (rc == -2) {
		fprintf(stderr, "autosched: out of memory\n");
		abort();
	}
	if (rc > 0 && r->err == NULL && !r->stopped)
		cfg_fail(r, rc, r->section, NULL, "expected 'key = value', "
		    "'[Section]' or a comment");
}

/* What can only be judged once the whole file is read. */
/* The file an [Env] key (env_keys[k]) names exists and is a regular file. */
static int
cfg_check_file(struct cfg_reader *r, int k, const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return cfg_fail(r, r->env_line[k], SEC_ENV, env_keys[k], "%s: %s",
		    path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return cfg_fail(r, r->env_line[k], SEC_ENV, env_keys[k],
		    "%s: not a regular file", path);
	return 0;
}

/*
 * backend = iree with gpu_arch is IREE's CUDA target (backend iree-cuda);
 * gpu_arch means nothing to the other backends.
 */
static int
cfg_finish_gpu(struct cfg_reader *r)
{
	struct cfg *cfg = r->cfg;
	const char *b = cfg->backend != NULL ? cfg->backend : "mlir-cpu";

	if (cfg->gpu_arch != NULL && strcmp(b, "iree") == 0) {
		cfg_set(&cfg->backend, xstrdup("iree-cuda"));
		return 0;
	}
	if (cfg->gpu_arch != NULL && strcmp(b, "iree-cuda") != 0)
		return cfg_fail(r, cfg->gpu_arch_line, SEC_ENV, "gpu_arch",
		    "given with backend %s; only backend = iree compiles for "
		    "an NVIDIA GPU", b);
	if (cfg->gpu_arch == NULL && strcmp(b, "iree-cuda") == 0)
		return cfg_fail(r, r->section_line[SEC_ENV], SEC_ENV,
		    "gpu_arch", "missing; backend iree-cuda needs gpu_arch = "
		    "auto or one of %s", backend_gpu_arches());
	return 0;
}

static int
cfg_finish(struct cfg_reader *r, int check_files)
{
	struct cfg *cfg = r->cfg;
	const struct tuner_ops *t;
	int64_t dim[3] = { 1, 1, 1 }, p;
	size_t i;
	int k, line = 0, which = KNOB_BLOCK_DIM_X;

	t = tuner_find(cfg->tuner);
	for (i = 0; i < cfg->nextra; i++) {
		if (cfg_check_extra(r, t, cfg->extra[i].key, cfg->extra[i].line) != 0)
			return -1;
	}

	/* The seed's rule: block_dim_x·y·z must not exceed 1024. */
	for (i = 0; i < cfg->nknobs; i++) {
		k = cfg->knobs[i].knob;
		if (k < KNOB_BLOCK_DIM_X || k > KNOB_BLOCK_DIM_Z)
			continue;
		dim[k - KNOB_BLOCK_DIM_X] = cfg->knobs[i].values[cfg->knobs[i].n - 1];
		if (cfg->knobs[i].line > line) {
			line = cfg->knobs[i].line;
			which = k;
		}
	}
	p = dim[0];
	if (p <= 1024)
		p *= dim[1];
	if (p <= 1024)
		p *= dim[2];
	if (p > 1024)
		return cfg_fail(r, line, SEC_SPACE, space_knob_name((enum knob)which),
		    "largest block %" PRId64 "x%" PRId64 "x%" PRId64 " has more "
		    "than 1024 threads; block_dim_x*block_dim_y*block_dim_z must "
		    "not exceed 1024", dim[0], dim[1], dim[2]);

	if (cfg_finish_gpu(r) != 0)
		return -1;
	if (cfg->max_reps < cfg->min_reps)
		return cfg_fail(r, r->max_reps_line, SEC_MEASURE, "max_reps",
		    "%d is below min_reps (%d)", cfg->max_reps, cfg->min_reps);

	if (r->section_line[SEC_PROBLEM] > 0) {
		char *err = NULL;

		if (cfg->input_file != NULL)
			return cfg_fail(r, r->env_line[0], SEC_ENV, "input_file",
			    "given with a [Problem] section (line %d); a job "
			    "tunes either a file or a generated sweep, not both",
			    r->section_line[SEC_PROBLEM]);
		if (cfg->problem == NULL)
			cfg->problem = xcalloc(1, sizeof *cfg->problem);
		if (generate_check(cfg->problem, &err) != 0) {
			cfg_fail(r, r->section_line[SEC_PROBLEM], SEC_PROBLEM,
			    NULL, "%s", err);
			free(err);
			return -1;
		}
		return 0;
	}
	if (cfg->input_file == NULL)
		return cfg_fail(r, r->section_line[SEC_ENV], SEC_ENV, "input_file",
		    "missing; expected input_file = FILE.mlir (relative to the "
		    "cfg's folder), or a [Problem] section describing a shape "
		    "sweep");
	if (check_files && (cfg_check_file(r, 0, cfg->input_file) != 0 ||
	    (cfg->replay_db != NULL && cfg_check_file(r, 5, cfg->replay_db) != 0)))
		return -1;
	return 0;
}

int
cfg_parse(const char *path, const char *text, size_t len, int flags,
    struct cfg **out, char **err)
{
	struct cfg_reader r;
	struct cfg *cfg;
	size_t i;

	*out = NULL;
	cfg_ini_setup();

	cfg = xcalloc(1, sizeof *cfg);
	cfg->path = xstrdup(path != NULL ? path : "(cfg)");
	cfg->dir = util_dirname(cfg->path);
	cfg->backend = xstrdup("mlir-cpu");
	cfg->tuner = xstrdup("grid");
	cfg->n_trial = 16;
	cfg->seed = 42;
	cfg->min_time = 0.2;
	cfg->warmup = 1;
	cfg->min_reps = 5;
	cfg->max_reps = 1000;
	cfg->timeout = 10;
	cfg->compile_timeout = 60;
	cfg->cv_max = 0.05;
	cfg->confirm_top = 3;
	cfg->verify = 1;

	memset(&r, 0, sizeof r);
	r.cfg = cfg;
	r.submitted = (flags & (CFG_SUBMITTED | CFG_STORED)) != 0;
	r.stored = (flags & CFG_STORED) != 0;
	if (len > CFG_FILE_MAX) {
		cfg_fail(&r, 0, SEC_NONE, NULL, "larger than %zu bytes",
		    CFG_FILE_MAX);
		goto fail;
	}
	cfg->text = xmalloc(len + 1);
	memcpy(cfg->text, text, len);
	cfg->text[len] = '\0';

	r.prescan = 1;
	cfg_pass(&r, cfg->text, len);
	if (!r.stopped)
		r.tuner = tuner_find(r.prescan_tuner != NULL ?
		    r.prescan_tuner : cfg->tuner);
	r.prescan = 0;
	r.stopped = 0;
	cfg_pass(&r, cfg->text, len);
	if (r.err != NULL || cfg_finish(&r, flags & CFG_CHECK_FILES) != 0)
		goto fail;

	*out = cfg;
	cfg = NULL;
fail:
	for (i = 0; i < r.nseen; i++)
		free(r.seen[i].key);
	free(r.seen);
	free(r.prescan_tuner);
	cfg_free(cfg);
	if (r.err == NULL)
		return 0;
	if (err != NULL) {
		free(*err);
		*err = r.err;
	} else
		free(r.err);
	return -1;
}

int
cfg_load(const char *path, struct cfg **out, char **err)
{
	char *text;
	size_t len;
	int rc;

	*out = NULL;
	if (util_read_file(path, CFG_FILE_MAX, &text, &len, err) != 0)
		return -1;
	rc = cfg_parse(path, text, len, CFG_CHECK_FILES, out, err);
	free(text);
	return rc;
}

void
cfg_free(struct cfg *cfg)
{
	size_t i;

	if (cfg == NULL)
		return;
	free(cfg->path);
	free(cfg->dir);
	free(cfg->text);
	free(cfg->input_file);
	free(cfg->output_file);
	free(cfg->backend);
	free(cfg->database);
	free(cfg->iree_bin);
	free(cfg->gpu_arch);
	free(cfg->isa);
	free(cfg->replay_db);
	free(cfg->report_file);
	cfg_exec_clear(&cfg->exec);
	if (cfg->problem != NULL) {
		generate_sweep_clear(cfg->problem);
		free(cfg->problem);
	}
	for (i = 0; i < cfg->nknobs; i++)
		free(cfg->knobs[i].values);
	free(cfg->knobs);
	free(cfg->tuner);
	for (i = 0; i < cfg->nextra; i++) {
		free(cfg->extra[i].key);
		free(cfg->extra[i].value);
	}
	free(cfg->extra);
	for (i = 0; i < cfg->nwarnings; i++)
		free(cfg->warnings[i]);
	free(cfg->warnings);
	free(cfg);
}

int
cfg_parse_values(const char *s, int64_t **values, size_t *n, char **err)
{
	char why[256], *br = NULL;
	int rc;

	/* On a command line a bare list needs no brackets: 64,128. */
	if (s[0] != '[' && strchr(s, ',') != NULL)
		s = br = xasprintf("[%s]", s);
	rc = cfg_value_list(s, values, n, why, sizeof why);
	if (rc != 0)
		util_seterr(err, "%s", why);
	free(br);
	return rc;
}

int
cfg_parse_values_from(const char *s, int64_t min, int64_t **values,
    size_t *n, char **err)
{
	char why[256], *br = NULL;
	int rc;

	if (s[0] != '[' && strchr(s, ',') != NULL)
		s = br = xasprintf("[%s]", s);
	rc = cfg_value_list_in(s, min, CFG_VALUE_MAX, values, n, why,
	    sizeof why);
	if (rc != 0)
		util_seterr(err, "%s", why);
	free(br);
	return rc;
}

const char *
cfg_extra(const struct cfg *cfg, const char *key)
{
	size_t i;

	for (i = 0; i < cfg->nextra; i++) {
		if (strcmp(cfg->extra[i].key, key) == 0)
			return cfg->extra[i].value;
	}
	return NULL;
}
