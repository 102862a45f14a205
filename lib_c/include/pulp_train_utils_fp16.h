/*
 * pulp_train_utils_fp16.h: the FP16 twins of the tensor utilities that move
 * or add elements; the contract of pulp_train_utils_fp32.h on fp16 elements
 * (per-core bodies forked by the caller; the layout conversions fork
 * themselves). vect_sum_fp16 rounds each sum
 * once to fp16; the others move elements unchanged.
 */
#ifndef PULP_TRAIN_UTILS_FP16_H
#define PULP_TRAIN_UTILS_FP16_H

#include "pulp_train_defines.h"

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

void transpose_matrix_fp16(void *transp_args_fp16);
void transpose_fp16(void *transp_args_fp16);
void copy_fp16(void *copy_args_fp16);
void set_to_value_fp16(void *set_to_value_args_fp16);
void vect_sum_fp16(void *vect_sum_args_fp16);
void CHW_to_HWC_fp16(void *layout_args_fp16);   /* self */
void HWC_to_CHW_fp16(void *layout_args_fp16);   /* self */
void pad_tensor_fp16(void *pad_args_fp16);

#endif /* PULP_TRAIN_UTILS_FP16_H */
