/*
 * The harness's .npy modes, for the IREE backend: the same verification
 * and timing data the kernel checks use, written as numpy files that
 * iree-run-module and iree-benchmark-module read (--input=@FILE.npy), and
 * the check of the output .npy iree-run-module wrote against the same exact
 * reference. One reference for every backend.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/mlir-cpu/measure_int.h"
#include "util/util.h"

#define NPY_HEADER_MAX	4096	/* bytes of an .npy header we read */

/* numpy's dtype of t ("<f4"), or NULL (bf16: numpy has none). */
static const char *
npy_descr(enum mtype t)
{
	switch (t) {
	case T_F32:
		return "<f4";
	case T_F64:
		return "<f8";
	case T_F16:
		return "<f2";
	case T_I8:
	case T_U8:
		/* The dispatch's tensors are signless i8 whatever the widening. */
		return "|i1";
	case T_I32:
		return "<i4";
	default:
		return NULL;
	}
}

/* "(8, 64, 32)" or "(64, 32)": the shape of an operand as it is stored. */
static void
npy_shape(const struct job *j, long d0, long d1, char *buf, size_t len)
{
	if (j->batched)
		snprintf(buf, len, "(%ld, %ld, %ld)", j->batch, d0, d1);
	else
		snprintf(buf, len, "(%ld, %ld)", d0, d1);
}

/*
 * Write n elements of type t at p as DIR/name.npy (version 1.0, header
 * padded to 64 bytes), or as DIR/name.bin, raw, for bf16. Through the one
 * writer (a temporary beside it, renamed). Dies on failure.
 */
static void
npy_write(const struct job *j, const char *name, enum mtype t, const void *p,
    size_t n, long d0, long d1)
{
	const char *descr = npy_descr(t);
	char shape[96], hdr[256], *path, *buf, *err = NULL;
	size_t hlen, total, bytes = n * mtype_size(t);

	npy_shape(j, d0, d1, shape, sizeof shape);
	if (descr == NULL) {
		path = xasprintf("%s/%s.bin", j->npy_inputs, name);
		if (util_write_file(path, p, bytes, &err) != 0)
			die("%s", err);
		free(path);
		return;
	}
	hlen = (size_t)snprintf(hdr, sizeof hdr, "{'descr': '%s', "
	    "'fortran_order': False, 'shape': %s, }", descr, shape);
	/* magic (6) + version (2) + length (2) + header + '\n': 64-aligned. */
	total = (10 + hlen + 1 + 63) / 64 * 64;
	buf = xmalloc(total + bytes);
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (char)((total - 10) & 0xff);
	buf[9] = (char)((total - 10) >> 8);
	memcpy(buf + 10, hdr, hlen);
	memset(buf + 10 + hlen, ' ', total - 10 - hlen - 1);
	buf[total - 1] = '\n';
	memcpy(buf + total, p, bytes);
	path = xasprintf("%s/%s.npy", j->npy_inputs, name);
	if (util_write_file(path, buf, total + bytes, &err) != 0)
		die("%s", err);
	free(path);
	free(buf);
}

/* Print one JSON object as a line and free it. */
static void
print_json(json_t *o)
{
	char *line = json_dumps(o, JSON_COMPACT);

	if (line == NULL)
		die("cannot encode the result");
	puts(line);
	free(line);
	json_decref(o);
}

/*
 * The data in the order the kernel check makes it: the verification data
 * (when the op can be checked), then the timing data, from one sequence.
 */
struct npy_data {
	struct check_plan plan;
	void		*lhs, *rhs, *acc0;	/* verification data, or NULL */
	void		*tl, *tr, *ta;		/* timing data */
};

static void
npy_data_make(const struct job *j, struct npy_data *d)
{
	size_t na = (size_t)j->batch * j->m * j->k;
	size_t nb = (size_t)j->batch * j->k * j->n;
	size_t nc = (size_t)j->batch * j->m * j->n;
	uint64_t rng = data_rng(j->seed);

	memset(d, 0, sizeof *d);
	if (j->verify) {
		check_plan(j, &d->plan);
		if (d->plan.why_not == NULL) {
			d->lhs = buf_alloc(j->lt, na);
			d->rhs = buf_alloc(j->rt, nb);
			d->acc0 = buf_alloc(j->at, nc);
			fill_check(j, &d->plan, d->lhs, d->rhs, d->acc0, &rng);
		}
	}
	d->tl = buf_alloc(j->lt, na);
	d->tr = buf_alloc(j->rt, nb);
	d->ta = buf_alloc(j->at, nc);
	fill_timing(j->lt, d->tl, na, &rng);
	fill_timing(j->rt, d->tr, nb, &rng);
	fill_timing(j->at, d->ta, nc, &rng);
}

static void
npy_data_free(struct npy_data *d)
{
	free(d->lhs);
	free(d->rhs);
	free(d->acc0);
	free(d->tl);
	free(d->tr);
	free(d->ta);
}

/*
 * --npy-inputs DIR: check_{lhs,rhs,acc} (when the op can be checked) and
 * time_{lhs,rhs,acc}, each .npy (.bin for bf16), shaped as stored.
 */
