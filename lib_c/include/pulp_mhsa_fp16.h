/*
 * pulp_mhsa_fp16.h: FP16 multi-head self-attention: the contract of
 * pulp_mhsa_fp32.h on fp16 arrays, through mm_manager_fp16 and the FP16 row
 * softmax. The FW scale is 1/sqrtf(Hd) rounded to fp16, the BW's q_rsqrt(Hd)
 * rounded to fp16; the helper loops (scaling, accumulation) compute in
 * binary32 and round each result once.
 */
#ifndef PULP_MHSA_FP16_H
#define PULP_MHSA_FP16_H

#include "pulp_train_defines.h"

struct Mhsa_args_fp16 {
    struct blob_fp16 *input;
    struct blob_fp16 *input_bn;
    int n_heads;
    int opt_matmul_type_fw;
    int opt_matmul_type_wg;
    int opt_matmul_type_ig;
    struct blob_fp16 *output;
    struct blob_fp16 *coeff_in_q;
    struct blob_fp16 *coeff_in_k;
    struct blob_fp16 *coeff_in_v;
    struct blob_fp16 *bias_in_q;
    struct blob_fp16 *bias_in_k;
    struct blob_fp16 *bias_in_v;
    struct blob_fp16 *coeff_out;
    struct blob_fp16 *bias_out;
    struct blob_fp16 *q;
    struct blob_fp16 *k;
    struct blob_fp16 *v;
    struct blob_fp16 *attention_map;
    fp16 *temp_buffer;
    fp16 *grad;
    struct blob_fp16 *head_buffer;
    struct blob_fp16 *softmax_buffer;
    fp16 *global_max;
    fp16 *partial_exp_sum;
    fp16 *maxes;
    fp16 *sums;
};

void pulp_mhsa_fp16_fw_cl(void *Mhsa_args_fp16);
void pulp_mhsa_fp16_bw_cl(void *Mhsa_args_fp16);

#endif /* PULP_MHSA_FP16_H */
