/*
 * The wake socket and the lock beside a store: a submit wakes a listening
 * service, finds none when it is gone, and a second service is kept off.
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/daemon_int.h"
#include "tests/check.h"
#include "util/util.h"

int
main(void)
{
	char tmpl[] = "/tmp/autosched-wake-XXXXXX", *db, *err = NULL;
	struct pollfd pfd;
	int fd, lock, lock2, i, woke = 0;

	CHECK(mkdtemp(tmpl) != NULL);
	db = util_path_join(tmpl, "autosched.db");

	CHECK(queue_wake(db) == 0);		/* nobody listens yet */
	CHECK(service_wake_open(db, &fd, &err) == 0);
	CHECK(fd >= 0);
	pfd.fd = fd;
	pfd.events = POLLIN;
	CHECK(poll(&pfd, 1, 0) == 0);		/* idle: nothing to read */
	CHECK(queue_wake(db) == 1);
	CHECK(poll(&pfd, 1, 1000) == 1);
	service_wake_drain(fd);
	CHECK(poll(&pfd, 1, 0) == 0);
	/* A flood of submits never blocks the submitter. */
	for (i = 0; i < 10000; i++)
		woke += queue_wake(db) == 1;
	CHECK(woke == 10000);
	service_wake_drain(fd);
	CHECK(poll(&pfd, 1, 0) == 0);
	/* A stale socket left by a crash does not stop the next start. */
	close(fd);
	CHECK(queue_wake(db) == 0);
	CHECK(service_wake_open(db, &fd, &err) == 0);
	CHECK(queue_wake(db) == 1);
	service_wake_close(db, fd);
	CHECK(queue_wake(db) == 0);

	CHECK(service_lock(db, &lock, &err) == 0);
	CHECK(service_lock(db, &lock2, &err) == -1);
	CHECK(err != NULL && strstr(err, "another autoschedd") != NULL);
	if (err != NULL)
		fprintf(stderr, "(expected) %s\n", err);
	close(lock);
	CHECK(service_lock(db, &lock2, &err) == 0);
	close(lock2);

	free(err);
	{
		char *p = xasprintf("%s.lock", db);

		unlink(p);
		free(p);
	}
	rmdir(tmpl);
	free(db);
	return check_done();
}
