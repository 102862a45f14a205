/*
 * pulp_im2col_impl.h (internal): the bodies of im2col, im2row and the block
 * transpose, written once for both element types. The definitions they
 * implement are in include/pulp_im2col_fp32.h.
 *
 * Include it once per type after defining:
 *   IM2COL_T      element type (float, fp16)
 *   IM2COL_ZERO   its +0 (an expression)
 *   IM2COL_ARGS   struct im2col_args[_fp16]
 *   BT_ARGS       struct blocktransp_args[_fp16]
 * It defines static functions unroll_cols(), unroll_rows() and
 * block_transpose(), each taking the args struct; the .c file wraps them in
 * the public names. The Conv2D layer includes it too, for the input-gradient
 * unrolling of a strided or padded layer (unroll_cols_of() of
 * unroll_geom_of(a, 1), or unroll_rows_of(a, 1)), which the public mod 1
 * does not do. (The two take their geometry differently: each way is the
 * one that measured fewer instructions, lib_c/README.md.)
 *
 * An unrolling is described once, whatever its mod and layout, as windows
 * sliding over a source grid: window (oy, ox) and tap (c, ky, kx) read the
 * source at row  (oy * step_y + ky + off_y) / dil_y  and column likewise,
 * when that position is inside the grid and a multiple of the dilation, and
 * give 0 otherwise. mod 0 has step = stride, dil = 1, off = -pad; the public
 * mod 1 has step = 1, dil = 1, off = -(kernel - 1) (pads and strides are
 * ignored, as the API says); the layer's IG unrolling has step = 1,
 * dil = stride, off = pad - (kernel - 1).
 */
#include <stdint.h>

#include "pulp_conv_ranges.h"

struct unroll_geom {
    const IM2COL_T *src;
    int C, srcH, srcW;        /* source channels and grid */
    int sc, sy, sx;           /* source element strides: channel, row, column */
    int OH, OW;               /* windows */
    int Hk, Wk;               /* taps per window: C x Hk x Wk */
    int step_y, step_x;
    int dil_y, dil_x;
    int off_y, off_x;
    int tc, tky, tkx;         /* tap index t = c * tc + ky * tky + kx * tkx */
    int hwc;
};

/* The unrolling that a->mod asks for; with layer_ig and mod 1, the
 * input-gradient unrolling of the layer a describes, strides and pads
 * included (the public mod 1 ignores them). */
static inline struct unroll_geom unroll_geom_of(const IM2COL_ARGS *a, int layer_ig)
{
    struct unroll_geom g;
    g.Hk = a->c->H;
    g.Wk = a->c->W;
    if (a->mod == 0) {
        g.src = a->input->data;
        g.C = a->input->C;
        g.srcH = a->input->H;
        g.srcW = a->input->W;
        g.OH = a->output->H;
        g.OW = a->output->W;
        g.step_y = a->stride_h;
        g.step_x = a->stride_w;
        g.dil_y = g.dil_x = 1;
        g.off_y = -a->Upad;
        g.off_x = -a->Lpad;
    } else {
        g.src = a->output->diff;
        g.C = a->output->C;
        g.srcH = a->output->H;
        g.srcW = a->output->W;
        g.OH = a->input->H;
        g.OW = a->input->W;
        g.step_y = g.step_x = 1;
        if (layer_ig) {
            g.dil_y = a->stride_h;
            g.dil_x = a->stride_w;
            g.off_y = a->Upad - (g.Hk - 1);
            g.off_x = a->Lpad - (g.Wk - 1);
        } else {
            g.dil_y = g.dil_x = 1;
            g.off_y = -(g.Hk - 1);
            g.off_x = -(g.Wk - 1);
        }
    }
    g.hwc = a->HWC;
    if (a->HWC) {
        g.sc = 1;
        g.sy = g.srcW * g.C;
        g.sx = g.C;
        g.tc = 1;
        g.tky = g.Wk * g.C;
        g.tkx = g.C;
    } else {
        g.sc = g.srcH * g.srcW;
        g.sy = g.srcW;
        g.sx = 1;
        g.tc = g.Hk * g.Wk;
        g.tky = g.Wk;
        g.tkx = 1;
    }
    return g;
}

