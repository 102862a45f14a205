/*
 * pulp_mm_tiles_fp32.c: register-blocked FP32 matmul tiles and the slice
 * driver shared by the N-split and M-split kernels.
 *
 * A tile computes blocks of U x V elements of C, side by side along a row
 * panel, each over the whole K. Its K loop is written for a simple in-order
 * core without indexed or post-increment loads (rv32imf):
 *   - each A row has its own pointer, and the k steps of one loop pass are
 *     immediate offsets from it;
 *   - a row-major B (K x M) has one pointer that moves by M after each k, and
 *     the V columns are immediate offsets from it; a transposed B (M x K)
 *     has one pointer per column, with k as the offset, like A;
 *   - accumulators are scalars in registers, and the loop has one branch.
 * So one k costs U + V loads and U * V fmadd, plus one add for B's pointer
 * when B is row-major; per loop pass of KU k, one add per other pointer and
 * the branch (lib_c/README.md: the floor). K is done in K / KU passes, then
 * straight code for each bit of K % KU. With a long K, one call computes
 * every block of one pair of size classes (all its row panels); with a short
 * K, one call computes one row panel's blocks.
 *
 * Every element is summed over k = 0..K-1 in order from 0.0f, so all tiles
 * and all kernels round identically.
 */
#include "pulp_mm_tiles_fp32.h"
#include "pulp_mm_repeat.h"

#include <limits.h>

/* From this K on a core takes the unrolled tiles; below it, the short ones:
 * the unrolled tiles set up and save more registers than a short K repays
 * (measured on the suite's shapes: at K = 16 the short ones are faster). */
#define PTL_MM_LONG_K 32

/* How many k a loop pass takes, by block size. A PULP cluster core fetches
 * from a 512-byte L0 instruction cache (GVSOC's pulp-open: 8 sets x 4 ways x
 * 16 bytes): a loop body that outgrows it refills from the shared cache on
 * every pass. A 5x5 k step is about 130 bytes, so the large blocks take 2 k
 * per pass, the 4x4 and smaller ones 4. Measured on GVSOC, 64x64x64 on one
 * core: 5x5 with 16 k per pass ran at 2.5 cycles per instruction, with 4 at
 * 1.21, with 2 at 1.05. QEMU counts instructions only, and would favour
 * longer passes (lib_c/README.md). */
#define PTL_KU_BIG 2   /* 20 or more accumulators */
#define PTL_KU_MID 4   /* 8 to 16 */
#define PTL_KU_SMALL 4 /* fewer */

/* GCC's first scheduling pass hoists the loads of later k steps above the
 * fmadds of earlier ones, and with 29 to 31 of the 32 FP registers taken by
 * the 5x5, 4x6 and 6x4 blocks, that spills (RV32 GCC 12, 5x5 with B
 * row-major: a 2-k pass of 90 instructions, 6 of them fsw to the stack, is 80
 * without it). The second pass, after register allocation, still runs. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-schedule-insns")
#endif

/* ---- pieces of a tile; u = row, v = column, s = k offset within a pass -- */

#define PTL_ACC(u, v) acc##u##_##v

#define PTL_DECL_ACC(v, u, _) float PTL_ACC(u, v);
#define PTL_DECL_ROW(u, V, _) const float *a##u = a + (u) * K; PTL_S##V(PTL_DECL_ACC, u, ~)
#define PTL_INC_ROW(u, n, _) a##u += n;

/* B K x M ("bn"): bk -> B(k, j); a step loads V columns and moves bk by M. */
#define PTL_bn_DECL(V) const float *bk = bj;
#define PTL_BN_LOAD(v, s, _) const float bv##v = bk[v];
#define PTL_bn_INC(V, n)
#define PTL_bn_NEXT(V) (V)
/* B M x K ("bt"): bc<v> -> B(k, j + v); the k offset is s, as for A. */
#define PTL_BT_PTR(v, _, __) const float *bc##v = bj + (v) * K;
#define PTL_bt_DECL(V) PTL_S##V(PTL_BT_PTR, ~, ~)
#define PTL_BT_LOAD(v, s, _) const float bv##v = bc##v[s];
#define PTL_BT_MOVE(v, n, _) bc##v += n;
#define PTL_bt_INC(V, n) PTL_S##V(PTL_BT_MOVE, n, ~)
#define PTL_bt_NEXT(V) ((V) * K)

#define PTL_MAC(v, u, _) PTL_ACC(u, v) += av * bv##v;
#define PTL_MAC_ROW(u, V, s) { const float av = a##u[s]; PTL_S##V(PTL_MAC, u, ~) }
/* k = 0 setting the accumulators: 0.0f + a * b is one fmadd onto a zero
 * register where the compiler contracts (as acc = 0.0f; acc += a * b was),
 * an fmul and an fadd where it does not: the same value either way, -0.0f
 * included. */
