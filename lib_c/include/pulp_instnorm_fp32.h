/*
 * pulp_instnorm_fp32.h: FP32 instance normalization (batch 1, CHW), forward,
 * weight gradient and input gradient.
 *
 * C = input->C, D = input->H * input->W; x, y, dx, dy are C x D. gamma[c] =
 * coeff->data[c], beta[c] = coeff->data[C + c]; their gradients sit alike in
 * coeff->diff. EPSILON is 1e-10f (torch InstanceNorm2d(eps=1e-10, affine=True)).
 *
 * FW, freeze_running_params == 0, per channel, sums in index order:
 *   mu = (sum x) / D;  v = (sum x*x) / D - mu*mu + EPSILON, EPSILON if < 0;
 *   sigma = sqrtf(v); running_mean[c] = mu, running_var[c] = v,
 *   running_stdev[c] = sigma (overwritten, no momentum).
 * FW, frozen: mu, v, sigma are read from the running arrays, not written.
 *   y = gamma / sigma * (x - mu) + beta
 * WG (bw_param_grads), with the stored statistics:
 *   dgamma = (sum dy * (x - mu)) / sigma,  dbeta = sum dy   (overwritten)
 * IG (bw_input_grads), with the stored statistics:
 *   dx = gamma / (D * sigma) * (D * dy - sum dy - (x - mu) / v * sum (x - mu) * dy)
 * bw: WG then IG, each unless skip_wg_grad / skip_in_grad.
 *
 * The _cl calls fork NUM_CORES themselves; the parallelized bodies are the
 * per-core work (core id takes channels [id*b, (id+1)*b), b = ceil(C / NUM_CORES)).
 */
#ifndef PULP_INSTNORM_FP32_H
#define PULP_INSTNORM_FP32_H

#include "pulp_train_defines.h"

struct InstNorm_args {
    struct blob *input;
    struct blob *output;
    struct blob *coeff;
    float *running_mean;
    float *running_var;
    float *running_stdev;
    int freeze_running_params;
    int skip_wg_grad;
    int skip_in_grad;
};

void pulp_instnorm_fp32_fw_cl(void *InstNorm_args);
void pulp_instnorm_fp32_bw_cl(void *InstNorm_args);
void pulp_instnorm_fp32_bw_param_grads_cl(void *InstNorm_args);
void pulp_instnorm_fp32_bw_input_grads_cl(void *InstNorm_args);

void pulp_instnorm_parallelized_fp32_fw_cl(void *InstNorm_args);
void pulp_instnorm_parallelized_fp32_bw_param_grads_cl(void *InstNorm_args);
void pulp_instnorm_parallelized_fp32_bw_input_grads_cl(void *InstNorm_args);

#endif /* PULP_INSTNORM_FP32_H */
