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
	fprintf(stderr, "%s: --%s %s: %s\n", c->prefix, o->name, v,
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

int
util_opts_parse(const struct opts_cmd *c, int argc, char **argv, void *args,
    int *first)
{
	struct option lo[OPTS_MAX + 2];
	char shortopts[2 * OPTS_MAX + 2], *s = shortopts;
	const struct opt_spec *o;
	size_t n, i;
	int ch, rc, has;

	/* A table past OPTS_MAX rows is a bug, caught at its first use. */
	for (n = 0; c->opts[n].name != NULL; n++)
		if (n == OPTS_MAX)
			abort();
	*s++ = 'h';	/* -h, --help: every command's */
	for (i = 0; i < n; i++) {
		o = &c->opts[i];
		has = o->kind == OPT_FN ? o->has_arg : o->kind != OPT_FLAG &&
		    o->kind != OPT_UNSET;
		lo[i].name = o->name;
		lo[i].has_arg = has ? required_argument : no_argument;
		lo[i].flag = NULL;
		lo[i].val = o->letter != 0 ? o->letter : OPTS_LONG + (int)i;
		if (o->letter != 0) {
			*s++ = (char)o->letter;
			if (has)
				*s++ = ':';
		}
	}
	*s = '\0';
	lo[n] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n + 1] = (struct option){ NULL, 0, NULL, 0 };

	optind = 1;
	while ((ch = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
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
		if (o == NULL) {
			c->usage(stderr);
			return 2;
		}
		if ((rc = opts_set(c, o, optarg, args)) != 0)
			return rc;
		if (o->given != 0)
			*(int *)(void *)((char *)args + o->given) = 1;
	}
	if (c->max_args >= 0 && (argc - optind < c->min_args ||
	    argc - optind > c->max_args)) {
		c->usage(stderr);
		return 2;
	}
	*first = optind;
	return 0;
}
