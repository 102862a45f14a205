/*
 * pulp_instnorm_fp32.c: FP32 instance normalization (pulp_instnorm_fp32.h;
 * the bodies in pulp_instnorm_impl.h).
 */
#include "pulp_instnorm_fp32.h"

#define IN_T float
#define IN_ARGS struct InstNorm_args
#define IN_F(v) (v)
#define IN_H(f) (f)
#define IN_NAME(step) pulp_instnorm_parallelized_fp32_##step##_cl
#include "pulp_instnorm_impl.h"

void pulp_instnorm_fp32_fw_cl(void *InstNorm_args)
{
    pi_cl_team_fork(NUM_CORES, pulp_instnorm_parallelized_fp32_fw_cl, InstNorm_args);
}

void pulp_instnorm_fp32_bw_param_grads_cl(void *InstNorm_args)
{
    pi_cl_team_fork(NUM_CORES, pulp_instnorm_parallelized_fp32_bw_param_grads_cl, InstNorm_args);
}

void pulp_instnorm_fp32_bw_input_grads_cl(void *InstNorm_args)
{
    pi_cl_team_fork(NUM_CORES, pulp_instnorm_parallelized_fp32_bw_input_grads_cl, InstNorm_args);
}

void pulp_instnorm_fp32_bw_cl(void *InstNorm_args)
{
    const struct InstNorm_args *a = InstNorm_args;
    if (!a->skip_wg_grad)
        pulp_instnorm_fp32_bw_param_grads_cl(InstNorm_args);
    if (!a->skip_in_grad)
        pulp_instnorm_fp32_bw_input_grads_cl(InstNorm_args);
}
