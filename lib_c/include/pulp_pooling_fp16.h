/*
 * pulp_pooling_fp16.h: FP16 average and max pooling, forward and backward.
 *
 * Same layout (CHW only, no padding), shapes, core split, tie rule and
 * rounding order as pulp_pooling_fp32.h, with struct blob_fp16 tensors:
 *   input->data, input->diff    [C x H x W]
 *   output->data, output->diff  [C x Ho x Wo]
 *   Ho = (H - Hker) / Hstride + 1,  Wo = (W - Wker) / Wstride + 1
 * Sums accumulate in fp16 (pulp_fp16.h helpers); the average multiplies by
 * 1/(Hker*Wker) rounded to fp16, which is correctly rounded for
 * Hker*Wker <= 2048 (the argument is in pulp_pooling_fp16.c).
 * Forked by the caller: pi_cl_team_fork(NUM_CORES, pulp_avgpool_fp16_fw_cl, &args).
 */
#ifndef PULP_POOLING_FP16_H
#define PULP_POOLING_FP16_H

#include "pulp_train_defines.h"

struct pool_args_fp16 {
    struct blob_fp16 *input;
    struct blob_fp16 *output;
    int Hker;
    int Wker;
    int Hstride;
    int Wstride;
};

/* Average pooling forward: output->data[c][oh][ow] = mean of the Hker x Wker
 * window of input->data[c] at (oh*Hstride, ow*Wstride). Overwrites. */
void pulp_avgpool_fp16_fw_cl(void *pool_args_fp16);

/* Average pooling backward: input->diff[c][h][w] = sum of output->diff over
 * the windows covering (h, w), times 1/(Hker*Wker). Reads output->diff only.
 * Overwrites input->diff. */
void pulp_avgpool_fp16_bw_cl(void *pool_args_fp16);

/* Max pooling forward: output->data[c][oh][ow] = max of the window (first
 * maximum in row-major order on ties; a NaN wins). Overwrites. */
void pulp_maxpool_fp16_fw_cl(void *pool_args_fp16);

/* Max pooling backward: input->diff[c][h][w] = sum of output->diff over the
 * windows whose selected element is (h, w), zero elsewhere. Reads
 * input->data and output->diff (not output->data). Overwrites input->diff. */
void pulp_maxpool_fp16_bw_cl(void *pool_args_fp16);

#endif /* PULP_POOLING_FP16_H */
