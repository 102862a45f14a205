/*
 * pulp_act_fp32.c: FP32 ReLU, LeakyReLU and Sigmoid (tensors, split and
 * rounding in pulp_act_fp32.h). The pulp_* wrappers fork the team; the
 * *_core_* bodies each handle one core's slice of the n elements.
 */
#include <math.h>

#include "pulp_act_fp32.h"
#include "pulp_core_block.h"

/* This core's elements [*first, *last): [id*b, (id+1)*b) clipped to n,
 * b = ceil(n / NUM_CORES). Cores past the end get an empty slice. */
void relu_core_fw_fp32(void *act_args)
{
    const struct act_args *a = act_args;
    const float *x = a->input->data;
    float *y = a->output->data;
    long first, last;
    pulp_core_block(a->input->dim, &first, &last);
    for (int i = first; i < last; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void relu_core_bw_fp32(void *act_args)
{
    const struct act_args *a = act_args;
    const float *x = a->input->data, *dy = a->output->diff;
    float *dx = a->input->diff;
    long first, last;
    pulp_core_block(a->input->dim, &first, &last);
    for (int i = first; i < last; i++)
        dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
}

void leakyrelu_core_fw_fp32(void *leakyrelu_args)
{
    const struct leakyrelu_args *a = leakyrelu_args;
    const float *x = a->input->data;
    float *y = a->output->data;
    const float s = a->negative_slope;
    long first, last;
    pulp_core_block(a->input->dim, &first, &last);
    for (int i = first; i < last; i++)
        y[i] = x[i] > 0.0f ? x[i] : s * x[i];
}

void leakyrelu_core_bw_fp32(void *leakyrelu_args)
{
    const struct leakyrelu_args *a = leakyrelu_args;
    const float *x = a->input->data, *dy = a->output->diff;
    float *dx = a->input->diff;
    const float s = a->negative_slope;
    long first, last;
    pulp_core_block(a->input->dim, &first, &last);
    for (int i = first; i < last; i++)
        dx[i] = x[i] > 0.0f ? dy[i] : s * dy[i];
}

/* sigmoid(v) with expf of a non-positive argument only: for v < 0,
 * 1/(1+e^-v) = e^v/(1+e^v). e = expf(-|v|) is in [0, 1], so 1 + e neither
 * overflows nor cancels, and a NaN v gives NaN. */
static float act_sigmoid(float v)
{
    const float e = expf(-fabsf(v));
    return (v >= 0.0f ? 1.0f : e) / (1.0f + e);
}

void sigmoid_core_fw_fp32(void *act_args)
{
    const struct act_args *a = act_args;
    const float *x = a->input->data;
    float *y = a->output->data;
    long first, last;
    pulp_core_block(a->input->dim, &first, &last);
    for (int i = first; i < last; i++)
        y[i] = act_sigmoid(x[i]);
}

void sigmoid_core_bw_fp32(void *act_args)
{
    const struct act_args *a = act_args;
    const float *y = a->output->data, *dy = a->output->diff;
    float *dx = a->input->diff;
    long first, last;
    pulp_core_block(a->input->dim, &first, &last);
    for (int i = first; i < last; i++)
        dx[i] = dy[i] * (y[i] * (1.0f - y[i]));
}

void pulp_relu_fp32_fw_cl(void *act_args)
{
    pi_cl_team_fork(NUM_CORES, relu_core_fw_fp32, act_args);
}

void pulp_relu_fp32_bw_cl(void *act_args)
{
    pi_cl_team_fork(NUM_CORES, relu_core_bw_fp32, act_args);
}

void pulp_leakyrelu_fp32_fw_cl(void *leakyrelu_args)
{
    pi_cl_team_fork(NUM_CORES, leakyrelu_core_fw_fp32, leakyrelu_args);
}

void pulp_leakyrelu_fp32_bw_cl(void *leakyrelu_args)
{
    pi_cl_team_fork(NUM_CORES, leakyrelu_core_bw_fp32, leakyrelu_args);
}

void pulp_sigmoid_fp32_fw_cl(void *act_args)
{
    pi_cl_team_fork(NUM_CORES, sigmoid_core_fw_fp32, act_args);
}

void pulp_sigmoid_fp32_bw_cl(void *act_args)
{
    pi_cl_team_fork(NUM_CORES, sigmoid_core_bw_fp32, act_args);
}
