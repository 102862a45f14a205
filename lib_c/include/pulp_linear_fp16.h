/*
 * pulp_linear_fp16.h: FP16 fully-connected layer, out = W . in (+ b).
 *
 * Same shapes and steps as pulp_linear_fp32.h with struct blob_fp16 tensors;
 * the products accumulate in fp16 (see pulp_matmul_fp16.h), the kernel index
 * fields select mm_manager_fp16 kernels.
 */
#ifndef PULP_LINEAR_FP16_H
#define PULP_LINEAR_FP16_H

#include "pulp_train_defines.h"
#include "pulp_matmul_fp16.h"

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

/* Forward: output->data[o] = sum_i W[o][i] * input->data[i] (+ bias->data[o]). */
void pulp_linear_fp16_fw_cl(void *Linear_args_fp16);

/* Both backward steps: bw_param_grads unless skip_wg_grad, then
 * bw_input_grads unless skip_in_grad. */
void pulp_linear_fp16_bw_cl(void *Linear_args_fp16);

/* Weight gradient: coeff->diff[o][i] = output->diff[o] * input->data[i];
 * with use_biases also bias->diff[o] = output->diff[o]. Overwrites. */
void pulp_linear_fp16_bw_param_grads_cl(void *Linear_args_fp16);

/* Input gradient: input->diff[i] = sum_o W[o][i] * output->diff[o]. Overwrites. */
void pulp_linear_fp16_bw_input_grads_cl(void *Linear_args_fp16);

#endif /* PULP_LINEAR_FP16_H */
