/*
 * pulp_conv2d_fp16.h: FP16 2D convolution.
 *
 * Same shapes, layouts, paths, buffers and steps as pulp_conv2d_fp32.h with
 * struct blob_fp16 tensors and fp16 buffers. The im2col path uses
 * mm_manager_fp16 (kernel indices of pulp_matmul_fp16.h); every sum, in
 * either path, accumulates in fp16 with fp16_fma / fp16_add, the device's
 * precision.
 */
#ifndef PULP_CONV2D_FP16_H
#define PULP_CONV2D_FP16_H

#include "pulp_train_defines.h"
#include "pulp_matmul_fp16.h"
#include "pulp_im2col_fp16.h"

struct Conv2D_args_fp16 {
    struct blob_fp16 *input;
    struct blob_fp16 *coeff;
    struct blob_fp16 *bias;
    struct blob_fp16 *output;
    int Lpad;
    int Rpad;
    int Upad;
    int Dpad;
    int stride_h;
    int stride_w;
    fp16 *i2c_buffer;
    fp16 *bt_buffer;
    int skip_wg_grad;
    int skip_in_grad;
    int HWC;
    int opt_matmul_type_fw;
    int opt_matmul_type_wg;
    int opt_matmul_type_ig;
    int USE_BIASES;
    int USE_IM2COL;
    int USE_DMA_IM2COL;
};

/* Forward: output->data from input->data, coeff->data (+ bias->data). */
void pulp_conv2d_fp16_fw_cl(void *Conv2D_args_fp16);

/* bw_param_grads unless skip_wg_grad, then bw_input_grads unless skip_in_grad. */
void pulp_conv2d_fp16_bw_cl(void *Conv2D_args_fp16);

/* Weight gradient coeff->diff (and bias->diff with USE_BIASES), as in FP32. */
void pulp_conv2d_fp16_bw_param_grads_cl(void *Conv2D_args_fp16);

/* Input gradient input->diff, as in FP32. */
void pulp_conv2d_fp16_bw_input_grads_cl(void *Conv2D_args_fp16);

#endif /* PULP_CONV2D_FP16_H */
