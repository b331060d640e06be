/*
 * Internals of the autosched-measure child (measure_main.c): the job it was
 * given, its per-process counters (measure_counters.c) and the oneDNN
 * reference it loads at run time (measure_onednn.c). Nothing else sees this.
 */
#ifndef AUTOSCHED_MEASURE_INT_H
#define AUTOSCHED_MEASURE_INT_H

#include <stddef.h>
#include <stdint.h>

enum mtype { T_F32, T_F64, T_F16, T_BF16, T_I8, T_U8, T_I32, T_NONE };

/*
 * --conv: the reference run is a convolution (f32, oneDNN's), not the
 * matmul of its im2col; a kernel run (the conv's GEMM) times the im2col
 * copy of the input before each call of the kernel: input N×H×W×C before padding (NHWC, or NCHW when
 * nchw), F filters of KH×KW×C (HWCF, or FCHW), strides, dilations, padding
 * top, bottom, left, right, and the output OH×OW they make.
 */
struct conv_geom {
	int	 set, nchw;
	long	 n, h, w, c, f, kh, kw, oh, ow;
	long	 stride[2], dilation[2], pad[4];
};

/* Which library routine the reference run times. */
enum ref_kind { REF_AUTO, REF_OPENBLAS, REF_ONEDNN, REF_BLIS };

struct job {
	const char	*kernel;	/* .so path; NULL = a reference library */
	enum ref_kind	 ref;
	long		 batch, m, n, k;
	enum mtype	 lt, rt, at;
	int		 ta, tb;
	int		 threads;
	int		 warmup, min_reps, max_reps;
	double		 min_time;
	uint64_t	 seed;
	int		 verify;
	const char	*fault;		/* crash|hang|wrong|nothing|sleep|NULL */
	const char	*cpus;
	int		 peak;		/* --peak: time the FMA probe, no matmul */
	/*
	 * --zero-points ZA,ZB: a quantized op, acc += (lhs - ZA)(rhs - ZB);
	 * its kernel takes them as two int32 arguments after acc.
	 */
	int		 zp;
	int32_t		 za, zb;
	int		 bandwidth;	/* --bandwidth: time the triad, no matmul */
	/*
	 * The IREE backend's modes (measure_npy.c): --npy-inputs DIR writes
	 * the verification and timing data as .npy files, --npy-check FILE
	 * checks an output .npy against the reference; batched: the tensors
	 * have a leading batch dimension (a batch_matmul dispatch).
	 */
	const char	*npy_inputs;
	const char	*npy_check;
	int		 batched;
	struct conv_geom conv;
};

void	 die(const char *fmt, ...)
	    __attribute__((noreturn, format(printf, 1, 2)));

/*
 * The verification data (measure_main.c), shared with the .npy modes: the
 * plan of which values may be non-zero, the data itself, the exact
 * expected result (caller frees *want; returns the routine's name), the
 * dense timing data, and the elements' accessors.
 */
struct check_plan {
	const char	*data;		/* "dense" | "sparse" */
	const char	*why_not;	/* set: cannot be checked exactly */
	long		 sa, sb;
};
void	 check_plan(const struct job *, struct check_plan *);
void	 fill_check(const struct job *, const struct check_plan *, void *lhs,
	    void *rhs, void *acc0, uint64_t *rng);
const char *reference_result(const struct job *, const void *lhs,
	    const void *rhs, const void *acc0, double **want);
void	 fill_timing(enum mtype, void *, size_t n, uint64_t *rng);
void	*buf_alloc(enum mtype, size_t n);
size_t	 mtype_size(enum mtype);
double	 elem_get(enum mtype, const void *, size_t i);
/* The first value of the data's random sequence for seed. */
uint64_t data_rng(uint64_t seed);
/* The .npy modes: print one JSON line, return the exit status. */
int	 npy_inputs_main(const struct job *);
int	 npy_check_main(const struct job *);

/*
 * Per-process counters (perf_event_open, all threads of the process; the
 * context switches fall back to getrusage when perf cannot count them).
 */
enum ctr {
	CTR_CONTEXT_SWITCHES,
	CTR_CPU_MIGRATIONS,
	CTR_PAGE_FAULTS,
	CTR_TASK_CLOCK_NS,
	CTR_CYCLES,
	CTR_INSTRUCTIONS,
	CTR_CACHE_MISSES,
	CTR_COUNT
};
struct counters;
extern const char *const counter_names[CTR_COUNT];

