/*
 * pulp_instnorm_fp16.c: FP16 instance normalization (pulp_instnorm_fp16.h;
 * the bodies in pulp_instnorm_impl.h).
 */
#include "pulp_instnorm_fp16.h"

#define IN_T fp16
#define IN_ARGS struct InstNorm_args_fp16
#define IN_F(v) fp16_to_f32(v)
#define IN_H(f) fp16_from_f32(f)
#define IN_NAME(step) pulp_instnorm_parallelized_fp16_##step##_cl
#include "pulp_instnorm_impl.h"

void pulp_instnorm_fp16_fw_cl(void *InstNorm_args)
{
    pi_cl_team_fork(NUM_CORES, pulp_instnorm_parallelized_fp16_fw_cl, InstNorm_args);
}

void pulp_instnorm_fp16_bw_param_grads_cl(void *InstNorm_args)
{
    pi_cl_team_fork(NUM_CORES, pulp_instnorm_parallelized_fp16_bw_param_grads_cl, InstNorm_args);
}

void pulp_instnorm_fp16_bw_input_grads_cl(void *InstNorm_args)
{
    pi_cl_team_fork(NUM_CORES, pulp_instnorm_parallelized_fp16_bw_input_grads_cl, InstNorm_args);
}

void pulp_instnorm_fp16_bw_cl(void *InstNorm_args)
{
    const struct InstNorm_args_fp16 *a = InstNorm_args;
    if (!a->skip_wg_grad)
        pulp_instnorm_fp16_bw_param_grads_cl(InstNorm_args);
    if (!a->skip_in_grad)
        pulp_instnorm_fp16_bw_input_grads_cl(InstNorm_args);
}
