/*
 * pulp_conv_window.h (private): work split and sliding-window index ranges
 * shared by the pointwise, depthwise and transposed-convolution sources.
 *
 * A window of n taps at stride s with a leading pad p puts tap k of output o
 * on input position o*s - p + k. The helpers below turn "inside the tensor"
 * into loop bounds, so kernels never test positions one by one.
 */
#ifndef PULP_CONV_WINDOW_H
#define PULP_CONV_WINDOW_H

#include "pmsis.h"

/* This core's share [*first, *last) of n items: contiguous, as even as
 * possible, empty for cores past the end. */
static inline void pulp_conv_core_slice(int n, int *first, int *last)
{
    const int chunk = (n + NUM_CORES - 1) / NUM_CORES;
    const int f = pi_core_id() * chunk;
    *first = f < n ? f : n;
    *last = f + chunk < n ? f + chunk : n;
}

/* Taps [*first, *last) of an n-tap window whose tap 0 sits at position base,
 * restricted to positions [0, size). Empty when *first >= *last. */
static inline void pulp_conv_taps_inside(int base, int n, int size, int *first, int *last)
{
    *first = base < 0 ? -base : 0;
    *last = size - base < n ? size - base : n;
}

/* Indices o in [*first, *last), within [0, n), with lo <= o*stride < hi
 * (stride >= 1; lo and hi may be negative). Empty when *first >= *last. */
static inline void pulp_conv_strided_between(int lo, int hi, int stride, int n, int *first, int *last)
{
    *first = lo > 0 ? (lo + stride - 1) / stride : 0;
    *last = hi > 0 ? (hi + stride - 1) / stride : 0;
    if (*last > n)
        *last = n;
}

#endif /* PULP_CONV_WINDOW_H */
