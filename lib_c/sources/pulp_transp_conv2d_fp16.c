/*
 * pulp_transp_conv2d_fp16.c: FP16 transposed 2D convolution (contract in
 * pulp_transp_conv2d_fp16.h, body in pulp_transp_conv2d_impl.h).
 * Sums accumulate in fp16.
 */
#include "pulp_transp_conv2d_fp16.h"

#define CONV_T fp16
#define CONV_ZERO fp16_zero()
#define CONV_MAC(acc, a, b) fp16_fma((a), (b), (acc))
#define CONV_ADD(a, b) fp16_add((a), (b))
#define TC_ARGS struct Transp_Conv2D_args_fp16
#define CONV_MM_ARGS struct matMul_args_fp16
#define CONV_MGR_ARGS struct mm_manager_args_fp16
#define CONV_MM_MANAGER mm_manager_fp16
#include "pulp_transp_conv2d_impl.h"

void pulp_transp_conv2d_fp16_fw_cl(void *Transp_Conv2D_args_fp16)
{
    tc_fw(Transp_Conv2D_args_fp16);
}

void pulp_transp_conv2d_fp16_bw_cl(void *Transp_Conv2D_args_fp16)
{
    tc_bw(Transp_Conv2D_args_fp16);
}

void pulp_transp_conv2d_fp16_bw_param_grads_cl(void *Transp_Conv2D_args_fp16)
{
    tc_wg(Transp_Conv2D_args_fp16);
}

void pulp_transp_conv2d_fp16_bw_input_grads_cl(void *Transp_Conv2D_args_fp16)
{
    tc_ig(Transp_Conv2D_args_fp16);
}
