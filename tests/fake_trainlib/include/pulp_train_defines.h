/*
 * pulp_train_defines.h: tensors, enums and the 16-bit type of the fake library.
 *
 * Shaped as the published pulp_train_defines.h is at 7bfc760: before
 * anything includes pmsis.h, fp16 is float16alt (bfloat16, whatever format
 * the build asks for) and v2f16 is the library's own vector of it, which
 * compiles only where float16alt is a scalar arithmetic type (clang 19's
 * __bf16; not GCC 12). The harness must supply float16alt and v2s, and must
 * declare no v2f16 of its own.
 */
#ifndef PULP_TRAIN_DEFINES_H
#define PULP_TRAIN_DEFINES_H

typedef float16alt fp16;                                    // the 16-bit format
typedef fp16 v2f16 __attribute__((vector_size (4)));        // its SIMD lane pair

/* The shuffle mask type, named before pmsis.h as well. */
typedef v2s fake_lane_mask;

#include "pmsis.h"

/* Tensor: data, its gradient, element count and CHW sizes. */
struct blob {
    float *data;
    float *diff;
    int dim;
    int W;
    int H;
    int C;
};

struct blob_fp16 {
    fp16 *data;
    fp16 *diff;
    int dim;
    int W;
    int H;
    int C;
};

enum { LAYER_CONV2D = 0, LAYER_DW_CONV = 1, LAYER_PW_CONV = 2, LAYER_LINEAR = 3 };
enum { STEP_FW = 0, STEP_WGT_GRAD = 1, STEP_IN_GRAD = 2 };

#endif /* PULP_TRAIN_DEFINES_H */
