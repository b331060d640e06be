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
/*
 * Element (i, j) of o's C, exactly: row i of A times column j of B, both
 * row-major f32 stored as o says (A K×M where o->ta, B N×K where o->tb).
 * A batch's matrices are stacked: i runs over batch·m rows, matrix i / m.
 */
double	 gpu_dot(const struct gpu_opts *o, const float *a, const float *b,
	    long i, long j);
/* Elements of o's A, B and C, every matrix of a batch. */
size_t	 gpu_elems_a(const struct gpu_opts *);
size_t	 gpu_elems_b(const struct gpu_opts *);
size_t	 gpu_elems_c(const struct gpu_opts *);

#endif
