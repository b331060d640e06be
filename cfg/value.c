/*
 * The values a cfg holds: integers, numbers, seconds, booleans, and the
 * [SearchSpace] value lists ("64", "[64,128]", "32:257:32") as sorted sets.
 */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cfg/cfg.h"
#include "cfg/cfg_int.h"
#include "util/util.h"

/* Quoted values are cut to this many bytes in messages. */
#define VALUE_QUOTE	40

static void value_why(char *, size_t, const char *, ...) PRINTFLIKE(3, 4);

static void
value_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL || len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

/* Trim the span [*s, *e) of white space. */
static void
value_trim(const char **s, const char **e)
{
	while (*s < *e && isspace((unsigned char)**s))
		(*s)++;
	while (*e > *s && isspace((unsigned char)(*e)[-1]))
		(*e)--;
}

/*
 * Parse the span [s, s + n) as a decimal integer (optional sign, digits only).
 * Magnitudes past INT64_MAX saturate and set *over, so the range check below
 * can say "too large" rather than "not an integer".
 */
static int
value_span_int(const char *s, size_t n, int64_t *out, int *over)
{
	int64_t v = 0;
	size_t i = 0;
	int neg = 0, d;

	*over = 0;

	if (n > 0 && (s[0] == '+' || s[0] == '-')) {
		neg = s[0] == '-';
		i = 1;
	}
	if (i == n)
		return -1;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		d = s[i] - '0';
		if (v > (INT64_MAX - d) / 10) {
			v = INT64_MAX;
			*over = 1;
		} else
			v = v * 10 + d;
	}
	*out = neg ? -v : v;
	return 0;
}

/* An integer of [min, max] in the span [s, s + n); what names it in messages. */
static int
value_span_check(const char *s, size_t n, const char *what, int64_t min,
    int64_t max, int64_t *out, char *why, size_t len)
{
	const char *sp = what[0] != '\0' ? " " : "";
	int q = n > VALUE_QUOTE ? VALUE_QUOTE : (int)n;
	int64_t v;
	int over;

	if (value_span_int(s, n, &v, &over) != 0) {
		value_why(why, len, "%s%s'%.*s' is not an integer", what, sp, q, s);
		return -1;
	}
	if (v < min) {
		if (min == 1)
			value_why(why, len, "%s%s%.*s is not positive", what, sp, q, s);
		else
			value_why(why, len, "%s%s%.*s is below %" PRId64, what, sp,
			    q, s, min);
		return -1;
	}
	if (v > max || (over && v > 0)) {
		value_why(why, len, "%s%s%.*s is too large (at most %" PRId64 ")",
		    what, sp, q, s, max);
		return -1;
	}
	*out = v;
	return 0;
}

int
cfg_value_int(const char *s, int64_t min, int64_t max, int64_t *out,
    char *why, size_t len)
{
	return value_span_check(s, strlen(s), "", min, max, out, why, len);
}

