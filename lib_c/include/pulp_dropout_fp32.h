/*
 * pulp_dropout_fp32.h: FP32 dropout, in place on input[size]; a per-core
 * body FORKED BY THE CALLER (core id takes [id*b, (id+1)*b), b = ceil(size /
 * NUM_CORES)). probability == 0 leaves the input unchanged. Element i:
 *   use_mask:  x *= mask[i]
 *   else:      r = pulp_generate_float_seed(seed + i) (pulp_random.h);
 *              x = r > probability ? x / (1 - probability) : 0
 */
#ifndef PULP_DROPOUT_FP32_H
#define PULP_DROPOUT_FP32_H

#include "pulp_train_defines.h"
#include "pulp_random.h"

struct dropout_args_fp32 {
    float probability;
    float *input;
    int use_mask;
    float *mask;
    int size;
    int seed;
};

void pulp_dropout_fp32_cl(void *dropout_args_fp32);

#endif /* PULP_DROPOUT_FP32_H */
