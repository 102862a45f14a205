/*
 * pulp_train_defines.h: tensors, enums and the 16-bit type of the fake library.
 *
 * Fact 2: the toolchain types float16 / float16alt / v2f16 / v2s are used
 * here BEFORE pmsis.h is included. With the PULP toolchain they are compiler
 * built-ins; elsewhere the harness must force-include them.
 * fp16 is bfloat16 (float16alt, the upstream default) unless the build asks
 * for IEEE binary16 (the harness's -DPTL_FP16_IEEE).
 */
#ifndef PULP_TRAIN_DEFINES_H
#define PULP_TRAIN_DEFINES_H

#if defined(PTL_FP16_IEEE)
typedef float16 fp16;
#else
typedef float16alt fp16;
#endif

/* A SIMD lane pair and its shuffle mask, named before pmsis.h as well. */
typedef v2f16 fake_fp16_pair;
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
