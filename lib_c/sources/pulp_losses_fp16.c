/*
 * pulp_losses_fp16.c: FP16 losses (definitions in pulp_losses_fp32.h, the
 * FP16 arithmetic in pulp_losses_fp16.h). Single core.
 *
 * 1/N and 2/N: the binary32 quotient rounded to fp16. That double rounding
 * equals one rounding of the exact quotient q = k/N (k = 1, 2) for
 * N <= 2048: it could differ only if the binary32 quotient fell exactly on an
 * fp16 midpoint m = M * 2^-f (M odd, M < 2^12) with q != m; then
 * |q - m| = |k 2^f - N M| / (N 2^f) >= 1/(N 2^f), a relative distance
 * >= 1/(N M) > 2^-12 / N, more than binary32's 2^-24 for every N <= 2048.
 */
#include <math.h>

#include "pulp_losses_fp16.h"

static fp16 fp16_abs(fp16 x)
{
    return fp16_from_bits((uint16_t)(fp16_bits(x) & 0x7fffu));
}

static int fp16_less(fp16 a, fp16 b)
{
    return fp16_to_f32(a) < fp16_to_f32(b); /* exact conversions, exact order */
}

void pulp_MSELoss_fp16(void *loss_args_fp16)
{
    const struct loss_args_fp16 *a = loss_args_fp16;
    const int n = a->output->dim;
    const fp16 *o = a->output->data, *t = a->target;
    const fp16 inv_n = fp16_from_f32(1.0f / (float)n);
    fp16 loss = fp16_zero();
    for (int i = 0; i < n; i++) {
        const fp16 d = fp16_sub(t[i], o[i]);
        loss = fp16_add(loss, fp16_mul(fp16_mul(d, d), inv_n));
    }
    *a->wr_loss = loss;
}

void pulp_MSELoss_backward_fp16(void *loss_args_fp16)
{
    const struct loss_args_fp16 *a = loss_args_fp16;
    const int n = a->output->dim;
    const fp16 *o = a->output->data, *t = a->target;
    fp16 *g = a->output->diff;
    const fp16 two_n = fp16_from_f32(2.0f / (float)n);
    for (int i = 0; i < n; i++)
        g[i] = fp16_mul(fp16_sub(o[i], t[i]), two_n);
}

void pulp_L1Loss_fp16(void *loss_args_fp16)
{
    const struct loss_args_fp16 *a = loss_args_fp16;
    const int n = a->output->dim;
    const fp16 *o = a->output->data, *t = a->target;
    const fp16 inv_n = fp16_from_f32(1.0f / (float)n);
    fp16 loss = fp16_zero();
    for (int i = 0; i < n; i++)
        loss = fp16_add(loss, fp16_mul(fp16_abs(fp16_sub(t[i], o[i])), inv_n));
    *a->wr_loss = loss;
}

void pulp_L1Loss_backward_fp16(void *loss_args_fp16)
{
    const struct loss_args_fp16 *a = loss_args_fp16;
    const int n = a->output->dim;
    const fp16 *o = a->output->data, *t = a->target;
    fp16 *g = a->output->diff;
    const fp16 inv_n = fp16_from_f32(1.0f / (float)n);
    const fp16 minus_inv_n = fp16_from_bits((uint16_t)(fp16_bits(inv_n) ^ 0x8000u));
    for (int i = 0; i < n; i++)
        g[i] = fp16_less(t[i], o[i]) ? inv_n : (fp16_less(o[i], t[i]) ? minus_inv_n : fp16_zero());
}

static fp16 berhu_threshold_fp16(const struct berHu_loss_args_fp16 *a)
{
    const int n = a->output->dim;
    const fp16 *o = a->output->data, *t = a->target;
    fp16 max_d = fp16_zero();
    for (int i = 0; i < n; i++) {
        const fp16 d = fp16_abs(fp16_sub(o[i], t[i]));
        if (fp16_less(max_d, d))
            max_d = d;
    }
    return fp16_mul(a->alpha, max_d);
}

