/*
 * autosched: the command-line front. Dispatches to the commands of
 * daemon/cli.c (foreground work) and daemon/queue.c (the daemon's queue).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "build_config.h"
#include "daemon/daemon.h"
#include "export/export.h"
#include "util/util.h"

static const struct {
	const char	*name;
	int		(*fn)(int, char **);
	const char	*help;
} commands[] = {
	{ "run", cli_run, "CFG [--db PATH] [--json]   tune in the foreground" },
	{ "analyze", cli_analyze, "FILE.mlir [--json]        list the tunable ops" },
	{ "space", cli_space, "CFG [--count | --list N]  the search space after constraints" },
	{ "best", cli_best, "[--db PATH] [--op NAME]   the best configs found" },
	{ "export", cli_export, "[--format json|transform|iree-spec]  best configs as compiler input" },
	{ "build", export_cmd_build, "PROGRAM.mlir [-o LIB.so]   the program compiled with the best schedules" },
	{ "annotate", export_cmd_annotate, "PROGRAM.mlir [-o OUT]     the program with IREE compilation_info" },
	{ "report", cli_report, "-o F.html [--job ID]       an HTML report with charts" },
	{ "generate", cli_generate, "--problem-m R ... -o DIR   MLIR programs for a shape sweep" },
	{ "submit", queue_submit, "CFG [--priority N]        queue a job for autoschedd" },
	{ "status", queue_status, "[ID] [--json]             the queue and its jobs" },
	{ "watch", cli_watch, "[ID]                      follow a job's progress in the terminal" },
	{ "cancel", queue_cancel, "ID                        cancel a queued or running job" },
	{ "log", queue_log, "ID                        a job's log" },
	{ "gc", cli_gc, "[--db PATH]               remove what killed runs left" },
};

static void
usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: autosched COMMAND [ARGS]   (autosched COMMAND --help)\n");
	for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "Exit codes: 0 success, 1 a job ran but found nothing valid, "
	    "2 bad usage or input.\n");
}

int
main(int argc, char **argv)
{
	size_t i;
	int rc;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return util_stdout_close() == 0 ? 0 : 1;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		const struct backend_ops *const *be = backend_all(&i);
		size_t n = i;

		printf("autosched %s (MLIR/LLVM %s)\n", AUTOSCHED_VERSION,
		    AUTOSCHED_LLVM_VERSION);
		/* The backends' own tools, where they have any (IREE's). */
		for (i = 0; i < n; i++) {
			char *about = be[i]->about != NULL ? be[i]->about() :
			    NULL;

			if (about != NULL)
				printf("%s\n", about);
			free(about);
		}
		return util_stdout_close() == 0 ? 0 : 1;
	}
	for (i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		if (strcmp(argv[1], commands[i].name) == 0) {
			/* Like a cfg's [Env] isa, which wins over it. */
			if (daemon_isa_env_check("autosched") != 0)
				return 2;
			rc = commands[i].fn(argc - 1, argv + 1);
			/* Results printed to a full disk are no results. */
			if (util_stdout_close() != 0 && rc == 0)
				rc = 1;
			return rc;
		}
	}
	fprintf(stderr, "autosched: unknown command \"%s\"\n", argv[1]);
	usage(stderr);
	return 2;
}
