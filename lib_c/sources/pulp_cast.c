/*
 * pulp_cast.c: FP32 <-> FP16 casts (pulp_cast.h).
 */
#include "pulp_cast.h"

static void cast_block(int n, int *first, int *last)
{
    const long long cores = NUM_CORES, id = pi_core_id();
    const long long b = (n + cores - 1) / cores;
    const long long lo = id * b, hi = lo + b;
    *first = (int)(lo < n ? lo : n);
    *last = (int)(hi < n ? hi : n);
}

void cast_fp16_tensor_to_fp32(void *cast_16t32_args)
{
    const struct cast_16t32_args *a = cast_16t32_args;
    int first, last;
    cast_block(a->size, &first, &last);
    for (int i = first; i < last; i++)
        a->destination[i] = fp16_to_f32(a->source[i]);
}

void cast_fp32_tensor_to_fp16(void *cast_32t16_args)
{
    const struct cast_32t16_args *a = cast_32t16_args;
    int first, last;
    cast_block(a->size, &first, &last);
    for (int i = first; i < last; i++)
        a->destination[i] = fp16_from_f32(a->source[i]);
}
