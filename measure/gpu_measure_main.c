/*
 * autosched-gpu-measure: checks and times matmul kernels (PTX with their
 * launch shape, as autosched's CUDA candidates are compiled elsewhere) on
 * an NVIDIA GPU, next to cuBLAS at the same shape and types and the GPU's
 * register-only peak. The driver, cuBLAS and NVML are loaded with dlopen:
 * without a driver it says so and exits 3.
 *
 *   autosched-gpu-measure --op M,N,K,TYPE[,bB][,ta][,tb] [--kernel SPEC]...
 *       [--kernels FILE]
 *       [--peak] [--min-time S] [--warmup N] [--seed S] [--device I]
 *   autosched-gpu-measure --probe
 *   autosched-gpu-measure --batch DIR   (a staged round: executors/batch*.c)
 *   autosched-gpu-measure --peak-ptx TYPE     (the peak loop's PTX; no GPU needed)
 *
 * TYPE: f16f32 | f16 | bf16f32 | f32 (A and B, then C). SPEC (one a line
 * in FILE): NAME,PTX,ENTRY,GX,GY,GZ,BX,BY,BZ,SMEM; the kernel takes the
 * device pointers A (M×K), B (K×N), C (M×N), all row-major, and writes all
 * of C. --op's tail: bB a batch of B such products (A B×M×K, B B×K×N, C
 * B×M×N), ta A stored K×M, tb B stored N×K. Output: JSON lines (kind
 * device, cublas, kernel, peak).
 * Exit: 0 all ok, 1 a kernel wrong or failed, 2 bad usage, 3 no usable GPU.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/batch.h"
#include "measure/gpu_int.h"

#define KERNELS_MAX	4096
#define LINE_MAX_LEN	2048

static const char usage[] = "usage: autosched-gpu-measure --op "
    "M,N,K,TYPE[,bB][,ta][,tb] "
    "[--kernel NAME,PTX,ENTRY,GX,GY,GZ,BX,BY,BZ,SMEM]... [--kernels FILE] "
    "[--peak] [--min-time S] [--warmup N] [--seed S] [--device I] | --probe "
    "| --peak-ptx TYPE | --batch DIR\n"
    "  TYPE: f16f32 | f16 | bf16f32 | f32; bB: a batch of B matmuls; "
    "ta, tb: A stored KxM, B stored NxK\n";

static int
bad(const char *fmt, const char *what)
{
	fprintf(stderr, "autosched-gpu-measure: ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, "\n%s", usage);
	return 2;
}

/* SPEC into k: 0, or -1. */
static int
kernel_parse(const char *spec, struct gpu_kernel *k)
{
	char buf[LINE_MAX_LEN], *f[10], *save, *p;
	unsigned long v[7];
	int n = 0, i;

	if (strlen(spec) >= sizeof buf)
		return -1;
	strcpy(buf, spec);
	for (p = strtok_r(buf, ",", &save); p != NULL && n < 10;
	    p = strtok_r(NULL, ",", &save))
		f[n++] = p;
	if (n != 10 || p != NULL || strlen(f[0]) >= sizeof k->name ||
	    strlen(f[1]) >= sizeof k->path || strlen(f[2]) >= sizeof k->entry)
		return -1;
	for (i = 0; i < 7; i++) {
		errno = 0;
		v[i] = strtoul(f[3 + i], &p, 10);
		if (errno != 0 || *p != '\0' || p == f[3 + i] ||
		    v[i] > (i == 6 ? 1u << 20 : 1u << 31) || (i < 6 && v[i] == 0))
			return -1;
	}
	strcpy(k->name, f[0]);
	strcpy(k->path, f[1]);
	strcpy(k->entry, f[2]);
	for (i = 0; i < 3; i++) {
		k->grid[i] = (unsigned)v[i];
		k->block[i] = (unsigned)v[3 + i];
	}
	k->smem = (unsigned)v[6];
	return k->block[0] * k->block[1] * k->block[2] <= 1024 ? 0 : -1;
}

static int
kernel_add(struct gpu_opts *o, const char *spec, const char *where)
{
	if (o->nkernels == KERNELS_MAX)
		return bad("more than 4096 kernels (%s)", where);
	if (kernel_parse(spec, &o->kernels[o->nkernels]) != 0) {
		fprintf(stderr, "autosched-gpu-measure: %s: bad kernel \"%s\": "
		    "expected NAME,PTX,ENTRY,GX,GY,GZ,BX,BY,BZ,SMEM (sizes > 0, "
		    "at most 1024 threads)\n", where, spec);
		return 2;
	}
	o->nkernels++;
	return 0;
}

/* The kernels listed in path, one a line ('#' comments). 0 or 2. */
static int
kernels_read(struct gpu_opts *o, const char *path)
{
	char line[LINE_MAX_LEN], where[600];
	FILE *f = fopen(path, "r");
	int n = 0, rc = 0;

	if (f == NULL)
		return bad("--kernels %s: cannot open", path);
	while (rc == 0 && fgets(line, sizeof line, f) != NULL) {
		n++;
		snprintf(where, sizeof where, "%s:%d", path, n);
		if (strchr(line, '\n') == NULL && !feof(f)) {
			fprintf(stderr, "autosched-gpu-measure: %s: line too "
			    "long\n", where);
			rc = 2;
			break;
		}
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '\0' || line[0] == '#')
			continue;
		rc = kernel_add(o, line, where);
	}
	fclose(f);
	return rc;
}