/* Source coordinate of a position in the dilated, padded grid, or -1. */
static inline int unroll_source(int pos, int dil, int n)
{
    if (pos < 0)
        return -1;
    if (dil != 1) {
        if (pos % dil)
            return -1;
        pos /= dil;
    }
    return pos < n ? pos : -1;
}

/* The pmsis DMA calls take 32-bit addresses. */
#define IM2COL_DMA_USABLE (UINTPTR_MAX <= 0xffffffffu)

/* dst[0..n) = src[0..n) through the DMA, when asked and possible; returns
 * whether it did. */
static inline int unroll_copy_dma(IM2COL_T *dst, const IM2COL_T *src, int n, int use_dma)
{
#if IM2COL_DMA_USABLE
    if (use_dma) {
        pi_cl_dma_cmd_t cmd;
        pi_cl_dma_cmd((uint32_t)(uintptr_t)src, (uint32_t)(uintptr_t)dst,
                      (uint32_t)n * sizeof(IM2COL_T), PI_CL_DMA_DIR_EXT2LOC, &cmd);
        pi_cl_dma_cmd_wait(&cmd);
        return 1;
    }
#else
    (void)dst, (void)src, (void)n, (void)use_dma;
#endif
    return 0;
}

/* dst[0..n) = src[0..n): a run of an HWC pixel's channels, usually few. */
static inline void unroll_copy_run(IM2COL_T *dst, const IM2COL_T *src, int n, int use_dma)
{
    if (unroll_copy_dma(dst, src, n, use_dma))
        return;
    for (int i = 0; i < n; i++)
        dst[i] = src[i];
}

/* dst[0..n) = src[0..n): a row of windows, or a window's run of adjacent
 * HWC pixels, usually long. 4 at a time, the loads first: one pointer add
 * each and a branch per 4 elements, and an in-order core does not wait on
 * each load. The rest written out: GCC turns a loop of single copies into a
 * call of memmove, which costs more than a short run. (Measured with the
 * suite's perf gate on QEMU: used for each HWC pixel's few channels alone,
 * it cost the small-channel im2row cases up to 23%.) */
static inline void unroll_copy_row(IM2COL_T *dst, const IM2COL_T *src, int n, int use_dma)
{
    if (unroll_copy_dma(dst, src, n, use_dma))
        return;
    if (n < 4) { /* a row of a few windows: the loop's set-up would cost more */
        for (int i = 0; i < n; i++)
            dst[i] = src[i];
        return;
    }
    const IM2COL_T *const end4 = src + (n & ~3);
    while (src != end4) {
        const IM2COL_T e0 = src[0], e1 = src[1], e2 = src[2], e3 = src[3];
        dst[0] = e0, dst[1] = e1, dst[2] = e2, dst[3] = e3;
        src += 4, dst += 4;
    }
    if (n & 2)
        dst[0] = src[0], dst[1] = src[1], dst += 2, src += 2;
    if (n & 1)
        dst[0] = src[0];
}

/* dst[0..n) = 0, 4 at a time. A call of memset costs more than the few
 * elements of a pad or a short row (the usual n: measured, memset was 2.5%
 * of a 16x16 conv FW on QEMU; with clang 14, FP16 conv IG spent a quarter of
 * its instructions in it). Compilers turn a loop of zero stores into that
 * call (GCC one of single stores, clang even this one); volatile stores
 * must each be made, so they stay stores, the same instructions. */
