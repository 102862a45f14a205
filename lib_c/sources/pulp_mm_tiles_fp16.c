/*
 * pulp_mm_tiles_fp16.c: register-blocked FP16 matmul tiles and the slice
 * driver shared by the FP16 kernels.
 *
 * Same structure as pulp_mm_tiles_fp32.c (one pointer per A row and per
 * transposed-B column, K stepped by 2 with immediate offsets, scalar
 * accumulators). Arithmetic goes through fp16_fma / v2f16_fma, so every
 * element is rounded to fp16 after each k, as on the device, and summed over
 * k = 0..K-1 in order from zero: all tiles round identically.
 * SIMD tiles hold pairs of adjacent columns of C in v2f16 lanes: a row-major
 * B supplies each pair with one 2-element load, a transposed B by packing
 * two columns.
 */
#include "pulp_mm_tiles_fp16.h"
#include "pulp_mm_repeat.h"

#define PTL_ACC(u, v) acc##u##_##v

#if PTL_FP16_IS_NATIVE || !defined(__GNUC__)
#define tile_fma fp16_fma
#define tile_vfma v2f16_fma
#else
/* Software fp16: one out-of-line copy of the emulated fma per file keeps
 * every tile small; the call costs a few instructions next to the tens of the
 * emulation, while inlining it would add its whole body per MAC. */
static __attribute__((noinline)) fp16 tile_fma(fp16 a, fp16 b, fp16 c)
{
    return fp16_fma(a, b, c);
}
static inline __attribute__((always_inline)) v2f16 tile_vfma(v2f16 a, v2f16 b, v2f16 c)
{
    return v2f16_pack(tile_fma(v2f16_lo(a), v2f16_lo(b), v2f16_lo(c)),
                      tile_fma(v2f16_hi(a), v2f16_hi(b), v2f16_hi(c)));
}
#endif

/* ---- scalar tiles: U rows x 1 column ------------------------------------- */

#define PTL_DECL_ROW(u, _, __) const fp16 *a##u = a + (u) * K; fp16 PTL_ACC(u, 0) = fp16_zero();
#define PTL_INC_ROW(u, KU, _) a##u += KU;
#define PTL_MAC1(u, s, _) PTL_ACC(u, 0) = tile_fma(a##u[s], bv, PTL_ACC(u, 0));
#define PTL_STORE1(u, _, __) c[(u) * M] = PTL_ACC(u, 0);

/* One k of a U x 1 tile at offset s; b0 -> B(k, j) and b_ks is the distance
 * from B(k, j) to B(k + 1, j). */
#define PTL_STEP1(U, s) { const fp16 bv = b0[(s) * b_ks]; PTL_R##U(PTL_MAC1, s, ~) }

/* tile_<U>x1[_k1]_<L>: U x 1 block, K stepped by KU; b_ks is M for B K x M
 * and 1 for B M x K, a compile-time constant in the second case. */
#define PTL_DEFINE_TILE1(name, U, KU, B_KS)                                              \
    static void name(const fp16 *a, const fp16 *b, fp16 *c, int K, int M)                \
    {                                                                                    \
        PTL_R##U(PTL_DECL_ROW, ~, ~)                                                     \
        const int b_ks = (B_KS);                                                         \
        const fp16 *b0 = b;                                                              \
        const fp16 *const a_end = a + (K - K % (KU));                                    \
        while (a0 != a_end) {                                                            \
            PTL_STEP1(U, 0)                                                              \
            if ((KU) == 2)                                                               \
                PTL_STEP1(U, 1)                                                          \
            PTL_R##U(PTL_INC_ROW, KU, ~)                                                 \
            b0 += (KU) * b_ks;                                                           \
        }                                                                                \
        if ((KU) == 2 && (K & 1))                                                        \
            PTL_STEP1(U, 0)                                                              \
        PTL_R##U(PTL_STORE1, ~, ~)                                                       \
        (void)M;                                                                         \
    }

