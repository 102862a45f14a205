/*
 * pulp_cast.h: casts between FP32 and the build's FP16 format (IEEE binary16
 * or bfloat16), element-wise; per-core bodies FORKED BY THE CALLER (core id
 * takes [id*b, (id+1)*b), b = ceil(size / NUM_CORES)).
 *   cast_fp16_tensor_to_fp32: exact.
 *   cast_fp32_tensor_to_fp16: rounded to nearest, ties to even; overflow
 *     gives +-inf, subnormals are kept (fp16_from_f32, pulp_fp16.h).
 */
#ifndef PULP_CAST_H
#define PULP_CAST_H

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

#endif /* PULP_CAST_H */
