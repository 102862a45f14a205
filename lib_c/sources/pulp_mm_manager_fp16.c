/*
 * pulp_mm_manager_fp16.c: mm_manager_fp16, which runs an FP16 matmul kernel
 * chosen by index and adds the bias (contract in pulp_matmul_fp16.h).
 */
#include <stdio.h>

#include "pulp_matmul_fp16.h"

const int pulp_mm_kernel_count_fp16 = 9;

static void (*const mm_kernels_fp16[])(void *) = {
    mm_fp16,            mm_M_fp16,          mm_fp16_SIMD_2x4,
    mm_fp16_SIMD_4x8,   mm_M_fp16_SIMD_2x4, mm_M_fp16_SIMD_4x8,
    mm_fp16_unroll_2x1, mm_fp16_unroll_4x1, mm_fp16_unroll_8x1,
};

/* This core's share [*first, *last) of n rows. */
static void core_rows(int n, int *first, int *last)
{
    const int chunk = (n + NUM_CORES - 1) / NUM_CORES;
    int f = pi_core_id() * chunk;
    int l = f + chunk;
    *first = f < n ? f : n;
    *last = l < n ? l : n;
}

void mm_manager_fp16(void *mm_manager_args_fp16)
{
    const struct mm_manager_args_fp16 *mgr = mm_manager_args_fp16;
    struct matMul_args_fp16 *mm_args = mgr->mm_args;
    const int type = mgr->matmul_type;
    const int N = mm_args->N, M = mm_args->M;
    int first, last;
    core_rows(N, &first, &last);

    if (type < 0 || type >= pulp_mm_kernel_count_fp16) {
        /* A result that can never pass a check, rather than a stale C. */
        if (pi_core_id() == 0)
            printf("mm_manager_fp16: unknown matmul_type %d (valid 0..%d)\n", type,
                   pulp_mm_kernel_count_fp16 - 1);
        const fp16 nan16 = fp16_from_bits((uint16_t)(PTL_FP16_INF_BITS | PTL_FP16_QNAN_BIT));
        for (int i = first; i < last; i++)
            for (int j = 0; j < M; j++)
                mm_args->C[i * M + j] = nan16;
        return;
    }

    mm_kernels_fp16[type](mm_args);

    if (!mm_args->USE_BIASES)
        return;
    /* mm_M kernels write columns, so another core may still be writing the
     * rows this core is about to update. */
    pi_cl_team_barrier();
    const fp16 *bias = mm_args->bias;
    fp16 *C = mm_args->C;
    if (!mm_args->bias_transposed) { /* one bias per column */
        for (int i = first; i < last; i++)
            for (int j = 0; j < M; j++)
                C[i * M + j] = fp16_add(C[i * M + j], bias[j]);
    } else {
        for (int i = first; i < last; i++) {
            const fp16 b = bias[i];
            for (int j = 0; j < M; j++)
                C[i * M + j] = fp16_add(C[i * M + j], b);
        }
    }
}
