/*
 * pulp_losses_impl.h (internal): the losses, written once for both element
 * types (definitions and rounding in include/pulp_losses_fp32.h, the FP16
 * arithmetic in include/pulp_losses_fp16.h). Single core: no fork, no
 * barrier.
 *
 * Include it once per type after defining:
 *   LOSS_T                     element type
 *   LOSS_ARGS, BERHU_ARGS      struct loss_args[_fp16], struct berHu_loss_args[_fp16]
 *   LOSS_TO_F(v), LOSS_FROM_F(f)  LOSS_T -> float (exact), float -> LOSS_T (rounded)
 *   LOSS_ZERO                  zero of LOSS_T
 *   LOSS_ADD, LOSS_SUB, LOSS_MUL, LOSS_DIV (a, b)  each rounded once
 *   LOSS_ABS(x), LOSS_NEG(x)   |x| and -x (exact)
 *   LOSS_LESS(a, b)            a < b
 *   LOSS_NOT_POSITIVE(c)       berHu's gradient is zero for this c
 *   LOSS_FLAT(diff)            ... and where o - t is this diff
 *                              (the two types differ on a NaN: see the .c files)
 *   LOSS_HOIST_NEG             1: berHu's backward negates 1/N once before its
 *                              loop (fp16); 0: where it is used (float: GCC
 *                              lays that loop out one jump shorter)
 *   LOSS_NAME(loss)            the public name (pulp_<loss>[_fp16])
 * It defines the eight public functions. MSE, L1 and berHu compute in
 * LOSS_T; cross-entropy computes in binary32 and rounds each result once.
 */
#include <math.h>

void LOSS_NAME(MSELoss)(void *loss_args)
{
    const LOSS_ARGS *a = loss_args;
    const int n = a->output->dim;
    const LOSS_T *o = a->output->data, *t = a->target;
    const LOSS_T inv_n = LOSS_FROM_F(1.0f / (float)n);
    LOSS_T loss = LOSS_ZERO;
    for (int i = 0; i < n; i++) {
        const LOSS_T d = LOSS_SUB(t[i], o[i]);
        loss = LOSS_ADD(loss, LOSS_MUL(LOSS_MUL(d, d), inv_n));
    }
    *a->wr_loss = loss;
}

void LOSS_NAME(MSELoss_backward)(void *loss_args)
{
    const LOSS_ARGS *a = loss_args;
    const int n = a->output->dim;
    const LOSS_T *o = a->output->data, *t = a->target;
    LOSS_T *g = a->output->diff;
    const LOSS_T two_n = LOSS_FROM_F(2.0f / (float)n);
    for (int i = 0; i < n; i++)
        g[i] = LOSS_MUL(LOSS_SUB(o[i], t[i]), two_n);
}

void LOSS_NAME(L1Loss)(void *loss_args)
{
    const LOSS_ARGS *a = loss_args;
    const int n = a->output->dim;
    const LOSS_T *o = a->output->data, *t = a->target;
    const LOSS_T inv_n = LOSS_FROM_F(1.0f / (float)n);
    LOSS_T loss = LOSS_ZERO;
    for (int i = 0; i < n; i++)
        loss = LOSS_ADD(loss, LOSS_MUL(LOSS_ABS(LOSS_SUB(t[i], o[i])), inv_n));
    *a->wr_loss = loss;
}

void LOSS_NAME(L1Loss_backward)(void *loss_args)
{
    const LOSS_ARGS *a = loss_args;
    const int n = a->output->dim;
    const LOSS_T *o = a->output->data, *t = a->target;
    LOSS_T *g = a->output->diff;
    const LOSS_T inv_n = LOSS_FROM_F(1.0f / (float)n);
    const LOSS_T minus_inv_n = LOSS_NEG(inv_n);
    for (int i = 0; i < n; i++)
        g[i] = LOSS_LESS(t[i], o[i]) ? inv_n : (LOSS_LESS(o[i], t[i]) ? minus_inv_n : LOSS_ZERO);
}

/* c = alpha * max |o - t| */
static LOSS_T berhu_threshold(const BERHU_ARGS *a)
{
    const int n = a->output->dim;
    const LOSS_T *o = a->output->data, *t = a->target;
    LOSS_T max_d = LOSS_ZERO;
    for (int i = 0; i < n; i++) {
        const LOSS_T d = LOSS_ABS(LOSS_SUB(o[i], t[i]));
        if (LOSS_LESS(max_d, d))
            max_d = d;
    }
    return LOSS_MUL(a->alpha, max_d);
}

