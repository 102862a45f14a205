/*
 * pulp_losses_fp32.c: FP32 losses (definitions in pulp_losses_fp32.h).
 * Single core: no fork, no barrier.
 */
#include <math.h>

#include "pulp_losses_fp32.h"

void pulp_MSELoss(void *loss_args)
{
    const struct loss_args *a = loss_args;
    const int n = a->output->dim;
    const float *o = a->output->data, *t = a->target;
    const float inv_n = 1.0f / (float)n;
    float loss = 0.0f;
    for (int i = 0; i < n; i++) {
        const float d = t[i] - o[i];
        loss += (d * d) * inv_n;
    }
    *a->wr_loss = loss;
}

void pulp_MSELoss_backward(void *loss_args)
{
    const struct loss_args *a = loss_args;
    const int n = a->output->dim;
    const float *o = a->output->data, *t = a->target;
    float *g = a->output->diff;
    const float two_n = 2.0f / (float)n;
    for (int i = 0; i < n; i++)
        g[i] = (o[i] - t[i]) * two_n;
}

void pulp_L1Loss(void *loss_args)
{
    const struct loss_args *a = loss_args;
    const int n = a->output->dim;
    const float *o = a->output->data, *t = a->target;
    const float inv_n = 1.0f / (float)n;
    float loss = 0.0f;
    for (int i = 0; i < n; i++)
        loss += fabsf(t[i] - o[i]) * inv_n;
    *a->wr_loss = loss;
}

void pulp_L1Loss_backward(void *loss_args)
{
    const struct loss_args *a = loss_args;
    const int n = a->output->dim;
    const float *o = a->output->data, *t = a->target;
    float *g = a->output->diff;
    const float inv_n = 1.0f / (float)n;
    for (int i = 0; i < n; i++)
        g[i] = o[i] > t[i] ? inv_n : (o[i] < t[i] ? -inv_n : 0.0f);
}

/* c = alpha * max |o - t| */
static float berhu_threshold(const struct berHu_loss_args *a)
{
    const int n = a->output->dim;
    const float *o = a->output->data, *t = a->target;
    float max_d = 0.0f;
    for (int i = 0; i < n; i++) {
        const float d = fabsf(o[i] - t[i]);
        if (d > max_d)
            max_d = d;
    }
    return a->alpha * max_d;
}

void pulp_berHuLoss(void *berHu_loss_args)
{
    const struct berHu_loss_args *a = berHu_loss_args;
    const int n = a->output->dim;
    const float *o = a->output->data, *t = a->target;
    const float c = berhu_threshold(a);
    float sum = 0.0f;
    if (c > 0.0f) {
        const float c2 = c * c, two_c = 2.0f * c;
        for (int i = 0; i < n; i++) {
            const float d = fabsf(o[i] - t[i]);
            sum += d < c ? d : (d * d + c2) / two_c;
        }
    }
    *a->wr_loss = sum / (float)n;
}

void pulp_berHuLoss_backward(void *berHu_loss_args)
{
    const struct berHu_loss_args *a = berHu_loss_args;
    const int n = a->output->dim;
    const float *o = a->output->data, *t = a->target;
    float *g = a->output->diff;
    const float c = berhu_threshold(a);
    const float inv_n = 1.0f / (float)n;
    const float nc = (float)n * c;
    for (int i = 0; i < n; i++) {
        const float diff = o[i] - t[i];
        const float d = fabsf(diff);
        if (c <= 0.0f || diff == 0.0f)
            g[i] = 0.0f;
        else if (d < c)
            g[i] = diff > 0.0f ? inv_n : -inv_n;
        else
            g[i] = diff / nc;
    }
}

/* m = max o; returns sum expf(o - m) and sets *max. */
static float ce_exp_sum(const float *o, int n, float *max)
{
    float m = o[0];
    for (int i = 1; i < n; i++)
        if (o[i] > m)
            m = o[i];
    float se = 0.0f;
    for (int i = 0; i < n; i++)
        se += expf(o[i] - m);
    *max = m;
    return se;
}

/* S = sum t, taken as 1 when it is 0. */
static float ce_target_sum(const float *t, int n)
{
    float s = 0.0f;
    for (int i = 0; i < n; i++)
        s += t[i];
    return s == 0.0f ? 1.0f : s;
}

void pulp_CrossEntropyLoss(void *loss_args)
{
    const struct loss_args *a = loss_args;
    const int n = a->output->dim;
    const float *o = a->output->data, *t = a->target;
    float m;
    const float se = ce_exp_sum(o, n, &m);
    const float lse = logf(se) + m;
    const float s = ce_target_sum(t, n);
    float dot = 0.0f;
    for (int i = 0; i < n; i++)
        dot += t[i] * o[i];
    *a->wr_loss = lse * s - dot;
}

void pulp_CrossEntropyLoss_backward(void *loss_args)
{
    const struct loss_args *a = loss_args;
    const int n = a->output->dim;
    const float *o = a->output->data, *t = a->target;
    float *g = a->output->diff;
    float m;
    const float se = ce_exp_sum(o, n, &m);
    const float s = ce_target_sum(t, n);
    for (int i = 0; i < n; i++)
        g[i] = (expf(o[i] - m) / se) * s - t[i];
}
