/*
 * pulp_train_utils_fp16.h: the FP16 twins of the tensor utilities; the
 * contract of pulp_train_utils_fp32.h on fp16 elements (per-core bodies
 * forked by the caller; the layout conversions and mm_broadcast_fp16 fork
 * themselves; pulp_mean_std_fp16_cl and q_rsqrt_fp16 run on one core).
 *
 * The moves move elements unchanged. vect_sum_fp16 and
 * array_broadcast_sum_fp16 round each sum once to fp16; mm_broadcast_fp16
 * and mm_add_fp16 accumulate with one fp16 fma per product (k in order);
 * reduce_mean_fp16 sums in fp16, divides by the axis length as an fp16
 * (exact up to 2048 in IEEE fp16, 256 in bfloat16) and adds into output.
 * pulp_mean_std_fp16_cl computes the FP32 formulas in binary32 on the
 * elements' values and rounds mean, var and std once each; q_rsqrt_fp16 is
 * q_rsqrt of the element's binary32 value, rounded once.
 */
#ifndef PULP_TRAIN_UTILS_FP16_H
#define PULP_TRAIN_UTILS_FP16_H

#include "pulp_train_defines.h"
#include "pulp_matmul_fp16.h"

struct transp_args_fp16 {
    fp16 *in_matrix;
    fp16 *out_matrix;
    int N;
    int M;
    int *dim;
    int *transposed_axes;
    int n_dim;
};

struct copy_args_fp16 {
    fp16 *from;
    fp16 *to;
    int size;
};

struct set_to_value_args_fp16 {
    fp16 *to;
    fp16 value;
    int size;
};

struct vect_sum_args_fp16 {
    fp16 *op_1;
    fp16 *op_2;
    fp16 *dest;
    int size;
};

struct layout_args_fp16 {
    struct blob_fp16 *tensor;
    fp16 *transp_buffer;
    int transpose_data;
    int transpose_grad;
};

struct pad_args_fp16 {
    fp16 *source;
    fp16 *dest;
    int C;
    int H;
    int W;
    int T_RPAD;
    int T_LPAD;
    int T_UPAD;
    int T_DPAD;
    int HWC_lay;
};

struct array_broadcast_sum_fp16_args {
    fp16 *op_1;
    fp16 *op_2;
    fp16 *dest;
    int *op_1_dims;
    int *op_2_dims;
    int op_1_dims_len;
    int op_2_dims_len;
};

struct broadcastMatMul_args_fp16 {
    fp16 *A;
    fp16 *B;
    fp16 *C;
    int *A_dims;
    int *B_dims;
    int A_dims_len;
    int B_dims_len;
};

struct reduce_mean_args_fp16 {
    fp16 *input;
    fp16 *output;
    int *dims;
    int dims_len;
    int reduce_axis;
};

struct mean_std_args_fp16 {
    fp16 *input;
    fp16 *mean;
    fp16 *var;
    fp16 *std;
    fp16 epsilon;
    int dim;
};

void transpose_matrix_fp16(void *transp_args_fp16);
void transpose_fp16(void *transp_args_fp16);
void copy_fp16(void *copy_args_fp16);
void set_to_value_fp16(void *set_to_value_args_fp16);
void vect_sum_fp16(void *vect_sum_args_fp16);
void CHW_to_HWC_fp16(void *layout_args_fp16);   /* self */
void HWC_to_CHW_fp16(void *layout_args_fp16);   /* self */
void pad_tensor_fp16(void *pad_args_fp16);
/* dest = numpy broadcast op_1 + op_2 (row-major op_1_dims, op_2_dims,
 * right-aligned; dest has the broadcast shape). */
void array_broadcast_sum_fp16(void *array_broadcast_sum_fp16_args);
/* (self) C = numpy matmul of A (A_dims, >= 2 dims) and B (B_dims, >= 2),
 * batch dims broadcast; C row-major in the broadcast batch x N x M. */
void mm_broadcast_fp16(void *broadcastMatMul_args_fp16);
/* C (N x M) += A (N x K) B (K x M; trans_B: B is M x K); rows over the cores. */
void mm_add_fp16(void *matMul_args_fp16);
/* output += numpy mean(input.reshape(dims), reduce_axis); output has the
 * input's element count / dims[reduce_axis]. */
void reduce_mean_fp16(void *reduce_mean_args_fp16);
/* (single) *mean, *var (+ epsilon), *std of the dim elements of input. */
void pulp_mean_std_fp16_cl(void *mean_std_args_fp16);
/* 1/sqrt(x) of one x > 0 (relative error in [-1.76e-3, 0] before the
 * rounding to fp16). */
fp16 q_rsqrt_fp16(fp16 x);

#endif /* PULP_TRAIN_UTILS_FP16_H */
