/*
 * pulp_mm_tiles_fp32.h (internal): the register-blocked tiles behind the FP32
 * matmul kernels, and the driver that walks one core's slice of C with them.
 */
#ifndef PULP_MM_TILES_FP32_H
#define PULP_MM_TILES_FP32_H

#include "pulp_matmul_fp32.h"

/* A row: computes `blocks` (>= 1) U x V blocks of C side by side, rows
 * i..i+U-1, columns j, j+V, ... a points at A(i, 0), b at B's element
 * (k = 0, column j) in either layout, c at C(i, j); K (>= 1) and M are the
 * product's sizes (A row stride K, C row stride M). */
typedef void (*ptl_mm_row_fp32)(const float *a, const float *b, float *c, int K, int M, int blocks);

/* A tile: the same for `panels` (>= 1) row panels of U rows, one below the
 * other, each `blocks` blocks wide. */
typedef void (*ptl_mm_tile_fp32)(const float *a, const float *b, float *c, int K, int M, int panels,
                                 int blocks);

/* The tiles one kernel needs. With K >= long_k, a core's slice is cut into
 * row panels of the heights in order (as many of the first as fit, then of
 * the next, ...), and each panel into blocks of the widths in the same way:
 * tile[layout][h][w] computes the heights[h] x widths[w] blocks, unrolled
 * over K, one call for all of them. A shorter K takes the rows
 * short_row[layout][u][v], one call per row panel: the U x V block
 * (u = v = 0), U x 1 (v = 1), 1 x V (u = 1) and 1 x 1, K by 2. Layout 0: B
 * is K x M, 1: M x K. */
struct ptl_mm_tileset_fp32 {
    int long_k;                /* the K from which the unrolled tiles run */
    int heights[4], widths[4]; /* descending, ending in 1, padded with 1 */
    ptl_mm_tile_fp32 tile[2][4][4];
    ptl_mm_row_fp32 short_row[2][2][2];
};

extern const struct ptl_mm_tileset_fp32 ptl_mm_fp32_tiles_1x1, ptl_mm_fp32_tiles_1x1_u2,
    ptl_mm_fp32_tiles_1x2, ptl_mm_fp32_tiles_1x4, ptl_mm_fp32_tiles_1x8,
    ptl_mm_fp32_tiles_2x1, ptl_mm_fp32_tiles_4x1, ptl_mm_fp32_tiles_8x1,
    ptl_mm_fp32_tiles_2x2, ptl_mm_fp32_tiles_2x4, ptl_mm_fp32_tiles_4x2,
    ptl_mm_fp32_tiles_4x4, ptl_mm_fp32_tiles_5x5, ptl_mm_fp32_tiles_4x6,
    ptl_mm_fp32_tiles_6x4, ptl_mm_fp32_tiles_4x6_k4, ptl_mm_fp32_tiles_5x5_k16,
    ptl_mm_fp32_tiles_4x6_spread;

/* Computes this core's slice of C = A * B: the rows (split_cols == 0) or the
 * columns (split_cols != 0) of C are divided over NUM_CORES cores. */
void ptl_mm_fp32_run(const struct matMul_args *args, const struct ptl_mm_tileset_fp32 *tiles,
                     int split_cols);

#endif /* PULP_MM_TILES_FP32_H */
