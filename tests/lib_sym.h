/*
 * Shared by the test programs that call a library built by `autosched
 * build` (dlopen'ed): sym finds a function in it or fails the program.
 */
#ifndef AUTOSCHED_TESTS_LIB_SYM_H
#define AUTOSCHED_TESTS_LIB_SYM_H
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

/* NAME's address in the library H; prints FAIL and exits 1 when H lacks it. */
static inline void *
sym(void *h, const char *name)
{
	void *f = dlsym(h, name);

	if (f == NULL) {
		printf("FAIL: %s not exported\n", name);
		exit(1);
	}
	return f;
}
#endif
