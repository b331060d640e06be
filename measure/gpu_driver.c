/*
 * The CUDA driver, cuBLAS and NVML loaded with dlopen: autosched-gpu-measure
 * links none of them, so it builds and starts on a machine without a GPU
 * and says so instead of failing to load.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "measure/gpu_int.h"

/* Look name up in lib into *slot; 0 or -1. */
static int
sym(void *lib, const char *name, void *slot)
{
	void *p = dlsym(lib, name);

	memcpy(slot, &p, sizeof p);
	return p != NULL ? 0 : -1;
}

int
gpu_cu_load(struct gpu_cu *cu, char *why, size_t len)
{
	static const struct {
		const char	*name, *alt;
		size_t		 off;
	} t[] = {
#define E(f, n, a) { n, a, offsetof(struct gpu_cu, f) }
		E(init, "cuInit", NULL),
		E(driver_version, "cuDriverGetVersion", NULL),
		E(device_get, "cuDeviceGet", NULL),
		E(device_count, "cuDeviceGetCount", NULL),
		E(device_name, "cuDeviceGetName", NULL),
		E(device_attr, "cuDeviceGetAttribute", NULL),
		E(primary_retain, "cuDevicePrimaryCtxRetain", NULL),
		E(ctx_set, "cuCtxSetCurrent", NULL),
		E(ctx_sync, "cuCtxSynchronize", NULL),
		E(mem_alloc, "cuMemAlloc_v2", NULL),
		E(mem_free, "cuMemFree_v2", NULL),
		E(htod, "cuMemcpyHtoD_v2", NULL),
		E(dtoh, "cuMemcpyDtoH_v2", NULL),
		E(memset16, "cuMemsetD16_v2", NULL),
		E(memset32, "cuMemsetD32_v2", NULL),
		E(module_load, "cuModuleLoadDataEx", NULL),
		E(module_unload, "cuModuleUnload", NULL),
		E(module_fn, "cuModuleGetFunction", NULL),
		E(fn_set_attr, "cuFuncSetAttribute", NULL),
		E(fn_get_attr, "cuFuncGetAttribute", NULL),
		E(launch, "cuLaunchKernel", NULL),
		E(event_create, "cuEventCreate", NULL),
		E(event_record, "cuEventRecord", NULL),
		E(event_sync, "cuEventSynchronize", NULL),
		E(event_elapsed, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
		E(error_string, "cuGetErrorName", NULL),
#undef E
	};
	size_t i;

	memset(cu, 0, sizeof *cu);
	if ((cu->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) ==
	    NULL) {
		snprintf(why, len, "no NVIDIA driver here (libcuda.so.1: %s)",
		    dlerror());
		return -1;
	}
	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		void *slot = (char *)cu + t[i].off;

		if (sym(cu->lib, t[i].name, slot) == 0 ||
		    (t[i].alt != NULL && sym(cu->lib, t[i].alt, slot) == 0))
			continue;
		snprintf(why, len, "libcuda.so.1 lacks %s (driver too old?)",
		    t[i].name);
		dlclose(cu->lib);
		cu->lib = NULL;
		return -1;
	}
	return 0;
}

const char *
gpu_cu_error(const struct gpu_cu *cu, gpu_cures r)
{
	const char *s = NULL;

	if (cu->error_string == NULL || cu->error_string(r, &s) != 0 ||
	    s == NULL)
		return "unknown CUDA error";
	return s;
}

int
gpu_blas_load(struct gpu_blas *b)
{
	static const char *const names[] = { "libcublas.so.13",
	    "libcublas.so.12", "libcublas.so", NULL };
	int i;

	memset(b, 0, sizeof *b);
	for (i = 0; names[i] != NULL && b->lib == NULL; i++)
		if ((b->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL)) != NULL)
			snprintf(b->path, sizeof b->path, "%s", names[i]);
	if (b->lib == NULL)
		return -1;
	if (sym(b->lib, "cublasCreate_v2", &b->create) != 0 ||
	    sym(b->lib, "cublasGemmEx", &b->gemm_ex) != 0) {
		dlclose(b->lib);
		b->lib = NULL;
		return -1;
	}
	(void)sym(b->lib, "cublasGetVersion_v2", &b->version);
	(void)sym(b->lib, "cublasGemmStridedBatchedEx", &b->gemm_batched);
	return 0;
}

int
gpu_nvml_load(struct gpu_nvml *n, int index)
{
	int (*init)(void);
	int (*get)(unsigned, void **);

	memset(n, 0, sizeof *n);
	if ((n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) ==
	    NULL)
		return -1;
	if (sym(n->lib, "nvmlInit_v2", &init) != 0 ||
	    sym(n->lib, "nvmlDeviceGetHandleByIndex_v2", &get) != 0 ||
	    sym(n->lib, "nvmlDeviceGetClockInfo", &n->clock) != 0 ||
	    sym(n->lib, "nvmlDeviceGetMaxClockInfo", &n->max_clock) != 0 ||
	    sym(n->lib, "nvmlDeviceGetTemperature", &n->temp) != 0 ||
	    sym(n->lib, "nvmlDeviceGetPowerUsage", &n->power) != 0 ||
	    sym(n->lib, "nvmlDeviceGetEnforcedPowerLimit",
	    &n->power_limit) != 0 || init() != 0 ||
	    get((unsigned)index, &n->dev) != 0) {
		dlclose(n->lib);
		memset(n, 0, sizeof *n);
		return -1;
	}
	return 0;
}
