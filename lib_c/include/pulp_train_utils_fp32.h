/*
 * pulp_train_utils_fp32.h: FP32 tensor utilities.
 *
 * Per-core bodies FORKED BY THE CALLER unless marked: core id takes a
 * contiguous block of ceil(n / NUM_CORES) of the n output elements (rows
 * for mm_add). Marked "self": forks NUM_CORES itself. "single": one core.
 *
 *   transpose_matrix   out[j*N + i] = in[i*M + j] (N x M in)
 *   transpose          numpy transpose(in.reshape(dim[0..n_dim)), transposed_axes)
 *   copy               to[i] = from[i]
 *   set_to_value       to[i] = value
 *   vect_sum           dest[i] = op_1[i] + op_2[i]
 *   array_broadcast_sum_fp32   numpy broadcast op_1 + op_2 into dest
 *   mm_broadcast_fp32  (self) numpy matmul of A (A_dims) and B (B_dims)
 *                      with batch broadcasting; sums over k in order
 *   mm_add             C += A B (matMul_args N, M, K; rows split over the cores)
 *   CHW_to_HWC, HWC_to_CHW  (self) in place on tensor->data and/or
 *                      tensor->diff (transpose_data, transpose_grad) through
 *                      transp_buffer of C*H*W elements
 *   pad_tensor         zero padding of a C x H x W source (HWC_lay 1: H x W x C)
 *                      into dest of (H + T_UPAD + T_DPAD) x (W + T_LPAD + T_RPAD)
 *   reduce_mean_fp32   output += numpy mean(input.reshape(dims), reduce_axis)
 *   pulp_mean_std_fp32_cl  (single) mean = sum x / dim; var = sum x^2 / dim -
 *                      mean^2 + epsilon (epsilon if < 0); std = sqrtf(var)
 *   q_rsqrt            1/sqrt(x): 0x5f3759df - (bits >> 1), one Newton step;
 *                      relative error in [-1.76e-3, 0] (up to rounding)
 */
#ifndef PULP_TRAIN_UTILS_FP32_H
#define PULP_TRAIN_UTILS_FP32_H

#include "pulp_train_defines.h"
#include "pulp_matmul_fp32.h"

struct transp_args {
    float *in_matrix;
    float *out_matrix;
    int N;
    int M;
    int *dim;
    int *transposed_axes;
    int n_dim;
};

struct copy_args {
    float *from;
    float *to;
    int size;
};

struct set_to_value_args {
    float *to;
    float value;
    int size;
};

struct vect_sum_args {
    float *op_1;
    float *op_2;
    float *dest;
    int size;
};

struct array_broadcast_sum_fp32_args {
    float *op_1;
    float *op_2;
    float *dest;
    int *op_1_dims;
    int *op_2_dims;
    int op_1_dims_len;
    int op_2_dims_len;
};

struct broadcastMatMul_args_fp32 {
    float *A;
    float *B;
    float *C;
    int *A_dims;
    int *B_dims;
    int A_dims_len;
    int B_dims_len;
};

struct layout_args {
    struct blob *tensor;
    float *transp_buffer;
    int transpose_data;
    int transpose_grad;
};

struct pad_args {
    float *source;
    float *dest;
    int C;
    int H;
    int W;
    int T_RPAD;
    int T_LPAD;
    int T_UPAD;
    int T_DPAD;
    int HWC_lay;
};

struct reduce_mean_args_fp32 {
    float *input;
    float *output;
    int *dims;
    int dims_len;
    int reduce_axis;
};

struct mean_std_args {
    float *input;
    float *mean;
    float *var;
    float *std;
    float epsilon;
    int dim;
};

void transpose_matrix(void *transp_args);
void transpose(void *transp_args);
void copy(void *copy_args);
void set_to_value(void *set_to_value_args);
void vect_sum(void *vect_sum_args);
void array_broadcast_sum_fp32(void *array_broadcast_sum_fp32_args);
void mm_broadcast_fp32(void *broadcastMatMul_args_fp32);
void mm_add(void *matMul_args);
void CHW_to_HWC(void *layout_args);
void HWC_to_CHW(void *layout_args);
void pad_tensor(void *pad_args);
void reduce_mean_fp32(void *reduce_mean_args_fp32);
void pulp_mean_std_fp32_cl(void *mean_std_args);
float q_rsqrt(float x);

#endif /* PULP_TRAIN_UTILS_FP32_H */
