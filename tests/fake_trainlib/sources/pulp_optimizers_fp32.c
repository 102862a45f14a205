/*
 * pulp_optimizers_fp32.c: FP32 gradient descent of the fake library. A
 * per-core body (the caller forks): the elements are split over the cores
 * in blocks of ceil(n / cores), as the API documents for such bodies.
 */
#include "pulp_optimizers_fp32.h"

static void descend(const struct blob *t, float learning_rate)
{
    const int n = t->dim, cores = NUM_CORES, block = (n + cores - 1) / cores;
    const int start = pi_core_id() * block;
    const int end = start + block < n ? start + block : n;
    for (int i = start; i < end; i++)
        t->data[i] -= learning_rate * t->diff[i];
}

void pulp_gradient_descent_fp32(void *optim_args)
{
    const struct optim_args *a = optim_args;
    descend(a->weights, a->learning_rate);
    if (a->use_biases)
        descend(a->biases, a->learning_rate);
}
