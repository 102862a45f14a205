/*
 * pulp_matmul_fp16.h: FP16 matmul structs and the SIMD lane helpers. This
 * library implements only the helpers (pulp_matmul_fp16.c), not the FP16
 * kernels or mm_manager_fp16: a runner unit that needs them cannot link.
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
    fp16 *bias;
    int bias_dim;
    int USE_BIASES;
    int bias_transposed;
    int HWC;
};

struct matMul_DW_args_fp16;

struct mm_manager_args_fp16 {
    struct matMul_args_fp16 *mm_args;
    struct matMul_DW_args_fp16 *mm_dw_args;
    int layer_type;
    int step_type;
    int matmul_type;
};

/* Declared, not defined here. */
void mm_manager_fp16(void *mm_manager_args_fp16);

/* Lane helpers on v2f16 (fact 5: built on GCC's __builtin_shuffle). */
v2f16 vfpack(fp16 lo, fp16 hi);
fp16 vfdotp(v2f16 a, v2f16 b);         /* a0*b0 + a1*b1 */
v2f16 vfswap(v2f16 a);                 /* {a1, a0} */
v2f16 vfselect(v2f16 a, v2f16 b, v2s mask); /* GCC's 3-argument shuffle */

#endif /* PULP_MATMUL_FP16_H */
