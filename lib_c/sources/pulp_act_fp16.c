/*
 * pulp_act_fp16.c: FP16 ReLU, LeakyReLU and Sigmoid (tensors, split and
 * rounding in pulp_act_fp32.h and pulp_act_fp16.h). The pulp_* wrappers fork
 * the team; the *_core_* bodies each handle one core's slice of the n
 * elements. Arithmetic through pulp_fp16.h, so it is correctly rounded in
 * both formats and on targets without a native fp16 type.
 */
#include <math.h>

#include "pulp_act_fp16.h"
#include "pulp_core_block.h"

/* This core's elements [*first, *last): [id*b, (id+1)*b) clipped to n,
 * b = ceil(n / NUM_CORES). Cores past the end get an empty slice. */
/* x > 0, false for +-0 and NaN (every fp16 value is exact in binary32). */
static int act_positive(fp16 x)
{
    return fp16_to_f32(x) > 0.0f;
}

void relu_core_fw_fp16(void *act_args_fp16)
{
    const struct act_args_fp16 *a = act_args_fp16;
    const fp16 *x = a->input->data;
    fp16 *y = a->output->data;
    long first, last;
    pulp_core_block(a->input->dim, &first, &last);
    for (int i = first; i < last; i++)
        y[i] = act_positive(x[i]) ? x[i] : fp16_zero();
}

void relu_core_bw_fp16(void *act_args_fp16)
{
    const struct act_args_fp16 *a = act_args_fp16;
    const fp16 *x = a->input->data, *dy = a->output->diff;
    fp16 *dx = a->input->diff;
    long first, last;
    pulp_core_block(a->input->dim, &first, &last);
    for (int i = first; i < last; i++)
        dx[i] = act_positive(x[i]) ? dy[i] : fp16_zero();
}

void leakyrelu_core_fw_fp16(void *leakyrelu_args_fp16)
{
    const struct leakyrelu_args_fp16 *a = leakyrelu_args_fp16;
    const fp16 *x = a->input->data;
    fp16 *y = a->output->data;
    const fp16 s = a->negative_slope;
    long first, last;
    pulp_core_block(a->input->dim, &first, &last);
    for (int i = first; i < last; i++)
        y[i] = act_positive(x[i]) ? x[i] : fp16_mul(s, x[i]);
}

void leakyrelu_core_bw_fp16(void *leakyrelu_args_fp16)
{
    const struct leakyrelu_args_fp16 *a = leakyrelu_args_fp16;
    const fp16 *x = a->input->data, *dy = a->output->diff;
    fp16 *dx = a->input->diff;
    const fp16 s = a->negative_slope;
    long first, last;
    pulp_core_block(a->input->dim, &first, &last);
    for (int i = first; i < last; i++)
        dx[i] = act_positive(x[i]) ? dy[i] : fp16_mul(s, dy[i]);
}

/* sigmoid in binary32, as in pulp_act_fp32.c: expf only of -|v|, so it never
 * overflows (an fp16 e^-v would overflow IEEE binary16 from v < -11.1). The
 * binary32 result is within 4*2^-24 relative of sigmoid(v) (plus binary32
 * underflow, far below the fp16 grid), and is then rounded once to fp16. */
static fp16 act_sigmoid(fp16 x)
{
    const float v = fp16_to_f32(x);
    const float e = expf(-fabsf(v));
    return fp16_from_f32((v >= 0.0f ? 1.0f : e) / (1.0f + e));
}

void sigmoid_core_fw_fp16(void *act_args_fp16)
{
    const struct act_args_fp16 *a = act_args_fp16;
    const fp16 *x = a->input->data;
    fp16 *y = a->output->data;
    long first, last;
    pulp_core_block(a->input->dim, &first, &last);
    for (int i = first; i < last; i++)
        y[i] = act_sigmoid(x[i]);
}

void sigmoid_core_bw_fp16(void *act_args_fp16)
{
    const struct act_args_fp16 *a = act_args_fp16;
    const fp16 *y = a->output->data, *dy = a->output->diff;
    fp16 *dx = a->input->diff;
    const fp16 one = fp16_from_f32(1.0f);
    long first, last;
    pulp_core_block(a->input->dim, &first, &last);
    for (int i = first; i < last; i++)
        dx[i] = fp16_mul(dy[i], fp16_mul(y[i], fp16_sub(one, y[i])));
}

void pulp_relu_fp16_fw_cl(void *act_args_fp16)
{
    pi_cl_team_fork(NUM_CORES, relu_core_fw_fp16, act_args_fp16);
}

void pulp_relu_fp16_bw_cl(void *act_args_fp16)
{
    pi_cl_team_fork(NUM_CORES, relu_core_bw_fp16, act_args_fp16);
}

void pulp_leakyrelu_fp16_fw_cl(void *leakyrelu_args_fp16)
{
    pi_cl_team_fork(NUM_CORES, leakyrelu_core_fw_fp16, leakyrelu_args_fp16);
}

void pulp_leakyrelu_fp16_bw_cl(void *leakyrelu_args_fp16)
{
    pi_cl_team_fork(NUM_CORES, leakyrelu_core_bw_fp16, leakyrelu_args_fp16);
}

void pulp_sigmoid_fp16_fw_cl(void *act_args_fp16)
{
    pi_cl_team_fork(NUM_CORES, sigmoid_core_fw_fp16, act_args_fp16);
}

void pulp_sigmoid_fp16_bw_cl(void *act_args_fp16)
{
    pi_cl_team_fork(NUM_CORES, sigmoid_core_bw_fp16, act_args_fp16);
}
