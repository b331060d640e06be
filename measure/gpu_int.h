/*
 * Internals of autosched-gpu-measure, the GPU measuring program: the CUDA
 * driver, cuBLAS and NVML entry points it loads with dlopen (so that it
 * builds, and its tests run, on machines with neither), the peak kernels'
 * PTX, and the problem it measures.
 */
#ifndef AUTOSCHED_GPU_INT_H
#define AUTOSCHED_GPU_INT_H

#include <stddef.h>
#include <stdint.h>

/* The few driver types it uses, as cuda.h declares them (ABI-stable). */
typedef int		 gpu_cures;	/* CUresult; 0 = CUDA_SUCCESS */
typedef int		 gpu_dev;	/* CUdevice */
typedef void		*gpu_ctx;	/* CUcontext */
typedef void		*gpu_mod;	/* CUmodule */
typedef void		*gpu_fn;	/* CUfunction */
typedef void		*gpu_event;	/* CUevent */
typedef unsigned long long gpu_ptr;	/* CUdeviceptr */

/* The driver's entry points (libcuda.so.1), the _v2 ABI where there is one. */
struct gpu_cu {
	void	*lib;
	gpu_cures (*init)(unsigned);
	gpu_cures (*driver_version)(int *);
	gpu_cures (*device_get)(gpu_dev *, int);
	gpu_cures (*device_count)(int *);
	gpu_cures (*device_name)(char *, int, gpu_dev);
	gpu_cures (*device_attr)(int *, int, gpu_dev);
	gpu_cures (*primary_retain)(gpu_ctx *, gpu_dev);
	gpu_cures (*ctx_set)(gpu_ctx);
	gpu_cures (*ctx_sync)(void);
	gpu_cures (*mem_alloc)(gpu_ptr *, size_t);
	gpu_cures (*mem_free)(gpu_ptr);
	gpu_cures (*htod)(gpu_ptr, const void *, size_t);
	gpu_cures (*dtoh)(void *, gpu_ptr, size_t);
	gpu_cures (*memset16)(gpu_ptr, unsigned short, size_t);
	gpu_cures (*memset32)(gpu_ptr, unsigned, size_t);
	gpu_cures (*module_load)(gpu_mod *, const void *, unsigned, int *,
		    void **);
	gpu_cures (*module_unload)(gpu_mod);
	gpu_cures (*module_fn)(gpu_fn *, gpu_mod, const char *);
	gpu_cures (*fn_set_attr)(gpu_fn, int, int);
	gpu_cures (*fn_get_attr)(int *, int, gpu_fn);
	gpu_cures (*launch)(gpu_fn, unsigned, unsigned, unsigned, unsigned,
		    unsigned, unsigned, unsigned, void *, void **, void **);
	gpu_cures (*event_create)(gpu_event *, unsigned);
	gpu_cures (*event_record)(gpu_event, void *);
	gpu_cures (*event_sync)(gpu_event);
	gpu_cures (*event_elapsed)(float *, gpu_event, gpu_event);
	gpu_cures (*error_string)(gpu_cures, const char **);
};

/* cuBLAS (libcublas.so.13 or .12), for the reference and its timing. */
struct gpu_blas {
	void	*lib;
	char	 path[64];	/* the soname that loaded */
	int	(*create)(void **);
	int	(*gemm_ex)(void *, int, int, int, int, int, const void *,
		    const void *, int, int, const void *, int, int, const void *,
		    void *, int, int, int, int);
	int	(*version)(void *, int *);
	/* cublasGemmStridedBatchedEx (batch matmuls; NULL: none) */
	int	(*gemm_batched)(void *, int, int, int, int, int, const void *,
		    const void *, int, int, long long, const void *, int, int,
		    long long, const void *, void *, int, int, long long, int,
		    int, int);
};

/* NVML (libnvidia-ml.so.1): clocks, temperature, power; optional. */
struct gpu_nvml {
	void	*lib;
	void	*dev;
	int	(*clock)(void *, int, unsigned *);
	int	(*max_clock)(void *, int, unsigned *);
	int	(*temp)(void *, int, unsigned *);
	int	(*power)(void *, unsigned *);
	int	(*power_limit)(void *, unsigned *);
};