int
cfg_value_number(const char *s, double min, double max, double *out,
    char *why, size_t len)
{
	char *end;
	double v;

	/* strtod also takes "inf", "nan" and hex; only finite values pass below. */
	v = strtod(s, &end);
	if (s[0] == '\0' || isspace((unsigned char)s[0]) || *end != '\0' ||
	    !isfinite(v)) {
		value_why(why, len, "'%.*s' is not a number", VALUE_QUOTE, s);
		return -1;
	}
	if (v < min || v > max) {
		value_why(why, len, "%.*s is out of range [%g, %g]", VALUE_QUOTE,
		    s, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

int
cfg_value_seconds(const char *s, double min, double max, double *out,
    char *why, size_t len)
{
	char num[64];
	size_t n = strlen(s);
	double scale = 1, v;

	if (n > 1 && strcmp(s + n - 2, "ms") == 0) {
		scale = 0.001;
		n -= 2;
	} else if (n > 0 && strchr("smh", s[n - 1]) != NULL) {
		scale = s[n - 1] == 'h' ? 3600 : s[n - 1] == 'm' ? 60 : 1;
		n--;
	}
	if (n == 0 || n >= sizeof num) {
		value_why(why, len, "'%.*s' is not a duration (seconds, or a "
		    "number with ms, s, m or h)", VALUE_QUOTE, s);
		return -1;
	}
	memcpy(num, s, n);
	num[n] = '\0';
	if (cfg_value_number(num, min / scale, max / scale, &v, NULL, 0) != 0) {
		value_why(why, len, "'%.*s' is not a duration in [%g, %g] seconds "
		    "(a number with an optional unit ms, s, m or h)", VALUE_QUOTE, s,
		    min, max);
		return -1;
	}
	*out = v * scale;
	return 0;
}

int
cfg_value_bool(const char *s, int *out, char *why, size_t len)
{
	static const char *const yes[] = { "1", "true", "yes", "on" };
	static const char *const no[] = { "0", "false", "no", "off" };
	size_t i;

	for (i = 0; i < sizeof yes / sizeof yes[0]; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	value_why(why, len, "'%.*s' is not a boolean (true/false, yes/no, on/off, "
	    "1/0)", VALUE_QUOTE, s);
	return -1;
}

static int
value_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* "[a, b, …]": count the elements before allocating, then parse each. */
static int
value_bracket_list(const char *s, size_t slen, int64_t min, int64_t max,
    int64_t **values, size_t *n, char *why, size_t len)
{
	const char *p = s + 1, *e = s + slen - 1, *q, *c;
	int64_t *v = NULL;
	size_t count, i;

	if (slen < 2 || s[slen - 1] != ']') {
		value_why(why, len, "'[' without a closing ']'");
		return -1;
	}
	value_trim(&p, &e);
	if (p == e) {
		value_why(why, len, "empty list []");
		return -1;
	}
	for (count = 1, q = p; q < e; q++)
		count += *q == ',';
	if (count > CFG_LIST_MAX) {
		value_why(why, len, "%zu values, more than %d", count, CFG_LIST_MAX);
		return -1;
	}
	v = xcalloc(count, sizeof *v);
	for (i = 0, q = p; i < count; i++) {
		const char *es, *ee;

		c = memchr(q, ',', (size_t)(e - q));
		if (c == NULL)
			c = e;
		es = q;
		ee = c;
		value_trim(&es, &ee);
		if (es == ee) {
			value_why(why, len, "empty element %zu (two commas, or a "
			    "comma at an end)", i + 1);
			goto fail;
		}
		if (value_span_check(es, (size_t)(ee - es), "", min, max,
		    &v[i], why, len) != 0)
			goto fail;
		q = c + 1;
	}
	*values = v;
	*n = count;
	return 0;
fail:
	free(v);
	return -1;
}

/* "start:stop:step", stop exclusive, as the dispatch profiler's --problem-m. */
static int
value_range(const char *s, size_t slen, int64_t min, int64_t max,
    int64_t **values, size_t *n, char *why, size_t len)
{
	const char *c1, *c2, *e = s + slen, *ps, *pe;
	int64_t start, stop, step, *v;
	uint64_t count, i;

	c1 = memchr(s, ':', slen);
	c2 = memchr(c1 + 1, ':', (size_t)(e - c1 - 1));
	if (c2 == NULL || memchr(c2 + 1, ':', (size_t)(e - c2 - 1)) != NULL) {
		value_why(why, len, "'%.*s' is not a range start:stop:step",
		    VALUE_QUOTE, s);
		return -1;
	}
	ps = s, pe = c1;
	value_trim(&ps, &pe);
	if (value_span_check(ps, (size_t)(pe - ps), "start", min, max,
	    &start, why, len) != 0)
		return -1;
	ps = c1 + 1, pe = c2;
	value_trim(&ps, &pe);
	if (value_span_check(ps, (size_t)(pe - ps), "stop", min, max + 1,
	    &stop, why, len) != 0)
		return -1;
	ps = c2 + 1, pe = e;
	value_trim(&ps, &pe);
	if (value_span_check(ps, (size_t)(pe - ps), "step", 1, CFG_VALUE_MAX,
	    &step, why, len) != 0)
		return -1;
	if (start >= stop) {
		value_why(why, len, "range %.*s is empty (stop is exclusive)",
		    VALUE_QUOTE, s);
		return -1;
	}
	count = (uint64_t)(stop - start + step - 1) / (uint64_t)step;
	if (count > CFG_LIST_MAX) {
		value_why(why, len, "range %.*s has %" PRIu64 " values, more than "
		    "%d", VALUE_QUOTE, s, count, CFG_LIST_MAX);
		return -1;
	}
	v = xcalloc(count, sizeof *v);
	for (i = 0; i < count; i++)
		v[i] = start + (int64_t)i * step;
	*values = v;
	*n = count;
	return 0;
}

int
cfg_value_list(const char *s, int64_t **values, size_t *n, char *why,
    size_t len)
{
	return cfg_value_list_in(s, 1, CFG_VALUE_MAX, values, n, why, len);
}

int
cfg_value_list_in(const char *s, int64_t min, int64_t max, int64_t **values,
    size_t *n, char *why, size_t len)
{
	size_t slen = strlen(s), i, j;
	int64_t *v = NULL, one;
	size_t nv = 0;

	*values = NULL;
	*n = 0;
	if (slen == 0) {
		value_why(why, len, "no value");
		return -1;
	}
	if (s[0] == '[') {
		if (value_bracket_list(s, slen, min, max, &v, &nv, why, len) != 0)
			return -1;
	} else if (memchr(s, ':', slen) != NULL) {
		if (value_range(s, slen, min, max, &v, &nv, why, len) != 0)
			return -1;
	} else if (memchr(s, ',', slen) != NULL) {
		value_why(why, len, "a list needs brackets: [%.*s]", VALUE_QUOTE, s);
		return -1;
	} else {
		if (value_span_check(s, slen, "", min, max, &one, why,
		    len) != 0)
			return -1;
		v = xmalloc(sizeof *v);
		v[0] = one;
		nv = 1;
	}
	qsort(v, nv, sizeof *v, value_cmp);
	for (i = j = 0; i < nv; i++) {
		if (j == 0 || v[j - 1] != v[i])
			v[j++] = v[i];
	}
	*values = v;
	*n = j;
	return 0;
}
