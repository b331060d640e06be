/*
 * Features of a config for cost models: the knob values and their logs, what
 * the tiles cost against this CPU's caches and vector registers, and the op's
 * own shape, so that a model trained on one shape says something about another.
 */
#include <math.h>
#include <pthread.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "search/space.h"

/* What the features measure the tiles against, read once per process. */
static struct {
	double	l1, l2;		/* data cache bytes */
	double	nregs;		/* vector registers */
	double	regbytes;	/* bytes per vector register */
} cpu;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

enum {
	F_KNOB = 0,				/* KNOB_COUNT raw values */
	F_LOG = F_KNOB + KNOB_COUNT,		/* KNOB_COUNT log2 values */
	F_FOOT_LOG = F_LOG + KNOB_COUNT,	/* log2 bytes of A+B+C tiles */
	F_FOOT_L1,				/* A+B+C tile bytes / L1d */
	F_FOOT_L2,				/* A+B+C tile bytes / L2 */
	F_BPANEL_L1,				/* B tile (tk×tn) bytes / L1d */
	F_REG_LOG,				/* log2 vm·vn accumulator elems */
	F_REG_RATIO,				/* accumulator bytes / register file */
	F_VEC_RATIO,				/* vn row bytes / one vector register */
	F_TILES_M,				/* log2 number of tiles along M */
	F_TILES_N,
	F_TILES_K,
	F_TILES_LOG,				/* log2 parallel tiles (batch·M·N) */
	F_PAD,					/* fraction of padded (wasted) work */
	F_INTENSITY,				/* tile flops per tile byte */
	F_IMBALANCE,				/* thread rounds · threads / tiles */
	F_OP_M,					/* log2 of the op's M, N, K, batch */
	F_OP_N,
	F_OP_K,
	F_OP_BATCH,
	F_ELEM,					/* bytes per lhs element */
	F_END
};
_Static_assert(F_END == SPACE_NFEATURES, "SPACE_NFEATURES and the feature list differ");

static const char *const feature_names[SPACE_NFEATURES] = {
	"tile_m", "tile_n", "tile_k", "vector_m", "vector_n", "vector_k",
	"threads", "block_dim_x", "block_dim_y", "block_dim_z", "pipeline_depth",
	"pack_b", "pad_smem", "pack_a", "log_tile_m", "log_tile_n",
	"log_tile_k", "log_vector_m", "log_vector_n", "log_vector_k",
	"log_threads", "log_block_dim_x", "log_block_dim_y", "log_block_dim_z",
	"log_pipeline_depth", "log_pack_b", "log_pad_smem", "log_pack_a",
	"footprint_log", "footprint_l1", "footprint_l2", "b_panel_l1",
	"reg_tile_log", "reg_tile_ratio", "vector_width_ratio",
	"tiles_m", "tiles_n", "tiles_k", "tiles_log", "padding",
	"intensity", "imbalance",
	"op_m", "op_n", "op_k", "op_batch", "elem_size",
};

static void
features_cpu_init(void)
{
	long l1, l2;

	l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
	l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
	/* sysconf says 0 or -1 when it does not know (containers, non-x86). */
	cpu.l1 = l1 > 0 ? (double)l1 : 32768.0;
	cpu.l2 = l2 > 0 ? (double)l2 : 524288.0;
	cpu.nregs = 16;
	cpu.regbytes = 16;	/* SSE/NEON */
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f")) {
		cpu.nregs = 32;
		cpu.regbytes = 64;
	} else if (__builtin_cpu_supports("avx2"))
		cpu.regbytes = 32;
#elif defined(__aarch64__)
	cpu.nregs = 32;
#endif
}

/*
 * Bytes per element. Not analysis_elem_size: that lives in the MLIR-linked
 * analysis library, and search must stay light enough for any module to link.
 */
static double
features_elem_size(enum elem_type t)
{
	switch (t) {
	case ELEM_F64:
	case ELEM_I64:
		return 8;
	case ELEM_F16:
	case ELEM_BF16:
	case ELEM_I16:
		return 2;
	case ELEM_I8:
		return 1;
	case ELEM_F32:
	case ELEM_I32:
		return 4;
	default:
		return 0;
	}
}

