/*
 * pulp_act_fp16.h: FP16 element-wise activations ReLU, LeakyReLU and Sigmoid,
 * forward and backward.
 *
 * Same tensors, forking and core split as pulp_act_fp32.h, with struct
 * blob_fp16 tensors of n = input->dim elements:
 *   input->data x [n], input->diff dx [n], output->data y [n], output->diff dy [n]
 * The fp16 arithmetic goes through pulp_fp16.h (correctly rounded):
 *   - ReLU: exact.
 *   - LeakyReLU: one fp16 product negative_slope * x (or * dy); the slope is
 *     an fp16 value.
 *   - Sigmoid FW: computed in binary32 as in pulp_act_fp32.h (expf on the
 *     exact binary32 value of x), then rounded once to fp16: within
 *     u16 + 4*2^-24 (relative, plus underflow) of sigmoid(x).
 *   - Sigmoid BW: dx = dy * (y * (1 - y)) in fp16, three rounded operations.
 * pulp_<act>_fp16_<step>_cl forks NUM_CORES cores itself on the body
 * <act>_core_<step>_fp16.
 */
#ifndef PULP_ACT_FP16_H
#define PULP_ACT_FP16_H

#include "pulp_train_defines.h"

/* Args of FP16 ReLU and Sigmoid; the element count is input->dim. */
struct act_args_fp16 {
    struct blob_fp16 *input;
    struct blob_fp16 *output;
    int H;
    int W;
};

/* Args of FP16 LeakyReLU: y = x for x > 0, negative_slope * x otherwise. */
struct leakyrelu_args_fp16 {
    struct blob_fp16 *input;
    struct blob_fp16 *output;
    fp16 negative_slope;
};

/* ReLU forward: y[i] = x[i] > 0 ? x[i] : 0. */
void pulp_relu_fp16_fw_cl(void *act_args_fp16);

/* ReLU backward: dx[i] = x[i] > 0 ? dy[i] : 0 (0 at x == 0). */
void pulp_relu_fp16_bw_cl(void *act_args_fp16);

/* LeakyReLU forward: y[i] = x > 0 ? x : negative_slope * x. */
void pulp_leakyrelu_fp16_fw_cl(void *leakyrelu_args_fp16);

/* LeakyReLU backward: dx[i] = x > 0 ? dy : negative_slope * dy, x = input->data[i]. */
void pulp_leakyrelu_fp16_bw_cl(void *leakyrelu_args_fp16);

/* Sigmoid forward: y[i] = 1 / (1 + exp(-x[i])). */
void pulp_sigmoid_fp16_fw_cl(void *act_args_fp16);

/* Sigmoid backward: dx[i] = dy * y * (1 - y), y = output->data[i]. */
void pulp_sigmoid_fp16_bw_cl(void *act_args_fp16);

/* Per-core bodies of the above. */
void relu_core_fw_fp16(void *act_args_fp16);
void relu_core_bw_fp16(void *act_args_fp16);
void leakyrelu_core_fw_fp16(void *leakyrelu_args_fp16);
void leakyrelu_core_bw_fp16(void *leakyrelu_args_fp16);
void sigmoid_core_fw_fp16(void *act_args_fp16);
void sigmoid_core_bw_fp16(void *act_args_fp16);

#endif /* PULP_ACT_FP16_H */
