/*
 * pulp_optimizers_fp32.h: FP32 plain gradient descent (SGD), the only
 * optimizer of the API.
 *
 * Per element of weights (n = weights->dim; w = weights->data,
 * g = weights->diff), with lr = learning_rate, lambda = weight_decay_lambda:
 *   lambda == 0:  w = w - lr * g
 *   otherwise:    g = g + lambda * w  (the decayed gradient stays in diff)
 *                 w = w - lr * g
 * Each product and each sum is rounded once (a compiler may fuse a product
 * into the following sum). With use_biases == 1 the same update runs on
 * biases (n = biases->dim); with 0, biases is not read.
 *
 * Forked BY THE CALLER: pi_cl_team_fork(NUM_CORES, pulp_gradient_descent_fp32,
 * &args). Core id updates [id*b, (id+1)*b) clipped to n, b = ceil(n /
 * NUM_CORES), for the weights and for the biases separately. No barrier.
 */
#ifndef PULP_OPTIMIZERS_FP32_H
#define PULP_OPTIMIZERS_FP32_H

#include "pulp_train_defines.h"

struct optim_args {
    struct blob *weights;
    struct blob *biases;
    float learning_rate;
    float weight_decay_lambda;
    int use_biases;
};

/* One SGD step on weights (and biases), in place; per-core body. */
void pulp_gradient_descent_fp32(void *optim_args);

#endif /* PULP_OPTIMIZERS_FP32_H */
