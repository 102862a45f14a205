/*
 * pulp_act_fp32.h: FP32 element-wise activations ReLU, LeakyReLU and Sigmoid,
 * forward and backward.
 *
 * Every tensor is a flat vector of n = input->dim elements (the layout does
 * not matter to an element-wise function; C, H, W and act_args.H/W are not
 * read):
 *   input->data   x   [n]      output->data  y   [n]
 *   input->diff   dx  [n]      output->diff  dy  [n]
 * Forward writes y from x. Backward overwrites dx from dy and x (ReLU,
 * LeakyReLU) or from dy and y (Sigmoid: it reads output->data, so the forward
 * result must still be there; input->data is not read).
 *
 * Parallelism: pulp_<act>_fp32_<step>_cl forks NUM_CORES cores itself
 * (pi_cl_team_fork) on the per-core body <act>_core_<step>_fp32; call it once
 * from the master core. A body may also be forked by the caller. Core id
 * takes elements [id*b, (id+1)*b) clipped to n, with b = ceil(n/NUM_CORES);
 * every element is written by one core, so no barrier is needed.
 *
 * Rounding (binary32, round to nearest even):
 *   - ReLU: exact (a selection).
 *   - LeakyReLU: the x > 0 branch is a copy; the other one product
 *     negative_slope * x (or negative_slope * dy), rounded once.
 *   - Sigmoid FW: E = expf(-|x|), then y = 1/(1+E) for x >= 0 and E/(1+E)
 *     for x < 0: the same function as 1/(1+expf(-x)), but expf never
 *     overflows, so a large negative x gives its (possibly subnormal) value
 *     instead of 0 and no step forms Inf/Inf. Three rounded operations and
 *     expf's own error: |y - sigmoid(x)| <= (4u + O(u^2)) |y| when expf is
 *     within one ulp (u = 2^-24), plus subnormal underflow.
 *   - Sigmoid BW: dx = dy * (y * (1 - y)), three rounded operations.
 * x > 0 is false for -0 and NaN: ReLU gives 0 and a zero gradient there.
 */
#ifndef PULP_ACT_FP32_H
#define PULP_ACT_FP32_H

#include "pulp_train_defines.h"

/* Args of ReLU and Sigmoid. H and W describe the tensor for callers that
 * want them; the element count is input->dim. */
struct act_args {
    struct blob *input;
    struct blob *output;
    int H;
    int W;
};

/* Args of LeakyReLU: y = x for x > 0, negative_slope * x otherwise. */
struct leakyrelu_args {
    struct blob *input;
    struct blob *output;
    float negative_slope;
};

/* ReLU forward: output->data[i] = input->data[i] > 0 ? input->data[i] : 0.
 * Forks NUM_CORES cores on relu_core_fw_fp32. */
void pulp_relu_fp32_fw_cl(void *act_args);

/* ReLU backward: input->diff[i] = input->data[i] > 0 ? output->diff[i] : 0
 * (0 at x == 0). Forks NUM_CORES cores on relu_core_bw_fp32. */
void pulp_relu_fp32_bw_cl(void *act_args);

/* LeakyReLU forward: output->data[i] = x > 0 ? x : negative_slope * x,
 * x = input->data[i]. Forks NUM_CORES cores on leakyrelu_core_fw_fp32. */
void pulp_leakyrelu_fp32_fw_cl(void *leakyrelu_args);

/* LeakyReLU backward: input->diff[i] = x > 0 ? dy : negative_slope * dy,
 * x = input->data[i], dy = output->diff[i]. Forks NUM_CORES cores on
 * leakyrelu_core_bw_fp32. */
void pulp_leakyrelu_fp32_bw_cl(void *leakyrelu_args);

/* Sigmoid forward: output->data[i] = 1 / (1 + exp(-input->data[i])).
 * Forks NUM_CORES cores on sigmoid_core_fw_fp32. */
void pulp_sigmoid_fp32_fw_cl(void *act_args);

/* Sigmoid backward: input->diff[i] = dy * y * (1 - y), y = output->data[i]
 * (the forward result), dy = output->diff[i]. Forks NUM_CORES cores on
 * sigmoid_core_bw_fp32. */
void pulp_sigmoid_fp32_bw_cl(void *act_args);

/* Per-core bodies of the above: run on every core of a team, each takes its
 * own slice of the n elements. */
void relu_core_fw_fp32(void *act_args);
void relu_core_bw_fp32(void *act_args);
void leakyrelu_core_fw_fp32(void *leakyrelu_args);
void leakyrelu_core_bw_fp32(void *leakyrelu_args);
void sigmoid_core_fw_fp32(void *act_args);
void sigmoid_core_bw_fp32(void *act_args);

#endif /* PULP_ACT_FP32_H */
