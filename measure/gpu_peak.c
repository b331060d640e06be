/*
 * The peak kernels: PTX loops whose work never leaves the registers, so
 * that they run at the speed of the tensor cores' mma.sync m16n8k16 (or of
 * the FMA units, for f32) and nothing else. A matmul's figures are read as
 * a share of them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/gpu_int.h"

#define CHAINS	8	/* independent accumulators: hides the mma latency */
#define UNROLL	4

/* Append to a growing string (abort on overflow: the text is ours, bounded). */
static void
put(char *buf, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
put(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= cap - *len)
		abort();
	*len += (size_t)n;
}

/* The accumulator registers of chain c: "{%c0, %c1, …}" for acc regs each. */
static void
acc_regs(char *out, size_t cap, int c, int nacc)
{
	size_t len = 0;
	int i;

	put(out, cap, &len, "{");
	for (i = 0; i < nacc; i++)
		put(out, cap, &len, "%s%%c%d", i ? ", " : "", c * nacc + i);
	put(out, cap, &len, "}");
}

char *
gpu_peak_ptx(enum gpu_type t, int threads, double *flops_per_iter)
{
	size_t cap = 64 << 10, len = 0;
	char *p = malloc(cap), acc[256];
	/* f32 accumulators are 4 per mma tile and thread, f16 ones 2 (packed). */
	int nacc = t == GPU_F16 ? 2 : t == GPU_F32 ? 1 : 4, c, u;
	const char *accty = t == GPU_F16 ? "b32" : "f32";
	const char *mma = t == GPU_F16 ?
	    "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16" :
	    t == GPU_BF16F32 ?
	    "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" :
	    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32";
	/* 1.0 twice: f16 0x3c00, bf16 0x3f80. */
	const char *one = t == GPU_BF16F32 ? "0x3f803f80" : "0x3c003c00";

	if (p == NULL)
		abort();
	put(p, cap, &len, ".version 7.0\n.target sm_80\n.address_size 64\n\n"
	    ".visible .entry autosched_peak(.param .u64 out, .param .u32 iters)\n"
	    "{\n\t.reg .pred %%p;\n\t.reg .b32 %%a<4>, %%b<2>, %%i, %%n, %%t;\n"
	    "\t.reg .%s %%c<%d>;\n\t.reg .f32 %%s, %%x;\n\t.reg .u64 %%o, %%w;\n",
	    accty, CHAINS * nacc);
	put(p, cap, &len, "\tld.param.u64 %%o, [out];\n\tld.param.u32 %%n, "
	    "[iters];\n\tmov.b32 %%a0, %s;\n\tmov.b32 %%a1, %s;\n\tmov.b32 "
	    "%%a2, %s;\n\tmov.b32 %%a3, %s;\n\tmov.b32 %%b0, %s;\n\tmov.b32 "
	    "%%b1, %s;\n", one, one, one, one, one, one);
	for (c = 0; c < CHAINS * nacc; c++)
		put(p, cap, &len, "\tmov.b32 %%c%d, 0;\n", c);
	put(p, cap, &len, "\tmov.u32 %%i, 0;\nLOOP:\n");
	for (u = 0; u < UNROLL; u++)
		for (c = 0; c < CHAINS; c++) {
			if (t == GPU_F32) {
				/* c = c * 0.99999988 + 1e-7: an FMA nothing folds. */
				put(p, cap, &len, "\tfma.rn.f32 %%c%d, %%c%d, "
				    "0f3F7FFFFE, 0f33D6BF95;\n", c, c);
				continue;
			}
			acc_regs(acc, sizeof acc, c, nacc);
			put(p, cap, &len, "\t%s %s, {%%a0, %%a1, %%a2, %%a3}, "
			    "{%%b0, %%b1}, %s;\n", mma, acc, acc);
		}
	put(p, cap, &len, "\tadd.u32 %%i, %%i, 1;\n\tsetp.lt.u32 %%p, %%i, "
	    "%%n;\n\t@%%p bra LOOP;\n\tmov.f32 %%s, 0f00000000;\n");
	for (c = 0; c < CHAINS * nacc; c++) {
		if (t == GPU_F16) {
			put(p, cap, &len, "\t{ .reg .b16 %%lo, %%hi; mov.b32 "
			    "{%%lo, %%hi}, %%c%d; cvt.f32.f16 %%x, %%lo; }\n", c);
		} else
			put(p, cap, &len, "\tmov.f32 %%x, %%c%d;\n", c);
		put(p, cap, &len, "\tadd.f32 %%s, %%s, %%x;\n");
	}
	/* out[ctaid.x * ntid.x + tid.x] = the sum: the work is not dead. */
	put(p, cap, &len, "\tmov.u32 %%t, %%ctaid.x;\n\tmov.u32 %%i, "
	    "%%ntid.x;\n\tmul.lo.u32 %%t, %%t, %%i;\n\tmov.u32 %%i, %%tid.x;\n"
	    "\tadd.u32 %%t, %%t, %%i;\n\tmul.wide.u32 %%w, %%t, 4;\n\tadd.u64 "
	    "%%o, %%o, %%w;\n\tst.global.f32 [%%o], %%s;\n\tret;\n}\n");
	/*
	 * Per iteration: UNROLL·CHAINS mma of 2·16·8·16 flops per warp, or
	 * UNROLL·CHAINS FMAs (2 flops) per thread.
	 */
	*flops_per_iter = t == GPU_F32 ? 2.0 * UNROLL * CHAINS * threads :
	    2.0 * 16 * 8 * 16 * UNROLL * CHAINS * (threads / 32);
	return p;
}
