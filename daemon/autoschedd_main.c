/*
 * autoschedd: the tuning service. Everything is in service.c.
 */
#include "daemon/daemon.h"
#include "util/util.h"

int
main(int argc, char **argv)
{
	int rc = service_main(argc, argv);

	/* What -n and --help print must have reached stdout. */
	if (util_stdout_close() != 0 && rc == 0)
		rc = 1;
	return rc;
}