void LOSS_NAME(berHuLoss)(void *berHu_loss_args)
{
    const BERHU_ARGS *a = berHu_loss_args;
    const int n = a->output->dim;
    const LOSS_T *o = a->output->data, *t = a->target;
    const LOSS_T c = berhu_threshold(a);
    LOSS_T sum = LOSS_ZERO;
    if (LOSS_LESS(LOSS_ZERO, c)) {
        const LOSS_T c2 = LOSS_MUL(c, c), two_c = LOSS_ADD(c, c);
        for (int i = 0; i < n; i++) {
            const LOSS_T d = LOSS_ABS(LOSS_SUB(o[i], t[i]));
            sum = LOSS_ADD(sum, LOSS_LESS(d, c) ? d : LOSS_DIV(LOSS_ADD(LOSS_MUL(d, d), c2), two_c));
        }
    }
    *a->wr_loss = LOSS_DIV(sum, LOSS_FROM_F((float)n));
}

void LOSS_NAME(berHuLoss_backward)(void *berHu_loss_args)
{
    const BERHU_ARGS *a = berHu_loss_args;
    const int n = a->output->dim;
    const LOSS_T *o = a->output->data, *t = a->target;
    LOSS_T *g = a->output->diff;
    const LOSS_T c = berhu_threshold(a);
    const int no_grad = LOSS_NOT_POSITIVE(c);
    const LOSS_T inv_n = LOSS_FROM_F(1.0f / (float)n);
#if LOSS_HOIST_NEG
    const LOSS_T minus_inv_n = LOSS_NEG(inv_n);
#define BERHU_MINUS_INV_N minus_inv_n
#else
#define BERHU_MINUS_INV_N LOSS_NEG(inv_n)
#endif
    const LOSS_T nc = LOSS_MUL(LOSS_FROM_F((float)n), c);
    for (int i = 0; i < n; i++) {
        const LOSS_T diff = LOSS_SUB(o[i], t[i]);
        const LOSS_T d = LOSS_ABS(diff);
        if (no_grad || LOSS_FLAT(diff))
            g[i] = LOSS_ZERO;
        else if (LOSS_LESS(d, c))
            g[i] = LOSS_LESS(LOSS_ZERO, diff) ? inv_n : BERHU_MINUS_INV_N;
        else
            g[i] = LOSS_DIV(diff, nc);
    }
#undef BERHU_MINUS_INV_N
}

/* Cross-entropy, in binary32 on the inputs' values (exact conversions). */

/* m = max o; returns sum expf(o - m) and sets *max. */
static float ce_exp_sum(const LOSS_T *o, int n, float *max)
{
    float m = LOSS_TO_F(o[0]);
    for (int i = 1; i < n; i++) {
        const float v = LOSS_TO_F(o[i]);
        if (v > m)
            m = v;
    }
    float se = 0.0f;
    for (int i = 0; i < n; i++)
        se += expf(LOSS_TO_F(o[i]) - m);
    *max = m;
    return se;
}

/* S = sum t, taken as 1 when it is 0. */
static float ce_target_sum(const LOSS_T *t, int n)
{
    float s = 0.0f;
    for (int i = 0; i < n; i++)
        s += LOSS_TO_F(t[i]);
    return s == 0.0f ? 1.0f : s;
}

void LOSS_NAME(CrossEntropyLoss)(void *loss_args)
{
    const LOSS_ARGS *a = loss_args;
    const int n = a->output->dim;
    const LOSS_T *o = a->output->data, *t = a->target;
    float m;
    const float se = ce_exp_sum(o, n, &m);
    const float lse = logf(se) + m;
    const float s = ce_target_sum(t, n);
    float dot = 0.0f;
    for (int i = 0; i < n; i++)
        dot += LOSS_TO_F(t[i]) * LOSS_TO_F(o[i]);
    *a->wr_loss = LOSS_FROM_F(lse * s - dot);
}

void LOSS_NAME(CrossEntropyLoss_backward)(void *loss_args)
{
    const LOSS_ARGS *a = loss_args;
    const int n = a->output->dim;
    const LOSS_T *o = a->output->data, *t = a->target;
    LOSS_T *g = a->output->diff;
    float m;
    const float se = ce_exp_sum(o, n, &m);
    const float s = ce_target_sum(t, n);
    for (int i = 0; i < n; i++)
        g[i] = LOSS_FROM_F((expf(LOSS_TO_F(o[i]) - m) / se) * s - LOSS_TO_F(t[i]));
}