static inline void unroll_zero(IM2COL_T *dst, int n)
{
    if (n <= 0)
        return;
    IM2COL_T *const end4 = dst + (n & ~3);
    while (dst != end4) {
        volatile IM2COL_T *v = dst;
        v[0] = IM2COL_ZERO, v[1] = IM2COL_ZERO, v[2] = IM2COL_ZERO, v[3] = IM2COL_ZERO;
        dst += 4;
    }
    if (n & 2)
        dst[0] = dst[1] = IM2COL_ZERO, dst += 2;
    if (n & 1)
        dst[0] = IM2COL_ZERO;
}

/* The tap after (c, ky, kx) in the order of the tap index t. */
static inline void unroll_next_tap(const struct unroll_geom *g, int *c, int *ky, int *kx)
{
    if (g->hwc) { /* t = (ky * Wk + kx) * C + c */
        if (++*c < g->C)
            return;
        *c = 0;
        if (++*kx < g->Wk)
            return;
        *kx = 0;
        ++*ky;
    } else { /* t = (c * Hk + ky) * Wk + kx */
        if (++*kx < g->Wk)
            return;
        *kx = 0;
        if (++*ky < g->Hk)
            return;
        *ky = 0;
        ++*c;
    }
}

/* Where column x of row y of channel c is. Formed only for a row and column
 * inside: arithmetic that points outside the source is undefined. */
static inline const IM2COL_T *unroll_at(const struct unroll_geom *g, int c, int y, int x)
{
    return g->src + (c * g->sc + y * g->sy + x * g->sx);
}

/* Tap column kx's windows that read inside a source row: ox from *lo below
 * *hi, 1 apart without dilation (reading columns step_x apart), dil_x apart
 * with it (reading adjacent columns; the layer's IG unrolling, step_x 1);
 * the first reads column *x0. Worked out once per tap: no division per
 * element. */
static inline void unroll_tap_windows(const struct unroll_geom *g, int kx, int *lo, int *hi, int *x0)
{
    const int base = kx + g->off_x;
    if (g->dil_x == 1) {
        conv_inside_range(base, g->step_x, g->srcW, g->OW, lo, hi);
        *x0 = *lo * g->step_x + base;
    } else {
        int n;
        conv_dilated_range(base, g->dil_x, g->srcW, g->OW, lo, x0, &n);
        *hi = *lo + n * g->dil_x;
    }
}

/* X, T x P, into buf: this core's rows r = t * OH + oy, each the OW windows
 * of window row oy for tap t (row r starts at buf + r * OW). The tap and the
 * windows that read inside the source row are worked out once per tap, not
 * per row: a division is one instruction on QEMU but tens of cycles on a
 * PULP core. */
static inline void unroll_cols_of(const struct unroll_geom *geom, IM2COL_T *const buf, int use_dma)
{
    const struct unroll_geom g = *geom;
    const int kk = g.Hk * g.Wk, taps = g.C * kk;
    int first, last;
    conv_core_slice(taps * g.OH, &first, &last);
    const int t0 = first / g.OH;
    int oy = first - t0 * g.OH, c, ky, kx;
    if (g.hwc) {
        ky = t0 / (g.Wk * g.C);
        kx = (t0 / g.C) % g.Wk;
        c = t0 % g.C;
    } else {
        c = t0 / kk;
        ky = (t0 % kk) / g.Wk;
        kx = t0 % g.Wk;
    }
    const int jump = g.step_x * g.sx;
    int lo, hi, x0; /* the tap's windows that read inside the source row */
    unroll_tap_windows(&g, kx, &lo, &hi, &x0);
    IM2COL_T *dst = buf + (size_t)first * g.OW;
    for (int r = first; r < last; r++, dst += g.OW) {
        const int y = unroll_source(oy * g.step_y + ky + g.off_y, g.dil_y, g.srcH);
        if (y < 0) {
            unroll_zero(dst, g.OW);
        } else if (g.dil_x != 1) { /* windows dil_x apart read adjacent columns */
            unroll_zero(dst, g.OW);
            if (hi > lo) {
                const IM2COL_T *from = unroll_at(&g, c, y, x0);
                for (int ox = lo; ox < hi; ox += g.dil_x, from += g.sx)
                    dst[ox] = *from;
            }
        } else {
            unroll_zero(dst, lo);
            if (hi > lo) {
                const IM2COL_T *from = unroll_at(&g, c, y, x0);
                if (jump == 1) {
                    unroll_copy_row(dst + lo, from, hi - lo, use_dma);
                } else {
                    for (int ox = lo; ox < hi; ox++, from += jump)
                        dst[ox] = *from;
                }
            }
            unroll_zero(dst + hi, g.OW - hi);
        }
        if (++oy == g.OH && r + 1 < last) { /* the next row is the next tap's */
            oy = 0;
            unroll_next_tap(&g, &c, &ky, &kx);
            unroll_tap_windows(&g, kx, &lo, &hi, &x0);
        }
    }
}

