/*
 * pulp_matmul_fp32.h: FP32 matrix-multiply kernels and their dispatcher.
 *
 * Every kernel computes C = A * B and overwrites C:
 *   A: N x K, row-major;
 *   B: K x M, row-major (trans_B == 0), or M x K, row-major (trans_B != 0);
 *   C: N x M, row-major.
 * Only A, B, C, N, M, K and trans_B are read by the kernels; the other fields
 * of struct matMul_args belong to the layers and to mm_manager.
 *
 * Kernels run inside a team that the caller has already forked: each core
 * computes its own slice, chosen by pi_core_id() out of NUM_CORES, and the
 * kernels do not end with a barrier. mm* kernels split the N rows of C over
 * the cores, mm_M* kernels split the M columns. Slices are contiguous, as even
 * as possible, disjoint, and a core whose slice is empty does nothing.
 * "UxV" kernels compute U rows x V columns of C per inner loop, "u2" ones
 * unroll the K loop by 2; any N, M, K >= 1 is handled. Every element is
 * accumulated in float over k = 0..K-1 in order.
 */
#ifndef PULP_MATMUL_FP32_H
#define PULP_MATMUL_FP32_H

#include "pulp_train_defines.h"

struct matMul_args {
    float *A;
    float *B;
    float *C;
    int N;
    int M;
    int K;
    int trans_B;
    /* Convolution geometry, unused by the plain kernels. */
    int H;
    int W;
    int pW;
    int pH;
    int pCin;
    int pCout;
    int stride_h;
    int stride_w;
    int Lpad;
    int Rpad;
    int Upad;
    int Dpad;
    /* Bias added by mm_manager when USE_BIASES: bias_transposed == 0 adds
     * bias[j] (M entries) to column j; bias_transposed != 0 adds bias[i]
     * (N entries) to row i. bias_dim is the entry count. */
    float *bias;
    int bias_dim;
    int USE_BIASES;
    int bias_transposed;
    int HWC;
};

/* Depthwise matmul arguments: lib_c's depthwise code does not go through
 * mm_manager, so the struct is only declared, for the API's field. */
struct matMul_DW_args;

/* Dispatcher arguments: mm_args is the product, matmul_type the kernel index
 * (0..pulp_mm_kernel_count_fp32-1): 0..23 are the API's indices of
 * TRAINLIB_API.md, 24..31 lib_c's own register blocks after them. */
struct mm_manager_args {
    struct matMul_args *mm_args;
    struct matMul_DW_args *mm_dw_args; /* depthwise layers only; NULL otherwise */
    int layer_type;
    int step_type;
    int matmul_type;
};

/* Number of FP32 kernels reachable through mm_manager (32). */
extern const int pulp_mm_kernel_count_fp32;

/* Runs kernel matmul_type on mm_args inside the caller's team, then (after a
 * team barrier) adds the bias when mm_args->USE_BIASES. An index out of range
 * prints an error from core 0 and fills C (N x M) with NaN. */
void mm_manager(void *mm_manager_args);

/* N-split kernels; each takes a struct matMul_args *. */
void mm(void *matMul_args);              /* [0]  1x1 */
void mm_u2(void *matMul_args);           /* [2]  1x1, K unrolled by 2 */
void mm_unroll_1x2(void *matMul_args);   /* [3] */
void mm_unroll_1x4(void *matMul_args);   /* [4] */
void mm_unroll_1x8(void *matMul_args);   /* [5] */
void mm_unroll_2x1(void *matMul_args);   /* [6] */
void mm_unroll_4x1(void *matMul_args);   /* [7] */
void mm_unroll_8x1(void *matMul_args);   /* [8] */
void mm_unroll_2x2(void *matMul_args);   /* [9] */
void mm_unroll_2x4(void *matMul_args);   /* [10] */
void mm_unroll_4x2(void *matMul_args);   /* [11] */
void mm_unroll_4x4(void *matMul_args);   /* [12] */
/* lib_c's own, after the API's table: blocks the published library lacks,
 * closer to the floor of rv32imf (lib_c/README.md). */
void mm_unroll_5x5(void *matMul_args);   /* [24] */
void mm_unroll_4x6(void *matMul_args);   /* [25] */
void mm_unroll_6x4(void *matMul_args);   /* [26] */
/* 4x6 with 4 k per loop pass: fewer instructions, a 560-byte loop (for cores
 * whose instruction cache holds it; lib_c/README.md). */
void mm_unroll_4x6_k4(void *matMul_args); /* [30] */
/* 5x5 with 16 k per loop pass and the first pass apart: the fewest
 * instructions (QEMU), a 2-KB loop (lib_c/README.md). */
void mm_unroll_5x5_k16(void *matMul_args); /* [32] */
/* 4x6 with its loop's loads and adds between fmadds, for cores that
 * share an FPU: 3.39 MAC/clk on pulp-open's 8 cores and 4 FPUs against 3.20,
 * 1.5% slower on a core of its own (lib_c/README.md). */
void mm_unroll_4x6_spread(void *matMul_args); /* [34] */

/* M-split kernels; each takes a struct matMul_args *. */
void mm_M(void *matMul_args);            /* [1]  1x1 */
void mm_M_u2(void *matMul_args);         /* [13] 1x1, K unrolled by 2 */
void mm_M_unroll_1x2(void *matMul_args); /* [14] */
void mm_M_unroll_1x4(void *matMul_args); /* [15] */
void mm_M_unroll_1x8(void *matMul_args); /* [16] */
void mm_M_unroll_2x1(void *matMul_args); /* [17] */
void mm_M_unroll_4x1(void *matMul_args); /* [18] */
void mm_M_unroll_8x1(void *matMul_args); /* [19] */
void mm_M_unroll_2x2(void *matMul_args); /* [20] */
void mm_M_unroll_2x4(void *matMul_args); /* [21] */
void mm_M_unroll_4x2(void *matMul_args); /* [22] */
void mm_M_unroll_4x4(void *matMul_args); /* [23] */
void mm_M_unroll_5x5(void *matMul_args); /* [27] lib_c's own */
void mm_M_unroll_4x6(void *matMul_args); /* [28] lib_c's own */
void mm_M_unroll_6x4(void *matMul_args); /* [29] lib_c's own */
void mm_M_unroll_4x6_k4(void *matMul_args); /* [31] lib_c's own */
void mm_M_unroll_5x5_k16(void *matMul_args); /* [33] lib_c's own */

#endif /* PULP_MATMUL_FP32_H */
