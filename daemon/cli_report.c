/*
 * `autosched report`: the HTML report of a store (html/html.h), for one job,
 * the ops matching a name, or everything.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/daemon_int.h"
#include "html/html.h"
#include "store/store.h"
#include "util/util.h"

static void
report_usage(FILE *f)
{
	fprintf(f,
	    "usage: autosched report [--db PATH] [--job ID | --op NAME | --all]\n"
	    "                        -o REPORT.html\n"
	    "One self-contained HTML page (inline SVG, no network) on what the\n"
	    "store holds: best configs, each job, each op's trials and charts.\n"
	    "  --job ID   one job\n"
	    "  --op NAME  ops whose name or signature contains NAME\n"
	    "  --all      everything (the default)\n"
	    "  -o FILE    where to write the page (required)\n");
}

/* What report was asked: the store, the selection, the page. */
struct report_args {
	char		*db;
	const char	*out;
	struct html_opts ho;
};

/* --all: the whole store, whatever --job or --op said before. */
static int
report_all(void *args, const struct opt_spec *o, const char *v)
{
	struct report_args *a = args;

	(void)o;
	(void)v;
	a->ho.job_id = 0;
	a->ho.op_filter = NULL;
	return 0;
}

static const struct opt_spec report_opts[] = {
	{ .name = "db", .kind = OPT_PATH, .off = offsetof(struct report_args, db) },
	{ .name = "job", .kind = OPT_JOB,
	  .off = offsetof(struct report_args, ho.job_id) },
	{ .name = "op", .kind = OPT_STRING,
	  .off = offsetof(struct report_args, ho.op_filter) },
	{ .name = "all", .kind = OPT_FN, .fn = report_all },
	{ .name = "output", .letter = 'o', .kind = OPT_STRING,
	  .off = offsetof(struct report_args, out) },
	{ .name = NULL }
};

/* Operands are checked below: a missing -o is said first. */
static const struct opts_cmd report_cmd = {
	"autosched report", report_opts, report_usage, 0, -1, 0
};

/*
 * The command line of report into a. 0, 1 after --help, or 2 after the
 * message.
 */
static int
report_args(int argc, char **argv, struct report_args *a)
{
	int rc, first;

	if ((rc = util_opts_parse(&report_cmd, argc, argv, a, &first)) != 0)
		return rc;
	if (argc != first || a->out == NULL) {
		if (a->out == NULL)
			fprintf(stderr, "autosched report: -o FILE is required\n");
		report_usage(stderr);
		return 2;
	}
	return 0;
}

int
cli_report(int argc, char **argv)
{
	struct report_args a;
	struct util_out_guard g;
	struct store *st = NULL;
	char *err = NULL;
	int rc;

	memset(&a, 0, sizeof a);
	if ((rc = report_args(argc, argv, &a)) != 0) {
		rc = rc == 1 ? 0 : 2;
		goto out;
	}
	rc = 2;
	if (a.db == NULL)
		a.db = daemon_default_db();
	if (cli_store_open("autosched report", a.db, &st) != 0)
		goto out;
	a.ho.db_path = a.db;
	memset(&g, 0, sizeof g);
	g.key = "-o";
	g.what = "the HTML report";
	g.stores[0] = a.db;
	if (html_report(st, &a.ho, a.out, &g, &err) != 0) {
		fprintf(stderr, "autosched report: %s\n", err);
		goto out;
	}
	printf("wrote %s\n", a.out);
	rc = 0;
out:
	store_close(st);
	free(a.db);
	free(err);
	return rc;
}
