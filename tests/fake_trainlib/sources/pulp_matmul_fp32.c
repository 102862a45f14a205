/*
 * pulp_matmul_fp32.c: the FP32 matmul kernels of the fake library and
 * mm_manager. Plain and correct rather than fast: every kernel name of the
 * index table is here, and each runs one of two loops, rows split over the
 * cores (mm*) or columns split over the cores (mm_M*). Sums run in K order.
 */
#include "pulp_train_defines.h"
#include "pulp_matmul_fp32.h"

/* This core's share [*first, *last) of n items: blocks of ceil(n / cores). */
static void core_share(int n, int *first, int *last)
{
    const int cores = NUM_CORES, block = (n + cores - 1) / cores;
    const int start = pi_core_id() * block;
    *first = start < n ? start : n;
    *last = start + block < n ? start + block : n;
}

static float element_of_b(const struct matMul_args *a, int k, int j)
{
    return a->trans_B ? a->B[j * a->K + k] : a->B[k * a->M + j];
}

static void product(const struct matMul_args *a, int row0, int row1, int col0, int col1)
{
    for (int i = row0; i < row1; i++) {
        for (int j = col0; j < col1; j++) {
            float sum = 0.0f;
            for (int k = 0; k < a->K; k++)
                sum += a->A[i * a->K + k] * element_of_b(a, k, j);
            a->C[i * a->M + j] = sum;
        }
    }
}

static void rows_split(void *matMul_args)
{
    const struct matMul_args *a = matMul_args;
    int first, last;
    core_share(a->N, &first, &last);
    product(a, first, last, 0, a->M);
}

static void columns_split(void *matMul_args)
{
    const struct matMul_args *a = matMul_args;
    int first, last;
    core_share(a->M, &first, &last);
    product(a, 0, a->N, first, last);
}

void mm(void *args) { rows_split(args); }
void mm_u2(void *args) { rows_split(args); }
void mm_unroll_1x2(void *args) { rows_split(args); }
void mm_unroll_1x4(void *args) { rows_split(args); }
void mm_unroll_1x8(void *args) { rows_split(args); }
void mm_unroll_2x1(void *args) { rows_split(args); }
void mm_unroll_4x1(void *args) { rows_split(args); }
void mm_unroll_8x1(void *args) { rows_split(args); }
void mm_unroll_2x2(void *args) { rows_split(args); }
void mm_unroll_2x4(void *args) { rows_split(args); }
void mm_unroll_4x2(void *args) { rows_split(args); }
void mm_unroll_4x4(void *args) { rows_split(args); }
void mm_M(void *args) { columns_split(args); }
void mm_M_u2(void *args) { columns_split(args); }
void mm_M_unroll_1x2(void *args) { columns_split(args); }
void mm_M_unroll_1x4(void *args) { columns_split(args); }
void mm_M_unroll_1x8(void *args) { columns_split(args); }
void mm_M_unroll_2x1(void *args) { columns_split(args); }
void mm_M_unroll_4x1(void *args) { columns_split(args); }
void mm_M_unroll_8x1(void *args) { columns_split(args); }
void mm_M_unroll_2x2(void *args) { columns_split(args); }
void mm_M_unroll_2x4(void *args) { columns_split(args); }
void mm_M_unroll_4x2(void *args) { columns_split(args); }
void mm_M_unroll_4x4(void *args) { columns_split(args); }

static void (*const kernels[])(void *) = {
    mm,              mm_M,            mm_u2,           mm_unroll_1x2,   mm_unroll_1x4,   mm_unroll_1x8,
    mm_unroll_2x1,   mm_unroll_4x1,   mm_unroll_8x1,   mm_unroll_2x2,   mm_unroll_2x4,   mm_unroll_4x2,
    mm_unroll_4x4,   mm_M_u2,         mm_M_unroll_1x2, mm_M_unroll_1x4, mm_M_unroll_1x8, mm_M_unroll_2x1,
    mm_M_unroll_4x1, mm_M_unroll_8x1, mm_M_unroll_2x2, mm_M_unroll_2x4, mm_M_unroll_4x2, mm_M_unroll_4x4,
};

void mm_manager(void *mm_manager_args)
{
    const struct mm_manager_args *man = mm_manager_args;
    struct matMul_args *a = man->mm_args;
    const int count = (int)(sizeof kernels / sizeof kernels[0]);
    if (man->matmul_type < 0 || man->matmul_type >= count) {
        if (pi_core_id() == 0)
            printf("mm_manager: no matmul kernel %d (valid 0..%d)\n", man->matmul_type, count - 1);
        return;
    }
    kernels[man->matmul_type](a);
    if (!a->USE_BIASES)
        return;
    /* An mm_M kernel wrote other rows than this core's: wait for all of C. */
    pi_cl_team_barrier();
    int first, last;
    core_share(a->N, &first, &last);
    for (int i = first; i < last; i++)
        for (int j = 0; j < a->M; j++)
            a->C[i * a->M + j] += a->bias_transposed ? a->bias[i] : a->bias[j];
}
