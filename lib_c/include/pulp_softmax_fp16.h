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

/*
 * Softmax parts (FP16 per-core bodies): the contract of the FP32 parts in
 * pulp_softmax_fp32.h on fp16 arrays, each operation rounded once to fp16
 * (sm_bw_op_1 accumulates in fp16 with one rounding per term, a fused
 * multiply-add). max_args_fp16's dim is not read by the row maxima, which
 * take W.
 */
struct max_args_fp16 {
    fp16 *input;
    int H;
    int W;
    fp16 *maxes;
    int dim;
};

struct row_div_args_fp16 {
    fp16 *input;
    int H;
    int W;
    fp16 *sums;
};

struct div_args_fp16 {
    fp16 *input;
    fp16 n;
    int dim;
};

struct scalar_mul_args_fp16 {
    fp16 *input;
    fp16 scalar;
    int dim;
};

struct sm_bw_op_1_args_fp16 {
    fp16 *A;
    fp16 *B;
    fp16 *S;
    int H;
    int W;
};

struct sm_bw_op_2_args_fp16 {
    fp16 *A;
    fp16 *B;
    fp16 *S;
    fp16 *output;
    int H;
    int W;
};

struct mm_bias_add_args_fp16 {
    fp16 *mat;
    fp16 *bias;
    int H;
    int W;
    int t;
};

void pulp_row_max_fp16_cl(void *max_args_fp16);
void pulp_row_div_fp16_cl(void *row_div_args_fp16);
void pulp_div_fp16_cl(void *div_args_fp16);
void pulp_scalar_mul_fp16_cl(void *scalar_mul_args_fp16);
void pulp_sm_bw_op_1_fp16(void *sm_bw_op_1_args_fp16);
void pulp_sm_bw_op_2_fp16(void *sm_bw_op_2_args_fp16);
void mm_bias_add_transposed_fp16(void *mm_bias_add_args_fp16);

/* fastexp_gist on the binary32 value of x (the same function). */
float fastexp_gist_fp16(float x);

void pulp_softmax_fp16_fw_cl(void *softmax_args_fp16);
void pulp_softmax_fp16_bw_cl(void *softmax_args_fp16);

#endif /* PULP_SOFTMAX_FP16_H */