#define PTL_SET(v, u, _) PTL_ACC(u, v) = av * bv##v + 0.0f;
#define PTL_SET_ROW(u, V, s) { const float av = a##u[s]; PTL_S##V(PTL_SET, u, ~) }
#define PTL_ZERO(v, u, _) PTL_ACC(u, v) = 0.0f;
#define PTL_ZERO_ROW(u, V, _) PTL_S##V(PTL_ZERO, u, ~)
#define PTL_STORE(v, u, _) cu[v] = PTL_ACC(u, v);
#define PTL_STORE_ROW(u, V, _) { float *const cu = cj + (u) * M; PTL_S##V(PTL_STORE, u, ~) }

/* One k at offset s from the current pointers (U, V packed as one argument);
 * ROW is PTL_MAC_ROW, or PTL_SET_ROW for a k = 0 that sets the accumulators. */
#define PTL_STEP_WITH_bn(ROW, s, U, V) { PTL_S##V(PTL_BN_LOAD, s, ~) bk += M; PTL_R##U(ROW, V, s) }
#define PTL_STEP_WITH_bt(ROW, s, U, V) { PTL_S##V(PTL_BT_LOAD, s, ~) PTL_R##U(ROW, V, s) }
#define PTL_STEP_bn(s, U, V) PTL_STEP_WITH_bn(PTL_MAC_ROW, s, U, V)
#define PTL_STEP_bt(s, U, V) PTL_STEP_WITH_bt(PTL_MAC_ROW, s, U, V)
/* n k steps, then every pointer moved past them. */
#define PTL_PASS(n, U, V, L)                                                             \
    PTL_K##n(PTL_STEP_##L, U, V) PTL_R##U(PTL_INC_ROW, n, ~) PTL_##L##_INC(V, n)
/* The k left after the loop, fewer than KU: one straight pass per bit. */
#define PTL_REST_1(U, V, L)
#define PTL_REST_2(U, V, L) if (rest & 1) { PTL_PASS(1, U, V, L) }
#define PTL_REST_4(U, V, L) if (rest & 2) { PTL_PASS(2, U, V, L) } PTL_REST_2(U, V, L)
#define PTL_REST_8(U, V, L) if (rest & 4) { PTL_PASS(4, U, V, L) } PTL_REST_4(U, V, L)
#define PTL_REST_16(U, V, L) if (rest & 8) { PTL_PASS(8, U, V, L) } PTL_REST_8(U, V, L)

/* How a block's accumulators start: `zero`, and the loop takes all K; or
 * `first_k`, k = 0 apart setting them, and the loop takes the other K - 1;
 * or `first_pass`, the loop's first pass apart, its k = 0 setting them, and
 * the loop takes the other K - KU. first_pass needs K >= 2 KU. */
#define PTL_PEELED_zero(KU) 0
#define PTL_PEELED_first_k(KU) 1
#define PTL_PEELED_first_pass(KU) (KU)
#define PTL_START_zero(U, V, KU, L) PTL_R##U(PTL_ZERO_ROW, V, ~)
#define PTL_START_first_k(U, V, KU, L)                                                   \
    PTL_STEP_WITH_##L(PTL_SET_ROW, 0, U, V) PTL_R##U(PTL_INC_ROW, 1, ~) PTL_##L##_INC(V, 1)
#define PTL_FIRST_ROW(u, V, s) if ((s) == 0) PTL_SET_ROW(u, V, s) else PTL_MAC_ROW(u, V, s)
#define PTL_FIRST_STEP_bn(s, U, V) PTL_STEP_WITH_bn(PTL_FIRST_ROW, s, U, V)
#define PTL_FIRST_STEP_bt(s, U, V) PTL_STEP_WITH_bt(PTL_FIRST_ROW, s, U, V)
#define PTL_START_first_pass(U, V, KU, L)                                                \
    PTL_K##KU(PTL_FIRST_STEP_##L, U, V) PTL_R##U(PTL_INC_ROW, KU, ~) PTL_##L##_INC(V, KU)
/* The loop over the passes: tested before the first, or, after first_pass
 * (K >= 2 KU), entered without a test. */
#define PTL_LOOP_zero(KU, U, V, L) while (a0 != a_end) { PTL_PASS(KU, U, V, L) }
#define PTL_LOOP_first_k(KU, U, V, L) PTL_LOOP_zero(KU, U, V, L)
#define PTL_LOOP_first_pass(KU, U, V, L) do { PTL_PASS(KU, U, V, L) } while (a0 != a_end);

#if defined(__GNUC__)
#define PTL_NOINLINE __attribute__((noinline))
#else
#define PTL_NOINLINE
#endif

/* Two kinds of function compute blocks of C (pulp_mm_tiles_fp32.h): a row
 * (ptl_mm_row_fp32) one row panel of blocks side by side, a tile
 * (ptl_mm_tile_fp32) several row panels of them. The short-K tables hold
 * rows, called once per panel; the long-K grid holds tiles, called once per
 * pair of size classes. Most tiles are a row called per panel
 * (PTL_DEFINE_TILE_FROM): with the panel loop in the same function as the K
 * loop, GCC 12 keeps more pointers live and spills them (all tiles written
 * that way: 654 of 2,040 variants of three small matmul shapes took more
 * instructions). The k16 tiles keep the panel loop inside
 * (PTL_DEFINE_PANEL_TILE_FROM): their calls are the costliest to repeat
 * (12 saved registers of each kind and a long set-up), and one call does
 * every panel (64^3: the 5x4 edge 2,088 -> 2,048 instructions a block). */

