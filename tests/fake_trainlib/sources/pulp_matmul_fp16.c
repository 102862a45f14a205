/*
 * pulp_matmul_fp16.c: the FP16 SIMD lane helpers of the fake library. Fact 5:
 * they use GCC's __builtin_shuffle on v2f16 with a v2s mask, in the 2- and
 * 3-argument forms; clang has no such built-in (the harness provides one).
 */
#include "pulp_matmul_fp16.h"

v2f16 vfpack(fp16 lo, fp16 hi)
{
    v2f16 v = {lo, hi};
    return v;
}

fp16 vfdotp(v2f16 a, v2f16 b)
{
    v2f16 p = a * b;
    return p[0] + p[1];
}

v2f16 vfswap(v2f16 a)
{
    /* The mask inline, as the published kernels write it: its comma must not
     * split a macro's arguments. */
    return (v2f16)(__builtin_shuffle(a, (v2s){1, 0}));
}

v2f16 vfselect(v2f16 a, v2f16 b, v2s mask)
{
    if (mask[0] > 3 || mask[1] > 3) {
        printf("vfselect: mask out of range\n");
        exit(1); /* declared by the SDK's pmsis.h, not by a header of its own */
    }
    return __builtin_shuffle(a, b, mask);
}
