/*
 * pulp_norms_fp32.h: FP32 BatchNorm, LayerNorm, RMSNorm and NoNorm, forward.
 * (InstanceNorm: pulp_instnorm_fp32.h.) Sums in index order; "biased
 * variance" is E[x^2] - mean^2, as InstanceNorm computes it.
 *
 * BatchNorm (BatchNorm_args_fp32; reads only input->data, output->data,
 *   weight_data, bias_data, eps[0], B, C, H, W): x is B x C x H x W; per
 *   channel c over its B*H*W values, y = (x - mean) / sqrt(var + eps[0]) *
 *   weight_data[c] + bias_data[c]. pulp_batch_norm_fp32_fw_cl forks NUM_CORES
 *   itself on pulp_batch_norm_parallelized_fp32_fw_cl (channels over cores).
 * LayerNorm (LayerNorm_args_fp32, per-core body forked by the caller): the
 *   size / step_size rows of step_size elements are split over the cores;
 *   y_j = (x_j - mean) / sqrt(var + eps[0]) * weight[j] + bias[j] per row.
 * RMSNorm: rmsnorm_parallelized_fp32(o, x, weight, buffer_n_cores, size)
 *   forks NUM_CORES itself: per-core partial sums of squares
 *   (sum_of_squares_fp32_cl, into buffer_n_cores[core]) added in core
 *   order, r = 1 / sqrtf(sum / size + 1e-5), then o_i = weight_i * (r * x_i)
 *   (weighted_scaling_fp32_cl).
 * NoNorm (Nonorm_args, per-core body forked by the caller): input->H rows of
 *   input->W; y[i][j] = x[i][j] * coeff->data[j] + bias->data[j].
 */
#ifndef PULP_NORMS_FP32_H
#define PULP_NORMS_FP32_H

#include "pulp_train_defines.h"

struct BatchNorm_args_fp32 {
    struct blob *input;
    struct blob *output;
    struct blob *coeff;
    struct blob *bias;
    int batch_size;
    float *running_mean;
    float *running_var;
    float *running_stdev;
    int freeze_running_params;
    int skip_wg_grad;
    int skip_in_grad;
    float *weight_data;
    float *bias_data;
    float *eps;
    int B;
    int C;
    int H;
    int W;
};

struct LayerNorm_args_fp32 {
    float *x;
    float *weight;
    float *bias;
    float *output;
    float *eps;
    int size;
    int step_size;
};

struct sum_of_squares_args {
    float *out;
    float *in;
    unsigned int size;
};

struct weighted_scaling_args {
    float *out;
    float *in;
    float *w;
    float scaling_factor;
    unsigned int size;
};

struct Nonorm_args {
    struct blob *input;
    struct blob *coeff;
    struct blob *bias;
    struct blob *output;
};

void pulp_batch_norm_fp32_fw_cl(void *BatchNorm_args_fp32);
void pulp_batch_norm_parallelized_fp32_fw_cl(void *BatchNorm_args_fp32);
void pulp_layerNorm_fp32_fw_cl(void *LayerNorm_args_fp32);
void rmsnorm_parallelized_fp32(float *o, float *x, float *weight, float *buffer_n_cores, int size);
void sum_of_squares_fp32_cl(void *sum_of_squares_args);
void weighted_scaling_fp32_cl(void *weighted_scaling_args);
void pulp_nonorm_fp32_fw_cl(void *Nonorm_args);

#endif /* PULP_NORMS_FP32_H */
