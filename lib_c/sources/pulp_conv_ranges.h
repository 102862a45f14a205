/*
 * pulp_conv_ranges.h (internal): the index ranges the convolution kernels
 * loop over, shared by the im2col and conv2d bodies of both types.
 */
#ifndef PULP_CONV_RANGES_H
#define PULP_CONV_RANGES_H

#include "pmsis.h"

/* This core's share [*first, *last) of n items: contiguous, ceil(n / cores)
 * each, the last cores possibly short or empty; the blocks of
 * pulp_core_block, in int (why not that one: pulp_core_block.h). */
static inline void conv_core_slice(int n, int *first, int *last)
{
    const int chunk = (n + NUM_CORES - 1) / NUM_CORES;
    const int f = pi_core_id() * chunk;
    *first = f < n ? f : n;
    *last = f + chunk < n ? f + chunk : n;
}

/* The i in [0, count) with base + i * step inside [0, limit), as [*lo, *hi)
 * (empty: *lo == *hi). step >= 1. */
static inline void conv_inside_range(int base, int step, int limit, int count, int *lo, int *hi)
{
    int l = base >= 0 ? 0 : (-base + step - 1) / step;
    int h = base >= limit ? 0 : (limit - 1 - base) / step + 1;
    if (l > count)
        l = count;
    if (h > count)
        h = count;
    if (h < l)
        h = l;
    *lo = l;
    *hi = h;
}

/* The i in [0, count) with base + i a multiple of dil whose quotient is
 * inside [0, limit): i = *first + j * dil with quotient *q0 + j, for j in
 * [0, *n). dil >= 1; a division or two per call, none per i. */
static inline void conv_dilated_range(int base, int dil, int limit, int count, int *first, int *q0, int *n)
{
    int i = base >= 0 ? 0 : -base; /* the first i with base + i >= 0 */
    const int r = (base + i) % dil;
    if (r)
        i += dil - r;
    const int q = (base + i) / dil;
    int m = 0;
    if (i < count && q < limit) {
        m = (count - 1 - i) / dil + 1;
        if (m > limit - q)
            m = limit - q;
    }
    *first = i;
    *q0 = q;
    *n = m;
}

#endif /* PULP_CONV_RANGES_H */
