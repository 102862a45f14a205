/*
 * pulp_linear_impl.h (internal): the fully-connected layer, written once for
 * both element types (shapes in include/pulp_linear_fp32.h). Each step is
 * one matmul run by the type's mm_manager in a team forked here:
 *   FW: C[out x 1]  = W[out x in]   * in[in x 1]     (+ bias per row)
 *   WG: C[out x in] = dOut[out x 1] * in[1 x in]     (K = 1: an outer product)
 *   IG: C[1 x in]   = dOut[1 x out] * W[out x in]    (= W^T . dOut)
 *
 * Include it once per type after defining:
 *   LIN_T                      element type
 *   LIN_ARGS                   struct Linear_args[_fp16]
 *   LIN_MM_ARGS, LIN_MGR_ARGS  struct matMul_args[_fp16], struct mm_manager_args[_fp16]
 *   LIN_MM_MANAGER             mm_manager[_fp16]
 *   LIN_NAME(step)             the public name of a step (fw, bw, bw_param_grads,
 *                              bw_input_grads)
 * It defines the four public functions.
 */
#include "pulp_mm_args.h"

#ifdef OPTIMIZE
#define LINEAR_MATMUL_TYPE(opt) (opt)
#else
#define LINEAR_MATMUL_TYPE(opt) ((void)(opt), 0)
#endif

/* Work of the WG team: the weight-gradient product, plus the bias gradient
 * (a copy of dOut) split over the cores when bias_diff is set. */
struct linear_wg_job {
    LIN_MGR_ARGS mgr;
    LIN_T *bias_diff;
    const LIN_T *out_diff;
    int out;
};

static void linear_wg_team(void *job_ptr)
{
    struct linear_wg_job *job = job_ptr;
    LIN_MM_MANAGER(&job->mgr);
    if (job->bias_diff) {
        const int chunk = (job->out + NUM_CORES - 1) / NUM_CORES;
        const int first = pi_core_id() * chunk;
        const int last = first + chunk < job->out ? first + chunk : job->out;
        for (int o = first; o < last; o++)
            job->bias_diff[o] = job->out_diff[o];
    }
}

void LIN_NAME(fw)(void *Linear_args)
{
    const LIN_ARGS *la = Linear_args;
    const int in = la->input->dim, out = la->output->dim;
    LIN_MM_ARGS mm_args;
    PTL_MM_PLAIN_INIT(mm_args, la->coeff->data, la->input->data, la->output->data, out, in, 1, 0,
                      la->use_biases ? la->bias->data : NULL);
    LIN_MGR_ARGS mgr = {.mm_args = &mm_args, .layer_type = LAYER_LINEAR, .step_type = STEP_FW,
                        .matmul_type = LINEAR_MATMUL_TYPE(la->opt_matmul_type_fw)};
    pi_cl_team_fork(NUM_CORES, LIN_MM_MANAGER, &mgr);
}

void LIN_NAME(bw)(void *Linear_args)
{
    const LIN_ARGS *la = Linear_args;
    if (!la->skip_wg_grad)
        LIN_NAME(bw_param_grads)(Linear_args);
    if (!la->skip_in_grad)
        LIN_NAME(bw_input_grads)(Linear_args);
}

void LIN_NAME(bw_param_grads)(void *Linear_args)
{
    const LIN_ARGS *la = Linear_args;
    const int in = la->input->dim, out = la->output->dim;
    LIN_MM_ARGS mm_args;
    PTL_MM_PLAIN_INIT(mm_args, la->output->diff, la->input->data, la->coeff->diff, out, 1, in, 0, NULL);
    struct linear_wg_job job = {
        .mgr = {.mm_args = &mm_args, .layer_type = LAYER_LINEAR, .step_type = STEP_WGT_GRAD,
         .matmul_type = LINEAR_MATMUL_TYPE(la->opt_matmul_type_wg)},
        .bias_diff = la->use_biases ? la->bias->diff : NULL,
        .out_diff = la->output->diff,
        .out = out,
    };
    pi_cl_team_fork(NUM_CORES, linear_wg_team, &job);
}

void LIN_NAME(bw_input_grads)(void *Linear_args)
{
    const LIN_ARGS *la = Linear_args;
    const int in = la->input->dim, out = la->output->dim;
    LIN_MM_ARGS mm_args;
    PTL_MM_PLAIN_INIT(mm_args, la->output->diff, la->coeff->data, la->input->diff, 1, out, in, 0, NULL);
    LIN_MGR_ARGS mgr = {.mm_args = &mm_args, .layer_type = LAYER_LINEAR, .step_type = STEP_IN_GRAD,
                        .matmul_type = LINEAR_MATMUL_TYPE(la->opt_matmul_type_ig)};
    pi_cl_team_fork(NUM_CORES, LIN_MM_MANAGER, &mgr);
}