/*
 * Load the driver: 0, or -1 with a message in why (no libcuda.so.1, or a
 * symbol missing). Nothing is called yet.
 */
int	 gpu_cu_load(struct gpu_cu *, char *why, size_t len);
/* cuBLAS and NVML: 0 or -1 (the measurement goes on without them). */
int	 gpu_blas_load(struct gpu_blas *);
int	 gpu_nvml_load(struct gpu_nvml *, int index);
/* The driver's name of r ("CUDA_ERROR_…"), never NULL. */
const char *gpu_cu_error(const struct gpu_cu *, gpu_cures r);

/* The types of the op: inputs A and B, result C. */
enum gpu_type { GPU_F16F32, GPU_F16, GPU_BF16F32, GPU_F32 };

/*
 * The PTX of a register-only loop that keeps every warp's tensor cores (or,
 * for f32, FMA units) busy: entry "autosched_peak" (u64 out, u32 iters),
 * each thread storing one f32. *flops_per_iter is the work one thread block
 * of threads threads does per iteration. Caller frees.
 */
char	*gpu_peak_ptx(enum gpu_type, int threads, double *flops_per_iter);


/* One kernel to measure: its PTX and how IREE launches it. */
struct gpu_kernel {
	char		 name[128];
	char		 path[512];	/* PTX (or cubin) file */
	char		 entry[256];
	unsigned	 grid[3], block[3];
	unsigned	 smem;		/* dynamic shared memory, bytes */
};

/* What the program was asked to do. */
struct gpu_opts {
	long			 m, n, k;
	long			 batch;		/* matrices (B of a batch matmul), 1 */
	int			 ta, tb;	/* A stored K×M, B stored N×K */
	enum gpu_type		 type;
	const char		*type_name;	/* "f16f32" … */
	struct gpu_kernel	*kernels;
	int			 nkernels;
	int			 peak, probe, peak_ptx;
	double			 min_time;	/* seconds of timed samples */
	int			 warmup;
	uint64_t		 seed;
	int			 device;
};

/* The open GPU and the op's buffers. */
struct gpu {
	struct gpu_cu	 cu;
	struct gpu_blas	 blas;
	struct gpu_nvml	 nvml;
	void		*blas_h;	/* cublasHandle_t, NULL without cuBLAS */
	gpu_dev		 dev;
	gpu_event	 e0, e1;
	int		 sms;
	char		 name[128];
	/* the op: host inputs (f32 integers), device A, B, C, cuBLAS's C */
	const struct gpu_opts *o;
	float		*ha, *hb;
	gpu_ptr		 a, b, c, cref;
	void		*out, *ref;	/* host copies of C and cuBLAS's C */
	int		 ref_ok;	/* cuBLAS's C matched the exact dots */
	long		*ij;		/* exact-dot sample positions */
	double		*dots;
	int		 ndots;
};

/* A timing: the median of samples, each the mean of a run of launches. */
struct gpu_timing {
	double	median_ms, min_ms, cv;
	int	samples, launches;
	unsigned sm_mhz, temp_c, power_w;	/* NVML after timing; 0 = unknown */
};

/* Launch something once on the GPU (no sync); 0 or a CUresult. */
typedef gpu_cures (*gpu_launch_fn)(struct gpu *, void *arg);

/* Time launch(arg) with CUDA events (gpu_run.c). 0, or a CUresult. */
gpu_cures gpu_time(struct gpu *, gpu_launch_fn, void *arg,
	    struct gpu_timing *);
/* The op's data made and uploaded, cuBLAS's C checked. 0 or -1 (printed). */
int	 gpu_data_setup(struct gpu *);
/* Measure and print one JSON line for a kernel, cuBLAS, the peak. 0/1 (wrong)/-1 (fatal). */
int	 gpu_run_kernel(struct gpu *, const struct gpu_kernel *);
int	 gpu_run_cublas(struct gpu *);
int	 gpu_run_peak(struct gpu *);
/* s as a JSON string into buf (quotes included). */
const char *gpu_json_str(const char *s, char *buf, size_t len);

#endif
