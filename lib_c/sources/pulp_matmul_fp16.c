/*
 * pulp_matmul_fp16.c: the FP16 matmul kernels (layout and contract in
 * pulp_matmul_fp16.h). Each kernel is its tile shape applied to this core's
 * rows (mm_*) or columns (mm_M_*) by ptl_mm_fp16_run.
 */
#include "pulp_mm_tiles_fp16.h"

/* C[N x M] = A[N x K] * B (K x M, or M x K if trans_B); rows split. 1 x 1. */
void mm_fp16(void *matMul_args_fp16) { ptl_mm_fp16_run(matMul_args_fp16, &ptl_mm_fp16_tiles_1x1, 0); }

/* As mm_fp16 with the columns split over the cores. */
void mm_M_fp16(void *matMul_args_fp16) { ptl_mm_fp16_run(matMul_args_fp16, &ptl_mm_fp16_tiles_1x1, 1); }

/* Rows split; 2 rows x 4 columns (2 v2f16 pairs) of C per inner loop. */
void mm_fp16_SIMD_2x4(void *matMul_args_fp16)
{
    ptl_mm_fp16_run(matMul_args_fp16, &ptl_mm_fp16_tiles_simd_2x4, 0);
}

/* Rows split; 4 rows x 8 columns (4 v2f16 pairs) of C per inner loop. */
void mm_fp16_SIMD_4x8(void *matMul_args_fp16)
{
    ptl_mm_fp16_run(matMul_args_fp16, &ptl_mm_fp16_tiles_simd_4x8, 0);
}

/* Columns split; 2 rows x 4 columns (2 v2f16 pairs) of C per inner loop. */
void mm_M_fp16_SIMD_2x4(void *matMul_args_fp16)
{
    ptl_mm_fp16_run(matMul_args_fp16, &ptl_mm_fp16_tiles_simd_2x4, 1);
}

/* Columns split; 4 rows x 8 columns (4 v2f16 pairs) of C per inner loop. */
void mm_M_fp16_SIMD_4x8(void *matMul_args_fp16)
{
    ptl_mm_fp16_run(matMul_args_fp16, &ptl_mm_fp16_tiles_simd_4x8, 1);
}

/* Rows split; 2 rows x 1 column of C per inner loop. */
void mm_fp16_unroll_2x1(void *matMul_args_fp16) { ptl_mm_fp16_run(matMul_args_fp16, &ptl_mm_fp16_tiles_2x1, 0); }

/* Rows split; 4 rows x 1 column of C per inner loop. */
void mm_fp16_unroll_4x1(void *matMul_args_fp16) { ptl_mm_fp16_run(matMul_args_fp16, &ptl_mm_fp16_tiles_4x1, 0); }

/* Rows split; 8 rows x 1 column of C per inner loop. */
void mm_fp16_unroll_8x1(void *matMul_args_fp16) { ptl_mm_fp16_run(matMul_args_fp16, &ptl_mm_fp16_tiles_8x1, 0); }