int
npy_inputs_main(const struct job *j)
{
	size_t na = (size_t)j->batch * j->m * j->k;
	size_t nb = (size_t)j->batch * j->k * j->n;
	size_t nc = (size_t)j->batch * j->m * j->n;
	long l0 = j->ta ? j->k : j->m, l1 = j->ta ? j->m : j->k;
	long r0 = j->tb ? j->n : j->k, r1 = j->tb ? j->k : j->n;
	struct npy_data d;
	json_t *out = json_object();

	npy_data_make(j, &d);
	if (d.lhs != NULL) {
		npy_write(j, "check_lhs", j->lt, d.lhs, na, l0, l1);
		npy_write(j, "check_rhs", j->rt, d.rhs, nb, r0, r1);
		npy_write(j, "check_acc", j->at, d.acc0, nc, j->m, j->n);
	}
	npy_write(j, "time_lhs", j->lt, d.tl, na, l0, l1);
	npy_write(j, "time_rhs", j->rt, d.tr, nb, r0, r1);
	npy_write(j, "time_acc", j->at, d.ta, nc, j->m, j->n);
	json_object_set_new(out, "status", json_string("ok"));
	json_object_set_new(out, "check", json_integer(d.lhs != NULL));
	if (j->verify && d.plan.why_not != NULL)
		json_object_set_new(out, "not_verified",
		    json_string(d.plan.why_not));
	print_json(out);
	npy_data_free(&d);
	return 0;
}

/*
 * The elements of the .npy file at path, which must hold exactly the
 * result's type and shape (C order). Dies saying what differs.
 */
static void *
npy_read(const struct job *j, const char *path, size_t n)
{
	const char *descr = npy_descr(j->at);
	char *buf = NULL, *err = NULL, *h, want[96], *sh;
	size_t len = 0, hlen, bytes = n * mtype_size(j->at);
	void *data;

	if (util_read_file(path, 10 + NPY_HEADER_MAX + bytes + 64, &buf, &len,
	    &err) != 0)
		die("%s", err);
	if (descr == NULL) {
		/* bf16 comes back raw (iree-run-module --output=@FILE.bin). */
		if (len != bytes)
			die("%s: %zu bytes; expected %zu", path, len, bytes);
		return buf;
	}
	if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0)
		die("%s: not an .npy file", path);
	if (buf[6] != 1)
		die("%s: .npy version %d; expected 1", path, buf[6]);
	hlen = (size_t)(unsigned char)buf[8] | (size_t)(unsigned char)buf[9] << 8;
	if (hlen > NPY_HEADER_MAX || 10 + hlen > len)
		die("%s: bad .npy header length %zu", path, hlen);
	h = xstrndup(buf + 10, hlen);
	npy_shape(j, j->m, j->n, want, sizeof want);
	if (strstr(h, descr) == NULL || strstr(h, "'fortran_order': False") ==
	    NULL)
		die("%s: header %s; expected dtype %s in C order", path, h,
		    descr);
	/* numpy prints a 1-tuple with a comma; ours has 2 or 3 dims. */
	if ((sh = strstr(h, "'shape': ")) == NULL ||
	    strncmp(sh + 9, want, strlen(want)) != 0)
		die("%s: header %s; expected shape %s", path, h, want);
	if (len - 10 - hlen != bytes)
		die("%s: %zu bytes of data; expected %zu", path,
		    len - 10 - hlen, bytes);
	data = xmalloc(bytes ? bytes : 1);
	memcpy(data, buf + 10 + hlen, bytes);
	free(h);
	free(buf);
	return data;
}

/*
 * --npy-check OUT: the result iree-run-module computed from the check_*
 * inputs, compared exactly with the reference; one JSON line as the kernel
 * check prints it (status ok or wrong, verified, max_err, checked_by).
 */
int
npy_check_main(const struct job *j)
{
	size_t nc = (size_t)j->batch * j->m * j->n, i;
	struct npy_data d;
	const char *routine;
	double *want, max_err = 0;
	char checked_by[64];
	json_t *out = json_object();
	void *got;

	npy_data_make(j, &d);
	if (d.lhs == NULL)
		die("--npy-check: the op has no verification data (%s)",
		    j->verify ? d.plan.why_not : "--verify 0");
	got = npy_read(j, j->npy_check, nc);
	routine = reference_result(j, d.lhs, d.rhs, d.acc0, &want);
	for (i = 0; i < nc; i++) {
		double e = fabs(elem_get(j->at, got, i) - want[i]);

		if (!(e <= max_err))
			max_err = e;	/* also catches NaN */
	}
	snprintf(checked_by, sizeof checked_by, "exact:%s(%s data)", routine,
	    d.plan.data);
	json_object_set_new(out, "status", json_string(max_err == 0 ? "ok" :
	    "wrong"));
	json_object_set_new(out, "verified", json_integer(1));
	json_object_set_new(out, "max_err", json_real(max_err));
	json_object_set_new(out, "checked_by", json_string(checked_by));
	print_json(out);
	free(want);
	free(got);
	npy_data_free(&d);
	return 0;
}
