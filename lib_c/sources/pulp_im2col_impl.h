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
 * unrolling of a strided or padded layer (unroll_geom_of(a, 1) with
 * unroll_cols_of() / unroll_rows_of()), which the public mod 1 does not do.
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

/* dst[0..n) = src[0..n): a row of windows, usually long. 4 at a time, the
 * loads first: one pointer add each and a branch per 4 elements, and an
 * in-order core does not wait on each load. The rest written out: GCC turns
 * a loop of single copies into a call of memmove, which costs more than a
 * short run. (Measured with the suite's perf gate on QEMU: used for the
 * HWC pixels too, it cost the small-channel im2row cases up to 23%.) */
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

/* dst[0..n) = 0, 4 at a time. A loop of single stores would be compiled to
 * a call of memset, which costs more than the one or two elements of a pad
 * (the usual n: measured, memset was 2.5% of a 16x16 conv FW on QEMU). */
static inline void unroll_zero(IM2COL_T *dst, int n)
{
    if (n <= 0)
        return;
    IM2COL_T *const end4 = dst + (n & ~3);
    while (dst != end4) {
        dst[0] = dst[1] = dst[2] = dst[3] = IM2COL_ZERO;
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
    const int s = g.step_x, jump = s * g.sx;
    int lo, hi; /* the tap's windows that read inside the source row */
    conv_inside_range(kx + g.off_x, s, g.srcW, g.OW, &lo, &hi);
    IM2COL_T *dst = buf + (size_t)first * g.OW;
    for (int r = first; r < last; r++, dst += g.OW) {
        const int y = unroll_source(oy * g.step_y + ky + g.off_y, g.dil_y, g.srcH);
        const int row = c * g.sc + y * g.sy; /* the source row's offset, used when y >= 0 */
        const int base = kx + g.off_x;
        if (y < 0) {
            unroll_zero(dst, g.OW);
        } else if (g.dil_x != 1) {
            for (int ox = 0; ox < g.OW; ox++) {
                const int x = unroll_source(ox + base, g.dil_x, g.srcW);
                dst[ox] = x < 0 ? IM2COL_ZERO : g.src[row + x * g.sx];
            }
        } else {
            unroll_zero(dst, lo);
            if (hi > lo) {
                const IM2COL_T *from = g.src + row + (lo * s + base) * g.sx;
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
            conv_inside_range(kx + g.off_x, s, g.srcW, g.OW, &lo, &hi);
        }
    }
}

/* X^T, P x T, into buf: this core's windows, each a row of T taps. */
static inline void unroll_rows_of(const struct unroll_geom *geom, IM2COL_T *const buf, int use_dma)
{
    const struct unroll_geom g = *geom;
    const int taps = g.C * g.Hk * g.Wk;
    /* Taps of one (ky, kx) are contiguous in the row and in the source. */
    const int runs = g.tc == 1 && g.sc == 1;
    int first, last;
    conv_core_slice(g.OH * g.OW, &first, &last);
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
                const IM2COL_T *s = g.src + y * g.sy + x * g.sx;
                if (runs) {
                    unroll_copy_run(d, s, g.C, use_dma);
                } else {
                    for (int c = 0; c < g.C; c++)
                        d[c * g.tc] = s[c * g.sc];
                }
            }
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
    const struct unroll_geom g = unroll_geom_of(a, 0);
    unroll_rows_of(&g, a->pBuffer, a->USE_DMA);
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
