/*
 * pulp_optimizers_fp32.c: FP32 gradient descent (pulp_optimizers_fp32.h).
 * Per-core body: each core updates its own block; the caller forks.
 */
#include "pulp_optimizers_fp32.h"
#include "pulp_core_block.h"

/* This core's block [*first, *last) of n elements, blocks of ceil(n / NUM_CORES). */
static void sgd_update(struct blob *p, float lr, float lambda)
{
    long first, last;
    pulp_core_block(p->dim, &first, &last);
    float *w = p->data, *g = p->diff;
    if (lambda == 0.0f) {
        for (int i = first; i < last; i++)
            w[i] = w[i] - lr * g[i];
    } else {
        for (int i = first; i < last; i++) {
            g[i] = g[i] + lambda * w[i];
            w[i] = w[i] - lr * g[i];
        }
    }
}

void pulp_gradient_descent_fp32(void *optim_args)
{
    const struct optim_args *a = optim_args;
    sgd_update(a->weights, a->learning_rate, a->weight_decay_lambda);
    if (a->use_biases == 1)
        sgd_update(a->biases, a->learning_rate, a->weight_decay_lambda);
}
