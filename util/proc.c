/*
 * Child processes the tmux way: signals blocked across fork, a clean child
 * (default handlers, empty mask, own process group, only fds 0-2 open), argv
 * exec'd directly, timeouts enforced by the parent killing the group.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

extern char **environ;

/*
 * The process groups being run, for proc_kill_current (signal handlers):
 * one slot per proc_run in flight, on any thread (executor slurm measures
 * several candidates at once). A slot is claimed with an atomic
 * compare-and-swap on 0; a run finding every slot taken is not tracked.
 */
#define PROC_TRACKED	64
static volatile sig_atomic_t proc_current_pgid[PROC_TRACKED];

void
proc_kill_current(void)
{
	pid_t pg;
	int i;

	for (i = 0; i < PROC_TRACKED; i++) {
		pg = (pid_t)__atomic_load_n(&proc_current_pgid[i],
		    __ATOMIC_SEQ_CST);
		if (pg > 0)
			kill(-pg, SIGKILL);
	}
}

/* Track pid's group: the slot taken, or -1. */
static int
proc_track(pid_t pid)
{
	int i;

	for (i = 0; i < PROC_TRACKED; i++) {
		if (__sync_bool_compare_and_swap(&proc_current_pgid[i], 0,
		    (sig_atomic_t)pid))
			return i;
	}
	return -1;
}

void
proc_result_free(struct proc_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

/* Build environ plus the extra NAME=VALUE strings (extras win). Caller frees the array. */
static char **
proc_envp(char *const *extra)
{
	size_t n = 0, m = 0, i, j, k = 0;
	char **envp;

	while (environ[n] != NULL)
		n++;
	while (extra != NULL && extra[m] != NULL)
		m++;
	envp = xcalloc(n + m + 1, sizeof *envp);
	for (i = 0; i < n; i++) {
		const char *eq = strchr(environ[i], '=');
		size_t len = eq ? (size_t)(eq - environ[i]) + 1 : strlen(environ[i]);
		int overridden = 0;

		for (j = 0; j < m; j++) {
			if (strncmp(extra[j], environ[i], len) == 0)
				overridden = 1;
		}
		if (!overridden)
			envp[k++] = environ[i];
	}
	for (j = 0; j < m; j++)
		envp[k++] = extra[j];
	envp[k] = NULL;
	return envp;
}

/* In the child: never returns. Only async-signal-safe calls. */
static void __attribute__((noreturn))
proc_child(const char *prog, char *const argv[], char **envp,
    const struct proc_opts *o,
    int outfd, int errfd, int failfd, const sigset_t *oldmask, pid_t parent)
{
	struct sigaction sa;
	int sig, null, e;
	cpu_set_t set;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL);
	setpgid(0, 0);
	/*
	 * Die with the parent even when it is killed outright (its handlers
	 * never run). The parent may have died before the prctl: then we were
	 * reparented already.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(127);
	if (o->cpus != NULL && o->ncpus > 0) {
		CPU_ZERO(&set);
		for (e = 0; e < o->ncpus; e++)
			CPU_SET(o->cpus[e], &set);
		sched_setaffinity(0, sizeof set, &set);
	}
	if (o->nice != 0)
		setpriority(PRIO_PROCESS, 0, o->nice);
	if (o->cwd != NULL && chdir(o->cwd) != 0)
		goto fail;
	if ((null = open("/dev/null", O_RDONLY)) == -1)
		goto fail;
	if (dup2(null, 0) == -1 || dup2(outfd, 1) == -1 || dup2(errfd, 2) == -1)
		goto fail;
	/* Close everything else but the exec-failure pipe (close-on-exec). */
	if (failfd > 3)
		close_range(3, (unsigned)failfd - 1, 0);
	close_range((unsigned)failfd + 1, ~0U, 0);
	sigprocmask(SIG_SETMASK, oldmask, NULL);
	{
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
	}
	execve(prog, argv, envp);
fail:
	e = errno;
	if (write(failfd, &e, sizeof e) < 0) {
		/* nothing more to do */
	}
	_exit(127);
}

