/*
 * pulp_norms_fp16.h: FP16 NoNorm forward, the contract of pulp_norms_fp32.h
 * on fp16 blobs (Nonorm_args_fp16, a per-core body forked by the caller:
 * input->H rows of input->W; y[i][j] = x[i][j] * coeff->data[j] +
 * bias->data[j], rounded once to fp16).
 */
#ifndef PULP_NORMS_FP16_H
#define PULP_NORMS_FP16_H

#include "pulp_train_defines.h"

struct Nonorm_args_fp16 {
    struct blob_fp16 *input;
    struct blob_fp16 *coeff;
    struct blob_fp16 *bias;
    struct blob_fp16 *output;
};

void pulp_nonorm_fp16_fw_cl(void *Nonorm_args_fp16);

#endif /* PULP_NORMS_FP16_H */
