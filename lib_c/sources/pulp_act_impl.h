/*
 * pulp_act_impl.h (internal): ReLU, LeakyReLU and Sigmoid, written once for
 * both element types (tensors, split and rounding in include/pulp_act_fp32.h
 * and include/pulp_act_fp16.h). The pulp_* wrappers fork the team; the
 * *_core_* bodies each handle one core's block of the n elements
 * (pulp_core_block: [id*b, (id+1)*b) clipped to n, b = ceil(n / NUM_CORES)).
 *
 * Include it once per type after defining:
 *   ACT_T                    element type
 *   ACT_ARGS, LEAKY_ARGS     struct act_args[_fp16], struct leakyrelu_args[_fp16]
 *   ACT_TO_F(v), ACT_FROM_F(f)  ACT_T -> float (exact), float -> ACT_T (rounded)
 *   ACT_ZERO                 zero of ACT_T
 *   ACT_POSITIVE(x)          x > 0: false for +-0 and NaN
 *   ACT_SUB(a, b), ACT_MUL(a, b)  each rounded once
 *   ACT_CORE(act, step)      the public per-core body, <act>_core_<step>_<type>
 *   ACT_CL(act, step)        the public forking call, pulp_<act>_<type>_<step>_cl
 * It defines the twelve public functions.
 */
#include <math.h>

#include "pulp_core_block.h"

/* ReLU and LeakyReLU, both steps: out[i] = v[i] where x[i] > 0, otherwise
 * s * v[i] (leaky) or 0, over this core's block of n. v is x forward and dy
 * backward. */
static inline void act_rectify(const ACT_T *x, const ACT_T *v, ACT_T *out, long n, int leaky, ACT_T s)
{
    long first, last;
    pulp_core_block(n, &first, &last);
    for (int i = first; i < last; i++)
        out[i] = ACT_POSITIVE(x[i]) ? v[i] : (leaky ? ACT_MUL(s, v[i]) : ACT_ZERO);
}

void ACT_CORE(relu, fw)(void *act_args)
{
    const ACT_ARGS *a = act_args;
    act_rectify(a->input->data, a->input->data, a->output->data, a->input->dim, 0, ACT_ZERO);
}

void ACT_CORE(relu, bw)(void *act_args)
{
    const ACT_ARGS *a = act_args;
    act_rectify(a->input->data, a->output->diff, a->input->diff, a->input->dim, 0, ACT_ZERO);
}

void ACT_CORE(leakyrelu, fw)(void *leakyrelu_args)
{
    const LEAKY_ARGS *a = leakyrelu_args;
    act_rectify(a->input->data, a->input->data, a->output->data, a->input->dim, 1, a->negative_slope);
}

void ACT_CORE(leakyrelu, bw)(void *leakyrelu_args)
{
    const LEAKY_ARGS *a = leakyrelu_args;
    act_rectify(a->input->data, a->output->diff, a->input->diff, a->input->dim, 1, a->negative_slope);
}

/* sigmoid(v) in binary32 with expf of a non-positive argument only: for
 * v < 0, 1/(1+e^-v) = e^v/(1+e^v). e = expf(-|v|) is in [0, 1], so 1 + e
 * neither overflows nor cancels, and a NaN v gives NaN. (An fp16 e^-v would
 * overflow IEEE binary16 from v < -11.1.) The binary32 result is within
 * 4*2^-24 relative of sigmoid(v) (plus binary32 underflow, far below the
 * fp16 grid), and is then rounded once to ACT_T. */
static ACT_T act_sigmoid(ACT_T x)
{
    const float v = ACT_TO_F(x);
    const float e = expf(-fabsf(v));
    return ACT_FROM_F((v >= 0.0f ? 1.0f : e) / (1.0f + e));
}

void ACT_CORE(sigmoid, fw)(void *act_args)
{
    const ACT_ARGS *a = act_args;
    const ACT_T *x = a->input->data;
    ACT_T *y = a->output->data;
    long first, last;
    pulp_core_block(a->input->dim, &first, &last);
    for (int i = first; i < last; i++)
        y[i] = act_sigmoid(x[i]);
}

void ACT_CORE(sigmoid, bw)(void *act_args)
{
    const ACT_ARGS *a = act_args;
    const ACT_T *y = a->output->data, *dy = a->output->diff;
    ACT_T *dx = a->input->diff;
    const ACT_T one = ACT_FROM_F(1.0f);
    long first, last;
    pulp_core_block(a->input->dim, &first, &last);
    for (int i = first; i < last; i++)
        dx[i] = ACT_MUL(dy[i], ACT_MUL(y[i], ACT_SUB(one, y[i])));
}

void ACT_CL(relu, fw)(void *act_args)
{
    pi_cl_team_fork(NUM_CORES, ACT_CORE(relu, fw), act_args);
}

void ACT_CL(relu, bw)(void *act_args)
{
    pi_cl_team_fork(NUM_CORES, ACT_CORE(relu, bw), act_args);
}

void ACT_CL(leakyrelu, fw)(void *leakyrelu_args)
{
    pi_cl_team_fork(NUM_CORES, ACT_CORE(leakyrelu, fw), leakyrelu_args);
}

void ACT_CL(leakyrelu, bw)(void *leakyrelu_args)
{
    pi_cl_team_fork(NUM_CORES, ACT_CORE(leakyrelu, bw), leakyrelu_args);
}

void ACT_CL(sigmoid, fw)(void *act_args)
{
    pi_cl_team_fork(NUM_CORES, ACT_CORE(sigmoid, fw), act_args);
}

void ACT_CL(sigmoid, bw)(void *act_args)
{
    pi_cl_team_fork(NUM_CORES, ACT_CORE(sigmoid, bw), act_args);
}
