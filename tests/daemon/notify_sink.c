/*
 * A stand-in for systemd's notify socket in the tests: bind a datagram
 * socket at argv[1] and append each message, one per line, to argv[2],
 * until STOPPING=1 arrives or argv[3] seconds pass.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/util.h"

int
main(int argc, char **argv)
{
	struct sockaddr_un sa;
	struct pollfd pfd;
	char buf[4096];
	double end;
	ssize_t n;
	FILE *f;
	int s;

	if (argc != 4)
		return 2;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", argv[1]);
	if ((s = socket(AF_UNIX, SOCK_DGRAM, 0)) == -1 ||
	    bind(s, (struct sockaddr *)&sa, sizeof sa) == -1 ||
	    (f = fopen(argv[2], "a")) == NULL) {
		perror("notify_sink");
		return 1;
	}
	end = util_now() + atof(argv[3]);
	pfd.fd = s;
	pfd.events = POLLIN;
	while (util_now() < end) {
		if (poll(&pfd, 1, 200) != 1)
			continue;
		if ((n = recv(s, buf, sizeof buf - 1, 0)) <= 0)
			continue;
		buf[n] = '\0';
		fprintf(f, "%s\n", buf);
		fflush(f);
		if (strstr(buf, "STOPPING=1") != NULL)
			break;
	}
	fclose(f);
	close(s);
	unlink(argv[1]);
	return 0;
}
