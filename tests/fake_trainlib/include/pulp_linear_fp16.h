/* pulp_linear_fp16.h: FP16 linear layer; declared, not implemented here. */
#ifndef PULP_LINEAR_FP16_H
#define PULP_LINEAR_FP16_H

#include "pulp_train_defines.h"

struct Linear_args_fp16 {
    struct blob_fp16 *input;
    struct blob_fp16 *coeff;
    struct blob_fp16 *bias;
    struct blob_fp16 *output;
    int skip_wg_grad;
    int skip_in_grad;
    int opt_matmul_type_fw;
    int opt_matmul_type_wg;
    int opt_matmul_type_ig;
    int use_biases;
};

void pulp_linear_fp16_fw_cl(void *Linear_args_fp16);
void pulp_linear_fp16_bw_cl(void *Linear_args_fp16);
void pulp_linear_fp16_bw_param_grads_cl(void *Linear_args_fp16);
void pulp_linear_fp16_bw_input_grads_cl(void *Linear_args_fp16);

#endif /* PULP_LINEAR_FP16_H */
