/*
 * Private to cfg/: the bounds on what a cfg may hold and the value parsers
 * (value.c) the reader (cfg.c) checks every value with.
 */
#ifndef AUTOSCHED_CFG_INT_H
#define AUTOSCHED_CFG_INT_H

#include <stddef.h>
#include <stdint.h>

#define CFG_FILE_MAX	CFG_TEXT_MAX		/* bytes in a cfg (cfg.h) */
#define CFG_LINE_MAX	(64 * 1024)		/* bytes in one line, without its newline */
#define CFG_LIST_MAX	4096			/* values in one [SearchSpace] list */
#define CFG_EXTRA_MAX	64			/* tuner-specific keys */
#define CFG_WARN_MAX	32			/* warnings kept */

/*
 * Each parser reads the whole of s (trimmed by inih). On success it returns 0;
 * on failure -1 with why (len bytes) saying what is wrong with the value.
 */

/* A decimal integer in [min, max]. */
int	 cfg_value_int(const char *s, int64_t min, int64_t max, int64_t *out,
	    char *why, size_t len);
/* A finite number in [min, max]. */
int	 cfg_value_number(const char *s, double min, double max, double *out,
	    char *why, size_t len);
/* Seconds in [min, max]: a number with an optional unit ms, s, m or h. */
int	 cfg_value_seconds(const char *s, double min, double max, double *out,
	    char *why, size_t len);
/* 1/0, true/false, yes/no, on/off. */
int	 cfg_value_bool(const char *s, int *out, char *why, size_t len);
/*
 * A [SearchSpace] value: "64", "[64, 128]" or "32:257:32" (stop exclusive).
 * Values are positive, at most CFG_VALUE_MAX, at most CFG_LIST_MAX of them;
 * *values is sorted without duplicates and the caller frees it.
 */
int	 cfg_value_list(const char *s, int64_t **values, size_t *n, char *why,
	    size_t len);
/* The same with values in [min, max] (a 0/1 knob: 0, 1). */
int	 cfg_value_list_in(const char *s, int64_t min, int64_t max,
	    int64_t **values, size_t *n, char *why, size_t len);

#endif
