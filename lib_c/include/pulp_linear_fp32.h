/*
 * pulp_linear_fp32.h: FP32 fully-connected layer, out = W . in (+ b).
 *
 * Shapes (in = input->dim, out = output->dim):
 *   input->data, input->diff    [in]
 *   coeff->data, coeff->diff    [out x in], row-major (W[o][i])
 *   bias->data, bias->diff      [out] (only when use_biases)
 *   output->data, output->diff  [out]
 * Each primitive forks its own team of NUM_CORES cores. With OPTIMIZE the
 * products use the mm_manager kernel index opt_matmul_type_{fw,wg,ig};
 * without it, mm (index 0).
 */
#ifndef PULP_LINEAR_FP32_H
#define PULP_LINEAR_FP32_H

#include "pulp_train_defines.h"
#include "pulp_matmul_fp32.h"

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

/* Forward: output->data[o] = sum_i W[o][i] * input->data[i] (+ bias->data[o]). */
void pulp_linear_fp32_fw_cl(void *Linear_args);

/* Both backward steps: bw_param_grads unless skip_wg_grad, then
 * bw_input_grads unless skip_in_grad. */
void pulp_linear_fp32_bw_cl(void *Linear_args);

/* Weight gradient: coeff->diff[o][i] = output->diff[o] * input->data[i];
 * with use_biases also bias->diff[o] = output->diff[o]. Overwrites. */
void pulp_linear_fp32_bw_param_grads_cl(void *Linear_args);

/* Input gradient: input->diff[i] = sum_o W[o][i] * output->diff[o]. Overwrites. */
void pulp_linear_fp32_bw_input_grads_cl(void *Linear_args);

#endif /* PULP_LINEAR_FP32_H */
