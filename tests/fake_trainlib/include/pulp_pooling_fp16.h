/*
 * pulp_pooling_fp16.h: FP16 pooling, as pulp_pooling_fp32.h. Its source
 * computes in fp16 (fact 8): a toolchain without an arithmetic type for the
 * format cannot build it.
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

void pulp_avgpool_fp16_fw_cl(void *pool_args_fp16);
void pulp_avgpool_fp16_bw_cl(void *pool_args_fp16);
void pulp_maxpool_fp16_fw_cl(void *pool_args_fp16);
void pulp_maxpool_fp16_bw_cl(void *pool_args_fp16);

#endif /* PULP_POOLING_FP16_H */
