/*
 * The oneDNN reference of autosched-measure: one matmul primitive (u8s8s32,
 * s8s8s32, f32, bf16, f16 as the op's types ask) computing acc += lhs·rhs
 * with a sum post-op, or for a conv (--conv) one f32 direct convolution
 * forward, dst += conv(src, wei). libdnnl is loaded with dlopen only for the reference
 * run: it brings GNU OpenMP, which must not share a process with the LLVM
 * OpenMP runtime the kernels use.
 */
#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/mlir-cpu/measure_int.h"

#define DNNL_SONAME	"libdnnl.so.2"

/* The entry points used, typed from dnnl.h. */
#define DNNL_FUNCS(X)							\
	X(dnnl_engine_create) X(dnnl_engine_destroy)			\
	X(dnnl_stream_create) X(dnnl_stream_destroy) X(dnnl_stream_wait)	\
	X(dnnl_memory_desc_init_by_strides) X(dnnl_matmul_desc_init)	\
	X(dnnl_primitive_attr_create) X(dnnl_primitive_attr_destroy)	\
	X(dnnl_post_ops_create) X(dnnl_post_ops_destroy)		\
	X(dnnl_post_ops_append_sum) X(dnnl_primitive_attr_set_post_ops)	\
	X(dnnl_primitive_desc_create) X(dnnl_primitive_desc_destroy)	\
	X(dnnl_primitive_desc_query) X(dnnl_primitive_create)		\
	X(dnnl_primitive_destroy) X(dnnl_primitive_execute)		\
	X(dnnl_memory_create) X(dnnl_memory_destroy)			\
	X(dnnl_memory_desc_init_by_tag) X(dnnl_memory_desc_equal)	\
	X(dnnl_dilated_convolution_forward_desc_init)			\
	X(dnnl_primitive_desc_query_md) X(dnnl_reorder_primitive_desc_create)

struct onednn {
	void			*dl;
#define X(f)	__typeof__(&f) f;
	DNNL_FUNCS(X)
#undef X
	dnnl_engine_t		 engine;
	dnnl_stream_t		 stream;
	dnnl_primitive_t	 prim;
	dnnl_memory_t		 src, wei, dst;
	long			 batch;
	/* A conv's weights as given, and their reorder into wei (or NULL). */
	dnnl_memory_t		 user_wei;
	dnnl_primitive_t	 reorder;
};

static int
dnnl_type(enum mtype t, dnnl_data_type_t *out)
{
	switch (t) {
	case T_F32: *out = dnnl_f32; return 0;
	case T_F16: *out = dnnl_f16; return 0;
	case T_BF16: *out = dnnl_bf16; return 0;
	case T_I8: *out = dnnl_s8; return 0;
	case T_U8: *out = dnnl_u8; return 0;
	case T_I32: *out = dnnl_s32; return 0;
	default: return -1;
	}
}

static const char *
dnnl_type_name(enum mtype t)
{
	static const char *const n[] = { "f32", "f64", "f16", "bf16", "s8",
	    "u8", "s32" };

	return (unsigned)t < sizeof n / sizeof n[0] ? n[t] : "?";
}

/* A batch x rows x cols matrix, stored transposed (cols x rows) if trans. */
static void
md_init(struct onednn *o, dnnl_memory_desc_t *md, long b, long rows,
    long cols, int trans, dnnl_data_type_t t)
{
	dnnl_dims_t dims = { b, rows, cols }, strides;

	strides[0] = rows * cols;
	strides[1] = trans ? 1 : cols;
	strides[2] = trans ? rows : 1;
	o->dnnl_memory_desc_init_by_strides(md, 3, dims, t, strides);
}

/* The matmul's descriptors and what made them, kept until the primitive. */
struct onednn_desc {
	dnnl_memory_desc_t	 mds, mdw, mdd;
	dnnl_primitive_attr_t	 attr;
	dnnl_post_ops_t		 po;
	dnnl_primitive_desc_t	 pd;
};

