/*
 * pulp_optimizers_fp32.h: FP32 gradient descent of the fake library, with
 * the struct as an older published version has it: no weight_decay_lambda
 * (the published branch dnadalini-patch-4 has none; 7bfc760 has it). The
 * suite must find that with its field probe, run the cases without decay,
 * and report those with decay as unsupported.
 */
#ifndef PULP_OPTIMIZERS_FP32_H
#define PULP_OPTIMIZERS_FP32_H

#include "pulp_train_defines.h"

struct optim_args {
    struct blob *weights;
    struct blob *biases;
    float learning_rate;
    int use_biases;
};

/* w -= learning_rate * dw, and the same on the biases with use_biases; a
 * per-core body (the caller forks). */
void pulp_gradient_descent_fp32(void *optim_args);

#endif /* PULP_OPTIMIZERS_FP32_H */
