/*
 * pulp_conv_dw_fp16.c: FP16 depthwise convolution with direct kernels (contract
 * in pulp_conv_dw_fp16.h, body in pulp_conv_dw_impl.h).
 * Sums accumulate in fp16.
 */
#include "pulp_conv_dw_fp16.h"

#define CONV_T fp16
#define CONV_ZERO fp16_zero()
#define CONV_MAC(acc, a, b) fp16_fma((a), (b), (acc))
#define DW_ARGS struct DepthWise_Conv_args_fp16
#include "pulp_conv_dw_impl.h"

void pulp_conv_dw_fp16_fw_cl(void *DepthWise_Conv_args_fp16)
{
    dw_fw(DepthWise_Conv_args_fp16);
}

void pulp_conv_dw_fp16_bw_cl(void *DepthWise_Conv_args_fp16)
{
    dw_bw(DepthWise_Conv_args_fp16);
}

void pulp_conv_dw_fp16_bw_param_grads_cl(void *DepthWise_Conv_args_fp16)
{
    dw_wg(DepthWise_Conv_args_fp16);
}

void pulp_conv_dw_fp16_bw_input_grads_cl(void *DepthWise_Conv_args_fp16)
{
    dw_ig(DepthWise_Conv_args_fp16);
}
