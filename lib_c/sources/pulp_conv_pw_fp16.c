/*
 * pulp_conv_pw_fp16.c: FP16 pointwise convolution (contract in
 * pulp_conv_pw_fp16.h, body in pulp_conv_pw_impl.h). Products accumulate in
 * fp16.
 */
#include "pulp_conv_pw_fp16.h"

#define CONV_T fp16
#define PW_ARGS struct PointWise_Conv_args_fp16
#define CONV_MM_ARGS struct matMul_args_fp16
#define CONV_MGR_ARGS struct mm_manager_args_fp16
#define CONV_MM_MANAGER mm_manager_fp16
#include "pulp_conv_pw_impl.h"

void pulp_conv_pw_fp16_fw_cl(void *PointWise_Conv_args_fp16)
{
    pw_fw(PointWise_Conv_args_fp16);
}

void pulp_conv_pw_fp16_bw_cl(void *PointWise_Conv_args_fp16)
{
    pw_bw(PointWise_Conv_args_fp16);
}

void pulp_conv_pw_fp16_bw_param_grads_cl(void *PointWise_Conv_args_fp16)
{
    pw_wg(PointWise_Conv_args_fp16);
}

void pulp_conv_pw_fp16_bw_input_grads_cl(void *PointWise_Conv_args_fp16)
{
    pw_ig(PointWise_Conv_args_fp16);
}