void pulp_berHuLoss_fp16(void *berHu_loss_args_fp16)
{
    const struct berHu_loss_args_fp16 *a = berHu_loss_args_fp16;
    const int n = a->output->dim;
    const fp16 *o = a->output->data, *t = a->target;
    const fp16 c = berhu_threshold_fp16(a);
    fp16 sum = fp16_zero();
    if (fp16_less(fp16_zero(), c)) {
        const fp16 c2 = fp16_mul(c, c), two_c = fp16_add(c, c);
        for (int i = 0; i < n; i++) {
            const fp16 d = fp16_abs(fp16_sub(o[i], t[i]));
            const fp16 term = fp16_less(d, c) ? d : fp16_div(fp16_add(fp16_mul(d, d), c2), two_c);
            sum = fp16_add(sum, term);
        }
    }
    *a->wr_loss = fp16_div(sum, fp16_from_f32((float)n));
}

void pulp_berHuLoss_backward_fp16(void *berHu_loss_args_fp16)
{
    const struct berHu_loss_args_fp16 *a = berHu_loss_args_fp16;
    const int n = a->output->dim;
    const fp16 *o = a->output->data, *t = a->target;
    fp16 *g = a->output->diff;
    const fp16 c = berhu_threshold_fp16(a);
    const int positive_c = fp16_less(fp16_zero(), c);
    const fp16 inv_n = fp16_from_f32(1.0f / (float)n);
    const fp16 minus_inv_n = fp16_from_bits((uint16_t)(fp16_bits(inv_n) ^ 0x8000u));
    const fp16 nc = fp16_mul(fp16_from_f32((float)n), c);
    for (int i = 0; i < n; i++) {
        const fp16 diff = fp16_sub(o[i], t[i]);
        const fp16 d = fp16_abs(diff);
        if (!positive_c || !fp16_less(fp16_zero(), d))
            g[i] = fp16_zero();
        else if (fp16_less(d, c))
            g[i] = fp16_less(fp16_zero(), diff) ? inv_n : minus_inv_n;
        else
            g[i] = fp16_div(diff, nc);
    }
}

/* Cross-entropy in binary32 on the fp16 inputs (exact conversions). */
static float ce_exp_sum_fp16(const fp16 *o, int n, float *max)
{
    float m = fp16_to_f32(o[0]);
    for (int i = 1; i < n; i++) {
        const float v = fp16_to_f32(o[i]);
        if (v > m)
            m = v;
    }
    float se = 0.0f;
    for (int i = 0; i < n; i++)
        se += expf(fp16_to_f32(o[i]) - m);
    *max = m;
    return se;
}

static float ce_target_sum_fp16(const fp16 *t, int n)
{
    float s = 0.0f;
    for (int i = 0; i < n; i++)
        s += fp16_to_f32(t[i]);
    return s == 0.0f ? 1.0f : s;
}

void pulp_CrossEntropyLoss_fp16(void *loss_args_fp16)
{
    const struct loss_args_fp16 *a = loss_args_fp16;
    const int n = a->output->dim;
    const fp16 *o = a->output->data, *t = a->target;
    float m;
    const float se = ce_exp_sum_fp16(o, n, &m);
    const float lse = logf(se) + m;
    const float s = ce_target_sum_fp16(t, n);
    float dot = 0.0f;
    for (int i = 0; i < n; i++)
        dot += fp16_to_f32(t[i]) * fp16_to_f32(o[i]);
    *a->wr_loss = fp16_from_f32(lse * s - dot);
}

void pulp_CrossEntropyLoss_backward_fp16(void *loss_args_fp16)
{
    const struct loss_args_fp16 *a = loss_args_fp16;
    const int n = a->output->dim;
    const fp16 *o = a->output->data, *t = a->target;
    fp16 *g = a->output->diff;
    float m;
    const float se = ce_exp_sum_fp16(o, n, &m);
    const float s = ce_target_sum_fp16(t, n);
    for (int i = 0; i < n; i++)
        g[i] = fp16_from_f32((expf(fp16_to_f32(o[i]) - m) / se) * s - fp16_to_f32(t[i]));
}
