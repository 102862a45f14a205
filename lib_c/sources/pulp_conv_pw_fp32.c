/*
 * pulp_conv_pw_fp32.c: FP32 pointwise convolution (contract in
 * pulp_conv_pw_fp32.h, body in pulp_conv_pw_impl.h).
 */
#include "pulp_conv_pw_fp32.h"

#define CONV_T float
#define PW_ARGS struct PointWise_Conv_args
#define CONV_MM_ARGS struct matMul_args
#define CONV_MGR_ARGS struct mm_manager_args
#define CONV_MM_MANAGER mm_manager
#include "pulp_conv_pw_impl.h"

void pulp_conv_pw_fp32_fw_cl(void *PointWise_Conv_args)
{
    pw_fw(PointWise_Conv_args);
}

void pulp_conv_pw_fp32_bw_cl(void *PointWise_Conv_args)
{
    pw_bw(PointWise_Conv_args);
}

void pulp_conv_pw_fp32_bw_param_grads_cl(void *PointWise_Conv_args)
{
    pw_wg(PointWise_Conv_args);
}

void pulp_conv_pw_fp32_bw_input_grads_cl(void *PointWise_Conv_args)
{
    pw_ig(PointWise_Conv_args);
}
