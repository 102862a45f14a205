/*
 * pulp_pooling_fp32.h: FP32 average and max pooling, CHW, no padding;
 * Ho = (H - Hker) / Hstride + 1. Per-core bodies: the caller forks them; the
 * channels are split over the cores.
 *   FW writes output->data; BW overwrites input->diff from output->diff.
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

void pulp_avgpool_fp32_fw_cl(void *pool_args);
void pulp_avgpool_fp32_bw_cl(void *pool_args);
void pulp_maxpool_fp32_fw_cl(void *pool_args);
void pulp_maxpool_fp32_bw_cl(void *pool_args);

#endif /* PULP_POOLING_FP32_H */
