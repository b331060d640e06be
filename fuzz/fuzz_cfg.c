/*
 * libFuzzer harness of the cfg reader: any bytes must give a cfg or one
 * error, without crashing or leaking.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "cfg/cfg.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfg *cfg = NULL;
	char *err = NULL;

	if (cfg_parse("fuzz/x.cfg", (const char *)data, size, 0, &cfg,
	    &err) == 0) {
		if (cfg == NULL || err != NULL)
			abort();
		cfg_free(cfg);
	} else {
		if (cfg != NULL || err == NULL)
			abort();
		free(err);
	}
	return 0;
}
