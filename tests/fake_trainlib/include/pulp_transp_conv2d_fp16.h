/* pulp_transp_conv2d_fp16.h: transposed convolution; declared, not implemented
 * here (a runner unit that calls it cannot link). */
#ifndef PULP_TRANSP_CONV2D_FP16_H
#define PULP_TRANSP_CONV2D_FP16_H

#include "pulp_train_defines.h"

struct Transp_Conv2D_args_fp16 {
    struct blob_fp16 *input;
    struct blob_fp16 *coeff;
    struct blob_fp16 *bias;
    struct blob_fp16 *output;
    int inLpad;
    int inRpad;
    int inUpad;
    int inDpad;
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

void pulp_transp_conv2d_fp16_fw_cl(void *Transp_Conv2D_args_fp16);
void pulp_transp_conv2d_fp16_bw_cl(void *Transp_Conv2D_args_fp16);
void pulp_transp_conv2d_fp16_bw_param_grads_cl(void *Transp_Conv2D_args_fp16);
void pulp_transp_conv2d_fp16_bw_input_grads_cl(void *Transp_Conv2D_args_fp16);

#endif
