/*
 * What the libFuzzer harnesses share: the entry point they define and the
 * contract every reader of outside input keeps.
 */
#ifndef AUTOSCHED_FUZZ_H
#define AUTOSCHED_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/*
 * A reader's outcome rc against its contract: 0 with a result obj and no
 * message err, or nonzero with err and no obj; anything else aborts (for
 * libFuzzer to report). Then frees what it gave (free_obj for obj).
 */
#define FUZZ_OUTCOME(rc, obj, err, free_obj) do {			\
	if ((rc) == 0) {						\
		if ((obj) == NULL || (err) != NULL)			\
			abort();					\
		free_obj(obj);						\
	} else {							\
		if ((obj) != NULL || (err) == NULL)			\
			abort();					\
		free(err);						\
	}								\
} while (0)

#endif
