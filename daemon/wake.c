/*
 * Beside the store DB: DB.wake, a unix datagram socket the idle service
 * sleeps on and submit pokes, and DB.lock, which keeps a second service off
 * the same store (it would requeue the first one's running job).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/daemon_int.h"
#include "util/util.h"

/* Fill sa with DB.wake; -1 if the path does not fit in sun_path. */
static int
wake_addr(const char *db, struct sockaddr_un *sa)
{
	int n;

	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	n = snprintf(sa->sun_path, sizeof sa->sun_path, "%s.wake", db);
	if (n < 0 || (size_t)n >= sizeof sa->sun_path)
		return -1;
	return 0;
}

int
service_wake_open(const char *db, int *fd, char **err)
{
	struct sockaddr_un sa;
	struct stat sb;
	int s;

	*fd = -1;
	if (wake_addr(db, &sa) != 0) {
		util_seterr(err, "%s.wake: path too long for a unix socket",
		    db);
		return -1;
	}
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s == -1) {
		util_seterr(err, "socket: %s", strerror(errno));
		return -1;
	}
	/*
	 * A crashed service leaves its socket behind; the lock says it is ours.
	 * Anything else of that name is not ours to remove.
	 */
	if (lstat(sa.sun_path, &sb) == 0) {
		if (!S_ISSOCK(sb.st_mode)) {
			util_seterr(err, "%s: not a socket; expected the store's "
			    "wake-up socket", sa.sun_path);
			close(s);
			return -1;
		}
		unlink(sa.sun_path);
	}
	if (bind(s, (struct sockaddr *)&sa, sizeof sa) == -1) {
		util_seterr(err, "%s: %s", sa.sun_path, strerror(errno));
		close(s);
		return -1;
	}
	/* Whoever may write the store's folder may wake us. */
	chmod(sa.sun_path, 0660);
	*fd = s;
	return 0;
}

void
service_wake_drain(int fd)
{
	char buf[64];

	while (recv(fd, buf, sizeof buf, MSG_DONTWAIT) >= 0)
		;
}

void
service_wake_close(const char *db, int fd)
{
	struct sockaddr_un sa;

	if (fd == -1)
		return;
	close(fd);
	if (wake_addr(db, &sa) == 0)
		unlink(sa.sun_path);
}

int
queue_wake(const char *db)
{
	struct sockaddr_un sa;
	int s, rc = 1;

	if (wake_addr(db, &sa) != 0)
		return -1;
	if ((s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (sendto(s, "w", 1, MSG_DONTWAIT, (struct sockaddr *)&sa,
	    sizeof sa) == -1) {
		/* EAGAIN: its queue is full of wake-ups already. */
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			rc = 1;
		else if (errno == ENOENT || errno == ECONNREFUSED)
			rc = 0;
		else
			rc = -1;
	}
	close(s);
	return rc;
}

int
service_lock(const char *db, int *fd, char **err)
{
	char *path = xasprintf("%s.lock", db), buf[32];
	ssize_t n;
	int l, rc = -1;

	*fd = -1;
	/* Never block on a FIFO or a device: open without waiting, then check. */
	if ((l = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK | O_NOCTTY, 0666)) == -1) {
		util_seterr(err, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (util_lock_file_check(l, path, "the store's lock file", err) != 0) {
		close(l);
		goto out;
	}
	if (flock(l, LOCK_EX | LOCK_NB) == -1) {
		if (errno == EWOULDBLOCK) {
			n = pread(l, buf, sizeof buf - 1, 0);
			buf[n > 0 ? n : 0] = '\0';
			buf[strcspn(buf, "\n")] = '\0';
			util_seterr(err, "%s: another autoschedd (pid %s)"
			    " serves this store", db, *buf ? buf : "?");
		} else
			util_seterr(err, "%s: %s", path, strerror(errno));
		close(l);
		goto out;
	}
	n = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
	if (ftruncate(l, 0) == -1 || pwrite(l, buf, (size_t)n, 0) != n) {
		util_seterr(err, "%s: %s", path, strerror(errno));
		close(l);
		goto out;
	}
	*fd = l;
	rc = 0;
out:
	free(path);
	return rc;
}
