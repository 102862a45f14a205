/*
 * pulp_mm_tiles_fp32.c: register-blocked FP32 matmul tiles and the slice
 * driver shared by the N-split and M-split kernels.
 *
 * A tile computes a U x V block of C over the whole K. Its K loop is written
 * for a simple in-order core without indexed or post-increment loads:
 *   - each A row has its own pointer, and so has each B column when B is
 *     transposed (M x K); a row-major B (K x M) instead gets one pointer per k
 *     of a loop step and its V columns are immediate offsets;
 *   - most tiles step K by 2, so the second k is an immediate offset too;
 *   - accumulators are scalars in registers, the loop has one branch, no
 *     index multiplication, and every pointer moves by a loop-invariant step.
 * With 4 x 4 that is 16 loads + 32 fmadd + 7 pointer/branch instructions per
 * two k (B K x M), about 1.7 instructions per multiply-accumulate.
 * Every element is summed over k = 0..K-1 in order from 0.0f, so all tiles
 * (and all kernels) round identically.
 */
#include "pulp_mm_tiles_fp32.h"
#include "pulp_mm_repeat.h"

/* ---- pieces of a tile; u = row, v = column, s = k offset within a step -- */

#define PTL_ACC(u, v) acc##u##_##v

#define PTL_DECL_ACC(v, u, _) float PTL_ACC(u, v) = 0.0f;
#define PTL_DECL_ROW(u, V, _) const float *a##u = a + (u) * K; PTL_S##V(PTL_DECL_ACC, u, ~)
#define PTL_INC_ROW(u, KU, _) a##u += KU;

/* B K x M ("bn"): pointer bk<s> -> B(k + s, j); columns are offsets. */
#define PTL_BN_DECL(s, _, __) const float *bk##s = b + (s) * M;
#define PTL_BN_INC(s, KU, _) bk##s += (KU) * M;
#define PTL_BN_LOAD(v, s, _) const float bv##v = bk##s[v];
/* B M x K ("bt"): pointer bc<v> -> B(k, j + v); the k offset is s. */
#define PTL_BT_DECL(v, _, __) const float *bc##v = b + (v) * K;
#define PTL_BT_INC(v, KU, _) bc##v += KU;
#define PTL_BT_LOAD(v, s, _) const float bv##v = bc##v[s];

#define PTL_MAC(v, u, _) PTL_ACC(u, v) += av * bv##v;
#define PTL_MAC_ROW(u, V, s) { const float av = a##u[s]; PTL_S##V(PTL_MAC, u, ~) }
#define PTL_STORE(v, u, _) c[(u) * M + (v)] = PTL_ACC(u, v);
#define PTL_STORE_ROW(u, V, _) PTL_S##V(PTL_STORE, u, ~)

/* One k of the tile at offset s from the current pointers. */
#define PTL_STEP_bn(U, V, s) { PTL_S##V(PTL_BN_LOAD, s, ~) PTL_R##U(PTL_MAC_ROW, V, s) }
#define PTL_STEP_bt(U, V, s) { PTL_S##V(PTL_BT_LOAD, s, ~) PTL_R##U(PTL_MAC_ROW, V, s) }
#define PTL_STEPS_1(U, V, L) PTL_STEP_##L(U, V, 0)
#define PTL_STEPS_2(U, V, L) PTL_STEP_##L(U, V, 0) PTL_STEP_##L(U, V, 1)

/* B pointers: one per k of a step (bn) or one per column (bt). */
#define PTL_BPTRS_bn(V, KU) PTL_R##KU(PTL_BN_DECL, ~, ~)
#define PTL_BPTRS_bt(V, KU) PTL_S##V(PTL_BT_DECL, ~, ~)
#define PTL_BINC_bn(V, KU) PTL_R##KU(PTL_BN_INC, KU, ~)
#define PTL_BINC_bt(V, KU) PTL_S##V(PTL_BT_INC, KU, ~)

/* tile_<U>x<V>[_k<KU>]_<L>: U x V block, K stepped by KU, B layout L.
 * a -> A(i, 0); b -> B(0, j) in layout L; c -> C(i, j); K, M: sizes. */
