/*
 * pulp_dropout_fp16.h: FP16 dropout: the contract of pulp_dropout_fp32.h on
 * fp16 probability, input and mask; x / (1 - p) and x * mask are computed in
 * binary32 (from the fp16 p) and rounded once to fp16.
 */
#ifndef PULP_DROPOUT_FP16_H
#define PULP_DROPOUT_FP16_H

#include "pulp_train_defines.h"
#include "pulp_random.h"

struct dropout_args_fp16 {
    fp16 probability;
    fp16 *input;
    int use_mask;
    fp16 *mask;
    int size;
    int seed;
};

void pulp_dropout_fp16_cl(void *dropout_args_fp16);

#endif /* PULP_DROPOUT_FP16_H */
