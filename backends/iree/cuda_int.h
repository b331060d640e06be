/*
 * Internals of the iree backend's CUDA target (cuda.c: the space, the
 * rules, the compilation_info; cuda_compile.c: iree-compile to PTX, the
 * launch shape read back, ptxas -v). Private to backends/iree.
 */
#ifndef AUTOSCHED_IREE_CUDA_INT_H
#define AUTOSCHED_IREE_CUDA_INT_H

#include "analysis/analysis.h"
#include "backends/backend.h"
#include "search/space.h"

/* An NVIDIA target IREE 3.13 compiles for. */
struct cuda_arch {
	const char	*name;		/* "sm_80" */
	int		 by_attr;	/* 1: the #iree_gpu.target written in the input */
	long		 smem_max;	/* bytes of shared memory a block may use */
	const char	*ptx_features;	/* "+ptx80" (by_attr only) */
};
/* The arch called name, or NULL. */
const struct cuda_arch *cuda_arch_find(const char *name);
/* "sm_80, sm_86, sm_89, sm_90a". */
const char *cuda_arch_names(void);

/* The space's rules for op (the backend's rules hook). */
void	 iree_cuda_rules(const struct op_desc *, struct space_rules *);
/* The compilation_info of cfg, or NULL for IREE's own choice. Caller frees. */
char	*cuda_attr(const struct op_desc *, const struct config *);

/* 1 if op has a batch dimension (linalg.batch_matmul), 0 a plain matmul. */
int	 cuda_is_batch(const struct op_desc *);
/* The matrices op multiplies: its batch, 1 for a plain matmul. */
int64_t	 cuda_batch(const struct op_desc *);

/* 1 if op runs through IREE's mma.sync (f16/bf16 inputs), 0 SIMT (f32). */
int	 cuda_is_mma(const struct op_desc *);

/*
 * The rule a config breaks on arch, or NULL when it may compile: the
 * checks that keep iree-compile from failing, and the launch from going
 * wrong, before anything runs. The text names the rule and the figures.
 * Caller frees.
 */
char	*cuda_rule_broken(const struct op_desc *, const struct config *,
	    const struct cuda_arch *);

/*
 * The input module: op as fill + linalg.matmul or linalg.batch_matmul
 * (transposed operands stored transposed, by indexing_maps), with cfg's
 * compilation_info (NULL cfg or IREE's default: none) and, for an arch
 * IREE names by attribute, the device target. Caller frees.
 */
char	*cuda_module(const struct op_desc *, const struct config *cfg,
	    const struct cuda_arch *);

/* The launch of a compiled dispatch, as IREE's executable-targets says. */
struct cuda_launch {
	char		 entry[256];
	unsigned	 grid[3], block[3], smem;
	int		 regs;		/* ptxas -v */
	long		 spill_bytes;	/* stores + loads */
};

/*
 * Read the launch from the executable-targets text (workgroup count,
 * workgroup_size, workgroup_local_memory). 0, or -1 with *err.
 */
int	 cuda_launch_read(const char *targets, struct cuda_launch *,
	    char **err);
/* The PTX's entry name into l->entry. 0 or -1. */
int	 cuda_ptx_entry(const char *ptx, struct cuda_launch *l);
/* ptxas -v output into l->regs and l->spill_bytes. 0, or -1 if unreadable. */
int	 cuda_ptxas_read(const char *text, struct cuda_launch *l);

/*
 * How many times the module repeats the dispatch for IREE's own runtime
 * (iree-benchmark-module --batch_size the same): about 2 ms of a GPU's
 * work a call, so that the call's own cost fades (the CPU's rule,
 * iree_repeat, gives 1 for every op worth a GPU).
 */
int	 cuda_repeat(const struct op_desc *);

/* Threads of a block of cfg (32 a warp tile for mma, one a thread tile). */
int64_t	 cuda_block_threads(const struct op_desc *, const struct config *);

/* A compiled candidate in the cache. */
struct cuda_art {
	char			*dir;	/* the cache entry */
	char			*ptx;	/* dir/kernel.ptx */
	char			*vmfb;	/* dir/bench.vmfb: cuda_repeat dispatches a call */
	struct cuda_launch	 l;
};
void	 cuda_art_free(struct cuda_art *);

struct backend;
/*
 * Compile cfg (NULL or IREE's own choice: no compilation_info) for the
 * backend's arch, cached; then the rules that need the compiled code
 * (spills, registers a block, the launch read back against the knobs).
 * Fills res->artifact and res->compile_s; on failure or refusal
 * res->status and res->error ("refused: rule …"). 0 with *art, or -1.
 */
int	 cuda_compile(struct backend *, const struct config *,
	    struct cuda_art *, struct trial_result *);

#endif
