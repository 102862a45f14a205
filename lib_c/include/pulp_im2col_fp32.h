/*
 * pulp_im2col_fp32.h: the unrollings that turn the steps of a 2D convolution
 * into matrix products (im2col, im2row), and the block transpose of its
 * weights for the input gradient.
 *
 * Notation, for the layer of struct Conv2D_args (pulp_conv2d_fp32.h):
 *   Ci = input->C, H = input->H, W = input->W      the layer input
 *   Co = output->C, Ho = output->H, Wo = output->W  the layer output
 *   Hk = c->H, Wk = c->W                            the kernel (c->C = Ci)
 *   sh, sw = stride_h, stride_w; U, D, L, R = Upad, Dpad, Lpad, Rpad
 *   Ho = (H + U + D - Hk) / sh + 1,  Wo = (W + L + R - Wk) / sw + 1
 * Padding is zero; Dpad and Rpad only enter through Ho and Wo.
 *
 * Layouts (HWC flag):
 *   HWC = 0: tensors C x H x W, weights Co x Ci x Hk x Wk; a tap (c, kh, kw)
 *            of a window has the index t = (c * Hk + kh) * Wk + kw.
 *   HWC = 1: tensors H x W x C, weights Co x Hk x Wk x Ci;
 *            t = (kh * Wk + kw) * C + c.
 * In both, the tap order is the order of one output channel's weights, and a
 * window p = y * (window columns) + x.
 *
 * mod 0, the FW/WG unrolling, reads input->data. Windows p = (ho, wo),
 * P = Ho * Wo; taps over the input channels, T = Ci * Hk * Wk:
 *   X[t][p] = in(c, ho * sh + kh - U, wo * sw + kw - L), 0 outside H x W.
 * Then FW is out = Wt . X and WG is dW = dOut . X^T.
 *
 * mod 1, the IG unrolling, reads output->diff and, as the API says, ignores
 * every pad and stride field. Windows p = (h, w), P = H * W; taps over the
 * output channels, T = Co * Hk * Wk:
 *   X[t][p] = dOut(c, h + kh - (Hk - 1), w + kw - (Wk - 1)), 0 outside Ho x Wo:
 * the stride-1 unrolling of dOut with a zero border of Hk - 1 rows and
 * Wk - 1 columns, without flipping the kernel (the block transpose does).
 * With the block-transposed weights BT of pulp_blocktransp_fp32 the input
 * gradient of a stride-1, unpadded layer is the product dIn = BT . X; a
 * strided or padded layer needs its own unrolling (pulp_conv2d_fp32 has it).
 *
 * pulp_im2col_fp32 writes X, T x P row-major: pBuffer[t * P + p].
 * pulp_im2row_fp32 writes X^T, P x T row-major: pBuffer[p * T + t].
 * Every element of the T x P block is written; nothing else is.
 *
 * Beyond the published API (which these extensions keep compatible with):
 *   - any stride: the published mod 0 requires (H + U + D - Hk) divisible by
 *     sh and (W + L + R - Wk) by sw, and otherwise reports an error and
 *     writes nothing; here the windows simply stop at Ho x Wo;
 *   - HWC with padding, in im2col and im2row (the published HWC unrollings
 *     take no padding);
 *   - USE_DMA in every unrolling and dtype (the published one has it only in
 *     pulp_im2row_fp32, and not for HWC mod 1).
 *
 * USE_DMA != 0 copies the in-bounds runs that are contiguous in both the
 * source and pBuffer (im2col with HWC = 0 and stride 1 along the row; im2row
 * with HWC = 1) with pi_cl_dma_cmd, waiting for each, as when the source sits
 * in L2; the result is the same as with USE_DMA = 0. Where pointers are wider
 * than the 32-bit addresses of the pmsis DMA calls (a 64-bit host), it copies
 * with the cores instead.
 *
 * These functions are forked by the caller: they run inside a team and each
 * core writes its own slice of pBuffer (im2col: rows (t, window row) of X;
 * im2row: windows; block transpose: (ci, co) pairs). They end without a
 * barrier: call pi_cl_team_barrier() before reading the result.
 */
#ifndef PULP_IM2COL_FP32_H
#define PULP_IM2COL_FP32_H

#include "pulp_train_defines.h"

struct im2col_args {
    struct blob *input;  /* the layer input (mod 0 reads input->data) */
    struct blob *c;      /* the layer weights: only c->H = Hk and c->W = Wk are read */
    struct blob *output; /* the layer output (mod 1 reads output->diff) */
    float *pBuffer;      /* T x P (im2col) or P x T (im2row), see above */
    int Lpad;
    int Rpad;
    int Upad;
    int Dpad;
    int mod;             /* 0: FW/WG unrolling of the input; 1: IG unrolling of dOut (no pads, stride 1) */
    int stride_w;
    int stride_h;
    int HWC;
    int USE_DMA;
};

/* Block transpose of the weights for the input gradient, the weights of the
 * transposed convolution: channels swapped and each Hk x Wk kernel turned by
 * 180 degrees.
 *   HWC = 0: weights Co x Ci x Hk x Wk, bt_weights Ci x Co x Hk x Wk,
 *            bt[ci][co][kh][kw] = w[co][ci][Hk - 1 - kh][Wk - 1 - kw].
 *   HWC = 1: weights Co x Hk x Wk x Ci, bt_weights Ci x Hk x Wk x Co,
 *            bt[ci][kh][kw][co] = w[co][Hk - 1 - kh][Wk - 1 - kw][ci].
 * Row ci of bt_weights is then indexed by the mod-1 tap order of the same
 * layout, so dIn = BT . X (HWC = 0) or dIn = X^T . BT^T (HWC = 1). */
struct blocktransp_args {
    float *weights;
    float *bt_weights;
    int Cin;
    int Cout;
    int Hk;
    int Wk;
    int HWC;
};

/* X (T x P) into pBuffer, for mod 0 or 1 and either layout. Caller-forked. */
void pulp_im2col_fp32(void *im2col_args);

/* X^T (P x T) into pBuffer, for mod 0 or 1 and either layout. Caller-forked. */
void pulp_im2row_fp32(void *im2col_args);

/* bt_weights from weights, as described at struct blocktransp_args.
 * Caller-forked. */
void pulp_blocktransp_fp32(void *blocktransp_args);

#endif /* PULP_IM2COL_FP32_H */