/* The K split: K - PEELED(KU) k in loop passes of KU, and `rest` after them.
 * REM is how `rest` is taken: `mod`, C's signed %, or `mask` (k_loop >= 0 and
 * KU a power of two), one instruction instead of four. The rows for a short K
 * take the mask (QEMU: 4,030 of the suite's 7,140 FP32 matmul variants took
 * fewer instructions). The long-K tiles keep %: with the mask, GCC 12 puts
 * one more move into the 2x4 B-transposed loop (64^3: +1.5%). */
#define PTL_REM_mod(k, KU) ((k) % (KU))
#define PTL_REM_mask(k, KU) ((k) & ((KU) - 1))
#define PTL_K_SPLIT(REM, START, KU)                                                      \
    _Static_assert(((KU) & ((KU) - 1)) == 0, "KU is a power of two");                    \
    const int k_loop = K - PTL_PEELED_##START(KU);                                       \
    const int looped = k_loop - PTL_REM_##REM(k_loop, KU), rest = PTL_REM_##REM(k_loop, KU); \
    (void)rest;
/* `blocks` U x V blocks side by side from a -> A(i, 0), b -> B(0, j) in layout
 * L and c -> C(i, j), K by KU after the START (zero, first_k or first_pass). */
#define PTL_ROW_OF_BLOCKS(START, U, V, KU, L)                                            \
    {                                                                                    \
        const float *bj = b;                                                             \
        float *cj = c;                                                                   \
        int n = blocks;                                                                  \
        do {                                                                             \
            PTL_R##U(PTL_DECL_ROW, V, ~)                                                 \
            PTL_##L##_DECL(V)                                                            \
            PTL_START_##START(U, V, KU, L)                                               \
            const float *const a_end = a0 + looped;                                      \
            PTL_LOOP_##START(KU, U, V, L)                                                \
            if ((KU) > 1 && rest) {                                                      \
                PTL_REST_##KU(U, V, L)                                                   \
            }                                                                            \
            PTL_R##U(PTL_STORE_ROW, V, ~)                                                \
            bj += PTL_##L##_NEXT(V);                                                     \
            cj += (V);                                                                   \
        } while (--n);                                                                   \
    }
/* BODY for each of `panels` (>= 1) row panels of U rows, a and c moved down
 * past each. */
#define PTL_EACH_PANEL(U, BODY)                                                          \
    do {                                                                                 \
        BODY;                                                                            \
        a += (U) * K;                                                                    \
        c += (U) * M;                                                                    \
    } while (--panels);
/* name: a row (ptl_mm_row_fp32). */
#define PTL_DEFINE_ROW_FROM(REM, START, name, U, V, KU, L)                               \
    static PTL_NOINLINE void name(const float *a, const float *b, float *c, int K, int M, \
                                  int blocks)                                            \
    {                                                                                    \
        PTL_K_SPLIT(REM, START, KU)                                                      \
        PTL_ROW_OF_BLOCKS(START, U, V, KU, L)                                            \
    }
/* name: a tile calling the row name_row per panel. One panel is a jump to the
 * row; the loop over more is a function of its own, name_panels, so that a
 * one-panel call saves no registers (GCC 12 saves them on entry to a
 * function that has the loop anywhere). */
