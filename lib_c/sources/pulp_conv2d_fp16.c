/*
 * pulp_conv2d_fp16.c: FP16 2D convolution (contract in pulp_conv2d_fp16.h,
 * body in pulp_conv2d_impl.h). Sums accumulate in fp16.
 */
#include "pulp_conv2d_fp16.h"

#define CONV_T fp16
#define CONV_ZERO fp16_zero()
#define CONV_MAC(acc, a, b) fp16_fma((a), (b), (acc))
#define CONV_ADD(a, b) fp16_add((a), (b))
#define CONV_ARGS struct Conv2D_args_fp16
#define CONV_MM_ARGS struct matMul_args_fp16
#define CONV_MGR_ARGS struct mm_manager_args_fp16
#define CONV_MM_MANAGER mm_manager_fp16
#define CONV_UNROLL_ARGS struct im2col_args_fp16
#define CONV_BT_ARGS struct blocktransp_args_fp16
#define CONV_IM2COL pulp_im2col_fp16
#define CONV_IM2ROW pulp_im2row_fp16
#define CONV_BLOCKTRANSP pulp_blocktransp_fp16
#define IM2COL_T fp16
#define IM2COL_ZERO fp16_zero()
#define IM2COL_ARGS struct im2col_args_fp16
#define BT_ARGS struct blocktransp_args_fp16
#include "pulp_im2col_impl.h"
#include "pulp_conv2d_impl.h"

void pulp_conv2d_fp16_fw_cl(void *Conv2D_args_fp16)
{
    conv_fw(Conv2D_args_fp16);
}

void pulp_conv2d_fp16_bw_cl(void *Conv2D_args_fp16)
{
    conv_bw(Conv2D_args_fp16);
}

void pulp_conv2d_fp16_bw_param_grads_cl(void *Conv2D_args_fp16)
{
    conv_wg(Conv2D_args_fp16);
}

void pulp_conv2d_fp16_bw_input_grads_cl(void *Conv2D_args_fp16)
{
    conv_ig(Conv2D_args_fp16);
}
