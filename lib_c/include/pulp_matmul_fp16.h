/*
 * pulp_matmul_fp16.h: FP16 matrix-multiply kernels and their dispatcher.
 *
 * Same contract as pulp_matmul_fp32.h with fp16 data: C = A * B overwrites C,
 * A is N x K, B is K x M (trans_B == 0) or M x K (trans_B != 0), C is N x M,
 * all row-major; kernels run inside the caller's team, mm* split rows and
 * mm_M* split columns over NUM_CORES cores.
 * Every element is accumulated in fp16 with fp16_fma (one rounding per step,
 * the device's precision) over k = 0..K-1 in order, so all kernels give
 * bit-identical results. SIMD kernels compute pairs of adjacent columns as
 * v2f16 lanes; odd leftovers fall back to scalar code.
 */
#ifndef PULP_MATMUL_FP16_H
#define PULP_MATMUL_FP16_H

#include "pulp_train_defines.h"

struct matMul_args_fp16 {
    fp16 *A;
    fp16 *B;
    fp16 *C;
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
    /* Bias, as in struct matMul_args. */
    fp16 *bias;
    int bias_dim;
    int USE_BIASES;
    int bias_transposed;
    int HWC;
};

/* Depthwise matmul arguments: lib_c's depthwise code does not go through
 * mm_manager, so the struct is only declared, for the API's field. */
struct matMul_DW_args_fp16;

/* Dispatcher arguments: matmul_type is the API index of the kernel (TRAINLIB_API.md). */
struct mm_manager_args_fp16 {
    struct matMul_args_fp16 *mm_args;
    struct matMul_DW_args_fp16 *mm_dw_args; /* depthwise layers only; NULL otherwise */
    int layer_type;
    int step_type;
    int matmul_type;
};

/* Number of FP16 kernels reachable through mm_manager_fp16 (9). */
extern const int pulp_mm_kernel_count_fp16;

/* Runs kernel matmul_type inside the caller's team, then (after a team
 * barrier) adds the bias with fp16_add when USE_BIASES. An index out of range
 * prints an error from core 0 and fills C (N x M) with NaN. */
void mm_manager_fp16(void *mm_manager_args_fp16);

/* Kernels; each takes a struct matMul_args_fp16 *. */
void mm_fp16(void *matMul_args_fp16);                /* [0] rows, 1x1 */
void mm_M_fp16(void *matMul_args_fp16);              /* [1] cols, 1x1 */
void mm_fp16_SIMD_2x4(void *matMul_args_fp16);       /* [2] rows, 2 x (2 pairs) */
void mm_fp16_SIMD_4x8(void *matMul_args_fp16);       /* [3] rows, 4 x (4 pairs) */
void mm_M_fp16_SIMD_2x4(void *matMul_args_fp16);     /* [4] cols, 2 x (2 pairs) */
void mm_M_fp16_SIMD_4x8(void *matMul_args_fp16);     /* [5] cols, 4 x (4 pairs) */
void mm_fp16_unroll_2x1(void *matMul_args_fp16);     /* [6] rows */
void mm_fp16_unroll_4x1(void *matMul_args_fp16);     /* [7] rows */
void mm_fp16_unroll_8x1(void *matMul_args_fp16);     /* [8] rows */

#endif /* PULP_MATMUL_FP16_H */
