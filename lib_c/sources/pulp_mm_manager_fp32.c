/*
 * pulp_mm_manager_fp32.c: mm_manager, which runs an FP32 matmul kernel chosen
 * by index and adds the bias (contract in pulp_matmul_fp32.h).
 */
#include <stdio.h>
#include <math.h>

#include "pulp_matmul_fp32.h"

static void (*const mm_kernels_fp32[])(void *) = {
    mm,              mm_M,            mm_u2,           mm_unroll_1x2,
    mm_unroll_1x4,   mm_unroll_1x8,   mm_unroll_2x1,   mm_unroll_4x1,
    mm_unroll_8x1,   mm_unroll_2x2,   mm_unroll_2x4,   mm_unroll_4x2,
    mm_unroll_4x4,   mm_M_u2,         mm_M_unroll_1x2, mm_M_unroll_1x4,
    mm_M_unroll_1x8, mm_M_unroll_2x1, mm_M_unroll_4x1, mm_M_unroll_8x1,
    mm_M_unroll_2x2, mm_M_unroll_2x4, mm_M_unroll_4x2, mm_M_unroll_4x4,
    /* lib_c's own, after the API's 24 */
    mm_unroll_5x5,   mm_unroll_4x6,   mm_unroll_6x4,   mm_M_unroll_5x5,
    mm_M_unroll_4x6, mm_M_unroll_6x4, mm_unroll_4x6_k4, mm_M_unroll_4x6_k4,
    mm_unroll_5x5_k16, mm_M_unroll_5x5_k16, mm_unroll_4x6_spread,
};
const int pulp_mm_kernel_count_fp32 = (int)(sizeof mm_kernels_fp32 / sizeof mm_kernels_fp32[0]);

/* This core's share [*first, *last) of n rows. */
static void core_rows(int n, int *first, int *last)
{
    const int chunk = (n + NUM_CORES - 1) / NUM_CORES;
    int f = pi_core_id() * chunk;
    int l = f + chunk;
    *first = f < n ? f : n;
    *last = l < n ? l : n;
}

void mm_manager(void *mm_manager_args)
{
    const struct mm_manager_args *mgr = mm_manager_args;
    struct matMul_args *mm_args = mgr->mm_args;
    const int type = mgr->matmul_type;
    const int N = mm_args->N, M = mm_args->M;
    int first, last;
    core_rows(N, &first, &last);

    if (type < 0 || type >= pulp_mm_kernel_count_fp32) {
        /* A result that can never pass a check, rather than a stale C. */
        if (pi_core_id() == 0)
            printf("mm_manager: unknown matmul_type %d (valid 0..%d)\n", type,
                   pulp_mm_kernel_count_fp32 - 1);
        for (int i = first; i < last; i++)
            for (int j = 0; j < M; j++)
                mm_args->C[i * M + j] = NAN;
        return;
    }

    mm_kernels_fp32[type](mm_args);

    if (!mm_args->USE_BIASES)
        return;
    /* mm_M kernels write columns, so another core may still be writing the
     * rows this core is about to update. */
    pi_cl_team_barrier();
    const float *bias = mm_args->bias;
    float *C = mm_args->C;
    if (!mm_args->bias_transposed) { /* one bias per column */
        for (int i = first; i < last; i++)
            for (int j = 0; j < M; j++)
                C[i * M + j] += bias[j];
    } else {
        for (int i = first; i < last; i++) {
            const float b = bias[i];
            for (int j = 0; j < M; j++)
                C[i * M + j] += b;
        }
    }
}
