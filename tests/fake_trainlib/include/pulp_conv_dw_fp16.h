/* pulp_conv_dw_fp16.h: depthwise convolution; declared, not implemented here.
 * Fact 7: the FP16 struct has NO stride_h / stride_w (the FP32 one has both),
 * so a runner that sets them does not compile against it. */
#ifndef PULP_CONV_DW_FP16_H
#define PULP_CONV_DW_FP16_H

#include "pulp_train_defines.h"

struct DepthWise_Conv_args_fp16 {
    struct blob_fp16 *input;
    struct blob_fp16 *coeff;
    struct blob_fp16 *output;
    int Lpad;
    int Rpad;
    int Upad;
    int Dpad;
    int skip_wg_grad;
    int skip_in_grad;
    int HWC;
};

void pulp_conv_dw_fp16_fw_cl(void *DepthWise_Conv_args_fp16);
void pulp_conv_dw_fp16_bw_cl(void *DepthWise_Conv_args_fp16);
void pulp_conv_dw_fp16_bw_param_grads_cl(void *DepthWise_Conv_args_fp16);
void pulp_conv_dw_fp16_bw_input_grads_cl(void *DepthWise_Conv_args_fp16);

#endif
