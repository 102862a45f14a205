/*
 * pulp_matmul_fp32.c: FP32 matmul kernels that split the N rows of C over
 * the cores (layout and contract in pulp_matmul_fp32.h). Each kernel is its
 * tile shape applied to this core's rows by ptl_mm_fp32_run.
 */
#include "pulp_mm_tiles_fp32.h"

/* C[N x M] = A[N x K] * B (K x M, or M x K if trans_B); rows split. 1 x 1. */
void mm(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_1x1, 0); }

/* As mm, with the K loop unrolled by 2. */
void mm_u2(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_1x1_u2, 0); }

/* As mm, 1 row x 2 columns of C per inner loop. */
void mm_unroll_1x2(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_1x2, 0); }

/* As mm, 1 row x 4 columns of C per inner loop. */
void mm_unroll_1x4(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_1x4, 0); }

/* As mm, 1 row x 8 columns of C per inner loop. */
void mm_unroll_1x8(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_1x8, 0); }

/* As mm, 2 rows x 1 column of C per inner loop. */
void mm_unroll_2x1(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_2x1, 0); }

/* As mm, 4 rows x 1 column of C per inner loop. */
void mm_unroll_4x1(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_4x1, 0); }

/* As mm, 8 rows x 1 column of C per inner loop. */
void mm_unroll_8x1(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_8x1, 0); }

/* As mm, 2 rows x 2 columns of C per inner loop. */
void mm_unroll_2x2(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_2x2, 0); }

/* As mm, 2 rows x 4 columns of C per inner loop. */
void mm_unroll_2x4(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_2x4, 0); }

/* As mm, 4 rows x 2 columns of C per inner loop. */
void mm_unroll_4x2(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_4x2, 0); }

/* As mm, 4 rows x 4 columns of C per inner loop. */
void mm_unroll_4x4(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_4x4, 0); }

/* lib_c's own: as mm, 5 rows x 5 columns of C per inner loop. */
void mm_unroll_5x5(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_5x5, 0); }

/* lib_c's own: as mm, 4 rows x 6 columns of C per inner loop. */
void mm_unroll_4x6(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_4x6, 0); }

/* lib_c's own: as mm, 6 rows x 4 columns of C per inner loop. */
void mm_unroll_6x4(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_6x4, 0); }

/* lib_c's own: as mm_unroll_4x6, with 4 k per loop pass instead of 2. */
void mm_unroll_4x6_k4(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_4x6_k4, 0); }

/* lib_c's own: as mm_unroll_5x5, with 16 k per loop pass and the first pass
 * apart (its 5x4, 4x5 and 4x4 edge blocks too). */
void mm_unroll_5x5_k16(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_5x5_k16, 0); }
/* lib_c's own: as mm_unroll_4x6, its B row-major tile with the loads and
 * adds between fmadds, for cores that share an FPU (pulp_mm_tiles_fp32.c). */
void mm_unroll_4x6_spread(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_4x6_spread, 0); }
