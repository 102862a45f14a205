/*
 * pulp_residual_fp16.h: FP16 residual connection and sum node; the contract
 * of pulp_residual_fp32.h on struct blob_fp16 tensors, each sum rounded once
 * to fp16.
 */
#ifndef PULP_RESIDUAL_FP16_H
#define PULP_RESIDUAL_FP16_H

#include "pulp_train_defines.h"

struct SkipConn_args_fp16 {
    struct blob_fp16 *skip;
    struct blob_fp16 *lout;
    struct blob_fp16 *output;
    int skip_in_grad;
};

void pulp_residualconn_fp16_fw(void *SkipConn_args_fp16);
void pulp_sumnode_fp16_bw(void *SkipConn_args_fp16);
void pulp_residualconn_fp16_bw(void *SkipConn_args_fp16);

#endif /* PULP_RESIDUAL_FP16_H */
