/*
 * pulp_im2col_fp32.c: FP32 im2col, im2row and block transpose (definitions
 * in pulp_im2col_fp32.h, bodies in pulp_im2col_impl.h).
 */
#include "pulp_im2col_fp32.h"

#define IM2COL_T float
#define IM2COL_ZERO 0.0f
#define IM2COL_ARGS struct im2col_args
#define BT_ARGS struct blocktransp_args
#include "pulp_im2col_impl.h"

void pulp_im2col_fp32(void *im2col_args)
{
    unroll_cols(im2col_args);
}

void pulp_im2row_fp32(void *im2col_args)
{
    unroll_rows(im2col_args);
}

void pulp_blocktransp_fp32(void *blocktransp_args)
{
    block_transpose(blocktransp_args);
}
