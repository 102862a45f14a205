/*
 * pulp_norms_fp32.c: FP32 BatchNorm, LayerNorm, RMSNorm and NoNorm forward
 * (pulp_norms_fp32.h).
 */
#include <math.h>

#include "pulp_norms_fp32.h"
#include "pulp_core_block.h"

#define RMSNORM_EPSILON 1e-5f

/* Mean and sigma = sqrt(E[x^2] - mean^2 + eps) of `runs` runs of `len`
 * values, `stride` apart, in index order. */
static float norms_sigma(const float *x, long runs, long len, long stride, float eps, float *mean)
{
    float sum = 0.0f, sum_sq = 0.0f;
    for (long r = 0; r < runs; r++)
        for (long k = 0; k < len; k++) {
            const float v = x[r * stride + k];
            sum += v;
            sum_sq += v * v;
        }
    const float n = (float)(runs * len);
    *mean = sum / n;
    return sqrtf(sum_sq / n - *mean * *mean + eps);
}

void pulp_batch_norm_parallelized_fp32_fw_cl(void *BatchNorm_args_fp32)
{
    const struct BatchNorm_args_fp32 *a = BatchNorm_args_fp32;
    const long hw = (long)a->H * a->W;
    long first, last;
    pulp_core_block(a->C, &first, &last);
    for (long c = first; c < last; c++) {
        /* channel c of every sample: B runs of H*W values, C*H*W apart */
        float mean;
        const float sigma = norms_sigma(a->input->data + c * hw, a->B, hw, a->C * hw, a->eps[0], &mean);
        for (long s = 0; s < a->B; s++)
            for (long p = 0; p < hw; p++) {
                const long i = (s * a->C + c) * hw + p;
                a->output->data[i] = (a->input->data[i] - mean) / sigma * a->weight_data[c] + a->bias_data[c];
            }
    }
}

void pulp_batch_norm_fp32_fw_cl(void *BatchNorm_args_fp32)
{
    pi_cl_team_fork(NUM_CORES, pulp_batch_norm_parallelized_fp32_fw_cl, BatchNorm_args_fp32);
}

void pulp_layerNorm_fp32_fw_cl(void *LayerNorm_args_fp32)
{
    const struct LayerNorm_args_fp32 *a = LayerNorm_args_fp32;
    const long rows = a->size / a->step_size, n = a->step_size;
    long first, last;
    pulp_core_block(rows, &first, &last);
    for (long r = first; r < last; r++) {
        const float *x = a->x + r * n;
        float *y = a->output + r * n;
        float mean;
        const float sigma = norms_sigma(x, 1, n, n, a->eps[0], &mean);
        for (long j = 0; j < n; j++)
            y[j] = (x[j] - mean) / sigma * a->weight[j] + a->bias[j];
    }
}

void sum_of_squares_fp32_cl(void *sum_of_squares_args)
{
    const struct sum_of_squares_args *a = sum_of_squares_args;
    long first, last;
    pulp_core_block((long)a->size, &first, &last);
    float sum = 0.0f;
    for (long i = first; i < last; i++)
        sum += a->in[i] * a->in[i];
    a->out[pi_core_id()] = sum;
}

void weighted_scaling_fp32_cl(void *weighted_scaling_args)
{
    const struct weighted_scaling_args *a = weighted_scaling_args;
    long first, last;
    pulp_core_block((long)a->size, &first, &last);
    for (long i = first; i < last; i++)
        a->out[i] = a->w[i] * (a->scaling_factor * a->in[i]);
}

void rmsnorm_parallelized_fp32(float *o, float *x, float *weight, float *buffer_n_cores, int size)
{
    struct sum_of_squares_args squares = {.out = buffer_n_cores, .in = x, .size = (unsigned int)size};
    pi_cl_team_fork(NUM_CORES, sum_of_squares_fp32_cl, &squares);
    float sum = 0.0f;
    for (int c = 0; c < NUM_CORES; c++)
        sum += buffer_n_cores[c];
    struct weighted_scaling_args scaling = {.out = o, .in = x, .w = weight,
                                            .scaling_factor = 1.0f / sqrtf(sum / (float)size + RMSNORM_EPSILON),
                                            .size = (unsigned int)size};
    pi_cl_team_fork(NUM_CORES, weighted_scaling_fp32_cl, &scaling);
}

#define NN_T float
#define NN_ARGS struct Nonorm_args
#define NN_FMA(x, g, b) ((x) * (g) + (b))
#include "pulp_nonorm_impl.h"

void pulp_nonorm_fp32_fw_cl(void *Nonorm_args)
{
    nonorm_fw(Nonorm_args);
}
