/* pulp_transp_conv2d_fp32.h: transposed convolution; declared, not implemented
 * here (a runner unit that calls it cannot link). */
#ifndef PULP_TRANSP_CONV2D_FP32_H
#define PULP_TRANSP_CONV2D_FP32_H

#include "pulp_train_defines.h"

struct Transp_Conv2D_args {
    struct blob *input;
    struct blob *coeff;
    struct blob *bias;
    struct blob *output;
    int inLpad;
    int inRpad;
    int inUpad;
    int inDpad;
    int stride_h;
    int stride_w;
    float *i2c_buffer;
    float *bt_buffer;
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

void pulp_transp_conv2d_fp32_fw_cl(void *Transp_Conv2D_args);
void pulp_transp_conv2d_fp32_bw_cl(void *Transp_Conv2D_args);
void pulp_transp_conv2d_fp32_bw_param_grads_cl(void *Transp_Conv2D_args);
void pulp_transp_conv2d_fp32_bw_input_grads_cl(void *Transp_Conv2D_args);

#endif
