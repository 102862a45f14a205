/* pulp_conv_dw_fp32.h: depthwise convolution; declared, not implemented here
 * (a runner unit that calls it cannot link). The FP32 struct has the strides. */
#ifndef PULP_CONV_DW_FP32_H
#define PULP_CONV_DW_FP32_H

#include "pulp_train_defines.h"

struct DepthWise_Conv_args {
    struct blob *input;
    struct blob *coeff;
    struct blob *output;
    int stride_h;
    int stride_w;
    int Lpad;
    int Rpad;
    int Upad;
    int Dpad;
    int skip_wg_grad;
    int skip_in_grad;
    int HWC;
};

void pulp_conv_dw_fp32_fw_cl(void *DepthWise_Conv_args);
void pulp_conv_dw_fp32_bw_cl(void *DepthWise_Conv_args);
void pulp_conv_dw_fp32_bw_param_grads_cl(void *DepthWise_Conv_args);
void pulp_conv_dw_fp32_bw_input_grads_cl(void *DepthWise_Conv_args);

#endif
