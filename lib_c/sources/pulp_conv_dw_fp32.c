/*
 * pulp_conv_dw_fp32.c: FP32 depthwise convolution with direct kernels (contract
 * in pulp_conv_dw_fp32.h, body in pulp_conv_dw_impl.h).
 */
#include "pulp_conv_dw_fp32.h"

#define CONV_T float
#define CONV_ZERO 0.0f
#define CONV_MAC(acc, a, b) ((acc) + (a) * (b))
#define DW_ARGS struct DepthWise_Conv_args
#include "pulp_conv_dw_impl.h"

void pulp_conv_dw_fp32_fw_cl(void *DepthWise_Conv_args)
{
    dw_fw(DepthWise_Conv_args);
}

void pulp_conv_dw_fp32_bw_cl(void *DepthWise_Conv_args)
{
    dw_bw(DepthWise_Conv_args);
}

void pulp_conv_dw_fp32_bw_param_grads_cl(void *DepthWise_Conv_args)
{
    dw_wg(DepthWise_Conv_args);
}

void pulp_conv_dw_fp32_bw_input_grads_cl(void *DepthWise_Conv_args)
{
    dw_ig(DepthWise_Conv_args);
}