#define PTL_DEFINE_TILE(name, U, V, KU, L)                                               \
    static void name(const float *a, const float *b, float *c, int K, int M)             \
    {                                                                                    \
        PTL_R##U(PTL_DECL_ROW, V, ~)                                                     \
        PTL_BPTRS_##L(V, KU)                                                             \
        const float *const a_end = a + (K - K % (KU));                                   \
        while (a0 != a_end) {                                                            \
            PTL_STEPS_##KU(U, V, L)                                                      \
            PTL_R##U(PTL_INC_ROW, KU, ~)                                                 \
            PTL_BINC_##L(V, KU)                                                          \
        }                                                                                \
        if ((KU) == 2 && (K & 1))                                                        \
            PTL_STEP_##L(U, V, 0)                                                        \
        PTL_R##U(PTL_STORE_ROW, V, ~)                                                    \
        (void)M;                                                                         \
    }

#define PTL_DEFINE_TILE_PAIR(U, V, KU, sfx)                                              \
    PTL_DEFINE_TILE(tile_##U##x##V##sfx##_bn, U, V, KU, bn)                              \
    PTL_DEFINE_TILE(tile_##U##x##V##sfx##_bt, U, V, KU, bt)

PTL_DEFINE_TILE_PAIR(1, 1, 1, )
PTL_DEFINE_TILE_PAIR(1, 1, 2, _u2)
PTL_DEFINE_TILE_PAIR(1, 2, 2, )
PTL_DEFINE_TILE_PAIR(1, 4, 2, )
PTL_DEFINE_TILE_PAIR(1, 8, 2, )
PTL_DEFINE_TILE_PAIR(2, 1, 2, )
PTL_DEFINE_TILE_PAIR(4, 1, 2, )
PTL_DEFINE_TILE_PAIR(8, 1, 2, )
PTL_DEFINE_TILE_PAIR(2, 2, 2, )
PTL_DEFINE_TILE_PAIR(2, 4, 2, )
PTL_DEFINE_TILE_PAIR(4, 2, 2, )
PTL_DEFINE_TILE_PAIR(4, 4, 2, )

#define PTL_PAIR(name) {tile_##name##_bn, tile_##name##_bt}
/* Leftover rows use 1 x V, leftover columns U x 1, the corner 1 x 1. */
#define PTL_TILESET(U, V)                                                                \
    const struct ptl_mm_tileset_fp32 ptl_mm_fp32_tiles_##U##x##V = {                     \
        U, V, PTL_PAIR(U##x##V), PTL_PAIR(1x##V), PTL_PAIR(U##x1), PTL_PAIR(1x1)}

PTL_TILESET(1, 1);
PTL_TILESET(1, 2);
PTL_TILESET(1, 4);
PTL_TILESET(1, 8);
PTL_TILESET(2, 1);
PTL_TILESET(4, 1);
PTL_TILESET(8, 1);
PTL_TILESET(2, 2);
PTL_TILESET(2, 4);
PTL_TILESET(4, 2);
PTL_TILESET(4, 4);
const struct ptl_mm_tileset_fp32 ptl_mm_fp32_tiles_1x1_u2 = {
    1, 1, PTL_PAIR(1x1_u2), PTL_PAIR(1x1_u2), PTL_PAIR(1x1_u2), PTL_PAIR(1x1_u2)};

void ptl_mm_fp32_run(const struct matMul_args *args, const struct ptl_mm_tileset_fp32 *tiles,
                     int split_cols)
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
    const float *A = args->A, *B = args->B;
    float *C = args->C;

    int i = row0;
    for (; i + U <= row1; i += U) {
        const float *a = A + i * K;
        float *c = C + i * M;
        int j = col0;
        for (; j + V <= col1; j += V)
            tiles->main[t](a, B + j * b_col_step, c + j, K, M);
        for (; j < col1; j++)
            tiles->cols_left[t](a, B + j * b_col_step, c + j, K, M);
    }
    for (; i < row1; i++) {
        const float *a = A + i * K;
        float *c = C + i * M;
        int j = col0;
        for (; j + V <= col1; j += V)
            tiles->rows_left[t](a, B + j * b_col_step, c + j, K, M);
        for (; j < col1; j++)
            tiles->corner[t](a, B + j * b_col_step, c + j, K, M);
    }
}