/* --op's tail after TYPE: ",bB", ",ta", ",tb" (each once). 0 or -1. */
static int
op_tail(char *s, struct gpu_opts *o)
{
	char *t, *save, *end;
	int seen_b = 0;

	if (*s == '\0' || s[strlen(s) - 1] == ',' || strstr(s, ",,") != NULL)
		return -1;
	for (t = strtok_r(s, ",", &save); t != NULL;
	    t = strtok_r(NULL, ",", &save)) {
		if (strcmp(t, "ta") == 0 && !o->ta)
			o->ta = 1;
		else if (strcmp(t, "tb") == 0 && !o->tb)
			o->tb = 1;
		else if (t[0] == 'b' && !seen_b++) {
			o->batch = strtol(t + 1, &end, 10);
			if (*end != '\0' || o->batch < 1 || o->batch > 65536)
				return -1;
		} else
			return -1;
	}
	return 0;
}

/* M,N,K,TYPE[,bB][,ta][,tb] into o. 0 or -1. */
static int
op_parse(const char *s, struct gpu_opts *o)
{
	static const char *const types[] = { "f16f32", "f16", "bf16f32",
	    "f32" };
	char t[64], *tail;
	int i;

	o->batch = 1;
	o->ta = o->tb = 0;
	if (sscanf(s, "%ld,%ld,%ld,%63s", &o->m, &o->n, &o->k, t) != 4 ||
	    o->m < 1 || o->n < 1 || o->k < 1 || o->m > 65536 ||
	    o->n > 65536 || o->k > 65536)
		return -1;
	if ((tail = strchr(t, ',')) != NULL) {
		*tail++ = '\0';
		if (op_tail(tail, o) != 0)
			return -1;
	}
	for (i = 0; i < 4; i++)
		if (strcmp(t, types[i]) == 0) {
			o->type = (enum gpu_type)i;
			o->type_name = types[i];
			return 0;
		}
	return -1;
}

static int
args_parse(int argc, char **argv, struct gpu_opts *o)
{
	int i, rc;
	char *end;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--probe") == 0 || strcmp(a, "--peak") == 0) {
			*(a[2] == 'p' && a[3] == 'r' ? &o->probe : &o->peak) = 1;
			continue;
		}
		if (v == NULL)
			return bad("%s needs a value", a);
		i++;
		if (strcmp(a, "--op") == 0) {
			if (op_parse(v, o) != 0)
				return bad("--op %s: expected M,N,K,TYPE[,bB][,ta]"
				    "[,tb] (sizes and batch 1..65536)", v);
		} else if (strcmp(a, "--peak-ptx") == 0) {
			char spec[48];

			snprintf(spec, sizeof spec, "1,1,1,%.16s", v);
			if (op_parse(spec, o) != 0)
				return bad("--peak-ptx %s: expected a TYPE", v);
			o->peak_ptx = 1;
		} else if (strcmp(a, "--kernel") == 0) {
			if ((rc = kernel_add(o, v, "--kernel")) != 0)
				return rc;
		} else if (strcmp(a, "--kernels") == 0) {
			if ((rc = kernels_read(o, v)) != 0)
				return rc;
		} else if (strcmp(a, "--min-time") == 0) {
			o->min_time = strtod(v, &end);
			if (*end != '\0' || !(o->min_time > 0 &&
			    o->min_time <= 60))
				return bad("--min-time %s: expected 0 < S <= 60",
				    v);
		} else if (strcmp(a, "--warmup") == 0 ||
		    strcmp(a, "--device") == 0 || strcmp(a, "--seed") == 0) {
			long x = strtol(v, &end, 10);

			if (*end != '\0' || x < 0 || x > 1000000)
				return bad("bad value %s", v);
			if (a[2] == 'w')
				o->warmup = (int)x;
			else if (a[2] == 'd')
				o->device = (int)x;
			else
				o->seed = (uint64_t)x;
		} else
			return bad("unknown option %s", a);
	}
	if (o->peak_ptx) {
		double f;
		char *ptx = gpu_peak_ptx(o->type, 256, &f);

		fputs(ptx, stdout);
		free(ptx);
		exit(0);
	}
	if (!o->probe && o->m == 0)
		return bad("%s", "--op is required");
	return 0;
}

