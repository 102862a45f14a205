/* pulp_conv_pw_fp32.h: pointwise convolution; declared, not implemented here
 * (a runner unit that calls it cannot link). */
#ifndef PULP_CONV_PW_FP32_H
#define PULP_CONV_PW_FP32_H

#include "pulp_train_defines.h"

struct PointWise_Conv_args {
    struct blob *input;
    struct blob *coeff;
    struct blob *output;
    float *transpose_buffer;
    int skip_wg_grad;
    int skip_in_grad;
    int opt_matmul_type_fw;
    int opt_matmul_type_wg;
    int opt_matmul_type_ig;
    int HWC;
};

void pulp_conv_pw_fp32_fw_cl(void *PointWise_Conv_args);
void pulp_conv_pw_fp32_bw_cl(void *PointWise_Conv_args);
void pulp_conv_pw_fp32_bw_param_grads_cl(void *PointWise_Conv_args);
void pulp_conv_pw_fp32_bw_input_grads_cl(void *PointWise_Conv_args);

#endif
