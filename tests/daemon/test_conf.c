/*
 * autoschedd.conf: values, defaults, and one clear error (file:line: key)
 * for each kind of mistake.
 */
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "cfg/cfg.h"
#include "daemon/daemon_int.h"
#include "tests/check.h"
#include "util/util.h"

/* Parse text as /etc/x/autoschedd.conf; returns the error (caller frees) or NULL. */
static char *
parse(const char *text, struct service_conf **c)
{
	char *err = NULL;

	*c = NULL;
	if (service_conf_parse("/etc/x/autoschedd.conf", text, strlen(text), c,
	    &err) == 0) {
		CHECK(err == NULL);
		return NULL;
	}
	CHECK(*c == NULL);
	CHECK(err != NULL);
	return err;
}

/* The error of text must contain want. */
static void
bad(const char *text, const char *want)
{
	struct service_conf *c;
	char *err = parse(text, &c);

	CHECK(err != NULL);
	if (err != NULL && strstr(err, want) == NULL) {
		fprintf(stderr, "error \"%s\" lacks \"%s\"\n", err, want);
		CHECK(0);
	}
	free(err);
	service_conf_free(c);
}

int
main(void)
{
	struct service_conf *c;
	char *err = NULL;

	CHECK(parse("; comment\n[autoschedd]\ndatabase = /var/lib/a/a.db\n"
	    "spool = spool\nlog_level = debug\ncpus = 0\ncompile_nice = 10\n"
	    "poll_interval = 5\n", &c) == NULL);
	if (c != NULL) {
		CHECK_STR(c->database, "/var/lib/a/a.db");
		CHECK_STR(c->spool, "/etc/x/spool");	/* from the conf's folder */
		CHECK(c->log_level == LOG_DEBUG);
		CHECK(c->ncpus == 1 && c->cpus[0] == 0);
		CHECK(c->compile_nice == 10);
		CHECK(c->poll == 5);
		CHECK_STR(c->path, "/etc/x/autoschedd.conf");
	}
	service_conf_free(c);

	/* Empty: the defaults. Keys before any section are fine too. */
	CHECK(parse("", &c) == NULL);
	if (c != NULL) {
		CHECK(c->database == NULL && c->spool == NULL);
		CHECK(c->log_level == LOG_INFO && c->cpus == NULL);
		CHECK(c->poll == 30 && c->compile_nice == 0);
	}
	service_conf_free(c);
	CHECK(parse("log_level = warning\n", &c) == NULL);
	CHECK(c != NULL && c->log_level == LOG_WARNING);
	service_conf_free(c);

	/* The jobs' default executor: the same keys and checks as [Env]. */
	CHECK(parse("[autoschedd]\nexecutor = slurm\nslurm_partition = p1\n"
	    "slurm_max_steps = 8\nslurm_srun_args = --qos=low\n"
	    "slurm_step_timeout = 2m\n", &c) == NULL);
	if (c != NULL) {
		CHECK(c->exec.executor == CFG_EXEC_SLURM && c->exec.executor_set);
		CHECK_STR(c->exec.slurm_partition, "p1");
		CHECK_STR(c->exec.slurm_srun_args, "--qos=low");
		CHECK(c->exec.slurm_max_steps == 8);
		CHECK(c->exec.slurm_step_timeout == 120);
	}
	service_conf_free(c);
	CHECK(parse("[autoschedd]\nlog_level = info\n", &c) == NULL);
	CHECK(c != NULL && c->exec.executor == CFG_EXEC_LOCAL &&
	    !c->exec.executor_set && c->exec.slurm_partition == NULL);
	service_conf_free(c);
	bad("[autoschedd]\nexecutor = pbs\n",
	    "/etc/x/autoschedd.conf:2: executor: unknown executor 'pbs'; expected local, slurm or batch");
	bad("[autoschedd]\nexecutor = batch\n",
	    "/etc/x/autoschedd.conf:2: executor: batch carries measurements in a folder by hand");
	bad("[autoschedd]\n\nslurm_max_steps = 0\n", ":3: slurm_max_steps:");
	bad("[autoschedd]\nslurm_partition = a b\n",
	    ":2: slurm_partition: 'a b' is not a partition name");
	bad("[autoschedd]\nslurm_step_timeout = soon\n", ":2: slurm_step_timeout:");
	/* slurm_srun_args: the allowlist of --opt=value words, as in a cfg. */
	bad("[autoschedd]\nslurm_srun_args = /bin/sh /tmp/x/evil.sh\n",
	    "autoschedd.conf:2: slurm_srun_args: '/bin/sh' is not an option"
	    " autosched passes to srun; allowed: --account=, --qos=");
	bad("[autoschedd]\nslurm_srun_args = --prolog=/tmp/x\n",
	    ":2: slurm_srun_args: '--prolog=/tmp/x' is not an option");
	bad("[autoschedd]\nslurm_srun_args = --qos=low -n 4\n",
	    ":2: slurm_srun_args: '-n' is not an option");
	bad("[autoschedd]\nslurm_srun_args = --cpu-bind=none\n",
	    "'--cpu-bind=none' is not an option");
	CHECK(parse("[autoschedd]\nslurm_srun_args = --account=perf --qos=low"
	    " --mem=8G\n", &c) == NULL);
	service_conf_free(c);
	bad("[autoschedd]\nexecutor = slurm\nexecutor = local\n",
	    ":3: executor: given twice (first on line 2)");
	bad("[autoschedd]\nexecuter = slurm\n", "did you mean executor?");
	/* A cfg's [Env] wins key by key over the service's default. */
	{
		struct cfg_exec job, svc;
		char why[256];

		memset(&job, 0, sizeof job);
		memset(&svc, 0, sizeof svc);
		CHECK(cfg_exec_key(&svc, "executor", "slurm", why, sizeof why) == 0);
		CHECK(cfg_exec_key(&svc, "slurm_partition", "big", why, sizeof why) == 0);
		CHECK(cfg_exec_key(&svc, "slurm_max_steps", "4", why, sizeof why) == 0);
		CHECK(cfg_exec_key(&job, "slurm_max_steps", "2", why, sizeof why) == 0);
		CHECK(cfg_exec_key(&job, "database", "x", why, sizeof why) == 1);
		cfg_exec_merge(&job, &svc);
		CHECK(job.executor == CFG_EXEC_SLURM && job.slurm_max_steps == 2);
		CHECK_STR(job.slurm_partition, "big");
		job.slurm_partition = NULL;	/* borrowed from svc */
		cfg_exec_clear(&job);
		memset(&job, 0, sizeof job);
		CHECK(cfg_exec_key(&job, "executor", "local", why, sizeof why) == 0);
		cfg_exec_merge(&job, &svc);
		CHECK(job.executor == CFG_EXEC_LOCAL);
		job.slurm_partition = NULL;
		cfg_exec_clear(&job);
		cfg_exec_clear(&svc);
	}

	bad("[autoschedd]\ndatabse = x\n",
	    "/etc/x/autoschedd.conf:2: databse: unknown key (did you mean database?)");
	bad("[autoschedd]\nfoo = x\n", "autoschedd.conf:2: foo: unknown key");
	bad("[autoschedd]\n\n\ncpus = 0,4096\n", "autoschedd.conf:4: cpus:");
	bad("[autoschedd]\ncpus = 0,0\n", "cpus: CPU 0 listed twice");
	bad("[autoschedd]\ncpus = 1-0\n", "backwards");
	bad("[autoschedd]\ncpus = a\n", "is not a list of CPUs");
	bad("[autoschedd]\ncpus = 99999\n", "cpus:");
	bad("[autoschedd]\nlog_level = loud\n", ":2: log_level: \"loud\" is not a level");
	bad("[autoschedd]\ncompile_nice = 25\n", ":2: compile_nice:");
	bad("[autoschedd]\npoll_interval = 0\n", ":2: poll_interval:");
	bad("[autoschedd]\nspool = a\nspool = b\n", ":3: spool: given twice (first on line 2)");
	bad("[server]\ndatabase = x\n", ":2: [server]: unknown section");
	bad("[autoschedd]\nthis is not ini\n", ":2: syntax error");
	bad("[autoschedd]\ndatabase = \n", ":2: database: empty path");
	{
		char line[400];

		memset(line, 'a', sizeof line - 1);
		line[sizeof line - 1] = '\0';
		memcpy(line, "database=", 9);
		bad(line, ":1: line too long");
	}

	/*
	 * libinih's options are process-wide: the conf reads the same before
	 * and after a job's cfg was parsed (a SIGHUP re-read after a job).
	 */
	{
		static const char conf[] = "[autoschedd]\nlog_level = info # a note\n";
		static const char cfgt[] = "[Env]\ninput_file = x.mlir\n";
		struct cfg *cf = NULL;
		char *e1, *e2;

		e1 = parse(conf, &c);
		service_conf_free(c);
		if (cfg_parse("/tmp/x.cfg", cfgt, strlen(cfgt), 0, &cf, &err) == 0)
			cfg_free(cf);
		free(err);
		err = NULL;
		e2 = parse(conf, &c);
		service_conf_free(c);
		CHECK((e1 == NULL) == (e2 == NULL));
		if (e1 != NULL && e2 != NULL)
			CHECK_STR(e1, e2);
		free(e1);
		free(e2);
	}

	/* A missing file: the defaults if allowed, else an error naming it. */
	CHECK(service_conf_load("/nonexistent/autoschedd.conf", 1, &c, &err) == 0);
	CHECK(c != NULL && c->path == NULL);
	service_conf_free(c);
	CHECK(service_conf_load("/nonexistent/autoschedd.conf", 0, &c, &err) == -1);
	CHECK(err != NULL && strstr(err, "/nonexistent/autoschedd.conf") != NULL);
	free(err);

	CHECK(service_conf_level("err") == LOG_ERR);
	CHECK(service_conf_level("notice") == LOG_NOTICE);
	CHECK(service_conf_level("LOUD") == -1);
	return check_done();
}
