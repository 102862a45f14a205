/*
 * pulp_matmul_fp32.h: FP32 matrix multiply, C[N x M] = A[N x K] * B[K x M],
 * row-major; with trans_B B is stored M x K. mm* kernels split the N rows
 * over the cores, mm_M* kernels the M columns. Called on every core of a
 * team (the caller forks).
 */
#ifndef PULP_MATMUL_FP32_H
#define PULP_MATMUL_FP32_H

struct matMul_args {
    float *A;
    float *B;
    float *C;
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
    float *bias;
    int bias_dim;
    int USE_BIASES;
    int bias_transposed;
    int HWC;
};

struct matMul_DW_args; /* depthwise matmul args: not provided by this library */

/* Fact 6: the published struct has mm_dw_args in second place. */
struct mm_manager_args {
    struct matMul_args *mm_args;
    struct matMul_DW_args *mm_dw_args;
    int layer_type;
    int step_type;
    int matmul_type;
};

/* The kernels of the FP32 index table (TRAINLIB_API.md), index 0..23. */
void mm(void *matMul_args);
void mm_M(void *matMul_args);
void mm_u2(void *matMul_args);
void mm_unroll_1x2(void *matMul_args);
void mm_unroll_1x4(void *matMul_args);
void mm_unroll_1x8(void *matMul_args);
void mm_unroll_2x1(void *matMul_args);
void mm_unroll_4x1(void *matMul_args);
void mm_unroll_8x1(void *matMul_args);
void mm_unroll_2x2(void *matMul_args);
void mm_unroll_2x4(void *matMul_args);
void mm_unroll_4x2(void *matMul_args);
void mm_unroll_4x4(void *matMul_args);
void mm_M_u2(void *matMul_args);
void mm_M_unroll_1x2(void *matMul_args);
void mm_M_unroll_1x4(void *matMul_args);
void mm_M_unroll_1x8(void *matMul_args);
void mm_M_unroll_2x1(void *matMul_args);
void mm_M_unroll_4x1(void *matMul_args);
void mm_M_unroll_8x1(void *matMul_args);
void mm_M_unroll_2x2(void *matMul_args);
void mm_M_unroll_2x4(void *matMul_args);
void mm_M_unroll_4x2(void *matMul_args);
void mm_M_unroll_4x4(void *matMul_args);

/* Runs kernel matmul_type on this core's slice, then adds the bias when
 * USE_BIASES (bias_transposed 0: bias[j] per column, else bias[i] per row). */
void mm_manager(void *mm_manager_args);

#endif /* PULP_MATMUL_FP32_H */