/* One window's taps of one kernel row ky, from source row y (-1: outside),
 * when a tap's C channels are a run in the window's row and in the source
 * (HWC): Wk runs of C, one after the other. Without dilation the taps that
 * read inside read adjacent pixels, so they are one run; with it, those
 * taps are worked out once (conv_dilated_range), not tap by tap. */
static inline void unroll_pixels(const struct unroll_geom *g, IM2COL_T *d, int y, int ox, int use_dma)
{
    const int len = g->Wk * g->C, base = ox * g->step_x + g->off_x;
    /* [k0, k1) is conv_inside_range(base, 1, srcW, Wk) without its clamps,
     * which the test k1 > k0 makes needless (called, it made this loop's
     * function 22 instructions longer with clang 14). */
    if (y >= 0 && g->dil_x == 1) { /* taps [k0, k1) read pixels base + k */
        const int k0 = base < 0 ? -base : 0;
        const int k1 = g->srcW - base < g->Wk ? g->srcW - base : g->Wk;
        if (k1 > k0) {
            const int lo = k0 * g->C, hi = k1 * g->C;
            unroll_zero(d, lo);
            unroll_copy_row(d + lo, unroll_at(g, 0, y, base + k0), hi - lo, use_dma);
            unroll_zero(d + hi, len - hi);
            return;
        }
    }
    unroll_zero(d, len);
    if (y < 0 || g->dil_x == 1)
        return;
    int k, x, n;
    conv_dilated_range(base, g->dil_x, g->srcW, g->Wk, &k, &x, &n);
    for (; n > 0; n--, k += g->dil_x, x++)
        unroll_copy_run(d + k * g->C, unroll_at(g, 0, y, x), g->C, use_dma);
}

/* unroll_rows_of's windows [first, last) when a tap's channels are not a run
 * (CHW): tap by tap. A function of its own: beside the HWC loop, in one
 * function, each took the other's registers (GCC: im2row of CHW bf16 up to
 * +80% on QEMU, and of HWC +35% the other way round). The geometry is worked
 * out again from a, not passed: an idle core, which does not call this,
 * then does not store it for the call. */
__attribute__((noinline)) static void unroll_rows_of_taps(const IM2COL_ARGS *a, int layer_ig, int first, int last)
{
    const struct unroll_geom g = unroll_geom_of(a, layer_ig);
    IM2COL_T *const buf = a->pBuffer;
    const int taps = g.C * g.Hk * g.Wk;
    for (int p = first; p < last; p++) {
        const int oy = p / g.OW, ox = p - oy * g.OW;
        IM2COL_T *const dst = buf + (size_t)p * taps;
        for (int ky = 0; ky < g.Hk; ky++) {
            const int y = unroll_source(oy * g.step_y + ky + g.off_y, g.dil_y, g.srcH);
            for (int kx = 0; kx < g.Wk; kx++) {
                const int x = y < 0 ? -1 : unroll_source(ox * g.step_x + kx + g.off_x, g.dil_x, g.srcW);
                IM2COL_T *d = dst + ky * g.tky + kx * g.tkx;
                if (x < 0) {
                    for (int c = 0; c < g.C; c++)
                        d[c * g.tc] = IM2COL_ZERO;
                    continue;
                }
                const IM2COL_T *s = unroll_at(&g, 0, y, x);
                for (int c = 0; c < g.C; c++)
                    d[c * g.tc] = s[c * g.sc];
            }
        }
    }
}

