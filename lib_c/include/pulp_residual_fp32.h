/*
 * pulp_residual_fp32.h: FP32 residual connection (skip connection) and its
 * sum node, element-wise over n = output->dim elements.
 *
 *   pulp_residualconn_fp32_fw   output->data = skip->data + lout->data
 *   pulp_sumnode_fp32_bw        skip->diff += output->diff, unless skip_in_grad
 *   pulp_residualconn_fp32_bw   lout->diff = output->diff (a copy)
 *
 * Each call forks its own team of NUM_CORES cores; core id takes
 * [id*b, (id+1)*b) clipped to n, b = ceil(n / NUM_CORES). The sum is one
 * rounding per element. When the two blobs a step combines differ in dim
 * (fw: skip and lout and output; sumnode: skip and output; residualconn bw:
 * lout and output) the call prints why and returns without writing.
 */
#ifndef PULP_RESIDUAL_FP32_H
#define PULP_RESIDUAL_FP32_H

#include "pulp_train_defines.h"

struct SkipConn_args {
    struct blob *skip;
    struct blob *lout;
    struct blob *output;
    int skip_in_grad;
};

void pulp_residualconn_fp32_fw(void *SkipConn_args);
void pulp_sumnode_fp32_bw(void *SkipConn_args);
void pulp_residualconn_fp32_bw(void *SkipConn_args);

#endif /* PULP_RESIDUAL_FP32_H */
