/*
 * pulp_transp_conv2d_fp32.h: FP32 transposed 2D convolution (the adjoint of
 * a strided convolution), as torch.nn.functional.conv_transpose2d with
 * dilation 1 and groups 1.
 *
 * Shapes (Ci = input->C, H = input->H, W = input->W, Co = output->C,
 * Hk = coeff->H, Wk = coeff->W):
 *                    CHW (HWC == 0)        HWC (HWC != 0)
 *   input  data/diff  Ci x H x W            H x W x Ci
 *   coeff  data/diff  Ci x Co x Hk x Wk     Ci x Hk x Wk x Co
 *   bias   data/diff  Co                    Co
 *   output data/diff  Co x Ho x Wo          Ho x Wo x Co
 * The CHW weight layout is torch's for conv_transpose2d, in every step; the
 * HWC one keeps Ci first and puts Co last.
 *
 * The published library implements USE_IM2COL == 0 in CHW only; HWC and
 * USE_IM2COL != 0 are lib_c's own. As there, FW adds into output->data
 * (starting from the bias instead when USE_BIASES) and IG adds into
 * input->diff: the caller zeroes them first. The USE_IM2COL != 0 path
 * overwrites them, which a caller that zeroes cannot tell apart.
 *
 * Output size and padding. Input element (i, j) spreads over the full output
 *   full[co][i*stride_h + kh][j*stride_w + kw] += in[ci][i][j] * W[ci][co][kh][kw],
 * of size Hf = (H-1)*stride_h + Hk by Wf = (W-1)*stride_w + Wk. The output is
 * that full output with inUpad rows cut off the top, inDpad off the bottom,
 * inLpad columns off the left and inRpad off the right:
 *   out[co][y][x] = full[co][y + inUpad][x + inLpad] (+ bias[co]),
 *   Ho = (H-1)*stride_h + Hk - inUpad - inDpad,
 *   Wo = (W-1)*stride_w + Wk - inLpad - inRpad,
 * which output->H and output->W must equal (Ho, Wo >= 1). torch's
 * conv_transpose2d(stride=(sh, sw), padding=(ph, pw), output_padding=(oh, ow))
 * is inUpad = ph, inDpad = ph - oh, inLpad = pw, inRpad = pw - ow. A pad may be
 * negative: the output then extends past the full output by that many rows or
 * columns, which no input reaches (zero, plus the bias), as torch gives when
 * output_padding > padding.
 *
 * Steps (forked on NUM_CORES cores; y = i*sh + kh - inUpad, x = j*sw + kw - inLpad):
 *   FW  out[co][y][x] = sum_{ci,kh,kw} W[ci][co][kh][kw] in[ci][i][j] (+ bias[co])
 *   WG  dW[ci][co][kh][kw] = sum_{i,j} in[ci][i][j] dOut[co][y][x];
 *       with USE_BIASES also dbias[co] = sum_{y,x} dOut[co][y][x]
 *   IG  dIn[ci][i][j] = sum_{co,kh,kw} W[ci][co][kh][kw] dOut[co][y][x]
 * summing only the (y, x) inside the output. IG and WG are a strided
 * convolution of dOut (forward and weight gradient), FW is its input gradient.
 *
 * USE_IM2COL != 0: each step gathers its operand into i2c_buffer, then runs one
 * matmul through mm_manager with opt_matmul_type_{fw,wg,ig} (index 0 without
 * OPTIMIZE). Buffers (floats):
 *   step  i2c_buffer           bt_buffer                 product
 *   FW    Ci*Hk*Wk * Ho*Wo     CHW: Ci*Co*Hk*Wk          CHW: out = bt . col, bt = W as Co x (Ci Hk Wk)
 *                              HWC: unused               HWC: out = row . W, W as (Ci Hk Wk) x Co
 *   IG    Co*Hk*Wk * H*W       unused                    CHW: dIn = W . col;  HWC: dIn = row . W^T
 *   WG    Co*Hk*Wk * H*W       CHW: unused               CHW: dW = in . col^T
 *                              HWC: Ci*H*W (in^T)        HWC: dW = in^T . row
 * col is the gathered operand with one row per tap and one column per
 * position, row its transpose. Zeros in the gathered operands are exact, so
 * each element is rounded once per nonzero term: at most
 * Ci*ceil(Hk/sh)*ceil(Wk/sw) (+1 bias) in FW, Co*Hk*Wk in IG, H*W in WG.
 * USE_IM2COL == 0: direct kernels, no buffers, no matmul; the same sums.
 * USE_DMA_IM2COL is ignored: the cores gather the operands themselves.
 */
#ifndef PULP_TRANSP_CONV2D_FP32_H
#define PULP_TRANSP_CONV2D_FP32_H

#include "pulp_train_defines.h"
#include "pulp_matmul_fp32.h"

struct Transp_Conv2D_args {
    struct blob *input;
    struct blob *coeff;
    struct blob *bias;
    struct blob *output;
    int inLpad;
    int inRpad;
    int inUpad;
    int inDpad;
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

/* Forward: output->data (layouts and sums above), plus bias->data when
 * USE_BIASES. Direct kernels add into output->data, or start from the bias
 * with USE_BIASES; USE_IM2COL != 0 overwrites (see above). */
void pulp_transp_conv2d_fp32_fw_cl(void *Transp_Conv2D_args);

/* Both backward steps: bw_param_grads unless skip_wg_grad, then
 * bw_input_grads unless skip_in_grad. */
void pulp_transp_conv2d_fp32_bw_cl(void *Transp_Conv2D_args);

/* Weight gradient: coeff->diff, and bias->diff when USE_BIASES. Overwrites. */
void pulp_transp_conv2d_fp32_bw_param_grads_cl(void *Transp_Conv2D_args);

/* Input gradient: input->diff. Direct kernels add into it; USE_IM2COL != 0
 * overwrites (see above). */
void pulp_transp_conv2d_fp32_bw_input_grads_cl(void *Transp_Conv2D_args);

#endif /* PULP_TRANSP_CONV2D_FP32_H */