/* Append what fd has to *buf (capped at max); returns 0 at EOF, 1 otherwise. */
static int
proc_drain(int fd, char **buf, size_t *len, size_t *cap, size_t max)
{
	char tmp[8192];
	ssize_t n = read(fd, tmp, sizeof tmp);

	if (n < 0)
		return (errno == EINTR || errno == EAGAIN) ? 1 : 0;
	if (n == 0)
		return 0;
	if (*len < max) {
		size_t take = (size_t)n;

		if (take > max - *len)
			take = max - *len;
		if (*len + take + 1 > *cap) {
			*cap = (*len + take + 1) * 2;
			*buf = xrealloc(*buf, *cap);
		}
		memcpy(*buf + *len, tmp, take);
		*len += take;
		(*buf)[*len] = '\0';
	}
	return 1;
}

/* One child under proc_run: its pipes, its pid and what became of it. */
struct proc_run {
	struct proc_opts	 o;
	int			 outp[2], errp[2], failp[2];
	pid_t			 pid;
	int			 slot;		/* proc_track's, or -1 */
	double			 start, deadline;
	size_t			 olen, ocap, elen, ecap;
	int			 status, killed, stopped;
};

/*
 * Forks and execs prog with the pipes and signals as proc_child wants
 * them. 0 (r->pid set, the parent's ends of the pipes open), or -1 with
 * *err.
 */
