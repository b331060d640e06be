/*
 * libFuzzer harness for the MLIR analysis: the input bytes are an MLIR file;
 * parsing, listing and emitting every dispatch (and naming every
 * convolution) must neither crash nor leak.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "analysis/analysis.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct analysis	*a = NULL;
	char		*err = NULL, *text;
	size_t		 i;

	/* Bound the work per input; real files are tested elsewhere. */
	if (size > 64 * 1024)
		return 0;
	if (analysis_parse("fuzz.mlir", (const char *)data, size, &a,
	    &err) != 0) {
		free(err);
		return 0;
	}
	for (i = 0; i < analysis_count(a); i++) {
		err = NULL;
		if (analysis_emit_dispatch(analysis_op(a, i), &text, &err) == 0)
			free(text);
		free(err);
		/* A convolution's name and flops, from its geometry. */
		free(analysis_conv_name(analysis_op(a, i)));
		(void)analysis_op_flops(analysis_op(a, i));
	}
	analysis_free(a);
	return 0;
}
