/*
 * libFuzzer harness of the service's configuration reader (autoschedd.conf,
 * also re-read on SIGHUP): any bytes must give a configuration or one error,
 * without crashing or leaking.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "daemon/daemon_int.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct service_conf *conf = NULL;
	char *err = NULL;

	if (service_conf_parse("fuzz/autoschedd.conf", (const char *)data, size,
	    &conf, &err) == 0) {
		if (conf == NULL || err != NULL)
			abort();
		service_conf_free(conf);
	} else {
		if (conf != NULL || err == NULL)
			abort();
		free(err);
	}
	return 0;
}