/* Load libdnnl and the entry points into o; -1 with *why if one is missing. */
static int
onednn_load(struct onednn *o, const char **why)
{
	if ((o->dl = dlopen(DNNL_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		*why = "oneDNN (" DNNL_SONAME ") is not installed";
		return -1;
	}
#define X(f)								\
	if ((o->f = (__typeof__(&f))dlsym(o->dl, #f)) == NULL) {	\
		*why = "oneDNN lacks " #f;				\
		return -1;						\
	}
	DNNL_FUNCS(X)
#undef X
	return 0;
}

/*
 * The primitive's descriptor of the operation desc into d->pd, its
 * destination summed into (a sum post-op). -1 if oneDNN refuses one.
 */
static int
onednn_summed(struct onednn *o, const_dnnl_op_desc_t desc,
    struct onednn_desc *d)
{
	if (o->dnnl_primitive_attr_create(&d->attr) != dnnl_success ||
	    o->dnnl_post_ops_create(&d->po) != dnnl_success ||
	    o->dnnl_post_ops_append_sum(d->po, 1.0f) != dnnl_success ||
	    o->dnnl_primitive_attr_set_post_ops(d->attr, d->po) != dnnl_success)
		return -1;
	return o->dnnl_primitive_desc_create(&d->pd, desc, d->attr, o->engine,
	    NULL) == dnnl_success ? 0 : -1;
}

/*
 * Describe job j's matmul in types lt, rt, at as acc += lhs·rhs into *d:
 * the memory, the matmul with its sum post-op, the primitive's. -1 if
 * oneDNN refuses one.
 */
static int
onednn_describe(struct onednn *o, const struct job *j, dnnl_data_type_t lt,
    dnnl_data_type_t rt, dnnl_data_type_t at, struct onednn_desc *d)
{
	dnnl_matmul_desc_t desc;

	md_init(o, &d->mds, j->batch, j->m, j->k, j->ta, lt);
	md_init(o, &d->mdw, j->batch, j->k, j->n, j->tb, rt);
	md_init(o, &d->mdd, j->batch, j->m, j->n, 0, at);
	if (o->dnnl_matmul_desc_init(&desc, &d->mds, &d->mdw, NULL, &d->mdd) !=
	    dnnl_success)
		return -1;
	/* acc += lhs·rhs: the destination is summed into, as the kernels do. */
	return onednn_summed(o, &desc, d);
}

/* Free what *d holds. */
static void
onednn_desc_free(struct onednn *o, struct onednn_desc *d)
{
	if (d->pd != NULL)
		o->dnnl_primitive_desc_destroy(d->pd);
	if (d->attr != NULL)
		o->dnnl_primitive_attr_destroy(d->attr);
	if (d->po != NULL)
		o->dnnl_post_ops_destroy(d->po);
}

/*
 * A new instance: oneDNN loaded, a CPU engine and a stream. NULL with
 * *why (no_engine when the engine or stream cannot be made).
 */
static struct onednn *
onednn_new(const char *no_engine, const char **why)
{
	struct onednn *o = calloc(1, sizeof *o);

	if (o == NULL)
		die("out of memory");
	if (onednn_load(o, why) == 0) {
		*why = no_engine;
		if (o->dnnl_engine_create(&o->engine, dnnl_cpu, 0) ==
		    dnnl_success && o->dnnl_stream_create(&o->stream,
		    o->engine, dnnl_stream_default_flags) == dnnl_success)
			return o;
	}
	onednn_close(o);
	return NULL;
}

/*
 * The implementation oneDNN chose for d (borrowed from d->pd), or NULL if
 * it says none or only its reference loop: no library routine to compare
 * with.
 */
static const char *
onednn_impl(struct onednn *o, const struct onednn_desc *d)
{
	const char *impl = NULL;

	if (o->dnnl_primitive_desc_query(d->pd, dnnl_query_impl_info_str, 0,
	    &impl) != dnnl_success || impl == NULL ||
	    strncmp(impl, "ref", 3) == 0)
		return NULL;
	return impl;
}

/* The primitive of d and its src and dst memories over src, dst. 0 or -1. */
static int
onednn_prim(struct onednn *o, const struct onednn_desc *d, void *src,
    void *dst)
{
	if (o->dnnl_primitive_create(&o->prim, d->pd) != dnnl_success ||
	    o->dnnl_memory_create(&o->src, &d->mds, o->engine, src) !=
	    dnnl_success ||
	    o->dnnl_memory_create(&o->dst, &d->mdd, o->engine, dst) !=
	    dnnl_success)
		return -1;
	return 0;
}

/* The end of an open: d freed, then o ready (*why NULL), or closed if !ok. */
static struct onednn *
onednn_opened(struct onednn *o, struct onednn_desc *d, int ok,
    const char **why)
{
	onednn_desc_free(o, d);
	if (!ok) {
		onednn_close(o);
		return NULL;
	}
	*why = NULL;
	return o;
}

/* Run primitive p on args[0..n) and wait for it; 0, or -1 if oneDNN failed. */
static int
onednn_exec(struct onednn *o, dnnl_primitive_t p, int n,
    const dnnl_exec_arg_t *args)
{
	return o->dnnl_primitive_execute(p, o->stream, n, args) !=
	    dnnl_success || o->dnnl_stream_wait(o->stream) != dnnl_success ?
	    -1 : 0;
}

struct onednn *
onednn_open(const struct job *j, void *lhs, void *rhs, void *acc, char *name,
    size_t namelen, const char **why)
{
	struct onednn *o;
	dnnl_data_type_t lt, rt, at;
	struct onednn_desc d;
	const char *impl;

	if (dnnl_type(j->lt, &lt) || dnnl_type(j->rt, &rt) ||
	    dnnl_type(j->at, &at)) {
		*why = "oneDNN has no matmul for these types";
		return NULL;
	}
	memset(&d, 0, sizeof d);
	if ((o = onednn_new("oneDNN has no implementation for these types on "
	    "this CPU", why)) == NULL)
		return NULL;
	o->batch = j->batch;
	if (onednn_describe(o, j, lt, rt, at, &d) != 0)
		return onednn_opened(o, &d, 0, why);
	if ((impl = onednn_impl(o, &d)) == NULL) {
		*why = "oneDNN has only its reference loop for these types "
		    "on this CPU";
		return onednn_opened(o, &d, 0, why);
	}
	if (onednn_prim(o, &d, lhs, acc) != 0 ||
	    o->dnnl_memory_create(&o->wei, &d.mdw, o->engine, rhs) !=
	    dnnl_success)
		return onednn_opened(o, &d, 0, why);
	snprintf(name, namelen, "onednn:matmul_%s%s%s(%s)",
	    dnnl_type_name(j->lt), dnnl_type_name(j->rt),
	    dnnl_type_name(j->at), impl);
	return onednn_opened(o, &d, 1, why);
}

void
onednn_run(struct onednn *o)
{
	dnnl_exec_arg_t args[3] = {
		{ DNNL_ARG_SRC, o->src },
		{ DNNL_ARG_WEIGHTS, o->wei },
		{ DNNL_ARG_DST, o->dst },
	};

	if (onednn_exec(o, o->prim, 3, args) != 0)
		die("oneDNN %s failed", o->user_wei != NULL ? "convolution" :
		    "matmul");
}

/*
 * Describe the convolution g into *d: src and dst in the op's layout, the
 * weights in whichever layout oneDNN picks for them, the sum post-op, the
 * primitive's. -1 if oneDNN refuses one.
 */
static int
onednn_conv_describe(struct onednn *o, const struct conv_geom *g,
    dnnl_memory_desc_t *mdu, struct onednn_desc *d)
{
	dnnl_convolution_desc_t desc;
	dnnl_dims_t ds = { g->n, g->c, g->h, g->w }, dw = { g->f, g->c, g->kh,
	    g->kw }, dd = { g->n, g->f, g->oh, g->ow };
	dnnl_dims_t st = { g->stride[0], g->stride[1] };
	/* oneDNN counts a dilation from 0: the taps' gap less one. */
	dnnl_dims_t dl = { g->dilation[0] - 1, g->dilation[1] - 1 };
	dnnl_dims_t pl = { g->pad[0], g->pad[2] }, pr = { g->pad[1], g->pad[3] };
	dnnl_format_tag_t act = g->nchw ? dnnl_nchw : dnnl_nhwc;

	if (o->dnnl_memory_desc_init_by_tag(&d->mds, 4, ds, dnnl_f32, act) ||
	    o->dnnl_memory_desc_init_by_tag(&d->mdd, 4, dd, dnnl_f32, act) ||
	    o->dnnl_memory_desc_init_by_tag(mdu, 4, dw, dnnl_f32,
	    g->nchw ? dnnl_oihw : dnnl_hwio) ||
	    o->dnnl_memory_desc_init_by_tag(&d->mdw, 4, dw, dnnl_f32,
	    dnnl_format_tag_any))
		return -1;
	if (o->dnnl_dilated_convolution_forward_desc_init(&desc,
	    dnnl_forward_inference, dnnl_convolution_direct, &d->mds, &d->mdw,
	    NULL, &d->mdd, st, dl, pl, pr) != dnnl_success)
		return -1;
	return onednn_summed(o, &desc, d);
}

/*
 * The primitive of *d and its memories over src, the weights as given (wei,
 * described by *mdu) and dst; the weights' reorder when oneDNN chose
 * another layout for them. -1 if one cannot be made.
 */
static int
onednn_conv_make(struct onednn *o, struct onednn_desc *d,
    const dnnl_memory_desc_t *mdu, void *src, void *wei, void *dst)
{
	const dnnl_memory_desc_t *mdw;
	dnnl_primitive_desc_t rpd = NULL;
	int rc;

	mdw = o->dnnl_primitive_desc_query_md(d->pd, dnnl_query_weights_md, 0);
	if (mdw == NULL || onednn_prim(o, d, src, dst) != 0 ||
	    o->dnnl_memory_create(&o->user_wei, mdu, o->engine, wei) !=
	    dnnl_success)
		return -1;
	if (o->dnnl_memory_desc_equal(mdw, mdu))
		return o->dnnl_memory_create(&o->wei, mdu, o->engine, wei) ==
		    dnnl_success ? 0 : -1;
	/* oneDNN's own buffer, in its layout. */
	if (o->dnnl_memory_create(&o->wei, mdw, o->engine,
	    DNNL_MEMORY_ALLOCATE) != dnnl_success ||
	    o->dnnl_reorder_primitive_desc_create(&rpd, mdu, o->engine, mdw,
	    o->engine, NULL) != dnnl_success)
		return -1;
	rc = o->dnnl_primitive_create(&o->reorder, rpd) == dnnl_success ? 0 :
	    -1;
	o->dnnl_primitive_desc_destroy(rpd);
	return rc;
}

struct onednn *
onednn_conv_open(const struct job *j, void *src, void *wei, void *dst,
    char *name, size_t namelen, const char **why)
{
	struct onednn *o;
	struct onednn_desc d;
	dnnl_memory_desc_t mdu;
	const char *impl;

	if (j->lt != T_F32 || j->rt != T_F32 || j->at != T_F32) {
		*why = "the oneDNN convolution reference is f32 only";
		return NULL;
	}
	memset(&d, 0, sizeof d);
	if ((o = onednn_new("oneDNN has no convolution for this geometry on "
	    "this CPU", why)) == NULL)
		return NULL;
	if (onednn_conv_describe(o, &j->conv, &mdu, &d) != 0)
		return onednn_opened(o, &d, 0, why);
	if ((impl = onednn_impl(o, &d)) == NULL) {
		*why = "oneDNN has only its reference convolution loop for "
		    "this geometry on this CPU";
		return onednn_opened(o, &d, 0, why);
	}
	if (onednn_conv_make(o, &d, &mdu, src, wei, dst) != 0)
		return onednn_opened(o, &d, 0, why);
	onednn_conv_weights(o);
	snprintf(name, namelen, "onednn:conv_%s_f32(%s)",
	    j->conv.nchw ? "nchw_fchw" : "nhwc_hwcf", impl);
	return onednn_opened(o, &d, 1, why);
}

void
onednn_conv_weights(struct onednn *o)
{
	dnnl_exec_arg_t args[2] = {
		{ DNNL_ARG_FROM, o->user_wei },
		{ DNNL_ARG_TO, o->wei },
	};

	if (o->reorder != NULL && onednn_exec(o, o->reorder, 2, args) != 0)
		die("oneDNN weights reorder failed");
}

void
onednn_close(struct onednn *o)
{
	size_t i;

	if (o == NULL)
		return;
	if (o->dl != NULL) {
		dnnl_memory_t mem[] = { o->src, o->wei, o->dst, o->user_wei };
		dnnl_primitive_t prim[] = { o->reorder, o->prim };

		for (i = 0; i < sizeof mem / sizeof mem[0]; i++) {
			if (mem[i] != NULL)
				o->dnnl_memory_destroy(mem[i]);
		}
		for (i = 0; i < sizeof prim / sizeof prim[0]; i++) {
			if (prim[i] != NULL)
				o->dnnl_primitive_destroy(prim[i]);
		}
		if (o->stream != NULL)
			o->dnnl_stream_destroy(o->stream);
		if (o->engine != NULL)
			o->dnnl_engine_destroy(o->engine);
		/* Not dlclosed: its OpenMP threads may still be winding down. */
	}
	free(o);
}