static int
proc_start(struct proc_run *r, const char *prog, char *const argv[],
    char **err)
{
	sigset_t all, old;
	pid_t self = getpid();
	char **envp;
	int e;

	if (pipe2(r->outp, O_CLOEXEC) != 0 || pipe2(r->errp, O_CLOEXEC) != 0 ||
	    pipe2(r->failp, O_CLOEXEC) != 0) {
		util_seterr(err, "pipe: %s", strerror(errno));
		return -1;
	}
	envp = proc_envp(r->o.env);
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	if (r->o.stop != NULL && *r->o.stop) {
		/* Signals are blocked: none can come between this and the fork. */
		sigprocmask(SIG_SETMASK, &old, NULL);
		free(envp);
		util_seterr(err, "%s: not started: interrupted", argv[0]);
		return -1;
	}
	r->start = util_now();
	r->pid = fork();
	if (r->pid == 0)
		proc_child(prog, argv, envp, &r->o, r->outp[1], r->errp[1],
		    r->failp[1], &old, self);
	e = errno;
	if (r->pid > 0) {
		setpgid(r->pid, r->pid);	/* both sides, so kill(-pid) never misses */
		r->slot = proc_track(r->pid);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(envp);
	if (r->pid < 0) {
		util_seterr(err, "fork: %s", strerror(e));
		return -1;
	}
	close(r->outp[1]);
	close(r->errp[1]);
	close(r->failp[1]);
	r->outp[1] = r->errp[1] = r->failp[1] = -1;
	return 0;
}

/*
 * Reads the child's stdout and stderr into res until both close, the
 * deadline passes (r->killed) or a stop comes (r->stopped).
 */
static void
proc_collect(struct proc_run *r, struct proc_result *res)
{
	int open_out = 1, open_err = 1;

	while (open_out || open_err) {
		struct pollfd pfd[2];
		int nfd = 0, wait_ms = -1;

		if (open_out)
			pfd[nfd++] = (struct pollfd){ r->outp[0], POLLIN, 0 };
		if (open_err)
			pfd[nfd++] = (struct pollfd){ r->errp[0], POLLIN, 0 };
		if (r->o.stop != NULL && *r->o.stop) {
			r->stopped = 1;
			return;
		}
		if (r->deadline > 0) {
			double left = r->deadline - util_now();

			if (left <= 0) {
				r->killed = 1;
				return;
			}
			wait_ms = (int)(left * 1000) + 1;
		}
		if (poll(pfd, (nfds_t)nfd, wait_ms) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		for (int i = 0; i < nfd; i++) {
			if (pfd[i].revents == 0)
				continue;
			if (pfd[i].fd == r->outp[0])
				open_out = proc_drain(r->outp[0], &res->out,
				    &r->olen, &r->ocap, r->o.out_max);
			else
				open_err = proc_drain(r->errp[0], &res->err,
				    &r->elen, &r->ecap, r->o.out_max);
		}
	}
}

/*
 * Waits for the child's exit, still under the deadline; past it, or on a
 * stop, kills its process group. Either way its group is killed once it
 * is reaped (grandchildren left behind) and r->status is its status.
 */
static void
proc_reap(struct proc_run *r)
{
	while (!r->killed && !r->stopped) {
		pid_t w = waitpid(r->pid, &r->status, WNOHANG);
		struct timespec ts = { 0, 2 * 1000 * 1000 };

		if (w == r->pid)
			goto reaped;
		if (w < 0 && errno != EINTR)
			break;
		if (r->o.stop != NULL && *r->o.stop) {
			r->stopped = 1;
			break;
		}
		if (r->deadline > 0 && util_now() >= r->deadline) {
			r->killed = 1;
			break;
		}
		nanosleep(&ts, NULL);
	}
	kill(-r->pid, SIGKILL);
	while (waitpid(r->pid, &r->status, 0) < 0 && errno == EINTR)
		;
reaped:
	kill(-r->pid, SIGKILL);	/* any grandchildren left in the group */
	if (r->slot >= 0)	/* atomic, as proc_track takes it: other threads do */
		__atomic_store_n(&proc_current_pgid[r->slot], 0, __ATOMIC_SEQ_CST);
}

int
proc_run(char *const argv[], const struct proc_opts *opts,
    struct proc_result *res, char **err)
{
	struct proc_run r;
	char *prog = NULL;
	int rc = -1, e;
	ssize_t n;

	memset(res, 0, sizeof *res);
	memset(&r, 0, sizeof r);
	r.outp[0] = r.outp[1] = r.errp[0] = r.errp[1] = -1;
	r.failp[0] = r.failp[1] = -1;
	r.slot = -1;
	if (opts != NULL)
		r.o = *opts;
	if (r.o.out_max == 0)
		r.o.out_max = 1 << 20;
	res->out = xstrdup("");
	res->err = xstrdup("");
	r.ocap = r.ecap = 1;
	/* A bare name: from a trusted PATH folder only (util_program_find). */
	if ((prog = strchr(argv[0], '/') != NULL ? xstrdup(argv[0]) :
	    util_program_find(argv[0])) == NULL) {
		res->exec_failed = 1;
		util_seterr(err, "%s: not found in a trusted PATH folder (absolute,"
		    " owned by root or this user, writable by no one else)",
		    argv[0]);
		goto out;
	}
	if (proc_start(&r, prog, argv, err) != 0)
		goto out;

	/* Did exec work? The pipe closes on exec, or carries errno. */
	while ((n = read(r.failp[0], &e, sizeof e)) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof e) {
		res->exec_failed = 1;
		util_seterr(err, "%s: %s", argv[0], strerror(e));
	}
	if (r.o.timeout > 0)
		r.deadline = r.start + r.o.timeout;
	proc_collect(&r, res);
	proc_reap(&r);
	res->seconds = util_now() - r.start;
	res->timed_out = r.killed;
	res->stopped = r.stopped;
	if (WIFEXITED(r.status)) {
		res->exited = 1;
		res->status = WEXITSTATUS(r.status);
	} else if (WIFSIGNALED(r.status))
		res->signal = WTERMSIG(r.status);
	rc = 0;
out:
	free(prog);
	for (int i = 0; i < 2; i++) {
		if (r.outp[i] != -1)
			close(r.outp[i]);
		if (r.errp[i] != -1)
			close(r.errp[i]);
		if (r.failp[i] != -1)
			close(r.failp[i]);
	}
	return rc;
}

void
util_signals_catch(const int *sigs, size_t n, void (*fn)(int),
    int keep_ignored, struct sigaction *old)
{
	struct sigaction sa, before;
	size_t i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < n; i++) {
		sigaction(sigs[i], &sa, &before);
		if (keep_ignored && before.sa_handler == SIG_IGN)
			sigaction(sigs[i], &before, NULL);
		if (old != NULL)
			old[i] = before;
	}
}

void
util_signals_restore(const int *sigs, size_t n, const struct sigaction *old)
{
	size_t i;

	for (i = 0; i < n; i++)
		sigaction(sigs[i], &old[i], NULL);
}
