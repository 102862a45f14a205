/*
 * pulp_instnorm_impl.h (internal): the InstanceNorm bodies for both element
 * types (contract in include/pulp_instnorm_fp32.h). The arithmetic is
 * binary32 on the elements' values; results and stored statistics are
 * rounded once to the element type. Define before including:
 *   IN_T, IN_ARGS      element type, struct InstNorm_args[_fp16]
 *   IN_F(v), IN_H(f)   element -> float (exact), float -> element (rounded)
 *   IN_NAME(step)      the public name of a parallelized body
 */
#include "pulp_core_block.h"
#include <math.h>

#define INSTNORM_EPSILON 1e-10f

/* Each core takes its block of channels (pulp_core_block: ceil(C / NUM_CORES)). */
void IN_NAME(fw)(void *InstNorm_args)
{
    const IN_ARGS *a = InstNorm_args;
    const int C = a->input->C, D = a->input->H * a->input->W;
    const IN_T *gamma = a->coeff->data, *beta = a->coeff->data + C;
    long first, last;
    pulp_core_block(C, &first, &last);
    for (int c = first; c < last; c++) {
        const IN_T *x = a->input->data + (long)c * D;
        IN_T *y = a->output->data + (long)c * D;
        float mu, sigma;
        if (a->freeze_running_params) {
            mu = IN_F(a->running_mean[c]);
            sigma = IN_F(a->running_stdev[c]);
        } else {
            float sum = 0.0f, sum_sq = 0.0f;
            for (int i = 0; i < D; i++) {
                sum += IN_F(x[i]);
                sum_sq += IN_F(x[i]) * IN_F(x[i]);
            }
            mu = sum / (float)D;
            float v = sum_sq / (float)D - mu * mu + INSTNORM_EPSILON;
            if (v < 0.0f)
                v = INSTNORM_EPSILON;
            sigma = sqrtf(v);
            a->running_mean[c] = IN_H(mu);
            a->running_var[c] = IN_H(v);
            a->running_stdev[c] = IN_H(sigma);
        }
        const float scale = IN_F(gamma[c]) / sigma;
        for (int i = 0; i < D; i++)
            y[i] = IN_H(scale * (IN_F(x[i]) - mu) + IN_F(beta[c]));
    }
}

void IN_NAME(bw_param_grads)(void *InstNorm_args)
{
    const IN_ARGS *a = InstNorm_args;
    const int C = a->input->C, D = a->input->H * a->input->W;
    long first, last;
    pulp_core_block(C, &first, &last);
    for (int c = first; c < last; c++) {
        const IN_T *x = a->input->data + (long)c * D, *dy = a->output->diff + (long)c * D;
        const float mu = IN_F(a->running_mean[c]);
        float dot = 0.0f, sum_dy = 0.0f;
        for (int i = 0; i < D; i++) {
            dot += IN_F(dy[i]) * (IN_F(x[i]) - mu);
            sum_dy += IN_F(dy[i]);
        }
        a->coeff->diff[c] = IN_H(dot / IN_F(a->running_stdev[c]));
        a->coeff->diff[C + c] = IN_H(sum_dy);
    }
}

void IN_NAME(bw_input_grads)(void *InstNorm_args)
{
    const IN_ARGS *a = InstNorm_args;
    const int C = a->input->C, D = a->input->H * a->input->W;
    long first, last;
    pulp_core_block(C, &first, &last);
    for (int c = first; c < last; c++) {
        const IN_T *x = a->input->data + (long)c * D, *dy = a->output->diff + (long)c * D;
        IN_T *dx = a->input->diff + (long)c * D;
        const float mu = IN_F(a->running_mean[c]), v = IN_F(a->running_var[c]), sigma = IN_F(a->running_stdev[c]);
        float sum_dy = 0.0f, dot = 0.0f;
        for (int i = 0; i < D; i++) {
            sum_dy += IN_F(dy[i]);
            dot += (IN_F(x[i]) - mu) * IN_F(dy[i]);
        }
        const float scale = IN_F(a->coeff->data[c]) / ((float)D * sigma);
        for (int i = 0; i < D; i++)
            dx[i] = IN_H(scale * ((float)D * IN_F(dy[i]) - sum_dy - (IN_F(x[i]) - mu) / v * dot));
    }
}

