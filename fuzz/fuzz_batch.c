/*
 * libFuzzer harness of the batch folder's reader (measure/batch.h: the
 * manifest and results a measuring host sends back): the input, split at
 * its first NUL into a manifest and a results file, written into a folder
 * of its own; any bytes must give a folder or one error naming the file,
 * without crashing or leaking.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/fuzz.h"
#include "measure/batch.h"
#include "util/util.h"

static char dir[] = "/tmp/autosched-fuzz-batch-XXXXXX";

/* name in the fuzzer's folder holds p[0..n) (util_write_file: the project's writer). */
static void
put(const char *name, const uint8_t *p, size_t n)
{
	char *path = util_path_join(dir, name), *err = NULL;

	if (util_write_file(path, (const char *)p, n, &err) != 0)
		abort();
	free(path);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int made;
	struct measure_batch *b = NULL;
	const uint8_t *z = memchr(data, 0, size);
	size_t m = z != NULL ? (size_t)(z - data) : size;
	char *err = NULL;
	int rc;

	if (!made && mkdtemp(dir) == NULL)
		abort();
	made = 1;
	put(MEASURE_BATCH_MANIFEST, data, m);
	put(MEASURE_BATCH_RESULTS, z != NULL ? z + 1 : data, z != NULL ?
	    size - m - 1 : 0);
	rc = measure_batch_read(dir, 1, &b, &err);
	/* The error names the file. */
	if (rc != 0 && err != NULL && strstr(err, dir) == NULL)
		abort();
	FUZZ_OUTCOME(rc, b, err, measure_batch_free);
	return 0;
}
