/*
 * `autosched report`: the HTML report of a store (html/html.h), for one job,
 * the ops matching a name, or everything.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/daemon.h"
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

/*
 * The command line of report into ho, *db and *out. 0, 1 after --help,
 * or 2 after the message.
 */
static int
report_args(int argc, char **argv, struct html_opts *ho, char **db,
    const char **out)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'D' },
		{ "job", required_argument, NULL, 'J' },
		{ "op", required_argument, NULL, 'O' },
		{ "all", no_argument, NULL, 'a' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'D':
			free(*db);
			*db = xstrdup(optarg);
			break;
		case 'J':
			if (util_parse_id(optarg, &ho->job_id) != 0) {
				fprintf(stderr, "autosched report: --job %s: "
				    "expected a job id\n", optarg);
				return 2;
			}
			break;
		case 'O':
			ho->op_filter = optarg;
			break;
		case 'a':
			ho->job_id = 0;
			ho->op_filter = NULL;
			break;
		case 'o':
			*out = optarg;
			break;
		case 'h':
			report_usage(stdout);
			return 1;
		default:
			report_usage(stderr);
			return 2;
		}
	}
	if (argc != optind || *out == NULL) {
		if (*out == NULL)
			fprintf(stderr, "autosched report: -o FILE is required\n");
		report_usage(stderr);
		return 2;
	}
	return 0;
}

int
cli_report(int argc, char **argv)
{
	struct html_opts ho;
	struct util_out_guard g;
	struct store *st = NULL;
	const char *out = NULL;
	char *db = NULL, *err = NULL;
	int rc;

	memset(&ho, 0, sizeof ho);
	if ((rc = report_args(argc, argv, &ho, &db, &out)) != 0) {
		rc = rc == 1 ? 0 : 2;
		goto out;
	}
	rc = 2;
	if (db == NULL)
		db = daemon_default_db();
	if (access(db, F_OK) != 0) {
		fprintf(stderr, "autosched report: %s: no such store\n", db);
		goto out;
	}
	if (store_open_readonly(db, &st, &err) != 0) {
		fprintf(stderr, "autosched report: %s\n", err);
		goto out;
	}
	ho.db_path = db;
	memset(&g, 0, sizeof g);
	g.key = "-o";
	g.what = "the HTML report";
	g.stores[0] = db;
	if (html_report(st, &ho, out, &g, &err) != 0) {
		fprintf(stderr, "autosched report: %s\n", err);
		goto out;
	}
	printf("wrote %s\n", out);
	rc = 0;
out:
	store_close(st);
	free(db);
	free(err);
	return rc;
}
