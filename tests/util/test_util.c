/*
 * Unit tests of util: strings, files, hashing, edit distance, and child
 * processes (exit codes, signals, timeouts, exec failures, output capture).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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

/* 1 if the file at path holds exactly text. */
static int
holds(const char *path, const char *text)
{
	char *buf = NULL, *err = NULL;
	int same;

	if (util_read_file(path, 1 << 20, &buf, NULL, &err) != 0) {
		free(err);
		return 0;
	}
	same = strcmp(buf, text) == 0;
	free(buf);
	return same;
}

/* The one writer: what it refuses, what it never follows, what it replaces. */
static void
test_out(void)
{
	char dir[] = "/tmp/autosched-out-XXXXXX", *err = NULL;
	char *victim, *target, *link, *planted, *db, *wal, *in, *fifo, *cmd;
	struct util_out_guard g;
	struct util_out *o;
	struct stat sb;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	victim = xasprintf("%s/victim", dir);
	target = xasprintf("%s/lib.mlir", dir);
	link = xasprintf("%s/link.mlir", dir);
	db = xasprintf("%s/s.db", dir);
	wal = xasprintf("%s/s.db-wal", dir);
	in = xasprintf("%s/in.mlir", dir);
	fifo = xasprintf("%s/fifo", dir);
	CHECK(util_write_file(victim, "secret\n", 7, &err) == 0);
	CHECK(util_write_file(db, "SQLite format 3", 15, &err) == 0);
	CHECK(util_write_file(in, "module {}\n", 10, &err) == 0);
	memset(&g, 0, sizeof g);
	g.key = "-o";
	g.what = "the export";
	g.stores[0] = db;
	g.inputs[0].path = in;
	g.inputs[0].what = "the input MLIR";
	g.magic[0] = "// autosched ";

	/* A link planted at the old predictable temporary is not followed. */
	planted = xasprintf("%s.tmp.%ld", target, (long)getpid());
	CHECK(symlink(victim, planted) == 0);
	CHECK(util_out_write(target, "// autosched a\n", 15, &g, &err) == 0);
	CHECK(holds(victim, "secret\n"));
	CHECK(holds(target, "// autosched a\n"));
	CHECK(lstat(target, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    (sb.st_mode & 0777) == 0644);
	CHECK(lstat(planted, &sb) == 0 && S_ISLNK(sb.st_mode));
	/* util_write_file (work files) does not follow it either. */
	free(planted);
	planted = xasprintf("%s.tmp.%ld", victim, (long)getpid());
	CHECK(symlink(db, planted) == 0);
	CHECK(util_write_file(victim, "secret\n", 7, &err) == 0);
	CHECK(holds(db, "SQLite format 3"));

	/* An earlier file of ours is replaced; a foreign one is refused. */
	CHECK(util_out_write(target, "// autosched b\n", 15, &g, &err) == 0);
	CHECK(holds(target, "// autosched b\n"));
	CHECK(util_out_write(victim, "// autosched c\n", 15, &g, &err) == -1);
	CHECK(err != NULL && strstr(err, "-o ") != NULL &&
	    strstr(err, "not a file autosched wrote") != NULL);
	CHECK(holds(victim, "secret\n"));

	/* A link at the target, at any name: refused, its target unchanged. */
	CHECK(symlink(victim, link) == 0);
	CHECK(util_out_write(link, "// autosched d\n", 15, &g, &err) == -1);
	CHECK(err != NULL && strstr(err, "symbolic link") != NULL);
	CHECK(util_write_file(link, "x", 1, &err) == -1);
	CHECK(holds(victim, "secret\n"));
	CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode));

	/*
	 * Devices, FIFOs and folders are not files to replace. The devices are
	 * private copies of /dev/null and /dev/full (when we may make them), so
	 * that a broken writer cannot take the machine's.
	 */
	{
		char *dnull = xasprintf("%s/null", dir), *dfull = xasprintf("%s/full", dir);

		if (mknod(dnull, S_IFCHR | 0666, makedev(1, 3)) == 0 &&
		    mknod(dfull, S_IFCHR | 0666, makedev(1, 7)) == 0) {
			CHECK(util_out_write(dnull, "x", 1, &g, &err) == -1);
			CHECK(err != NULL && strstr(err, "character device") != NULL);
			CHECK(util_write_file(dfull, "x", 1, &err) == -1);
			CHECK(stat(dnull, &sb) == 0 && S_ISCHR(sb.st_mode));
			CHECK(stat(dfull, &sb) == 0 && S_ISCHR(sb.st_mode));
		}
		free(dnull);
		free(dfull);
	}
	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK(util_out_write(fifo, "x", 1, NULL, &err) == -1);
	CHECK(lstat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode));
	CHECK(util_out_write(dir, "x", 1, NULL, &err) == -1);

	/* The store, its side files (present or not) and the inputs. */
	CHECK(util_out_write(db, "// autosched e\n", 15, &g, &err) == -1);
	CHECK(err != NULL && strstr(err, "the store") != NULL);
	CHECK(util_out_write(wal, "// autosched e\n", 15, &g, &err) == -1);
	CHECK(access(wal, F_OK) != 0);
	CHECK(util_out_write(in, "// autosched e\n", 15, &g, &err) == -1);
	CHECK(err != NULL && strstr(err, "the input MLIR") != NULL);
	CHECK(holds(db, "SQLite format 3") && holds(in, "module {}\n"));
	/* A job without a store of its own still guards the replayed one. */
	g.stores[0] = NULL;
	g.stores[1] = db;
	CHECK(util_out_write(wal, "// autosched e\n", 15, &g, &err) == -1);
	g.stores[0] = db;
	g.stores[1] = NULL;

	/* A marker anywhere (a built .so), across the chunks it is read in. */
	{
		size_t n = 200000;
		char *big = xmalloc(n + 1);

		memset(big, 'x', n);
		memcpy(big + 65540, "MARK-123", 8);
		big[n] = '\0';
		CHECK(util_write_file(victim, big, n, &err) == 0);
		memset(&g.magic, 0, sizeof g.magic);
		g.marker = "MARK-123";
		CHECK(util_out_write(victim, "MARK-123", 8, &g, &err) == 0);
		CHECK(util_out_write(victim, "y", 1, &g, &err) == 0);
		CHECK(util_out_write(victim, "z", 1, &g, &err) == -1);
		free(big);
	}

	/* Streaming: commit renames, abort leaves nothing behind. */
	g.marker = NULL;
	g.magic[0] = "// autosched ";
	CHECK(util_out_open(target, &g, &o, &err) == 0);
	fputs("// autosched f\n", util_out_file(o));
	CHECK(holds(target, "// autosched b\n"));
	CHECK(util_out_commit(o, &err) == 0);
	CHECK(holds(target, "// autosched f\n"));
	CHECK(util_out_open(target, &g, &o, &err) == 0);
	fputs("// autosched g\n", util_out_file(o));
	util_out_abort(o);
	CHECK(holds(target, "// autosched f\n"));
	cmd = xasprintf("ls -A %s | grep -c '^\\.'", dir);
	CHECK((f = popen(cmd, "r")) != NULL);
	if (f != NULL) {
		char line[32] = "";

		CHECK(fgets(line, sizeof line, f) != NULL && atoi(line) == 0);
		pclose(f);
	}
	free(cmd);

	/* A name still to be made, spelt two ways, is the same file. */
	free(planted);
	planted = xasprintf("%s/./new.csv", dir);
	cmd = xasprintf("%s/new.csv", dir);
	CHECK(util_same_path(planted, cmd));
	free(cmd);
	free(err);
	free(victim);
	free(target);
	free(link);
	free(planted);
	free(db);
	free(wal);
	free(in);
	free(fifo);
	cmd = xasprintf("rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	free(cmd);
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

/*
 * Programs run by name come only from trusted PATH folders (issue 31): a
 * tool planted in a world-writable or relative folder is not run.
 */
static void
test_program(void)
{
	char dir[] = "/tmp/test_util_prog.XXXXXX", *tool, *old, *err = NULL;
	char *argv[] = { "autosched-test-tool", NULL };
	struct proc_result r;
	FILE *f;

	if (mkdtemp(dir) == NULL)
		return;
	tool = xasprintf("%s/autosched-test-tool", dir);
	f = fopen(tool, "w");
	CHECK(f != NULL);
	if (f == NULL)
		return;
	fputs("#!/bin/sh\necho ran\n", f);
	fclose(f);
	CHECK(chmod(tool, 0755) == 0);
	old = xstrdup(getenv("PATH") ? getenv("PATH") : "");
	setenv("PATH", dir, 1);

	CHECK(chmod(dir, 0777) == 0);
	CHECK(util_program_find("autosched-test-tool") == NULL);
	CHECK(proc_run(argv, NULL, &r, &err) != 0 && r.exec_failed);
	CHECK(err != NULL && strstr(err, "not found in a trusted PATH"
	    " folder") != NULL);
	proc_result_free(&r);
	free(err);
	err = NULL;

	CHECK(chmod(dir, 0755) == 0);
	CHECK(proc_run(argv, NULL, &r, &err) == 0 && r.status == 0 &&
	    strcmp(r.out, "ran\n") == 0);
	proc_result_free(&r);
	free(err);
	err = NULL;

	/* A relative folder on PATH: never. */
	CHECK(chdir(dir) == 0);
	setenv("PATH", ".", 1);
	CHECK(util_program_find("autosched-test-tool") == NULL);
	CHECK(chdir("/") == 0);

	setenv("PATH", old, 1);
	unlink(tool);
	rmdir(dir);
	free(tool);
	free(old);
}

int
main(void)
{
	test_harden();
	test_strings();
	test_files();
	test_out();
	test_proc();
	test_program();
	return check_done();
}
