/*
 * pulp_optimizers_fp16.c: FP16 gradient descent (pulp_optimizers_fp16.h).
 * Per-core body: each core updates its own block; the caller forks.
 */
#include "pulp_optimizers_fp16.h"
#include "pulp_core_block.h"

/* This core's block [*first, *last) of n elements, blocks of ceil(n / NUM_CORES). */
static void sgd_update_fp16(struct blob_fp16 *p, fp16 lr, fp16 lambda)
{
    long first, last;
    pulp_core_block(p->dim, &first, &last);
    fp16 *w = p->data, *g = p->diff;
    if (fp16_to_f32(lambda) == 0.0f) {
        for (int i = first; i < last; i++)
            w[i] = fp16_sub(w[i], fp16_mul(lr, g[i]));
    } else {
        for (int i = first; i < last; i++) {
            g[i] = fp16_add(g[i], fp16_mul(lambda, w[i]));
            w[i] = fp16_sub(w[i], fp16_mul(lr, g[i]));
        }
    }
}

void pulp_gradient_descent_fp16(void *optim_args_fp16)
{
    const struct optim_args_fp16 *a = optim_args_fp16;
    sgd_update_fp16(a->weights, a->learning_rate, a->weight_decay_lambda);
    if (a->use_biases == 1)
        sgd_update_fp16(a->biases, a->learning_rate, a->weight_decay_lambda);
}
