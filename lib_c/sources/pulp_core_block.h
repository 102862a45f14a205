/*
 * pulp_core_block.h (internal): how the API's per-core bodies split their
 * work (TRAINLIB_API_MORE.md, "caller"): core id takes [id*b, (id+1)*b)
 * clipped to n, with b = ceil(n / NUM_CORES); cores past the end get an
 * empty block. Every elementwise body uses this one. The convolution
 * bodies (conv_core_slice, pulp_conv_ranges.h) and the FP32 matmul driver
 * give the same blocks with an int (n + cores - 1) / cores, which overflows
 * only past 2^31 - cores items and costs fewer instructions: with
 * conv_core_slice calling this one, 4,233 of the 7,002 variants of the
 * conv2d catalogue took more instructions on QEMU (2026-11-29).
 */
#ifndef PULP_CORE_BLOCK_H
#define PULP_CORE_BLOCK_H

#include "pulp_train_defines.h"

static inline void pulp_core_block(long n, long *first, long *last)
{
    /* In long, not long long: on the 32-bit cores a 64-bit division is a
     * library call (__divdi3: about 55 instructions on QEMU, and a loop of
     * them on a PULP core). b = ceil(n / cores) as (n - 1) / cores + 1 and
     * the block's end clipped before the add, so that nothing overflows for
     * any n >= 0; n <= 0 gives every core an empty block. (Unsigned, which
     * tells the compiler first >= 0, made clang 14 index the FP16 bodies'
     * inner loops anew each step: mm_add +20%.) */
    const long cores = NUM_CORES, id = pi_core_id();
    const long b = (n - 1) / cores + 1;
    const long lo = id * b;
    *first = lo < n ? lo : n;
    *last = b < n - lo ? lo + b : n;
}

#endif /* PULP_CORE_BLOCK_H */
