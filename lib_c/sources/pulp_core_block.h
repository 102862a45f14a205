/*
 * pulp_core_block.h (internal): how the API's per-core bodies split their
 * work (TRAINLIB_API_MORE.md, "caller"): core id takes [id*b, (id+1)*b)
 * clipped to n, with b = ceil(n / NUM_CORES); cores past the end get an
 * empty block. Every lib_c body that splits a flat range uses this one.
 */
#ifndef PULP_CORE_BLOCK_H
#define PULP_CORE_BLOCK_H

#include "pulp_train_defines.h"

static inline void pulp_core_block(long n, long *first, long *last)
{
    const long long cores = NUM_CORES, id = pi_core_id();
    const long long b = (n + cores - 1) / cores;
    const long long lo = id * b, hi = lo + b;
    *first = (long)(lo < n ? lo : n);
    *last = (long)(hi < n ? hi : n);
}

#endif /* PULP_CORE_BLOCK_H */
