/*
 * libFuzzer harness of the service's configuration reader (autoschedd.conf,
 * also re-read on SIGHUP): any bytes must give a configuration or one error,
 * without crashing or leaking.
 */
#include "daemon/daemon_int.h"
#include "fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct service_conf *conf = NULL;
	char *err = NULL;

	FUZZ_OUTCOME(service_conf_parse("fuzz/autoschedd.conf",
	    (const char *)data, size, &conf, &err), conf, err,
	    service_conf_free);
	return 0;
}
