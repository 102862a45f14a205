/*
 * pulp_transp_conv2d_fp32.c: FP32 transposed 2D convolution (contract in
 * pulp_transp_conv2d_fp32.h, body in pulp_transp_conv2d_impl.h).
 */
#include "pulp_transp_conv2d_fp32.h"

#define CONV_T float
#define CONV_ZERO 0.0f
#define CONV_MAC(acc, a, b) ((acc) + (a) * (b))
#define CONV_ADD(a, b) ((a) + (b))
#define TC_ARGS struct Transp_Conv2D_args
#define CONV_MM_ARGS struct matMul_args
#define CONV_MGR_ARGS struct mm_manager_args
#define CONV_MM_MANAGER mm_manager
#include "pulp_transp_conv2d_impl.h"

void pulp_transp_conv2d_fp32_fw_cl(void *Transp_Conv2D_args)
{
    tc_fw(Transp_Conv2D_args);
}

void pulp_transp_conv2d_fp32_bw_cl(void *Transp_Conv2D_args)
{
    tc_bw(Transp_Conv2D_args);
}

void pulp_transp_conv2d_fp32_bw_param_grads_cl(void *Transp_Conv2D_args)
{
    tc_wg(Transp_Conv2D_args);
}

void pulp_transp_conv2d_fp32_bw_input_grads_cl(void *Transp_Conv2D_args)
{
    tc_ig(Transp_Conv2D_args);
}
