/*
 * pulp_conv_ranges.h (internal): the index ranges the convolution kernels
 * loop over, shared by the im2col and conv2d bodies of both types.
 */
#ifndef PULP_CONV_RANGES_H
#define PULP_CONV_RANGES_H

#include "pmsis.h"

/* This core's share [*first, *last) of n items: contiguous, ceil(n / cores)
 * each, the last cores possibly short or empty. */
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

#endif /* PULP_CONV_RANGES_H */
