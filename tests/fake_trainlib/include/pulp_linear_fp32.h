/*
 * pulp_linear_fp32.h: the FP32 fully connected layer; weights `coeff` are
 * out x in. Forks its matmuls itself.
 *   FW: output = W . input (+ bias)
 *   WG: coeff->diff = output->diff (outer) input; bias->diff += output->diff
 *       (it accumulates, as the published one does: the caller zeroes it)
 *   IG: input->diff = W^T . output->diff
 */
#ifndef PULP_LINEAR_FP32_H
#define PULP_LINEAR_FP32_H

#include "pulp_train_defines.h"

struct Linear_args {
    struct blob *input;
    struct blob *coeff;
    struct blob *bias;
    struct blob *output;
    int skip_wg_grad;
    int skip_in_grad;
    int opt_matmul_type_fw;
    int opt_matmul_type_wg;
    int opt_matmul_type_ig;
    int use_biases;
};

void pulp_linear_fp32_fw_cl(void *Linear_args);
void pulp_linear_fp32_bw_cl(void *Linear_args);
void pulp_linear_fp32_bw_param_grads_cl(void *Linear_args);
void pulp_linear_fp32_bw_input_grads_cl(void *Linear_args);

#endif /* PULP_LINEAR_FP32_H */
