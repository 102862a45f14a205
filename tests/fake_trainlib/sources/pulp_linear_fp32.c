/*
 * pulp_linear_fp32.c: the FP32 linear layer of the fake library, through
 * mm_manager with the layer's kernel indices. Weights W are out x in.
 */
#include "pulp_train_defines.h"
#include "pulp_matmul_fp32.h"
#include "pulp_linear_fp32.h"

static void run_on_team(struct matMul_args *mm_args, int step, int kernel)
{
    struct mm_manager_args man = {
        .mm_args = mm_args, .mm_dw_args = NULL, .layer_type = LAYER_LINEAR, .step_type = step,
        .matmul_type = kernel,
    };
    pi_cl_team_fork(NUM_CORES, mm_manager, &man);
}

/* output [out] = W [out x in] . input [in] (+ bias [out], one per row of C). */
void pulp_linear_fp32_fw_cl(void *Linear_args)
{
    struct Linear_args *l = Linear_args;
    struct matMul_args mm_args = {
        .A = l->coeff->data, .B = l->input->data, .C = l->output->data,
        .N = l->output->dim, .K = l->input->dim, .M = 1, .trans_B = 0,
        .bias = l->use_biases ? l->bias->data : NULL, .bias_dim = l->output->dim,
        .USE_BIASES = l->use_biases, .bias_transposed = 1,
    };
    run_on_team(&mm_args, STEP_FW, l->opt_matmul_type_fw);
}

/* coeff->diff [out x in] = output->diff [out x 1] . input [1 x in];
 * bias->diff [out] = output->diff (overwritten, never read: TRAINLIB_API.md). */
void pulp_linear_fp32_bw_param_grads_cl(void *Linear_args)
{
    struct Linear_args *l = Linear_args;
    struct matMul_args mm_args = {
        .A = l->output->diff, .B = l->input->data, .C = l->coeff->diff,
        .N = l->output->dim, .K = 1, .M = l->input->dim, .trans_B = 0,
    };
    run_on_team(&mm_args, STEP_WGT_GRAD, l->opt_matmul_type_wg);
    if (l->use_biases)
        for (int o = 0; o < l->output->dim; o++)
            l->bias->diff[o] = l->output->diff[o];
}

/* input->diff [1 x in] = output->diff [1 x out] . W [out x in]. */
void pulp_linear_fp32_bw_input_grads_cl(void *Linear_args)
{
    struct Linear_args *l = Linear_args;
    struct matMul_args mm_args = {
        .A = l->output->diff, .B = l->coeff->data, .C = l->input->diff,
        .N = 1, .K = l->output->dim, .M = l->input->dim, .trans_B = 0,
    };
    run_on_team(&mm_args, STEP_IN_GRAD, l->opt_matmul_type_ig);
}

void pulp_linear_fp32_bw_cl(void *Linear_args)
{
    struct Linear_args *l = Linear_args;
    if (!l->skip_wg_grad)
        pulp_linear_fp32_bw_param_grads_cl(Linear_args);
    if (!l->skip_in_grad)
        pulp_linear_fp32_bw_input_grads_cl(Linear_args);
}
