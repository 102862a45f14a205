/*
 * pulp_optimizers_fp16.h: FP16 plain gradient descent; the update, the core
 * split and the in-place weight decay of pulp_optimizers_fp32.h on struct
 * blob_fp16 tensors, with fp16 learning rate and lambda. Every product and
 * sum is rounded once to fp16 (pulp_fp16.h helpers; with a native fp16 type a
 * compiler may fuse a product into the following sum, one rounding less).
 * Forked by the caller: pi_cl_team_fork(NUM_CORES, pulp_gradient_descent_fp16, &args).
 */
#ifndef PULP_OPTIMIZERS_FP16_H
#define PULP_OPTIMIZERS_FP16_H

#include "pulp_train_defines.h"

struct optim_args_fp16 {
    struct blob_fp16 *weights;
    struct blob_fp16 *biases;
    fp16 learning_rate;
    fp16 weight_decay_lambda;
    int use_biases;
};

/* One SGD step on weights (and biases), in place; per-core body. */
void pulp_gradient_descent_fp16(void *optim_args_fp16);

#endif /* PULP_OPTIMIZERS_FP16_H */
