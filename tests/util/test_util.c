/*
 * Unit tests of util: strings, files, hashing, edit distance, and child
 * processes (exit codes, signals, timeouts, exec failures, output capture).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/check.h"
#include "util/util.h"

static void
test_strings(void)
{
	char *s = xasprintf("%s-%d", "a", 7), *d;
	char *err = NULL;

	CHECK_STR(s, "a-7");
	free(s);
	s = util_path_join("/etc", "x.cfg");
	CHECK_STR(s, "/etc/x.cfg");
	free(s);
	s = util_path_join("dir", "/abs");
	CHECK_STR(s, "/abs");
	free(s);
	d = util_dirname("a/b/c.cfg");
	CHECK_STR(d, "a/b");
	free(d);
	d = util_dirname("c.cfg");
	CHECK_STR(d, ".");
	free(d);
	CHECK(util_edit_distance("tile_q", "tile_m") == 1);
	CHECK(util_edit_distance("", "abc") == 3);
	util_seterr(&err, "x %d", 1);
	util_seterr(&err, "y %d", 2);
	CHECK_STR(err, "y 2");
	free(err);
	CHECK(util_hash64("abc", 3) != util_hash64("abd", 3));
}

static void
test_files(void)
{
	char dir[] = "/tmp/autosched-util-XXXXXX", *path, *buf = NULL, *err = NULL;
	size_t len = 0;

	CHECK(mkdtemp(dir) != NULL);
	path = xasprintf("%s/a/b/f.txt", dir);
	{
		char *sub = xasprintf("%s/a/b", dir);

		CHECK(util_mkdirs(sub, &err) == 0);
		free(sub);
	}
	CHECK(util_write_file(path, "hello", 5, &err) == 0);
	CHECK(util_read_file(path, 100, &buf, &len, &err) == 0);
	CHECK(len == 5 && strcmp(buf, "hello") == 0);
	free(buf);
	CHECK(util_read_file(path, 3, &buf, &len, &err) == -1);
	CHECK(err != NULL && strstr(err, "larger than") != NULL);
	CHECK(util_read_file("/nonexistent/x", 3, &buf, &len, &err) == -1);
	free(err);
	free(path);
	{
		char *cmd = xasprintf("rm -rf %s", dir);

		CHECK(system(cmd) == 0);
		free(cmd);
	}
}

static volatile sig_atomic_t stop;

static void
on_alarm(int sig)
{
	(void)sig;
	stop = 1;
}

static void
test_proc(void)
{
	struct sigaction sa;
	struct proc_result r;
	struct proc_opts o = { 0 };
	char *err = NULL;
	char *echo[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
	char *segv[] = { "sh", "-c", "kill -SEGV $$", NULL };
	char *hang[] = { "sh", "-c", "sleep 100 & sleep 100", NULL };
	char *nope[] = { "/nonexistent/tool", NULL };
	char *env[] = { "AUTOSCHED_T=42", NULL };
	char *penv[] = { "sh", "-c", "echo $AUTOSCHED_T", NULL };
	char *fds[] = { "sh", "-c", "ls /proc/self/fd | wc -l", NULL };

	CHECK(proc_run(echo, NULL, &r, &err) == 0);
	CHECK(r.exited && r.status == 3);
	CHECK_STR(r.out, "out\n");
	CHECK_STR(r.err, "err\n");
	proc_result_free(&r);

	CHECK(proc_run(segv, NULL, &r, &err) == 0);
	CHECK(!r.exited && r.signal == SIGSEGV);
	proc_result_free(&r);

	o.timeout = 0.3;
	CHECK(proc_run(hang, &o, &r, &err) == 0);
	/* Killed by the timeout, not before it. */
	CHECK(r.timed_out && !r.exited && r.signal == SIGKILL);
	CHECK(r.seconds >= 0.3);
	proc_result_free(&r);

	CHECK(proc_run(nope, NULL, &r, &err) == 0);
	CHECK(r.exec_failed);
	CHECK(err != NULL && strstr(err, "/nonexistent/tool") != NULL);
	proc_result_free(&r);

	o.timeout = 0;
	o.env = env;
	CHECK(proc_run(penv, &o, &r, &err) == 0);
	CHECK_STR(r.out, "42\n");
	proc_result_free(&r);

	/* Only 0-2 (+ the fd ls opens) are open in the child. */
	CHECK(proc_run(fds, NULL, &r, &err) == 0);
	CHECK(atoi(r.out) <= 4);
	proc_result_free(&r);

	/* A stop flag already set: nothing is started. */
	o.env = NULL;
	o.stop = &stop;
	stop = 1;
	CHECK(proc_run(echo, &o, &r, &err) == -1);
	CHECK(err != NULL && strstr(err, "interrupted") != NULL);
	proc_result_free(&r);
	/* Set while it runs (by SIGALRM's handler): the group is killed. */
	stop = 0;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	alarm(1);
	CHECK(proc_run(hang, &o, &r, &err) == 0);
	CHECK(r.stopped && !r.timed_out && r.signal == SIGKILL);
	CHECK(r.seconds < 10);
	proc_result_free(&r);
	free(err);
}

/* Issue 11: special files, the one CPU-list parser, leases, log escaping. */
static void
test_harden(void)
{
	char dir[] = "/tmp/autosched-util-XXXXXX", *fifo, *lock, *buf = NULL;
	char *err = NULL, *e;
	size_t len;
	int *cpus = NULL, n = 0, fd = -1;

	CHECK(mkdtemp(dir) != NULL);
	fifo = xasprintf("%s/fifo", dir);
	lock = xasprintf("%s/x.lock", dir);
	CHECK(mkfifo(fifo, 0600) == 0);
	/* A FIFO nobody writes: refused at once, never a hang. */
	CHECK(util_read_file(fifo, 100, &buf, &len, &err) == -1);
	CHECK(err != NULL && strstr(err, "not a regular file") != NULL);

	CHECK(util_parse_cpus("0", &cpus, &n, &err) == 0 && n == 1 &&
	    cpus[0] == 0);
	free(cpus);
	cpus = NULL;
	CHECK(util_parse_cpus("4000", &cpus, &n, &err) == -1);
	CHECK(err != NULL && strstr(err, "CPU 4000") != NULL);
	CHECK(util_parse_cpus("0,0", &cpus, &n, &err) == -1);
	CHECK(util_parse_cpus("1-0", &cpus, &n, &err) == -1);
	CHECK(util_parse_cpus("x", &cpus, &n, &err) == -1);
	CHECK(util_parse_cpus("", &cpus, &n, &err) == -1);

	CHECK(util_lock_held(lock) == 0);
	CHECK(util_lock(lock, 0, &fd, &err) == 0 && fd != -1);
	CHECK(util_lock_held(lock) == 1);
	close(fd);
	CHECK(util_lock_held(lock) == 0);

	e = util_escape("a\nFORGED\x1b[0m");
	CHECK_STR(e, "a\\nFORGED\\x1b[0m");
	free(e);

	unlink(fifo);
	unlink(lock);
	rmdir(dir);
	free(fifo);
	free(lock);
	free(err);
}

int
main(void)
{
	test_harden();
	test_strings();
	test_files();
	test_proc();
	return check_done();
}
