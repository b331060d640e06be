/*
 * autoschedd: the tuning service. Everything is in service.c.
 */
#include "daemon/daemon.h"

int
main(int argc, char **argv)
{
	return service_main(argc, argv);
}
