/*
 * autoschedd: the tuning service. Everything is in service.c.
 */
#include "daemon/daemon.h"
#include "util/util.h"

int
main(int argc, char **argv)
{
	int rc;

	if (daemon_isa_env_check("autoschedd") != 0)
		return 2;
	rc = service_main(argc, argv);

	/* What -n and --help print must have reached stdout. */
	if (util_stdout_close() != 0 && rc == 0)
		rc = 1;
	return rc;
}
