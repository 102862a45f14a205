/*
 * pulp_im2col_fp16.h: FP16 im2col, im2row and block transpose.
 *
 * Same definitions as pulp_im2col_fp32.h (mod 0 and mod 1 unrollings, tap
 * order per layout, the block transpose, caller-forked, no final barrier),
 * with struct blob_fp16 tensors and fp16 buffers. They only copy elements,
 * so the results are bit-exact copies of the source values or +0.
 */
#ifndef PULP_IM2COL_FP16_H
#define PULP_IM2COL_FP16_H

#include "pulp_train_defines.h"

struct im2col_args_fp16 {
    struct blob_fp16 *input;  /* mod 0 reads input->data */
    struct blob_fp16 *c;      /* only c->H = Hk and c->W = Wk are read */
    struct blob_fp16 *output; /* mod 1 reads output->diff */
    fp16 *pBuffer;            /* T x P (im2col) or P x T (im2row) */
    int Lpad;
    int Rpad;
    int Upad;
    int Dpad;
    int mod;                  /* 0: FW/WG unrolling; 1: IG unrolling */
    int stride_w;
    int stride_h;
    int HWC;
    int USE_DMA;
};

struct blocktransp_args_fp16 {
    fp16 *weights;
    fp16 *bt_weights;
    int Cin;
    int Cout;
    int Hk;
    int Wk;
    int HWC;
};

/* X (T x P) into pBuffer. Caller-forked. */
void pulp_im2col_fp16(void *im2col_args_fp16);

/* X^T (P x T) into pBuffer. Caller-forked. */
void pulp_im2row_fp16(void *im2col_args_fp16);

/* Block transpose (channels swapped, kernels turned by 180 degrees).
 * Caller-forked. */
void pulp_blocktransp_fp16(void *blocktransp_args_fp16);

#endif /* PULP_IM2COL_FP16_H */
