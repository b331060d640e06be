/*
 * libFuzzer harness of the cfg reader: any bytes must give a cfg or one
 * error, without crashing or leaking.
 */
#include "cfg/cfg.h"
#include "fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfg *cfg = NULL;
	char *err = NULL;

	FUZZ_OUTCOME(cfg_parse("fuzz/x.cfg", (const char *)data, size, 0, &cfg,
	    &err), cfg, err, cfg_free);
	return 0;
}