#define PTL_DEFINE_PANELS(name, U)                                                       \
    static PTL_NOINLINE void name##_panels(const float *a, const float *b, float *c, int K, \
                                           int M, int panels, int blocks)                \
    {                                                                                    \
        PTL_EACH_PANEL(U, name##_row(a, b, c, K, M, blocks))                             \
    }                                                                                    \
    static void name(const float *a, const float *b, float *c, int K, int M, int panels, \
                     int blocks)                                                         \
    {                                                                                    \
        if (panels == 1)                                                                 \
            name##_row(a, b, c, K, M, blocks);                                           \
        else                                                                             \
            name##_panels(a, b, c, K, M, panels, blocks);                                \
    }
/* name: a tile, and name_row, its row. */
#define PTL_DEFINE_TILE_FROM(START, name, U, V, KU, L)                                   \
    PTL_DEFINE_ROW_FROM(mod, START, name##_row, U, V, KU, L)                             \
    PTL_DEFINE_PANELS(name, U)
/* name: a tile with the panel loop inside. */
#define PTL_DEFINE_PANEL_TILE_FROM(START, name, U, V, KU, L)                             \
    static void name(const float *a, const float *b, float *c, int K, int M, int panels, \
                     int blocks)                                                         \
    {                                                                                    \
        PTL_K_SPLIT(mod, START, KU)                                                      \
        PTL_EACH_PANEL(U, PTL_ROW_OF_BLOCKS(START, U, V, KU, L))                         \
    }

#define PTL_DEFINE_TILE(name, U, V, KU, L) PTL_DEFINE_TILE_FROM(zero, name, U, V, KU, L)

/* tile_<U>x<V>_<bn|bt>, K stepped by KU, for K >= PTL_MM_LONG_K. */
#define PTL_DEFINE_TILE_PAIR(U, V, KU)                                                   \
    PTL_DEFINE_TILE(tile_##U##x##V##_bn, U, V, KU, bn)                                   \
    PTL_DEFINE_TILE(tile_##U##x##V##_bt, U, V, KU, bt)
/* name: a row that computes one block in a function of its own, name_one,
 * without the loop over blocks: a short K leaves few MACs a block, and the
 * loop's state costs saved registers (the suite's small products often have
 * one block a row: 1x8 with B transposed, K = 9, 7 rows took 284 more
 * instructions with the loop than one call per block). More blocks take
 * name_many, the loop. */
#define PTL_DEFINE_SPLIT_ROW_FROM(START, name, U, V, KU, L)                              \
    static PTL_NOINLINE void name##_one(const float *a, const float *b, float *c, int K,  \
                                        int M)                                           \
    {                                                                                    \
        const int blocks = 1;                                                            \
        PTL_K_SPLIT(mask, START, KU)                                                     \
        PTL_ROW_OF_BLOCKS(START, U, V, KU, L)                                            \
    }                                                                                    \
    PTL_DEFINE_ROW_FROM(mask, START, name##_many, U, V, KU, L)                           \
    static void name(const float *a, const float *b, float *c, int K, int M, int blocks) \
    {                                                                                    \
        if (blocks == 1)                                                                 \
            name##_one(a, b, c, K, M);                                                   \
        else                                                                             \
            name##_many(a, b, c, K, M, blocks);                                          \
    }
/* tile_<U>x<V>_short_<bn|bt>: rows, K stepped by 2, for a shorter K. */
#define PTL_DEFINE_SHORT_PAIR(U, V)                                                      \
    PTL_DEFINE_SPLIT_ROW_FROM(zero, tile_##U##x##V##_short_bn, U, V, 2, bn)              \
    PTL_DEFINE_SPLIT_ROW_FROM(zero, tile_##U##x##V##_short_bt, U, V, 2, bt)

/* mm and mm_u2 keep their algorithm: one element, K by 1 or by 2. mm with B
 * row-major takes k = 0 apart (QEMU, 64^3: 6.149 -> 6.088 instructions per
 * MAC; GVSOC 8.161 -> 8.068 cycles); with B transposed that costs GCC 12 one
 * instruction more per element (the suite's perf gate: 39 variants), so it
 * zeroes. The unrolled tiles zero too: with K - 1 left for the loop, a K
 * that is a multiple of their KU (most of the suite's and networks' sizes)
 * leaves a straight rest pass in every block, which costs more than the
 * zeroing (QEMU, 64^3: 8x1 and 4x2 took more instructions that way). */
PTL_DEFINE_TILE_FROM(first_k, tile_1x1_k1_bn, 1, 1, 1, bn)
PTL_DEFINE_TILE(tile_1x1_k1_bt, 1, 1, 1, bt)
/* mm_u2 with B row-major, written out: one B pointer per k of the pair, each
 * moved by 2 M, which GCC 12 compiles one instruction shorter per pair than
 * one pointer moved by M twice. */
static PTL_NOINLINE void tile_1x1_k2_bn_row(const float *a, const float *b, float *c, int K, int M,
                                            int blocks)
{
    do {
        const float *a0 = a, *b0 = b, *b1 = b + M;
        const float *const a_end = a + (K - K % 2);
        float acc = 0.0f;
        while (a0 != a_end) {
            acc += a0[0] * b0[0];
            acc += a0[1] * b1[0];
            a0 += 2, b0 += 2 * M, b1 += 2 * M;
        }
        if (K % 2)
            acc += a0[0] * b0[0];
        *c = acc;
        b += 1, c += 1;
    } while (--blocks);
}
PTL_DEFINE_PANELS(tile_1x1_k2_bn, 1)
PTL_DEFINE_TILE(tile_1x1_k2_bt, 1, 1, 2, bt)

PTL_DEFINE_TILE_PAIR(1, 1, PTL_KU_SMALL)
PTL_DEFINE_TILE_PAIR(1, 2, PTL_KU_SMALL)
PTL_DEFINE_TILE_PAIR(1, 4, PTL_KU_SMALL)
PTL_DEFINE_TILE_PAIR(1, 5, PTL_KU_SMALL)
PTL_DEFINE_TILE_PAIR(1, 6, PTL_KU_SMALL)
PTL_DEFINE_TILE_PAIR(1, 8, PTL_KU_MID)
PTL_DEFINE_TILE_PAIR(2, 1, PTL_KU_SMALL)
PTL_DEFINE_TILE_PAIR(2, 2, PTL_KU_SMALL)
PTL_DEFINE_TILE_PAIR(2, 4, PTL_KU_MID)
PTL_DEFINE_TILE_PAIR(2, 5, PTL_KU_MID)
PTL_DEFINE_TILE_PAIR(2, 6, PTL_KU_MID)
PTL_DEFINE_TILE_PAIR(4, 1, PTL_KU_SMALL)
PTL_DEFINE_TILE_PAIR(4, 2, PTL_KU_MID)
PTL_DEFINE_TILE_PAIR(4, 4, PTL_KU_MID)
PTL_DEFINE_TILE_PAIR(4, 5, PTL_KU_BIG)
PTL_DEFINE_TILE_PAIR(4, 6, PTL_KU_BIG)
PTL_DEFINE_TILE_PAIR(5, 1, PTL_KU_SMALL)
PTL_DEFINE_TILE_PAIR(5, 2, PTL_KU_MID)
PTL_DEFINE_TILE_PAIR(5, 4, PTL_KU_BIG)
PTL_DEFINE_TILE_PAIR(5, 5, PTL_KU_BIG)
PTL_DEFINE_TILE_PAIR(6, 1, PTL_KU_SMALL)
PTL_DEFINE_TILE_PAIR(6, 2, PTL_KU_MID)
PTL_DEFINE_TILE_PAIR(6, 4, PTL_KU_BIG)
PTL_DEFINE_TILE_PAIR(8, 1, PTL_KU_MID)

/* The 4x6 block with 4 k per pass, for the lib_c kernels *_4x6_k4: a core
 * that fetches from a memory holding the whole 560-byte loop (QEMU, or a
 * larger L0 than pulp-open's) runs fewer instructions, one A and B pointer
 * add per 4 k instead of 2 (lib_c/README.md). With 31 FP registers live,
 * GCC 12's default register allocator spills one value a pass; its priority
 * allocator does not (loop: 96 fmadd, 40 flw, 8 add, 1 branch). The 2-k
 * tiles keep the default: with it, 6x4 spills. */
#if defined(__GNUC__) && !defined(__clang__)
#define PTL_PRIORITY_RA __attribute__((optimize("ira-algorithm=priority")))
#else
#define PTL_PRIORITY_RA
#endif
PTL_PRIORITY_RA PTL_DEFINE_TILE(tile_4x6_k4_bn, 4, 6, 4, bn)
PTL_PRIORITY_RA PTL_DEFINE_TILE(tile_4x6_k4_bt, 4, 6, 4, bt)

/* The 5x5 block and its 5x4, 4x5 and 4x4 edges with 16 k per pass, for the
 * lib_c kernels *_5x5_k16: QEMU's fewest instructions per MAC. The first pass
 * is apart, its k = 0 setting the accumulators (no zeroing, and the loop is
 * entered without a test; it needs K >= 32, PTL_MM_LONG_K). Per pass of the
 * 5x5 with B row-major: 400 fmadd, 160 flw, 16 adds for B, 5 for A, 1
 * branch; its 2-KB loop would refill pulp-open's 512-byte L0 cache on every
 * pass, so the other 5x5 kernels keep 2 k. */
#define PTL_K16_TILE_PAIR(U, V)                                                          \
    PTL_PRIORITY_RA PTL_DEFINE_PANEL_TILE_FROM(first_pass, tile_##U##x##V##_k16_bn, U, V, 16, bn) \
    PTL_PRIORITY_RA PTL_DEFINE_PANEL_TILE_FROM(first_pass, tile_##U##x##V##_k16_bt, U, V, 16, bt)
PTL_K16_TILE_PAIR(5, 5)
PTL_K16_TILE_PAIR(5, 4)
PTL_K16_TILE_PAIR(4, 5)
PTL_K16_TILE_PAIR(4, 4)
#if PTL_MM_LONG_K < 2 * 16
#error "the first_pass tiles with 16 k per pass need K >= 32"
#endif

/* The 4x6 block with B row-major, written for a core that shares its FPU
 * (pulp-open: cores c and c + 4 share one of 4). Two cores running the same
 * loop fall into step, one cycle apart, and the FPU idles whenever both run
 * non-FP instructions at once: with the loads of a k step together at its
 * head (PTL_STEP_bn), 16% of the FPU's cycles (GVSOC trace of cores 0 and 4,
 * 64^3 on 8 cores). Here the loads and adds sit between fmadds (only a
 * pass's last load, B's pointer add and the branch are adjacent): each k step
 * loads B's next column before the current one's 4 fmadds, the next k's A
 * values between the last column's fmadds, and moves A's pointers between
 * fmadds of the second step of a pass. Two B registers (p, q) alternate, so
 * 24 + 4 + 2 = 30 FP registers are live, which GCC's priority allocator
 * holds in the loop without spilling; its second scheduling pass is off, as
 * it would gather the loads again. k = 0 sets the accumulators (first_k), so
 * there is no zeroing. Needs K >= 2 (long K: >= PTL_MM_LONG_K). */
#define PTL_I_MAC(u, v, bv) PTL_ACC(u, v) += x##u * bv;
#define PTL_I_SET(u, v, bv) PTL_ACC(u, v) = x##u * bv + 0.0f;
/* column v of one k step with B value bv; MOVE between its 2nd and 3rd fmadd */
#define PTL_I_COL(OP, v, bv, MOVE) OP(0, v, bv) OP(1, v, bv) MOVE OP(2, v, bv) OP(3, v, bv)
/* One k step; on entry x0..x3 hold A(i..i+3, k) and p B(k, j). With NEXT, it
 * leaves A(., k + 1) and B(k + 1, j) there, reading A at offset `next` from
 * A's pointers, which it moves by `n` (0: not). */
#define PTL_I_STEP(OP, NEXT, next, n)                                                    \
    q = bk[1]; PTL_I_COL(OP, 0, p, )                                                     \
    p = bk[2]; PTL_I_COL(OP, 1, q, if (n) PTL_INC_ROW(0, n, ~))                            \
    q = bk[3]; PTL_I_COL(OP, 2, p, if (n) PTL_INC_ROW(1, n, ~))                            \
    p = bk[4]; PTL_I_COL(OP, 3, q, if (n) PTL_INC_ROW(2, n, ~))                            \
    q = bk[5]; PTL_I_COL(OP, 4, p, if (n) PTL_INC_ROW(3, n, ~))                            \
    bk += M;                                                                             \
    if (NEXT) {                                                                          \
        p = bk[0];                                                                       \
        OP(0, 5, q) x0 = a0[next]; OP(1, 5, q) x1 = a1[next];                            \
        OP(2, 5, q) x2 = a2[next]; OP(3, 5, q) x3 = a3[next];                            \
    } else {                                                                             \
        PTL_I_COL(OP, 5, q, )                                                            \
    }
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-schedule-insns2", "ira-algorithm=priority")))
#endif
static PTL_NOINLINE void tile_4x6_spread_bn_row(const float *a, const float *b, float *c, int K,
                                                int M, int blocks)
{
    const int passes = (K - 2) / 2; /* k = 1 .. K - 2 by two; k = 0 and K - 1 apart */
    float *cj = c;
    do {
        PTL_R4(PTL_DECL_ROW, 6, ~)
        const float *bk = b;
        float x0 = a0[0], x1 = a1[0], x2 = a2[0], x3 = a3[0], p = bk[0], q;
        PTL_I_STEP(PTL_I_SET, 1, 1, 0)
        const float *const a_end = a0 + 2 * passes;
        while (a0 != a_end) { /* k = 1 + 2i and 2 + 2i, A's pointers at 2i */
            PTL_I_STEP(PTL_I_MAC, 1, 2, 0)
            PTL_I_STEP(PTL_I_MAC, 1, 1, 2)
        }
        if ((K - 2) % 2) {
            PTL_I_STEP(PTL_I_MAC, 1, 1, 1)
        }
        PTL_I_STEP(PTL_I_MAC, 0, 0, 0)
        PTL_R4(PTL_STORE_ROW, 6, ~)
        b += 6;
        cj += 6;
    } while (--blocks);
}
PTL_DEFINE_PANELS(tile_4x6_spread_bn, 4)
/* With B transposed the kernel takes the usual 4x6 tile. */
#define tile_4x6_spread_bt tile_4x6_bt

/* A short K: a kernel's U x V block, and 1 x V, U x 1, 1 x 1 for what is left. */
PTL_DEFINE_SHORT_PAIR(1, 1)
PTL_DEFINE_SHORT_PAIR(1, 2)
PTL_DEFINE_SHORT_PAIR(1, 4)
PTL_DEFINE_SHORT_PAIR(1, 5)
PTL_DEFINE_SHORT_PAIR(1, 6)
PTL_DEFINE_SHORT_PAIR(1, 8)
PTL_DEFINE_SHORT_PAIR(2, 1)
PTL_DEFINE_SHORT_PAIR(2, 2)
PTL_DEFINE_SHORT_PAIR(2, 4)
PTL_DEFINE_SHORT_PAIR(4, 1)
PTL_DEFINE_SHORT_PAIR(4, 2)
PTL_DEFINE_SHORT_PAIR(4, 4)
PTL_DEFINE_SHORT_PAIR(4, 6)
PTL_DEFINE_SHORT_PAIR(5, 1)
PTL_DEFINE_SHORT_PAIR(5, 5)
PTL_DEFINE_SHORT_PAIR(6, 1)
PTL_DEFINE_SHORT_PAIR(6, 4)
PTL_DEFINE_SHORT_PAIR(8, 1)

/* A kernel's tiles: heights H0 > H1 > ... and widths W0 > W1 > ..., each list
 * four long, ending in 1 and padded with 1 (a padded class is never reached).
 * The H0 x W0 block is tile_<H0>x<W0><TOP>_<layout>, and its edges H0 x W1,
 * H1 x W0 and H1 x W1 are tile_<h>x<w><EDGE>_<layout>: TOP and EDGE are
 * empty, or name a variant of those blocks (_k4, _k16); the smaller blocks
 * are the plain ones. */
#define PTL_TILE_REF(w, h, L) tile_##h##x##w##_##L
#define PTL_VARIANT_REF(w, h, VAR, L) tile_##h##x##w##VAR##_##L
#define PTL_TILE_ROW(h, L, W0, W1, W2, W3)                                               \
    {PTL_TILE_REF(W0, h, L), PTL_TILE_REF(W1, h, L), PTL_TILE_REF(W2, h, L), PTL_TILE_REF(W3, h, L)}
#define PTL_TILE_GRID(L, TOP, EDGE, H0, H1, H2, H3, W0, W1, W2, W3)                      \
    {{PTL_VARIANT_REF(W0, H0, TOP, L), PTL_VARIANT_REF(W1, H0, EDGE, L), PTL_TILE_REF(W2, H0, L), \
      PTL_TILE_REF(W3, H0, L)},                                                          \
     {PTL_VARIANT_REF(W0, H1, EDGE, L), PTL_VARIANT_REF(W1, H1, EDGE, L), PTL_TILE_REF(W2, H1, L), \
      PTL_TILE_REF(W3, H1, L)},                                                          \
     PTL_TILE_ROW(H2, L, W0, W1, W2, W3), PTL_TILE_ROW(H3, L, W0, W1, W2, W3)}
#define PTL_SHORT_GRID(L, U, V)                                                          \
    {{PTL_TILE_REF(V, U, short_##L), PTL_TILE_REF(1, U, short_##L)},                     \
     {PTL_TILE_REF(V, 1, short_##L), PTL_TILE_REF(1, 1, short_##L)}}
#define PTL_TILESET(name, TOP, EDGE, H0, H1, H2, H3, W0, W1, W2, W3)                     \
    const struct ptl_mm_tileset_fp32 ptl_mm_fp32_tiles_##name = {                        \
        PTL_MM_LONG_K,                                                                   \
        {H0, H1, H2, H3},                                                                \
        {W0, W1, W2, W3},                                                                \
        {PTL_TILE_GRID(bn, TOP, EDGE, H0, H1, H2, H3, W0, W1, W2, W3),                   \
         PTL_TILE_GRID(bt, TOP, EDGE, H0, H1, H2, H3, W0, W1, W2, W3)},                  \
        {PTL_SHORT_GRID(bn, H0, W0), PTL_SHORT_GRID(bt, H0, W0)}}

PTL_TILESET(1x2, , , 1, 1, 1, 1, 2, 1, 1, 1);
PTL_TILESET(1x4, , , 1, 1, 1, 1, 4, 2, 1, 1);
PTL_TILESET(1x8, , , 1, 1, 1, 1, 8, 4, 2, 1);
PTL_TILESET(2x1, , , 2, 1, 1, 1, 1, 1, 1, 1);
PTL_TILESET(4x1, , , 4, 2, 1, 1, 1, 1, 1, 1);
PTL_TILESET(8x1, , , 8, 4, 2, 1, 1, 1, 1, 1);
PTL_TILESET(2x2, , , 2, 1, 1, 1, 2, 1, 1, 1);
PTL_TILESET(2x4, , , 2, 1, 1, 1, 4, 2, 1, 1);
PTL_TILESET(4x2, , , 4, 2, 1, 1, 2, 1, 1, 1);
PTL_TILESET(4x4, , , 4, 2, 1, 1, 4, 2, 1, 1);
PTL_TILESET(5x5, , , 5, 4, 2, 1, 5, 4, 2, 1);
PTL_TILESET(4x6, , , 4, 2, 1, 1, 6, 4, 2, 1);
PTL_TILESET(6x4, , , 6, 4, 2, 1, 4, 2, 1, 1);
PTL_TILESET(4x6_k4, _k4, , 4, 2, 1, 1, 6, 4, 2, 1);
PTL_TILESET(5x5_k16, _k16, _k16, 5, 4, 2, 1, 5, 4, 2, 1);
PTL_TILESET(4x6_spread, _spread, , 4, 2, 1, 1, 6, 4, 2, 1);

/* One tile for every class, short or long: the algorithm of mm and of mm_u2. */
#define PTL_SAME2(t) {t, t}
#define PTL_SAME4(t) {t, t, t, t}
#define PTL_SAME16(t) {PTL_SAME4(t), PTL_SAME4(t), PTL_SAME4(t), PTL_SAME4(t)}
#define PTL_ONE_TILE(name, tile)                                                         \
    const struct ptl_mm_tileset_fp32 ptl_mm_fp32_tiles_##name = {                        \
        INT_MAX,                                                                         \
        {1, 1, 1, 1},                                                                    \
        {1, 1, 1, 1},                                                                    \
        {PTL_SAME16(tile##_bn), PTL_SAME16(tile##_bt)},                                  \
        {{PTL_SAME2(tile##_bn_row), PTL_SAME2(tile##_bn_row)},                           \
         {PTL_SAME2(tile##_bt_row), PTL_SAME2(tile##_bt_row)}}}
PTL_ONE_TILE(1x1, tile_1x1_k1);
PTL_ONE_TILE(1x1_u2, tile_1x1_k2);

/* With a short K, a core's slice of at most PTL_MM_TINY_1x1 MACs in which
 * the tiles would all be 1 x 1 takes one loop per element of C, K by 1, and
 * no tile calls (run_tiny): a 1 x 1 call's set-up costs more than its MACs.
 * A slice with a larger block takes the tiles, however small: with the rows
 * walked inside the driver (run_short inlined), their calls cost less than
 * the loop's per element. Measured on QEMU over the suite's 10,812 FP32
 * matmul variants (2026-11-28), against other rules: the loop also for
 * every slice of up to 16 or 24 MACs, also where the tiles would make a call
 * per fewer than 4, 6 or 8 MACs, and this bound at 64, 128, 256 or 1024.
 * This one at 128 left the fewest variants slower than lib_c before issue
 * 27's kernels (a6a113c), and within 0.002% of the fewest instructions
 * summed (at 256). lib_c/README.md has the figures. */
#define PTL_MM_TINY_1x1 128

/* Rows [row0, row1) x columns [col0, col1) of C, one element at a time. */
static inline void run_tiny(const struct matMul_args *args, int row0, int row1, int col0, int col1)
{
    const int K = args->K, M = args->M;
    const int b_k_step = args->trans_B ? 1 : M, b_col_step = args->trans_B ? K : 1;
    for (int i = row0; i < row1; i++) {
        const float *const a = args->A + i * K;
        float *const c = args->C + i * M;
        for (int j = col0; j < col1; j++) {
            const float *b = args->B + j * b_col_step;
            float acc = 0.0f;
            for (int k = 0; k < K; k++, b += b_k_step)
                acc += a[k] * *b;
            c[j] = acc;
        }
    }
}

/* Rows [row0, row1) x columns [col0, col1) of C with a short K: U x V blocks,
 * then 1 x V, U x 1 and 1 x 1 for what is left, one row panel per call. Few
 * live values, so that a small product pays for little more than its
 * multiply-accumulates. Inlined into the driver: as a function of its own,
 * its register saves came on top of the driver's, and small products took
 * more instructions than before issue 27's kernels (lib_c/README.md). */
static inline void run_short(const struct ptl_mm_tileset_fp32 *tiles, const struct matMul_args *args,
                             int row0, int row1, int col0, int col1)
{
    const int K = args->K, M = args->M, t = args->trans_B ? 1 : 0;
    const int U = tiles->heights[0], V = tiles->widths[0], b_col_step = t ? K : 1;
    const ptl_mm_row_fp32(*row)[2] = tiles->short_row[t];
    const int blocks = (col1 - col0) / V, j1 = col0 + blocks * V;
    const float *b0 = args->B + col0 * b_col_step, *b1 = args->B + j1 * b_col_step;
    for (int i = row0; i < row1;) {
        const int u = i + U <= row1 ? 0 : 1; /* U rows, or 1 */
        const float *a = args->A + i * K;
        float *c = args->C + i * M;
        if (blocks)
            row[u][0](a, b0, c + col0, K, M, blocks);
        if (j1 < col1)
            row[u][1](a, b1, c + j1, K, M, col1 - j1);
        i += u ? 1 : U;
    }
}

/* The same with a long K: for each height class in turn, as many row panels
 * of it as fit, cut into blocks of each width class in turn; one tile call
 * per pair of classes. */
static PTL_NOINLINE void run_long(const struct ptl_mm_tileset_fp32 *tiles, const struct matMul_args *args,
                                  int row0, int row1, int col0, int col1)
{
    const int K = args->K, M = args->M, t = args->trans_B ? 1 : 0;
    const int b_col_step = t ? K : 1; /* distance between columns of B */
    const ptl_mm_tile_fp32(*grid)[4] = tiles->tile[t];
    for (int hi = 0, i = row0; i < row1; hi++) {
        const int h = tiles->heights[hi], panels = (row1 - i) / h;
        for (int wi = 0, j = col0; panels && j < col1; wi++) {
            const int w = tiles->widths[wi], blocks = (col1 - j) / w;
            if (blocks)
                grid[hi][wi](args->A + i * K, args->B + j * b_col_step, args->C + i * M + j, K, M,
                             panels, blocks);
            j += blocks * w;
        }
        i += panels * h;
    }
}

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

    if (K >= tiles->long_k) {
        run_long(tiles, args, row0, row1, col0, col1);
        return;
    }
    /* Without a U x V block, nor U x 1 or 1 x V, in the slice (!has_block),
     * the tiles would be 1 x 1 calls. macs is unsigned: a product beyond 32
     * bits wraps, and at worst takes the loop, which is right for any size. */
    const int rows = row1 - row0, cols = col1 - col0;
    const unsigned macs = (unsigned)rows * (unsigned)cols * (unsigned)K;
    const int U = tiles->heights[0], V = tiles->widths[0];
    const int has_block = (U > 1 && rows >= U) || (V > 1 && cols >= V);
    if (!has_block && macs <= PTL_MM_TINY_1x1)
        run_tiny(args, row0, row1, col0, col1);
    else
        run_short(tiles, args, row0, row1, col0, col1);
}
