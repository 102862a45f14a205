/*
 * pulp_train_defines.h: tensor structs and enums shared by every primitive.
 */
#ifndef PULP_TRAIN_DEFINES_H
#define PULP_TRAIN_DEFINES_H

#include "pmsis.h"
#include "pulp_fp16.h"

/* A tensor and its gradient. data and diff have dim elements each, laid out
 * C x H x W (CHW) unless a layer's HWC flag says H x W x C. */
struct blob {
    float *data;
    float *diff;
    int dim;
    int W;
    int H;
    int C;
};

/* FP16 version of struct blob. */
struct blob_fp16 {
    fp16 *data;
    fp16 *diff;
    int dim;
    int W;
    int H;
    int C;
};

/* Layer kinds, as passed to the matmul managers. */
enum {
    LAYER_CONV2D = 0,
    LAYER_DW_CONV = 1,
    LAYER_PW_CONV = 2,
    LAYER_LINEAR = 3,
};

/* Training steps, as passed to the matmul managers. */
enum {
    STEP_FW = 0,
    STEP_WGT_GRAD = 1,
    STEP_IN_GRAD = 2,
};

#endif /* PULP_TRAIN_DEFINES_H */
