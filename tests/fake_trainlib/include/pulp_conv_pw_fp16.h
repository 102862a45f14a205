/* pulp_conv_pw_fp16.h: pointwise convolution; declared, not implemented here
 * (a runner unit that calls it cannot link). */
#ifndef PULP_CONV_PW_FP16_H
#define PULP_CONV_PW_FP16_H

#include "pulp_train_defines.h"

struct PointWise_Conv_args_fp16 {
    struct blob_fp16 *input;
    struct blob_fp16 *coeff;
    struct blob_fp16 *output;
    fp16 *transpose_buffer;
    int skip_wg_grad;
    int skip_in_grad;
    int opt_matmul_type_fw;
    int opt_matmul_type_wg;
    int opt_matmul_type_ig;
    int HWC;
};

void pulp_conv_pw_fp16_fw_cl(void *PointWise_Conv_args_fp16);
void pulp_conv_pw_fp16_bw_cl(void *PointWise_Conv_args_fp16);
void pulp_conv_pw_fp16_bw_param_grads_cl(void *PointWise_Conv_args_fp16);
void pulp_conv_pw_fp16_bw_input_grads_cl(void *PointWise_Conv_args_fp16);

#endif
