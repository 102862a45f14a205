/*
 * pulp_instnorm_fp16.h: FP16 instance normalization: the contract of
 * pulp_instnorm_fp32.h on struct blob_fp16 tensors and fp16 running
 * statistics. lib_c computes in binary32 on the fp16 values and rounds each
 * result and each stored statistic once to fp16 (FW's y uses the binary32
 * statistics). Note: IEEE binary16 cannot hold EPSILON (1e-10): the stored
 * variance of a zero-variance channel is 0, and IG divides by it.
 */
#ifndef PULP_INSTNORM_FP16_H
#define PULP_INSTNORM_FP16_H

#include "pulp_train_defines.h"

struct InstNorm_args_fp16 {
    struct blob_fp16 *input;
    struct blob_fp16 *output;
    struct blob_fp16 *coeff;
    fp16 *running_mean;
    fp16 *running_var;
    fp16 *running_stdev;
    int freeze_running_params;
    int skip_wg_grad;
    int skip_in_grad;
};

void pulp_instnorm_fp16_fw_cl(void *InstNorm_args_fp16);
void pulp_instnorm_fp16_bw_cl(void *InstNorm_args_fp16);
void pulp_instnorm_fp16_bw_param_grads_cl(void *InstNorm_args_fp16);
void pulp_instnorm_fp16_bw_input_grads_cl(void *InstNorm_args_fp16);

void pulp_instnorm_parallelized_fp16_fw_cl(void *InstNorm_args_fp16);
void pulp_instnorm_parallelized_fp16_bw_param_grads_cl(void *InstNorm_args_fp16);
void pulp_instnorm_parallelized_fp16_bw_input_grads_cl(void *InstNorm_args_fp16);

#endif /* PULP_INSTNORM_FP16_H */
