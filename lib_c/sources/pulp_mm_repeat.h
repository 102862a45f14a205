/*
 * pulp_mm_repeat.h (internal): preprocessor repetition for the matmul tiles.
 *
 * The tiles keep their U x V accumulators in named scalar variables
 * (acc0_0, acc0_1, ...) written out by these macros rather than in arrays
 * indexed by unrolled loops: whether an array survives in registers depends
 * on each compiler's unrolling and scalarisation order (GCC and clang differ,
 * and both have been seen to spill), while named scalars always stay in
 * registers when there are enough of them.
 *
 * PTL_Rn(m, x, y) expands m(0, x, y) ... m(n-1, x, y). PTL_Sn does the same
 * inside an m of PTL_R, and PTL_Kn around both (a macro cannot expand
 * itself): the tiles repeat k steps with PTL_K, rows with PTL_R and columns
 * with PTL_S.
 */
#ifndef PULP_MM_REPEAT_H
#define PULP_MM_REPEAT_H

#define PTL_R1(m, x, y) m(0, x, y)
#define PTL_R2(m, x, y) PTL_R1(m, x, y) m(1, x, y)
#define PTL_R4(m, x, y) PTL_R2(m, x, y) m(2, x, y) m(3, x, y)
#define PTL_R5(m, x, y) PTL_R4(m, x, y) m(4, x, y)
#define PTL_R6(m, x, y) PTL_R5(m, x, y) m(5, x, y)
#define PTL_R8(m, x, y) PTL_R6(m, x, y) m(6, x, y) m(7, x, y)

#define PTL_S1(m, x, y) m(0, x, y)
#define PTL_S2(m, x, y) PTL_S1(m, x, y) m(1, x, y)
#define PTL_S4(m, x, y) PTL_S2(m, x, y) m(2, x, y) m(3, x, y)
#define PTL_S5(m, x, y) PTL_S4(m, x, y) m(4, x, y)
#define PTL_S6(m, x, y) PTL_S5(m, x, y) m(5, x, y)
#define PTL_S8(m, x, y) PTL_S6(m, x, y) m(6, x, y) m(7, x, y)

#define PTL_K1(m, x, y) m(0, x, y)
#define PTL_K2(m, x, y) PTL_K1(m, x, y) m(1, x, y)
#define PTL_K4(m, x, y) PTL_K2(m, x, y) m(2, x, y) m(3, x, y)
#define PTL_K8(m, x, y) PTL_K4(m, x, y) m(4, x, y) m(5, x, y) m(6, x, y) m(7, x, y)
#define PTL_K16(m, x, y)                                                                 \
    PTL_K8(m, x, y) m(8, x, y) m(9, x, y) m(10, x, y) m(11, x, y) m(12, x, y) m(13, x, y) \
        m(14, x, y) m(15, x, y)

#endif /* PULP_MM_REPEAT_H */
