/*
 * The front: the commands of `autosched` (cli.c: run, analyze, space, best,
 * export; cli_report.c: report; cli_generate.c: generate; cli_watch.c:
 * watch; cli_gc.c: gc; queue.c: submit,
 * status, cancel, log) and the service (service.c).
 * Each command takes the arguments after its name and returns the exit code
 * (0 success, 1 nothing valid found, 2 bad usage or input).
 */
#ifndef AUTOSCHED_DAEMON_H
#define AUTOSCHED_DAEMON_H

int	cli_run(int argc, char **argv);
int	cli_analyze(int argc, char **argv);
int	cli_space(int argc, char **argv);
int	cli_best(int argc, char **argv);
int	cli_export(int argc, char **argv);
int	cli_report(int argc, char **argv);
int	cli_generate(int argc, char **argv);
int	cli_watch(int argc, char **argv);
int	cli_gc(int argc, char **argv);

int	queue_submit(int argc, char **argv);
int	queue_status(int argc, char **argv);
int	queue_cancel(int argc, char **argv);
int	queue_log(int argc, char **argv);

/* The path of the store when none is given: $AUTOSCHED_DB, else ./autosched.db. Caller frees. */
char	*daemon_default_db(void);
/*
 * AUTOSCHED_ISA checked by the cfg's [Env] isa check (backend_cpu_isa_check),
 * so that a value this CPU lacks stops autosched or autoschedd before it
 * works: 0, or -1 after "PROG: AUTOSCHED_ISA: why" on stderr.
 */
int	 daemon_isa_env_check(const char *prog);

/* The service's main (autoschedd). */
int	service_main(int argc, char **argv);

#endif