static double
features_log2(int64_t v)
{
	return v > 0 ? log2((double)v) : 0.0;
}

/* min(tile, dim), the tile a dimension really gets; dim itself if unset. */
static int64_t
features_tile(int64_t tile, int64_t dim)
{
	if (tile <= 0 || tile > dim)
		return dim > 0 ? dim : 1;
	return tile;
}

static int64_t
features_ceil(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

void
space_features(const struct op_desc *op, const struct config *c,
    float out[SPACE_NFEATURES])
{
	double	 f[SPACE_NFEATURES] = { 0 };
	double	 ea, eb, ec, bytes, a, b, cc, tiles, work, padded, thr;
	int64_t	 m, n, k, batch, tm, tn, tk, vm, vn, nm, nn, nk;
	int	 i;

	pthread_once(&cpu_once, features_cpu_init);

	for (i = 0; i < KNOB_COUNT; i++) {
		f[F_KNOB + i] = (double)c->v[i];
		f[F_LOG + i] = features_log2(c->v[i]);
	}

	m = op->m > 0 ? op->m : 1;
	n = op->n > 0 ? op->n : 1;
	k = op->k > 0 ? op->k : 1;
	batch = op->batch > 0 ? op->batch : 1;
	ea = features_elem_size(op->lhs);
	eb = features_elem_size(op->rhs);
	ec = features_elem_size(op->acc);
	if (ea == 0)
		ea = 4;
	if (eb == 0)
		eb = ea;
	if (ec == 0)
		ec = ea;

	tm = features_tile(c->v[KNOB_TILE_M], m);
	tn = features_tile(c->v[KNOB_TILE_N], n);
	tk = features_tile(c->v[KNOB_TILE_K], k);
	a = (double)(tm * tk) * ea;
	b = (double)(tk * tn) * eb;
	cc = (double)(tm * tn) * ec;
	bytes = a + b + cc;
	f[F_FOOT_LOG] = log2(bytes);
	f[F_FOOT_L1] = bytes / cpu.l1;
	f[F_FOOT_L2] = bytes / cpu.l2;
	f[F_BPANEL_L1] = b / cpu.l1;

	vm = c->v[KNOB_VECTOR_M];
	vn = c->v[KNOB_VECTOR_N];
	if (vm > 0 && vn > 0) {
		f[F_REG_LOG] = features_log2(vm * vn);
		f[F_REG_RATIO] = (double)(vm * vn) * ec /
		    (cpu.nregs * cpu.regbytes);
		f[F_VEC_RATIO] = (double)vn * ec / cpu.regbytes;
	}

	nm = features_ceil(m, tm);
	nn = features_ceil(n, tn);
	nk = features_ceil(k, tk);
	f[F_TILES_M] = features_log2(nm);
	f[F_TILES_N] = features_log2(nn);
	f[F_TILES_K] = features_log2(nk);
	tiles = (double)batch * (double)nm * (double)nn;
	f[F_TILES_LOG] = log2(tiles);
	work = (double)m * (double)n * (double)k;
	padded = (double)(nm * tm) * (double)(nn * tn) * (double)(nk * tk);
	f[F_PAD] = 1.0 - work / padded;
	f[F_INTENSITY] = 2.0 * (double)tm * (double)tn * (double)tk / bytes;
	thr = c->v[KNOB_THREADS] > 0 ? (double)c->v[KNOB_THREADS] : 1.0;
	f[F_IMBALANCE] = ceil(tiles / thr) * thr / tiles;

	f[F_OP_M] = features_log2(m);
	f[F_OP_N] = features_log2(n);
	f[F_OP_K] = features_log2(k);
	f[F_OP_BATCH] = features_log2(batch);
	f[F_ELEM] = ea;

	for (i = 0; i < SPACE_NFEATURES; i++)
		out[i] = (float)f[i];
}

const char *
space_feature_name(int i)
{
	if (i < 0 || i >= SPACE_NFEATURES)
		return NULL;
	return feature_names[i];
}
