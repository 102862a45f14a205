/*
 * pulp_cast_fp16.h: the casts between FP32 and the fake library's fp16, as
 * the published API names them (shared/TRAINLIB_API_MORE.md, "Tensor
 * utilities"): per-core bodies that the caller forks.
 */
#ifndef PULP_CAST_FP16_H
#define PULP_CAST_FP16_H

#include "pulp_train_defines.h"

struct cast_16t32_args {
    fp16 *source;
    float *destination;
    int size;
};

struct cast_32t16_args {
    float *source;
    fp16 *destination;
    int size;
};

void cast_fp16_tensor_to_fp32(void *cast_16t32_args);
void cast_fp32_tensor_to_fp16(void *cast_32t16_args);

#endif /* PULP_CAST_FP16_H */
