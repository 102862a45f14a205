/*
 * pulp_instnorm_fp32.c: FP32 instance normalization (pulp_instnorm_fp32.h).
 */
#include <math.h>

#include "pulp_instnorm_fp32.h"

#define INSTNORM_EPSILON 1e-10f

/* This core's channels [*first, *last) of C, blocks of ceil(C / NUM_CORES). */
static void instnorm_channels(int C, int *first, int *last)
{
    const int cores = NUM_CORES, id = pi_core_id();
    const int b = (C + cores - 1) / cores;
    const int lo = id * b, hi = lo + b;
    *first = lo < C ? lo : C;
    *last = hi < C ? hi : C;
}

void pulp_instnorm_parallelized_fp32_fw_cl(void *InstNorm_args)
{
    const struct InstNorm_args *a = InstNorm_args;
    const int C = a->input->C, D = a->input->H * a->input->W;
    const float *gamma = a->coeff->data, *beta = a->coeff->data + C;
    int first, last;
    instnorm_channels(C, &first, &last);
    for (int c = first; c < last; c++) {
        const float *x = a->input->data + (long)c * D;
        float *y = a->output->data + (long)c * D;
        float mu, sigma;
        if (a->freeze_running_params) {
            mu = a->running_mean[c];
            sigma = a->running_stdev[c];
        } else {
            float sum = 0.0f, sum_sq = 0.0f;
            for (int i = 0; i < D; i++) {
                sum += x[i];
                sum_sq += x[i] * x[i];
            }
            mu = sum / (float)D;
            float v = sum_sq / (float)D - mu * mu + INSTNORM_EPSILON;
            if (v < 0.0f)
                v = INSTNORM_EPSILON;
            sigma = sqrtf(v);
            a->running_mean[c] = mu;
            a->running_var[c] = v;
            a->running_stdev[c] = sigma;
        }
        const float scale = gamma[c] / sigma;
        for (int i = 0; i < D; i++)
            y[i] = scale * (x[i] - mu) + beta[c];
    }
}

void pulp_instnorm_parallelized_fp32_bw_param_grads_cl(void *InstNorm_args)
{
    const struct InstNorm_args *a = InstNorm_args;
    const int C = a->input->C, D = a->input->H * a->input->W;
    int first, last;
    instnorm_channels(C, &first, &last);
    for (int c = first; c < last; c++) {
        const float *x = a->input->data + (long)c * D, *dy = a->output->diff + (long)c * D;
        const float mu = a->running_mean[c];
        float dot = 0.0f, sum_dy = 0.0f;
        for (int i = 0; i < D; i++) {
            dot += dy[i] * (x[i] - mu);
            sum_dy += dy[i];
        }
        a->coeff->diff[c] = dot / a->running_stdev[c];
        a->coeff->diff[C + c] = sum_dy;
    }
}

void pulp_instnorm_parallelized_fp32_bw_input_grads_cl(void *InstNorm_args)
{
    const struct InstNorm_args *a = InstNorm_args;
    const int C = a->input->C, D = a->input->H * a->input->W;
    int first, last;
    instnorm_channels(C, &first, &last);
    for (int c = first; c < last; c++) {
        const float *x = a->input->data + (long)c * D, *dy = a->output->diff + (long)c * D;
        float *dx = a->input->diff + (long)c * D;
        const float mu = a->running_mean[c], v = a->running_var[c], sigma = a->running_stdev[c];
        float sum_dy = 0.0f, dot = 0.0f;
        for (int i = 0; i < D; i++) {
            sum_dy += dy[i];
            dot += (x[i] - mu) * dy[i];
        }
        const float scale = a->coeff->data[c] / ((float)D * sigma);
        for (int i = 0; i < D; i++)
            dx[i] = scale * ((float)D * dy[i] - sum_dy - (x[i] - mu) / v * dot);
    }
}

void pulp_instnorm_fp32_fw_cl(void *InstNorm_args)
{
    pi_cl_team_fork(NUM_CORES, pulp_instnorm_parallelized_fp32_fw_cl, InstNorm_args);
}

void pulp_instnorm_fp32_bw_param_grads_cl(void *InstNorm_args)
{
    pi_cl_team_fork(NUM_CORES, pulp_instnorm_parallelized_fp32_bw_param_grads_cl, InstNorm_args);
}

void pulp_instnorm_fp32_bw_input_grads_cl(void *InstNorm_args)
{
    pi_cl_team_fork(NUM_CORES, pulp_instnorm_parallelized_fp32_bw_input_grads_cl, InstNorm_args);
}

void pulp_instnorm_fp32_bw_cl(void *InstNorm_args)
{
    const struct InstNorm_args *a = InstNorm_args;
    if (!a->skip_wg_grad)
        pulp_instnorm_fp32_bw_param_grads_cl(InstNorm_args);
    if (!a->skip_in_grad)
        pulp_instnorm_fp32_bw_input_grads_cl(InstNorm_args);
}
