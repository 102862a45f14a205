/*
 * pulp_conv2d_fp32.h: FP32 2D convolution (cross-correlation, batch 1) with
 * separate strides and asymmetric zero padding.
 *
 * Shapes (names as in pulp_im2col_fp32.h):
 *   input->data, input->diff    Ci x H x W     (HWC: H x W x Ci)
 *   coeff->data, coeff->diff    Co x Ci x Hk x Wk (HWC: Co x Hk x Wk x Ci);
 *                               coeff->C = Ci, coeff->H = Hk, coeff->W = Wk
 *   bias->data, bias->diff      Co (only when USE_BIASES)
 *   output->data, output->diff  Co x Ho x Wo   (HWC: Ho x Wo x Co)
 *   Ho = (H + Upad + Dpad - Hk) / stride_h + 1,
 *   Wo = (W + Lpad + Rpad - Wk) / stride_w + 1; output->H and output->W must
 *   hold these (the primitives read the sizes from the blobs).
 *
 *   out(co, ho, wo) = sum over ci, kh, kw of
 *       w(co, ci, kh, kw) * in(ci, ho * stride_h + kh - Upad, wo * stride_w + kw - Lpad)
 *     (+ bias[co]), with in = 0 outside H x W.
 *
 * Paths:
 *   USE_IM2COL != 0: unroll into i2c_buffer, then one matmul through
 *     mm_manager with kernel opt_matmul_type_{fw,wg,ig} (plain mm without
 *     OPTIMIZE); every kernel index works for every step and layout.
 *       FW  HWC=0: out[Co x P] = w[Co x T] . im2col(in)[T x P]
 *           HWC=1: out[P x Co] = im2row(in)[P x T] . w^T       (bias per column)
 *       WG  HWC=0: dW[Co x T] = dOut[Co x P] . im2col(in)^T
 *           HWC=1: bt_buffer[Co x P] = dOut[P x Co] transposed, then
 *                  dW[Co x T] = bt_buffer . im2col(in)^T
 *       IG  HWC=0: dIn[Ci x HW] = BT[Ci x T'] . U[T' x HW]
 *           HWC=1: dIn[HW x Ci] = U^T[HW x T'] . BT^T
 *     with T = Ci*Hk*Wk, T' = Co*Hk*Wk, P = Ho*Wo, BT the block-transposed
 *     weights in bt_buffer (pulp_blocktransp_fp32), and U the IG unrolling
 *     of dOut: the im2col/im2row mod 1 of pulp_im2col_fp32.h for a stride-1,
 *     unpadded layer, and in general the same with dOut dilated by the
 *     strides and a top/left border of Hk-1-Upad / Wk-1-Lpad (the public
 *     mod 1 ignores pads and strides, so the layer unrolls this itself).
 *     Buffers (elements): i2c_buffer  FW, WG: T * Ho * Wo;  IG: T' * H * W.
 *                         bt_buffer   IG: Co * Ci * Hk * Wk;
 *                                     WG in HWC: Co * Ho * Wo.
 *     USE_DMA_IM2COL is passed to the unrolling as USE_DMA (see there: with
 *     the harness's pmsis shim the DMA is a synchronous copy). Beyond the
 *     published API, it works in every step, layout and dtype, and the
 *     unrollings take any stride and HWC padding (pulp_im2col_fp32.h); the
 *     published one has DMA only where it unrolls with pulp_im2row_fp32.
 *   USE_IM2COL == 0: direct loops (no buffers; the opt_matmul_type_*,
 *     USE_DMA_IM2COL and the buffer pointers are not read). CHW and, beyond
 *     the published API (CHW only), HWC.
 * Each primitive forks its own team of NUM_CORES cores. Results overwrite
 * their destination.
 */
#ifndef PULP_CONV2D_FP32_H
#define PULP_CONV2D_FP32_H

#include "pulp_train_defines.h"
#include "pulp_matmul_fp32.h"
#include "pulp_im2col_fp32.h"

struct Conv2D_args {
    struct blob *input;
    struct blob *coeff;
    struct blob *bias;
    struct blob *output;
    int Lpad;
    int Rpad;
    int Upad;
    int Dpad;
    int stride_h;
    int stride_w;
    float *i2c_buffer;
    float *bt_buffer;
    int skip_wg_grad;
    int skip_in_grad;
    int HWC;
    int opt_matmul_type_fw;
    int opt_matmul_type_wg;
    int opt_matmul_type_ig;
    int USE_BIASES;
    int USE_IM2COL;
    int USE_DMA_IM2COL;
};

/* Forward: output->data from input->data, coeff->data (+ bias->data). */
void pulp_conv2d_fp32_fw_cl(void *Conv2D_args);

/* Both backward steps: bw_param_grads unless skip_wg_grad, then
 * bw_input_grads unless skip_in_grad. */
void pulp_conv2d_fp32_bw_cl(void *Conv2D_args);

/* Weight gradient: coeff->diff(co, ci, kh, kw) = sum over ho, wo of
 * output->diff(co, ho, wo) * in(ci, ho * stride_h + kh - Upad, wo * stride_w + kw - Lpad);
 * with USE_BIASES also bias->diff[co] = sum over ho, wo of output->diff(co, ho, wo). */
void pulp_conv2d_fp32_bw_param_grads_cl(void *Conv2D_args);

/* Input gradient: input->diff(ci, h, w) = sum of coeff->data(co, ci, kh, kw) *
 * output->diff(co, ho, wo) over every (co, kh, kw, ho, wo) with
 * ho * stride_h + kh - Upad = h and wo * stride_w + kw - Lpad = w. */
void pulp_conv2d_fp32_bw_input_grads_cl(void *Conv2D_args);

#endif /* PULP_CONV2D_FP32_H */