/* The driver, the device, its context, cuBLAS, NVML. 0, or 3 (said why). */
static int
gpu_open(struct gpu *g, const struct gpu_opts *o)
{
	char why[512];
	gpu_ctx ctx;
	gpu_cures r;
	int count = 0;

	if (gpu_cu_load(&g->cu, why, sizeof why) != 0) {
		fprintf(stderr, "autosched-gpu-measure: %s; nothing measured "
		    "(run it on a host with an NVIDIA GPU and its driver)\n", why);
		return 3;
	}
	if ((r = g->cu.init(0)) != 0 || (r = g->cu.device_count(&count)) != 0 ||
	    count <= o->device) {
		fprintf(stderr, "autosched-gpu-measure: no usable GPU: %s "
		    "(%d device%s, asked for device %d)\n", r ?
		    gpu_cu_error(&g->cu, r) : "no such device", count,
		    count == 1 ? "" : "s", o->device);
		return 3;
	}
	if ((r = g->cu.device_get(&g->dev, o->device)) != 0 ||
	    (r = g->cu.primary_retain(&ctx, g->dev)) != 0 ||
	    (r = g->cu.ctx_set(ctx)) != 0 ||
	    (r = g->cu.event_create(&g->e0, 0)) != 0 ||
	    (r = g->cu.event_create(&g->e1, 0)) != 0) {
		fprintf(stderr, "autosched-gpu-measure: device %d: %s\n",
		    o->device, gpu_cu_error(&g->cu, r));
		return 3;
	}
	(void)g->cu.device_name(g->name, sizeof g->name, g->dev);
	(void)g->cu.device_attr(&g->sms, 16 /* MULTIPROCESSOR_COUNT */, g->dev);
	if (gpu_blas_load(&g->blas) == 0 && g->blas.create(&g->blas_h) != 0)
		g->blas_h = NULL;
	(void)gpu_nvml_load(&g->nvml, o->device);
	return 0;
}

/* The device line: what measured, at which clocks and limits. */
static void
device_print(struct gpu *g)
{
	unsigned clk = 0, mem = 0, maxclk = 0, plim = 0, temp = 0;
	int drv = 0, maj = 0, min = 0, bv = 0;
	char nm[256];

	(void)g->cu.driver_version(&drv);
	(void)g->cu.device_attr(&maj, 75, g->dev);
	(void)g->cu.device_attr(&min, 76, g->dev);
	if (g->blas_h != NULL && g->blas.version != NULL)
		(void)g->blas.version(g->blas_h, &bv);
	if (g->nvml.lib != NULL) {
		(void)g->nvml.clock(g->nvml.dev, 1, &clk);
		(void)g->nvml.clock(g->nvml.dev, 2 /* MEM */, &mem);
		(void)g->nvml.max_clock(g->nvml.dev, 1, &maxclk);
		(void)g->nvml.power_limit(g->nvml.dev, &plim);
		(void)g->nvml.temp(g->nvml.dev, 0, &temp);
	}
	printf("{\"kind\":\"device\",\"name\":%s,\"cc\":\"%d.%d\",\"sms\":%d,"
	    "\"driver\":%d,\"cublas\":\"%s\",\"cublas_version\":%d,"
	    "\"nvml\":%d,\"sm_mhz\":%u,\"sm_max_mhz\":%u,\"mem_mhz\":%u,"
	    "\"power_limit_w\":%u,\"temp_c\":%u}\n",
	    gpu_json_str(g->name, nm, sizeof nm), maj, min, g->sms, drv,
	    g->blas_h ? g->blas.path : "", bv, g->nvml.lib != NULL, clk, maxclk,
	    mem, plim / 1000, temp);
	fflush(stdout);
}

/* Everything main does once the options are parsed; its exit status. */
static int
measure(int argc, char **argv, struct gpu_opts *o, struct gpu *g)
{
	int rc, i, worst = 0;

	if ((rc = args_parse(argc, argv, o)) != 0 ||
	    (rc = gpu_open(g, o)) != 0)
		return rc;
	g->o = o;
	device_print(g);
	if (o->probe)
		return 0;
	if (gpu_data_setup(g) != 0 || gpu_run_cublas(g) != 0)
		return 1;
	for (i = 0; i < o->nkernels; i++) {
		if ((rc = gpu_run_kernel(g, &o->kernels[i])) < 0)
			return 1;	/* the context is gone */
		worst |= rc;
	}
	if (o->peak && gpu_run_peak(g) != 0)
		worst = 1;
	return worst ? 1 : 0;
}

int
main(int argc, char **argv)
{
	struct gpu_opts o;
	struct gpu g;
	int rc;

	if (argc == 3 && strcmp(argv[1], "--batch") == 0)
		return measure_batch_main("autosched-gpu-measure", argv[2]);
	memset(&o, 0, sizeof o);
	memset(&g, 0, sizeof g);
	o.min_time = 0.2;
	o.warmup = 3;
	o.seed = 42;
	if (argc < 2)
		return bad("%s", "nothing to do");
	if ((o.kernels = calloc(KERNELS_MAX, sizeof *o.kernels)) == NULL)
		return 2;
	rc = measure(argc, argv, &o, &g);
	/* The host's copies (the device's go with the process). */
	free(g.ha);
	free(g.hb);
	free(g.out);
	free(g.ref);
	free(g.ij);
	free(g.dots);
	free(o.kernels);
	return rc;
}
