/*
 * pulp_im2col_fp16.c: FP16 im2col, im2row and block transpose (definitions
 * in pulp_im2col_fp32.h, bodies in pulp_im2col_impl.h).
 */
#include "pulp_im2col_fp16.h"

#define IM2COL_T fp16
#define IM2COL_ZERO fp16_zero()
#define IM2COL_ARGS struct im2col_args_fp16
#define BT_ARGS struct blocktransp_args_fp16
#include "pulp_im2col_impl.h"

void pulp_im2col_fp16(void *im2col_args_fp16)
{
    unroll_cols(im2col_args_fp16);
}

void pulp_im2row_fp16(void *im2col_args_fp16)
{
    unroll_rows(im2col_args_fp16);
}

void pulp_blocktransp_fp16(void *blocktransp_args_fp16)
{
    block_transpose(blocktransp_args_fp16);
}
