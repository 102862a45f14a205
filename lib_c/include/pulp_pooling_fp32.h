/*
 * pulp_pooling_fp32.h: FP32 average and max pooling, forward and backward.
 *
 * Layout: CHW only (there is no HWC flag in pool_args, so HWC tensors are not
 * supported: transpose with CHW_to_HWC/HWC_to_CHW around the layer).
 * No padding. With C = input->C, H = input->H, W = input->W:
 *   Ho = (H - Hker) / Hstride + 1,  Wo = (W - Wker) / Wstride + 1
 *   input->data, input->diff    [C x H x W]
 *   output->data, output->diff  [C x Ho x Wo]
 * output->C, output->H and output->W must be C, Ho and Wo. Input rows and
 * columns past the last window (when (H - Hker) % Hstride != 0) take no part
 * in the forward step and get a zero gradient.
 *
 * Requires 1 <= Hker <= H, 1 <= Wker <= W, Hstride >= 1, Wstride >= 1.
 *
 * Pooling is forked BY THE CALLER: run each primitive on a team with
 * pi_cl_team_fork(NUM_CORES, pulp_maxpool_fp32_fw_cl, &args). Each core takes
 * a contiguous slice of the C*Ho output rows (forward) or of the C*H input
 * rows (backward), so every element is written by exactly one core and the
 * result does not depend on the core count. No barrier is needed.
 *
 * Rounding:
 *   - average: the window sum is accumulated in row-major window order, then
 *     multiplied by the reciprocal 1/(Hker*Wker) rounded to float (no
 *     division per output). Backward sums the output gradients of the windows
 *     that cover an input element, then multiplies by the same reciprocal.
 *   - max: the output is a selection (exact). Ties go to the FIRST maximum in
 *     row-major window order, and a NaN in the window wins (the last NaN), as
 *     in torch.nn.functional.max_pool2d. Backward routes each output gradient
 *     to that element and adds up the gradients of overlapping windows
 *     (stride < kernel) in row-major output order.
 */
#ifndef PULP_POOLING_FP32_H
#define PULP_POOLING_FP32_H

#include "pulp_train_defines.h"

struct pool_args {
    struct blob *input;
    struct blob *output;
    int Hker;
    int Wker;
    int Hstride;
    int Wstride;
};

/* Average pooling forward: output->data[c][oh][ow] = mean of the Hker x Wker
 * window of input->data[c] at (oh*Hstride, ow*Wstride). Overwrites. */
void pulp_avgpool_fp32_fw_cl(void *pool_args);

/* Average pooling backward: input->diff[c][h][w] = sum of output->diff over
 * the windows covering (h, w), times 1/(Hker*Wker). Reads output->diff only.
 * Overwrites input->diff. */
void pulp_avgpool_fp32_bw_cl(void *pool_args);

/* Max pooling forward: output->data[c][oh][ow] = max of the Hker x Wker
 * window of input->data[c] at (oh*Hstride, ow*Wstride). Overwrites. */
void pulp_maxpool_fp32_fw_cl(void *pool_args);

/* Max pooling backward: input->diff[c][h][w] = sum of output->diff over the
 * windows whose selected element (see the tie rule above) is (h, w), zero
 * elsewhere. Reads input->data (the selection is recomputed, so
 * output->data is not read) and output->diff. Overwrites input->diff. */
void pulp_maxpool_fp32_bw_cl(void *pool_args);

#endif /* PULP_POOLING_FP32_H */
