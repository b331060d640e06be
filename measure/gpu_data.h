/*
 * The data of autosched-gpu-measure (gpu_data.c): small integers, their
 * encodings in the kernels' types, the host's exact dot products.
 * Private to measure/.
 */
#ifndef AUTOSCHED_GPU_DATA_H
#define AUTOSCHED_GPU_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "measure/gpu_int.h"

size_t	 gpu_in_size(enum gpu_type);	/* bytes of an A or B element */
size_t	 gpu_out_size(enum gpu_type);	/* bytes of a C element */
/* n integers in [-range, range] from *seed (advanced). */
void	 gpu_fill(float *x, size_t n, int range, uint64_t *seed);
/* src (small integers) in the input type of t, into dst. */
void	 gpu_encode(enum gpu_type t, const float *src, size_t n, void *dst);
/* Element i of a result c of type t, as f32 (NaN stays NaN). */
float	 gpu_out_at(enum gpu_type t, const void *c, size_t i);
/* count positions (i, j) into ij[2·count]: the four corners, then random. */
void	 gpu_samples(long m, long n, uint64_t *seed, long *ij, int count);
/* Row i of A (m×k) times column j of B (k×n), exactly (row-major f32). */
double	 gpu_dot(const float *a, const float *b, long n, long k, long i,
	    long j);

#endif