/* g, for clang, through a pointer it cannot see through (an empty asm, like
 * Linux's OPTIMIZER_HIDE_VAR), so that it reads the fields from memory where
 * they are used: it held them in registers and spilled most of them inside
 * the HWC loop (FP16 conv IG with HWC up to +29% on QEMU). GCC's code is
 * shorter with them in registers (im2row of HWC 4% fewer instructions). */
static inline const struct unroll_geom *unroll_geom_for_loop(const struct unroll_geom *g)
{
#ifdef __clang__
    __asm__("" : "+r"(g));
#endif
    return g;
}

/* X^T, P x T, into a->pBuffer: this core's windows, each a row of T taps,
 * of the unrolling unroll_geom_of(a, layer_ig). With HWC, a window's taps of
 * one kernel row are runs of pixels (unroll_pixels). */
static inline void unroll_rows_of(const IM2COL_ARGS *a, int layer_ig)
{
    const struct unroll_geom geom = unroll_geom_of(a, layer_ig);
    int first, last;
    conv_core_slice(geom.OH * geom.OW, &first, &last);
    if (first >= last)
        return;
    if (geom.tc != 1 || geom.sc != 1) { /* a tap's channels are not a run in the row and in the source */
        unroll_rows_of_taps(a, layer_ig, first, last);
        return;
    }
    const struct unroll_geom *g = unroll_geom_for_loop(&geom);
    IM2COL_T *const buf = a->pBuffer;
    const int use_dma = a->USE_DMA, taps = g->C * g->Hk * g->Wk;
    for (int p = first; p < last; p++) {
        const int oy = p / g->OW, ox = p - oy * g->OW;
        IM2COL_T *const dst = buf + (size_t)p * taps;
        for (int ky = 0; ky < g->Hk; ky++) {
            const int y = unroll_source(oy * g->step_y + ky + g->off_y, g->dil_y, g->srcH);
            unroll_pixels(g, dst + ky * g->tky, y, ox, use_dma);
        }
    }
}

static inline void unroll_cols(const IM2COL_ARGS *a)
{
    const struct unroll_geom g = unroll_geom_of(a, 0);
    unroll_cols_of(&g, a->pBuffer, a->USE_DMA);
}

static inline void unroll_rows(const IM2COL_ARGS *a)
{
    unroll_rows_of(a, 0);
}

/* bt_weights: this core's (ci, co) pairs, each one Hk x Wk kernel turned by
 * 180 degrees. */
static inline void block_transpose(const BT_ARGS *a)
{
    const int Ci = a->Cin, Co = a->Cout, Hk = a->Hk, Wk = a->Wk, kk = Hk * Wk;
    int first, last;
    conv_core_slice(Ci * Co, &first, &last);
    for (int r = first; r < last; r++) {
        const int ci = r / Co, co = r - ci * Co;
        const IM2COL_T *w;
        IM2COL_T *bt;
        int step_w, step_bt; /* between adjacent kernel positions */
        if (a->HWC) {
            w = a->weights + (size_t)co * kk * Ci + ci;
            bt = a->bt_weights + (size_t)ci * kk * Co + co;
            step_w = Ci;
            step_bt = Co;
        } else {
            w = a->weights + ((size_t)co * Ci + ci) * kk;
            bt = a->bt_weights + ((size_t)ci * Co + co) * kk;
            step_w = step_bt = 1;
        }
        for (int k = 0; k < kk; k++)
            bt[k * step_bt] = w[(kk - 1 - k) * step_w];
    }
}