/* Open what can be opened (never fails; absent counters read as absent). */
struct counters	*counters_open(void);
/* Read every counter into v; bit i of *have says counter i was read. */
void		 counters_sample(struct counters *, uint64_t v[CTR_COUNT],
		    uint32_t *have);
void		 counters_close(struct counters *);

/*
 * oneDNN matmul for the reference run, loaded with dlopen so that the
 * kernels' own OpenMP runtime never shares the process with oneDNN's.
 * onednn_open returns NULL with *why (static or owned by the module) when
 * oneDNN is missing or has no optimised implementation for these types;
 * name receives e.g. "onednn:matmul_u8s8s32". acc += lhs·rhs per call.
 */
struct onednn;
struct onednn	*onednn_open(const struct job *, void *lhs, void *rhs,
		    void *acc, char *name, size_t namelen, const char **why);
void		 onednn_run(struct onednn *);

/*
 * oneDNN's direct convolution forward (f32) of j->conv for the reference
 * run: src, wei and dst in the op's layout (conv_sizes'), dst += conv(src,
 * wei) per onednn_run. The weights are reordered once into the layout
 * oneDNN picks, as a user would: onednn_conv_weights does it again after
 * wei changes. NULL with *why as onednn_open.
 */
struct onednn	*onednn_conv_open(const struct job *, void *src, void *wei,
		    void *dst, char *name, size_t namelen, const char **why);
void		 onednn_conv_weights(struct onednn *);

/*
 * The convolution's element counts: input, filter, output (measure_conv.c),
 * and the direct loop: *want = dst + conv(src, wei), exactly in doubles
 * (caller frees *want).
 */
void		 conv_sizes(const struct conv_geom *, size_t n[3]);
void		 conv_direct(const struct conv_geom *, const float *src,
		    const float *wei, const float *dst, double **want);
/* Parse --conv's value into *g (OH, OW computed); -1 if malformed. */
int		 conv_parse(const char *, struct conv_geom *g);
/*
 * With a kernel (--kernel, --conv): 1 if the kernel's BxMxNxK is g's GEMM
 * (NHWC: (N·OH·OW)×F×(KH·KW·C); NCHW of batch 1: F×(OH·OW)×(C·KH·KW)).
 * conv_im2col writes the im2col of the input src into cols: the GEMM's
 * lhs (NHWC, row-major) or rhs (NCHW), padding as zeros; its rows (NHWC's
 * output pixels, NCHW's channel taps) split over up to `threads` threads
 * of its own, made and joined in the call (one when the copy is small).
 */
int		 conv_gemm_matches(const struct conv_geom *, long batch, long m,
		    long n, long k);
void		 conv_im2col(const struct conv_geom *, const float *src,
		    float *cols, int threads);
void		 onednn_close(struct onednn *);

/*
 * BLIS (bench peer, --ref blis): bli_sgemm/bli_dgemm from libblis.so.4,
 * loaded with dlopen (its cblas symbols would clash with OpenBLAS's). NULL
 * with *why when missing or for types other than f32/f64. acc += lhs·rhs.
 */
struct blis;
struct blis	*blis_open(const struct job *, const void *lhs, const void *rhs,
		    void *acc, char *name, size_t namelen, const char **why);
void		 blis_run(struct blis *);
void		 blis_close(struct blis *);

/*
 * The FMA peak probe (--peak): one call runs independent register-only FMAs
 * in the widest vectors on `threads` threads pinned to the process's CPUs;
 * *flops receives what it did. Lanes of f32 per vector, 0 without FMA.
 */
double		 peak_call(int threads, double *flops);
int		 peak_lanes(void);

/*
 * The memory bandwidth probe (--bandwidth): one call runs a STREAM triad
 * over three arrays of stream_bytes_per_array() bytes each (4x the
 * last-level cache, 64 MiB to 1 GiB; made and first touched once, kept
 * for the process), split over `threads` pinned threads;
 * *bytes receives what STREAM counts it moved (24 per element).
 */
double		 stream_call(int threads, double *bytes);
/* Make and first-touch the arrays for threads (stream_call does it if not). */
void		 stream_setup(int threads);
size_t		 stream_bytes_per_array(void);

#endif
