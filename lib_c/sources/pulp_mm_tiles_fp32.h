/*
 * pulp_mm_tiles_fp32.h (internal): the register-blocked tiles behind the FP32
 * matmul kernels, and the driver that walks one core's slice of C with them.
 */
#ifndef PULP_MM_TILES_FP32_H
#define PULP_MM_TILES_FP32_H

#include "pulp_matmul_fp32.h"

/* Computes a U x V block of C from the U rows of A at a and the V columns of
 * B at b (b points at element (k=0, column j) in either layout); K and M are
 * the product's sizes (A row stride K, C row stride M). */
typedef void (*ptl_mm_tile_fp32)(const float *a, const float *b, float *c, int K, int M);

/* The tiles one kernel needs, per B layout ([0] B is K x M, [1] B is M x K):
 * main U x V, leftover rows 1 x V, leftover columns U x 1, corner 1 x 1. */
struct ptl_mm_tileset_fp32 {
    int U, V;
    ptl_mm_tile_fp32 main[2], rows_left[2], cols_left[2], corner[2];
};

extern const struct ptl_mm_tileset_fp32 ptl_mm_fp32_tiles_1x1, ptl_mm_fp32_tiles_1x1_u2,
    ptl_mm_fp32_tiles_1x2, ptl_mm_fp32_tiles_1x4, ptl_mm_fp32_tiles_1x8,
    ptl_mm_fp32_tiles_2x1, ptl_mm_fp32_tiles_4x1, ptl_mm_fp32_tiles_8x1,
    ptl_mm_fp32_tiles_2x2, ptl_mm_fp32_tiles_2x4, ptl_mm_fp32_tiles_4x2,
    ptl_mm_fp32_tiles_4x4;

/* Computes this core's slice of C = A * B: the rows (split_cols == 0) or the
 * columns (split_cols != 0) of C are divided over NUM_CORES cores. */
void ptl_mm_fp32_run(const struct matMul_args *args, const struct ptl_mm_tileset_fp32 *tiles,
                     int split_cols);

#endif /* PULP_MM_TILES_FP32_H */
