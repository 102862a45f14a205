/*
 * pulp_softmax_impl.h (internal): the row softmax, written once for both
 * element types (contract in include/pulp_softmax_fp32.h).
 *
 * Include it once per type after defining:
 *   SM_T         element type
 *   SM_ARGS      struct softmax_args[_fp16]
 *   SM_LOWEST    the lowest finite value of SM_T, where a row maximum starts
 *   SM_TO_F(v)   SM_T -> float (exact);  SM_FROM_F(f)  float -> SM_T (rounded)
 *   SM_EXP(x)    the fast exponential
 * It defines static sm_fw() and sm_bw(), each taking the args struct.
 */
#include "pulp_core_block.h"

/* This core's rows [*first, *last) of H, blocks of ceil(H / NUM_CORES). */
static void sm_max_core(void *args)
{
    const SM_ARGS *a = args;
    long first, last;
    pulp_core_block(a->H, &first, &last);
    for (int i = first; i < last; i++) {
        const SM_T *x = a->input_data + (long)i * a->W;
        float m = SM_TO_F(SM_LOWEST);
        for (int j = 0; j < a->W; j++)
            m = SM_TO_F(x[j]) > m ? SM_TO_F(x[j]) : m;
        a->maxes[i] = SM_FROM_F(m);
        a->sums[i] = SM_FROM_F(0.0f);
    }
}

static void sm_exp_core(void *args)
{
    const SM_ARGS *a = args;
    long first, last;
    pulp_core_block(a->H, &first, &last);
    for (int i = first; i < last; i++) {
        const SM_T *x = a->input_data + (long)i * a->W;
        SM_T *e = a->output_data + (long)i * a->W;
        const float m = SM_TO_F(a->maxes[i]);
        float sum = 0.0f;
        for (int j = 0; j < a->W; j++) {
            e[j] = SM_FROM_F(SM_EXP(SM_TO_F(x[j]) - m));
            sum += SM_TO_F(e[j]);
        }
        a->sums[i] = SM_FROM_F(sum);
    }
}

static void sm_div_core(void *args)
{
    const SM_ARGS *a = args;
    long first, last;
    pulp_core_block(a->H, &first, &last);
    for (int i = first; i < last; i++) {
        SM_T *y = a->output_data + (long)i * a->W;
        const float s = SM_TO_F(a->sums[i]);
        for (int j = 0; j < a->W; j++)
            y[j] = SM_FROM_F(SM_TO_F(y[j]) / s);
    }
}

static void sm_bw_core(void *args)
{
    const SM_ARGS *a = args;
    long first, last;
    pulp_core_block(a->H, &first, &last);
    for (int i = first; i < last; i++) {
        const SM_T *y = a->output_data + (long)i * a->W, *dy = a->output_diff + (long)i * a->W;
        SM_T *dx = a->input_diff + (long)i * a->W;
        float s = 0.0f;
        for (int j = 0; j < a->W; j++)
            s += SM_TO_F(dy[j]) * SM_TO_F(y[j]);
        a->sums[i] = SM_FROM_F(s);
        const float s_row = SM_TO_F(a->sums[i]);
        for (int j = 0; j < a->W; j++)
            dx[j] = SM_FROM_F((SM_TO_F(dy[j]) - s_row) * SM_TO_F(y[j]));
    }
}

static void sm_fw(SM_ARGS *a)
{
    pi_cl_team_fork(NUM_CORES, sm_max_core, a);
    pi_cl_team_fork(NUM_CORES, sm_exp_core, a);
    pi_cl_team_fork(NUM_CORES, sm_div_core, a);
}

static void sm_bw(SM_ARGS *a)
{
    pi_cl_team_fork(NUM_CORES, sm_bw_core, a);
}
