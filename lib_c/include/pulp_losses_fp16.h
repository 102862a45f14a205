/*
 * pulp_losses_fp16.h: FP16 loss functions (MSE, L1, berHu, CrossEntropy),
 * forward and backward, on struct blob_fp16 tensors.
 *
 * Same definitions, single-core execution and outputs as pulp_losses_fp32.h.
 * Arithmetic:
 *   - MSE, L1 and berHu compute and accumulate in fp16 (pulp_fp16.h
 *     helpers, each operation rounded once); 1/N and 2/N are the binary32
 *     quotients rounded to fp16, which equals the correctly rounded fp16
 *     quotient for N <= 2048 (see pulp_losses_fp16.c).
 *   - CrossEntropy computes in binary32 (expf, logf) from the fp16 inputs and
 *     rounds the loss, or each gradient element, once to fp16.
 */
#ifndef PULP_LOSSES_FP16_H
#define PULP_LOSSES_FP16_H

#include "pulp_train_defines.h"

struct loss_args_fp16 {
    struct blob_fp16 *output;
    fp16 *target;
    fp16 *wr_loss;
};

struct berHu_loss_args_fp16 {
    struct blob_fp16 *output;
    fp16 *target;
    fp16 *wr_loss;
    fp16 alpha;
};

void pulp_MSELoss_fp16(void *loss_args_fp16);
void pulp_MSELoss_backward_fp16(void *loss_args_fp16);
void pulp_L1Loss_fp16(void *loss_args_fp16);
void pulp_L1Loss_backward_fp16(void *loss_args_fp16);
void pulp_berHuLoss_fp16(void *berHu_loss_args_fp16);
void pulp_berHuLoss_backward_fp16(void *berHu_loss_args_fp16);
void pulp_CrossEntropyLoss_fp16(void *loss_args_fp16);
void pulp_CrossEntropyLoss_backward_fp16(void *loss_args_fp16);

#endif /* PULP_LOSSES_FP16_H */
