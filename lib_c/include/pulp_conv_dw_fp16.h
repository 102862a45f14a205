/*
 * pulp_conv_dw_fp16.h: FP16 depthwise convolution: channel c of the output is
 * channel c of the input convolved (cross-correlated, as in torch) with its
 * own Hk x Wk kernel; torch's conv2d with groups = C and no bias.
 *
 * Shapes (C = input->C = output->C, H = input->H, W = input->W,
 * Hk = coeff->H, Wk = coeff->W):
 *                    CHW (HWC == 0)   HWC (HWC != 0)
 *   input  data/diff  C x H x W        H x W x C
 *   coeff  data/diff  C x Hk x Wk      Hk x Wk x C
 *   output data/diff  C x Ho x Wo      Ho x Wo x C
 * HWC is lib_c's own: the published depthwise is CHW only (its HWC field is
 * never read).
 * with Ho = (H + Upad + Dpad - Hk) / stride_h + 1 and
 *      Wo = (W + Lpad + Rpad - Wk) / stride_w + 1 (integer division), which
 * output->H and output->W must equal. The input is zero-padded by Upad rows
 * above, Dpad below, Lpad columns on the left and Rpad on the right; output
 * (ho, wo) reads input rows ho*stride_h - Upad + kh and columns
 * wo*stride_w - Lpad + kw. Padding needs no buffer: taps that fall in it are
 * skipped. Any stride >= 1 and pads >= 0 (also >= the kernel size) work.
 *
 * Direct kernels (no matmul, no buffer), each forked on NUM_CORES cores:
 *   FW splits the C*Ho output rows, WG the C*Hk*Wk weights, IG the C*H input
 * rows over the cores. Each element is an fp16 sum (fp16_fma, one rounding
 * per term, as the hardware would), in order, of its terms
 * that do not fall in the padding: up to Hk*Wk (FW), Ho*Wo (WG) or
 * ceil(Hk/stride_h)*ceil(Wk/stride_w) (IG).
 */
#ifndef PULP_CONV_DW_FP16_H
#define PULP_CONV_DW_FP16_H

#include "pulp_train_defines.h"

struct DepthWise_Conv_args_fp16 {
    struct blob_fp16 *input;
    struct blob_fp16 *coeff;
    struct blob_fp16 *output;
    int stride_h;
    int stride_w;
    int Lpad;
    int Rpad;
    int Upad;
    int Dpad;
    int skip_wg_grad;
    int skip_in_grad;
    int HWC;
};

/* Forward: output->data[c][ho][wo] =
 *   sum_{kh,kw} W[c][kh][kw] * input->data[c][ho*sh - Upad + kh][wo*sw - Lpad + kw]
 * (indices in CHW terms; layouts above). Overwrites. */
void pulp_conv_dw_fp16_fw_cl(void *DepthWise_Conv_args_fp16);

/* Both backward steps: bw_param_grads unless skip_wg_grad, then
 * bw_input_grads unless skip_in_grad. */
void pulp_conv_dw_fp16_bw_cl(void *DepthWise_Conv_args_fp16);

/* Weight gradient: coeff->diff[c][kh][kw] =
 *   sum_{ho,wo} output->diff[c][ho][wo] * input->data[c][ho*sh - Upad + kh][wo*sw - Lpad + kw].
 * Overwrites. */
void pulp_conv_dw_fp16_bw_param_grads_cl(void *DepthWise_Conv_args_fp16);

/* Input gradient: input->diff[c][h][w] = sum of W[c][kh][kw] *
 * output->diff[c][ho][wo] over h = ho*sh - Upad + kh, w = wo*sw - Lpad + kw;
 * zero for input elements no output reads. Overwrites. */
void pulp_conv_dw_fp16_bw_input_grads_cl(void *DepthWise_Conv_args_fp16);

#endif /* PULP_CONV_DW_FP16_H */
