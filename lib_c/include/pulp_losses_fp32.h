/*
 * pulp_losses_fp32.h: FP32 loss functions, forward (the loss value) and
 * backward (its gradient with respect to the network output).
 *
 * Every loss runs on ONE core (call it from a single core, not from a team).
 * With N = output->dim, o = output->data and t = target (N elements each):
 *   - forward writes only *wr_loss (one element);
 *   - backward overwrites only output->diff (N elements).
 * Sums run in index order.
 *
 *   MSE:   loss = sum_i (1/N) (t_i - o_i)^2   (each term scaled, then added)
 *          d_i  = (2/N) (o_i - t_i)
 *   L1:    loss = sum_i (1/N) |t_i - o_i|
 *          d_i  = sign(o_i - t_i) / N, 0 where o_i == t_i
 *   berHu: d_i = |o_i - t_i|, c = alpha * max_i d_i,
 *          term_i = d_i if d_i < c, else (d_i^2 + c^2) / (2c);
 *          loss = (sum_i term_i) / N;
 *          grad_i = sign(o_i - t_i) / N if d_i < c, else (o_i - t_i) / (N c);
 *          c == 0 (o == t everywhere): loss 0 and gradient 0.
 *   CrossEntropy: o are raw logits, t a one-hot or soft target.
 *          m = max o, lse = logf(sum_i expf(o_i - m)) + m, S = sum_i t_i
 *          (S == 0 is taken as 1); loss = lse * S - sum_i t_i o_i (no 1/N);
 *          grad_i = softmax(o)_i * S - t_i. The max subtraction keeps expf
 *          from overflowing on large logits.
 *
 * Rounding, as the golden references count it (golden/losses.py): 1/N and
 * 2/N are binary32 quotients rounded once; MSE's term is
 * fl(fl(d*d) * fl(1/N)); L1's fl(|d| * fl(1/N)); berHu divides the sum by N
 * once at the end.
 */
#ifndef PULP_LOSSES_FP32_H
#define PULP_LOSSES_FP32_H

#include "pulp_train_defines.h"

struct loss_args {
    struct blob *output; /* o in output->data, its gradient in output->diff (N = output->dim) */
    float *target;       /* t, N elements */
    float *wr_loss;      /* the loss, one element (forward only) */
};

struct berHu_loss_args {
    struct blob *output;
    float *target;
    float *wr_loss;
    float alpha; /* c = alpha * max |o - t| */
};

/* MSE forward: *wr_loss = sum (1/N)(t - o)^2. */
void pulp_MSELoss(void *loss_args);
/* MSE backward: output->diff = (2/N)(o - t). */
void pulp_MSELoss_backward(void *loss_args);
/* L1 forward: *wr_loss = sum (1/N)|t - o|. */
void pulp_L1Loss(void *loss_args);
/* L1 backward: output->diff = sign(o - t)/N (0 where equal). */
void pulp_L1Loss_backward(void *loss_args);
/* berHu forward (berHu_loss_args): see above. */
void pulp_berHuLoss(void *berHu_loss_args);
/* berHu backward (berHu_loss_args): see above. */
void pulp_berHuLoss_backward(void *berHu_loss_args);
/* Cross-entropy forward on logits: *wr_loss = lse * S - sum t o. */
void pulp_CrossEntropyLoss(void *loss_args);
/* Cross-entropy backward: output->diff = softmax(o) * S - t. */
void pulp_CrossEntropyLoss_backward(void *loss_args);

#endif /* PULP_LOSSES_FP32_H */
