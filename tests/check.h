/*
 * A tiny test harness shared by the unit tests: CHECK records a failure and
 * goes on, the test's main returns check_done(), which prints the closing line.
 */
#ifndef AUTOSCHED_TESTS_CHECK_H
#define AUTOSCHED_TESTS_CHECK_H
#include <stdio.h>
#include <string.h>

static int check_failed, check_passed;

#define CHECK(cond) do {						\
	if (cond) check_passed++;					\
	else {								\
		check_failed++;						\
		fprintf(stderr, "%s:%d: CHECK failed: %s\n",		\
		    __FILE__, __LINE__, #cond);				\
	}								\
} while (0)

#define CHECK_STR(a, b) do {						\
	const char *check_a_ = (a), *check_b_ = (b);			\
	if (check_a_ != NULL && check_b_ != NULL &&			\
	    strcmp(check_a_, check_b_) == 0) check_passed++;		\
	else {								\
		check_failed++;						\
		fprintf(stderr, "%s:%d: CHECK_STR failed: \"%s\" != \"%s\"\n", \
		    __FILE__, __LINE__, check_a_ ? check_a_ : "(null)",	\
		    check_b_ ? check_b_ : "(null)");			\
	}								\
} while (0)

static inline int
check_done(void)
{
	printf("%d passed, %d failed\n", check_passed, check_failed);
	return check_failed ? 1 : 0;
}
#endif
