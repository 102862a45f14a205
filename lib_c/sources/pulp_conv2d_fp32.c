/*
 * pulp_conv2d_fp32.c: FP32 2D convolution (contract in pulp_conv2d_fp32.h,
 * body in pulp_conv2d_impl.h).
 */
#include "pulp_conv2d_fp32.h"

#define CONV_T float
#define CONV_ZERO 0.0f
#define CONV_MAC(acc, a, b) ((acc) + (a) * (b))
#define CONV_ADD(a, b) ((a) + (b))
#define CONV_ARGS struct Conv2D_args
#define CONV_MM_ARGS struct matMul_args
#define CONV_MGR_ARGS struct mm_manager_args
#define CONV_MM_MANAGER mm_manager
#define CONV_UNROLL_ARGS struct im2col_args
#define CONV_BT_ARGS struct blocktransp_args
#define CONV_IM2COL pulp_im2col_fp32
#define CONV_IM2ROW pulp_im2row_fp32
#define CONV_BLOCKTRANSP pulp_blocktransp_fp32
#define IM2COL_T float
#define IM2COL_ZERO 0.0f
#define IM2COL_ARGS struct im2col_args
#define BT_ARGS struct blocktransp_args
#include "pulp_im2col_impl.h"
#include "pulp_conv2d_impl.h"

void pulp_conv2d_fp32_fw_cl(void *Conv2D_args)
{
    conv_fw(Conv2D_args);
}

void pulp_conv2d_fp32_bw_cl(void *Conv2D_args)
{
    conv_bw(Conv2D_args);
}

void pulp_conv2d_fp32_bw_param_grads_cl(void *Conv2D_args)
{
    conv_wg(Conv2D_args);
}

void pulp_conv2d_fp32_bw_input_grads_cl(void *Conv2D_args)
{
    conv_ig(Conv2D_args);
}
