/*
 * pulp_conv_pw_fp32.h: FP32 pointwise (1x1, stride 1, no padding)
 * convolution, out[co][p] = sum_ci W[co][ci] * in[ci][p] over the H*W pixels p.
 *
 * Shapes (Ci = input->C, Co = output->C, H = input->H, W = input->W; the
 * output has the same H and W):
 *                    CHW (HWC == 0)      HWC (HWC != 0)
 *   input  data/diff  Ci x H x W          H x W x Ci
 *   coeff  data/diff  Co x Ci (x 1 x 1)   Ci x Co (x 1 x 1)
 *   output data/diff  Co x H x W          H x W x Co
 *
 * Every step is one matmul run by mm_manager with the kernel index
 * opt_matmul_type_{fw,wg,ig} (index 0 without OPTIMIZE), in a team of
 * NUM_CORES cores forked by the primitive:
 *   step  CHW                                  HWC
 *   FW    out  = W . in                        out  = in . W
 *   WG    dW   = dOut . in^T  (in as trans_B)  dW   = T(in) . dOut
 *   IG    dIn  = T(W) . dOut                   dIn  = dOut . T(W)
 * The weights and their gradient are laid out as the published API has
 * them: Co x Ci in CHW, Ci x Co in HWC. T(x) is x transposed into
 * transpose_buffer by the team before the product, which must therefore hold:
 *   IG:     Ci * Co floats (W transposed, in both layouts);
 *   HWC WG: Ci * H * W floats (in^T, Ci x H*W);
 *   other steps: unused (may be NULL).
 * Each element is a sum in float over the reduced index in order from 0.
 */
#ifndef PULP_CONV_PW_FP32_H
#define PULP_CONV_PW_FP32_H

#include "pulp_train_defines.h"
#include "pulp_matmul_fp32.h"

struct PointWise_Conv_args {
    struct blob *input;
    struct blob *coeff;
    struct blob *output;
    float *transpose_buffer;
    int skip_wg_grad;
    int skip_in_grad;
    int opt_matmul_type_fw;
    int opt_matmul_type_wg;
    int opt_matmul_type_ig;
    int HWC;
};

/* Forward: output->data = W . input->data (layouts above). Overwrites. */
void pulp_conv_pw_fp32_fw_cl(void *PointWise_Conv_args);

/* Both backward steps: bw_param_grads unless skip_wg_grad, then
 * bw_input_grads unless skip_in_grad. */
void pulp_conv_pw_fp32_bw_cl(void *PointWise_Conv_args);

/* Weight gradient: coeff->diff[co][ci] (HWC: [ci][co]) = sum_p
 * output->diff[co][p] * input->data[ci][p]. Overwrites. HWC uses
 * transpose_buffer (Ci*H*W). */
void pulp_conv_pw_fp32_bw_param_grads_cl(void *PointWise_Conv_args);

/* Input gradient: input->diff[ci][p] = sum_co W[co][ci] * output->diff[co][p]
 * (W indexed as its layout says). Overwrites. Uses transpose_buffer (Ci*Co). */
void pulp_conv_pw_fp32_bw_input_grads_cl(void *PointWise_Conv_args);

#endif /* PULP_CONV_PW_FP32_H */
