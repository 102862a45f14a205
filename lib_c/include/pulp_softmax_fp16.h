/*
 * pulp_softmax_fp16.h: FP16 row softmax, forward and backward: the contract
 * of pulp_softmax_fp32.h on fp16 arrays (maxes start at -65504). The
 * arithmetic is binary32 on the fp16 values: the exponentials are rounded to
 * fp16 as they are stored in output_data, the sums as they are stored in
 * sums, and each result once.
 */
#ifndef PULP_SOFTMAX_FP16_H
#define PULP_SOFTMAX_FP16_H

#include "pulp_train_defines.h"

struct softmax_args_fp16 {
    fp16 *input_data;
    fp16 *input_diff;
    fp16 *output_data;
    fp16 *output_diff;
    int H;
    int W;
    int L;
    int n_heads;
    fp16 *global_max;
    fp16 *partial_exp_sum;
    fp16 *maxes;
    fp16 *sums;
};

/* fastexp_gist on the binary32 value of x (the same function). */
float fastexp_gist_fp16(float x);

void pulp_softmax_fp16_fw_cl(void *softmax_args_fp16);
void pulp_softmax_fp16_bw_cl(void *softmax_args_fp16);

#endif /* PULP_SOFTMAX_FP16_H */