#define PTL_DEFINE_TILE1_PAIR(U, KU)                                                     \
    PTL_DEFINE_TILE1(tile_##U##x1_bn, U, KU, M)                                          \
    PTL_DEFINE_TILE1(tile_##U##x1_bt, U, KU, 1)

PTL_DEFINE_TILE1_PAIR(1, 1)
PTL_DEFINE_TILE1_PAIR(2, 2)
PTL_DEFINE_TILE1_PAIR(4, 2)
PTL_DEFINE_TILE1_PAIR(8, 2)

/* ---- SIMD tiles: U rows x P column pairs --------------------------------- */

#define PTL_DECL_VACC(p, u, _) v2f16 PTL_ACC(u, p) = v2f16_zero();
#define PTL_DECL_VROW(u, P, _) const fp16 *a##u = a + (u) * K; PTL_S##P(PTL_DECL_VACC, u, ~)

/* B K x M: pointer bk<s> -> B(k + s, j); pair p is at offset 2p. */
#define PTL_BN_DECL(s, _, __) const fp16 *bk##s = b + (s) * M;
#define PTL_BN_INC(s, _, __) bk##s += 2 * M;
#define PTL_BN_LOAD(p, s, _) const v2f16 bv##p = v2f16_load(bk##s + 2 * (p));
/* B M x K: pointers bl<p>, bh<p> -> B(k, j + 2p), B(k, j + 2p + 1). */
#define PTL_BT_DECL(p, _, __) const fp16 *bl##p = b + (2 * (p)) * K, *bh##p = bl##p + K;
#define PTL_BT_INC(p, _, __) bl##p += 2; bh##p += 2;
#define PTL_BT_LOAD(p, s, _) const v2f16 bv##p = v2f16_pack(bl##p[s], bh##p[s]);

#define PTL_VMAC(p, u, _) PTL_ACC(u, p) = tile_vfma(av, bv##p, PTL_ACC(u, p));
#define PTL_VMAC_ROW(u, P, s) { const v2f16 av = v2f16_splat(a##u[s]); PTL_S##P(PTL_VMAC, u, ~) }
#define PTL_VSTORE(p, u, _)                                                              \
    c[(u) * M + 2 * (p)] = v2f16_lo(PTL_ACC(u, p));                                      \
    c[(u) * M + 2 * (p) + 1] = v2f16_hi(PTL_ACC(u, p));
#define PTL_VSTORE_ROW(u, P, _) PTL_S##P(PTL_VSTORE, u, ~)

#define PTL_VSTEP_bn(U, P, s) { PTL_S##P(PTL_BN_LOAD, s, ~) PTL_R##U(PTL_VMAC_ROW, P, s) }
#define PTL_VSTEP_bt(U, P, s) { PTL_S##P(PTL_BT_LOAD, s, ~) PTL_R##U(PTL_VMAC_ROW, P, s) }
#define PTL_VBPTRS_bn(P) PTL_R2(PTL_BN_DECL, ~, ~)
#define PTL_VBPTRS_bt(P) PTL_S##P(PTL_BT_DECL, ~, ~)
#define PTL_VBINC_bn(P) PTL_R2(PTL_BN_INC, ~, ~)
#define PTL_VBINC_bt(P) PTL_S##P(PTL_BT_INC, ~, ~)

/* tile_simd_<U>x<2P>_<L>: U x 2P block in v2f16 pairs, K stepped by 2. */
#define PTL_DEFINE_VTILE(name, U, P, L)                                                  \
    static void name(const fp16 *a, const fp16 *b, fp16 *c, int K, int M)                \
    {                                                                                    \
        PTL_R##U(PTL_DECL_VROW, P, ~)                                                    \
        PTL_VBPTRS_##L(P)                                                                \
        const fp16 *const a_end = a + (K & ~1);                                          \
        while (a0 != a_end) {                                                            \
            PTL_VSTEP_##L(U, P, 0)                                                       \
            PTL_VSTEP_##L(U, P, 1)                                                       \
            PTL_R##U(PTL_INC_ROW, 2, ~)                                                  \
            PTL_VBINC_##L(P)                                                             \
        }                                                                                \
        if (K & 1)                                                                       \
            PTL_VSTEP_##L(U, P, 0)                                                       \
        PTL_R##U(PTL_VSTORE_ROW, P, ~)                                                   \
    }

#define PTL_DEFINE_VTILE_PAIR(U, V, P)                                                   \
    PTL_DEFINE_VTILE(tile_simd_##U##x##V##_bn, U, P, bn)                                 \
    PTL_DEFINE_VTILE(tile_simd_##U##x##V##_bt, U, P, bt)

PTL_DEFINE_VTILE_PAIR(1, 4, 2)
PTL_DEFINE_VTILE_PAIR(2, 4, 2)
PTL_DEFINE_VTILE_PAIR(1, 8, 4)
PTL_DEFINE_VTILE_PAIR(4, 8, 4)

/* ---- tile sets ----------------------------------------------------------- */

#define PTL_PAIR(name) {tile_##name##_bn, tile_##name##_bt}

const struct ptl_mm_tileset_fp16 ptl_mm_fp16_tiles_1x1 = {
    1, 1, PTL_PAIR(1x1), PTL_PAIR(1x1), PTL_PAIR(1x1), PTL_PAIR(1x1)};
const struct ptl_mm_tileset_fp16 ptl_mm_fp16_tiles_2x1 = {
    2, 1, PTL_PAIR(2x1), PTL_PAIR(1x1), PTL_PAIR(2x1), PTL_PAIR(1x1)};
const struct ptl_mm_tileset_fp16 ptl_mm_fp16_tiles_4x1 = {
    4, 1, PTL_PAIR(4x1), PTL_PAIR(1x1), PTL_PAIR(4x1), PTL_PAIR(1x1)};
const struct ptl_mm_tileset_fp16 ptl_mm_fp16_tiles_8x1 = {
    8, 1, PTL_PAIR(8x1), PTL_PAIR(1x1), PTL_PAIR(8x1), PTL_PAIR(1x1)};
/* SIMD: leftover rows keep the pairs, leftover columns fall back to scalar. */
const struct ptl_mm_tileset_fp16 ptl_mm_fp16_tiles_simd_2x4 = {
    2, 4, PTL_PAIR(simd_2x4), PTL_PAIR(simd_1x4), PTL_PAIR(2x1), PTL_PAIR(1x1)};
const struct ptl_mm_tileset_fp16 ptl_mm_fp16_tiles_simd_4x8 = {
    4, 8, PTL_PAIR(simd_4x8), PTL_PAIR(simd_1x8), PTL_PAIR(4x1), PTL_PAIR(1x1)};

void ptl_mm_fp16_run(const struct matMul_args_fp16 *args,
                     const struct ptl_mm_tileset_fp16 *tiles, int split_cols)
{
    const int N = args->N, M = args->M, K = args->K;
    const int total = split_cols ? M : N;
    const int cores = NUM_CORES;
    const int chunk = (total + cores - 1) / cores;
    const int first = pi_core_id() * chunk;
    const int last = first + chunk < total ? first + chunk : total;
    if (first >= last)
        return;
    const int row0 = split_cols ? 0 : first, row1 = split_cols ? N : last;
    const int col0 = split_cols ? first : 0, col1 = split_cols ? last : M;

    const int t = args->trans_B ? 1 : 0;
    const int b_col_step = t ? K : 1; /* distance between columns of B */
    const int U = tiles->U, V = tiles->V;
    const fp16 *A = args->A, *B = args->B;
    fp16 *C = args->C;

    int i = row0;
    for (; i + U <= row1; i += U) {
        const fp16 *a = A + i * K;
        fp16 *c = C + i * M;
        int j = col0;
        for (; j + V <= col1; j += V)
            tiles->main[t](a, B + j * b_col_step, c + j, K, M);
        for (; j < col1; j++)
            tiles->cols_left[t](a, B + j * b_col_step, c + j, K, M);
    }
    for (; i < row1; i++) {
        const fp16 *a = A + i * K;
        fp16 *c = C + i * M;
        int j = col0;
        for (; j + V <= col1; j += V)
            tiles->rows_left[t](a, B + j * b_col_step, c + j, K, M);
        for (; j < col1; j++)
            tiles->corner[t](a, B + j * b_col_step, c + j, K, M);
    }
}
