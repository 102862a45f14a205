/*
 * pulp_linear_fp16.c: FP16 fully-connected layer (shapes in
 * pulp_linear_fp16.h). Each step is one matmul run by mm_manager_fp16 in a team
 * forked here:
 *   FW: C[out x 1]  = W[out x in]   * in[in x 1]     (+ bias per row)
 *   WG: C[out x in] = dOut[out x 1] * in[1 x in]     (K = 1: an outer product)
 *   IG: C[1 x in]   = dOut[1 x out] * W[out x in]    (= W^T . dOut)
 */
#include <string.h>

#include "pulp_linear_fp16.h"

#ifdef OPTIMIZE
#define LINEAR_MATMUL_TYPE(opt) (opt)
#else
#define LINEAR_MATMUL_TYPE(opt) ((void)(opt), 0)
#endif

/* Work of the WG team: the weight-gradient product, plus the bias gradient
 * (a copy of dOut) split over the cores when bias_diff is set. */
struct linear_wg_job {
    struct mm_manager_args_fp16 mgr;
    fp16 *bias_diff;
    const fp16 *out_diff;
    int out;
};

static void linear_wg_team(void *job_ptr)
{
    struct linear_wg_job *job = job_ptr;
    mm_manager_fp16(&job->mgr);
    if (job->bias_diff) {
        const int chunk = (job->out + NUM_CORES - 1) / NUM_CORES;
        const int first = pi_core_id() * chunk;
        const int last = first + chunk < job->out ? first + chunk : job->out;
        for (int o = first; o < last; o++)
            job->bias_diff[o] = job->out_diff[o];
    }
}

void pulp_linear_fp16_fw_cl(void *Linear_args_fp16)
{
    const struct Linear_args_fp16 *la = Linear_args_fp16;
    const int in = la->input->dim, out = la->output->dim;
    struct matMul_args_fp16 mm_args;
    memset(&mm_args, 0, sizeof mm_args);
    mm_args.A = la->coeff->data;
    mm_args.B = la->input->data;
    mm_args.C = la->output->data;
    mm_args.N = out;
    mm_args.K = in;
    mm_args.M = 1;
    if (la->use_biases) {
        mm_args.bias = la->bias->data;
        mm_args.bias_dim = out;
        mm_args.USE_BIASES = 1;
        mm_args.bias_transposed = 1; /* one bias per row of C */
    }
    struct mm_manager_args_fp16 mgr = {.mm_args = &mm_args, .layer_type = LAYER_LINEAR, .step_type = STEP_FW,
                                  .matmul_type = LINEAR_MATMUL_TYPE(la->opt_matmul_type_fw)};
    pi_cl_team_fork(NUM_CORES, mm_manager_fp16, &mgr);
}

void pulp_linear_fp16_bw_cl(void *Linear_args_fp16)
{
    const struct Linear_args_fp16 *la = Linear_args_fp16;
    if (!la->skip_wg_grad)
        pulp_linear_fp16_bw_param_grads_cl(Linear_args_fp16);
    if (!la->skip_in_grad)
        pulp_linear_fp16_bw_input_grads_cl(Linear_args_fp16);
}

void pulp_linear_fp16_bw_param_grads_cl(void *Linear_args_fp16)
{
    const struct Linear_args_fp16 *la = Linear_args_fp16;
    const int in = la->input->dim, out = la->output->dim;
    struct matMul_args_fp16 mm_args;
    memset(&mm_args, 0, sizeof mm_args);
    mm_args.A = la->output->diff;
    mm_args.B = la->input->data;
    mm_args.C = la->coeff->diff;
    mm_args.N = out;
    mm_args.K = 1;
    mm_args.M = in;
    struct linear_wg_job job = {
        .mgr = {.mm_args = &mm_args, .layer_type = LAYER_LINEAR, .step_type = STEP_WGT_GRAD,
         .matmul_type = LINEAR_MATMUL_TYPE(la->opt_matmul_type_wg)},
        .bias_diff = la->use_biases ? la->bias->diff : NULL,
        .out_diff = la->output->diff,
        .out = out,
    };
    pi_cl_team_fork(NUM_CORES, linear_wg_team, &job);
}

void pulp_linear_fp16_bw_input_grads_cl(void *Linear_args_fp16)
{
    const struct Linear_args_fp16 *la = Linear_args_fp16;
    const int in = la->input->dim, out = la->output->dim;
    struct matMul_args_fp16 mm_args;
    memset(&mm_args, 0, sizeof mm_args);
    mm_args.A = la->output->diff;
    mm_args.B = la->coeff->data;
    mm_args.C = la->input->diff;
    mm_args.N = 1;
    mm_args.K = out;
    mm_args.M = in;
    struct mm_manager_args_fp16 mgr = {.mm_args = &mm_args, .layer_type = LAYER_LINEAR, .step_type = STEP_IN_GRAD,
                                  .matmul_type = LINEAR_MATMUL_TYPE(la->opt_matmul_type_ig)};
    pi_cl_team_fork(NUM_CORES, mm_manager_fp16, &mgr);
}
