/*
 * pulp_mm_tiles_fp16.h (internal): the register-blocked tiles behind the FP16
 * matmul kernels, and the driver that walks one core's slice of C with them.
 */
#ifndef PULP_MM_TILES_FP16_H
#define PULP_MM_TILES_FP16_H

#include "pulp_matmul_fp16.h"

/* Computes a U x V block of C from the U rows of A at a and the V columns of
 * B at b (b points at element (k=0, column j) in either layout); K and M are
 * the product's sizes (A row stride K, C row stride M). */
typedef void (*ptl_mm_tile_fp16)(const fp16 *a, const fp16 *b, fp16 *c, int K, int M);

/* The tiles one kernel needs, per B layout ([0] B is K x M, [1] B is M x K):
 * main U x V, leftover rows 1 x V, leftover columns U x 1, corner 1 x 1. */
struct ptl_mm_tileset_fp16 {
    int U, V;
    ptl_mm_tile_fp16 main[2], rows_left[2], cols_left[2], corner[2];
};

extern const struct ptl_mm_tileset_fp16 ptl_mm_fp16_tiles_1x1, ptl_mm_fp16_tiles_2x1,
    ptl_mm_fp16_tiles_4x1, ptl_mm_fp16_tiles_8x1, ptl_mm_fp16_tiles_simd_2x4,
    ptl_mm_fp16_tiles_simd_4x8;

/* Computes this core's slice of C = A * B: the rows (split_cols == 0) or the
 * columns (split_cols != 0) of C are divided over NUM_CORES cores. */
void ptl_mm_fp16_run(const struct matMul_args_fp16 *args,
                     const struct ptl_mm_tileset_fp16 *tiles, int split_cols);

#endif /* PULP_MM_TILES_FP16_H */
