/*
 * One parser for every command's options: a command declares them as a
 * table (struct opt_spec) and util_opts_parse turns argv into its args struct,
 * with the same messages and exit codes for every command.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* More options than any command has; a longer table is a bug. */
#define OPTS_MAX	32
/* getopt_long's value for the long-only option at row i. */
#define OPTS_LONG	256

/* "PREFIX: --NAME VALUE: EXPECT" (or the kind's own words); always 2. */
static int
opts_bad(const struct opts_cmd *c, const struct opt_spec *o, const char *v,
    const char *dflt)
{
	if (o->name != NULL)
		fprintf(stderr, "%s: --%s %s: %s\n", c->prefix, o->name, v,
		    o->expect != NULL ? o->expect : dflt);
	else
		fprintf(stderr, "%s: -%c %s: %s\n", c->prefix, o->letter, v,
		    o->expect != NULL ? o->expect : dflt);
	return 2;
}

/* Row o's value v into args. 0, or 2 after the message. */
static int
opts_set(const struct opts_cmd *c, const struct opt_spec *o, const char *v,
    void *args)
{
	char *p = (char *)args + o->off, *end;
	double d;
	long l;
	size_t i;

	switch (o->kind) {
	case OPT_FLAG:
		*(int *)(void *)p = o->val;
		return 0;
	case OPT_UNSET:
		*(const char **)(void *)p = NULL;
		return 0;
	case OPT_STRING:
		*(const char **)(void *)p = v;
		return 0;
	case OPT_PATH:
		free(*(char **)(void *)p);
		*(char **)(void *)p = xstrdup(v);
		return 0;
	case OPT_JOB:
		if (util_parse_id(v, (int64_t *)(void *)p) != 0)
			return opts_bad(c, o, v, "expected a job id");
		return 0;
	case OPT_INT:
	case OPT_LONG:
		errno = 0;
		l = strtol(v, &end, 10);
		if (*v == '\0' || *end != '\0' || errno != 0 ||
		    l < o->min || l > o->max)
			return opts_bad(c, o, v, "expected a number");
		if (o->kind == OPT_INT)
			*(int *)(void *)p = (int)l;
		else
			*(long *)(void *)p = l;
		return 0;
	case OPT_REAL:
		d = strtod(v, &end);
		if (*end != '\0' || !(d >= o->min && d <= o->max))
			return opts_bad(c, o, v, "expected a number");
		*(double *)(void *)p = d;
		return 0;
	case OPT_WORD:
	case OPT_CHOICE:
		for (i = 0; o->words[i] != NULL; i++)
			if (strcmp(v, o->words[i]) == 0)
				break;
		if (o->words[i] == NULL)
			return opts_bad(c, o, v, "unknown word");
		if (o->kind == OPT_WORD)
			*(const char **)(void *)p = o->words[i];
		else
			*(int *)(void *)p = o->vals != NULL ? o->vals[i] : (int)i;
		return 0;
	case OPT_FN:
		return o->fn(args, o, v) == 0 ? 0 : 2;
	}
	return 2;
}

/*
 * c's table as getopt_long's: lo (n + 2 rows) and shortopts (room for
 * 2 * n + 3). Returns n, the table's rows.
 */
static size_t
opts_getopt(const struct opts_cmd *c, struct option *lo, char *shortopts)
{
	const struct opt_spec *o;
	char *s = shortopts;
	size_t n, i, nlo = 0;
	int has;

	/* A table past OPTS_MAX rows is a bug, caught at its first use. */
	for (n = 0; c->opts[n].name != NULL || c->opts[n].letter != 0; n++)
		if (n == OPTS_MAX)
			abort();
	if (c->flags & OPTS_OWN_WORDS)
		*s++ = ':';	/* a missing value is ':', not '?' */
	*s++ = 'h';	/* -h, --help: every command's */
	for (i = 0; i < n; i++) {
		o = &c->opts[i];
		has = o->kind == OPT_FN ? o->has_arg : o->kind != OPT_FLAG &&
		    o->kind != OPT_UNSET;
		if (o->name != NULL) {
			lo[nlo].name = o->name;
			lo[nlo].has_arg = has ? required_argument : no_argument;
			lo[nlo].flag = NULL;
			lo[nlo++].val = o->letter != 0 ? o->letter :
			    OPTS_LONG + (int)i;
		}
		if (o->letter != 0) {
			*s++ = (char)o->letter;
			if (has)
				*s++ = ':';
		}
	}
	*s = '\0';
	lo[nlo] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[nlo + 1] = (struct option){ NULL, 0, NULL, 0 };
	return n;
}

/*
 * Bad usage: getopt_long's ch ('?' or ':', its words said unless
 * OPTS_OWN_WORDS) or, for ch 0, operands out of bounds; then the usage on
 * stderr. Always 2.
 */
static int
opts_misuse(const struct opts_cmd *c, int ch, int argc, char **argv)
{
	char letter[3] = { '-', (char)optopt, '\0' };
	const char *w = argv[optind - 1];

	/* An unknown letter (optopt) where the word is not a long option. */
	if (ch == '?' && optopt > 0 && optopt < OPTS_LONG &&
	    strncmp(w, "--", 2) != 0)
		w = letter;
	if (c->flags & OPTS_OWN_WORDS) {
		if (ch == '?')
			fprintf(stderr, "%s: unknown option %s\n", c->prefix, w);
		else if (ch == ':')
			fprintf(stderr, "%s: %s needs a value\n", c->prefix, w);
		else if (argc - optind < c->min_args)
			fprintf(stderr, "%s: missing argument\n", c->prefix);
		else
			fprintf(stderr, "%s: unexpected argument %s\n",
			    c->prefix, argv[optind + c->max_args]);
	}
	c->usage(stderr);
	return 2;
}

/* util_opts_parse's loop, getopt_long's opterr set: 0, 1 or 2. */
static int
opts_loop(const struct opts_cmd *c, int argc, char **argv, void *args,
    int *first)
{
	struct option lo[OPTS_MAX + 2];
	char shortopts[2 * OPTS_MAX + 3];
	const struct opt_spec *o;
	size_t n, i;
	int ch, rc;

	n = opts_getopt(c, lo, shortopts);
	optind = 1;
	while ((ch = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		if (ch == 'h' && (c->flags & OPTS_HELP_IS_USAGE)) {
			c->usage(stderr);
			return 2;
		}
		if (ch == 'h') {
			c->usage(stdout);
			return 1;
		}
		o = NULL;
		if (ch >= OPTS_LONG && ch < OPTS_LONG + (int)n)
			o = &c->opts[ch - OPTS_LONG];
		for (i = 0; o == NULL && ch != '?' && ch != ':' && i < n; i++)
			if (c->opts[i].letter == ch)
				o = &c->opts[i];
		if (o == NULL)
			return opts_misuse(c, ch, argc, argv);
		if ((rc = opts_set(c, o, optarg, args)) != 0)
			return rc;
		if (o->given != 0)
			*(int *)(void *)((char *)args + o->given) = 1;
	}
	if (c->max_args >= 0 && (argc - optind < c->min_args ||
	    argc - optind > c->max_args))
		return opts_misuse(c, 0, argc, argv);
	*first = optind;
	return 0;
}

int
util_opts_parse(const struct opts_cmd *c, int argc, char **argv, void *args,
    int *first)
{
	int rc;

	/* OPTS_OWN_WORDS says them itself; getopt_long's default after. */
	opterr = !(c->flags & OPTS_OWN_WORDS);
	rc = opts_loop(c, argc, argv, args, first);
	opterr = 1;
	return rc;
}
