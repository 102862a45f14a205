/*
 * pulp_pooling_impl.h (internal): average and max pooling, written once for
 * both element types (contract, tie rule and rounding order in
 * include/pulp_pooling_fp32.h). The caller forks the team.
 *
 * Include it once per type after defining:
 *   POOL_T          element type
 *   POOL_ARGS       struct pool_args[_fp16]
 *   POOL_TO_F(v)    POOL_T -> float (exact), for comparisons
 *   POOL_FROM_F(f)  float -> POOL_T (rounded), for the reciprocal
 *   POOL_ZERO       zero of POOL_T
 *   POOL_ADD(a, b)  a + b, POOL_MUL(a, b)  a * b, each rounded once
 *   POOL_PICK(f, e) the output of a max window whose maximum is f as float
 *                   and e as stored: f for float (e is then dead code), e
 *                   for fp16 (a NaN keeps its bits)
 *   POOL_NAME(kind, step)  the public name, kind avg|max, step fw|bw
 * It defines the four public functions.
 *
 * Work split: the forward steps give each core a contiguous slice of the
 * C*Ho output rows; the backward steps a contiguous slice of the C*H input
 * rows, so each core owns the gradient elements it writes even where windows
 * overlap (no atomics, no barrier, and the summation order of an element is
 * the same for every core count).
 */
#include "pulp_elem_loops.h"
#include "pulp_train_defines.h"

struct pool_geom {
    int C, H, W;    /* input */
    int Ho, Wo;     /* output */
    int Hk, Wk, Hs, Ws;
};

static struct pool_geom pool_geometry(const POOL_ARGS *pa)
{
    struct pool_geom g;
    g.C = pa->input->C;
    g.H = pa->input->H;
    g.W = pa->input->W;
    g.Hk = pa->Hker;
    g.Wk = pa->Wker;
    g.Hs = pa->Hstride;
    g.Ws = pa->Wstride;
    g.Ho = (g.H - g.Hk) / g.Hs + 1;
    g.Wo = (g.W - g.Wk) / g.Ws + 1;
    return g;
}

/* This core's contiguous slice [*first, *last) of `units` rows; slices of
 * neighbouring cores differ by at most one row. */
static void pool_core_slice(int units, int *first, int *last)
{
    /* floor(units * id / cores) without 64-bit arithmetic, which is a
     * library call on the 32-bit cores: with units = q * cores + r, it is
     * q * id + floor(r * id / cores), and r * id < cores * cores. */
    const int cores = NUM_CORES, id = pi_core_id();
    const int q = units / cores, r = units - q * cores;
    *first = q * id + r * id / cores;
    *last = q * (id + 1) + r * (id + 1) / cores;
}

/* First output index whose window (start o*s, length k) reaches position i. */
static int pool_first_window(int i, int k, int s)
{
    return i - k + 1 <= 0 ? 0 : (i - k + s) / s;
}

/* Last output index (< n_out) whose window starts at or before position i. */
static int pool_last_window(int i, int s, int n_out)
{
    const int o = i / s;
    return o < n_out - 1 ? o : n_out - 1;
}

/* 1/(Hk*Wk): the binary32 quotient of two exact floats, rounded to POOL_T
 * (why that is correctly rounded for fp16: pulp_pooling_fp16.c). */
static POOL_T pool_reciprocal(const struct pool_geom *g)
{
    return POOL_FROM_F(1.0f / (float)(g->Hk * g->Wk));
}

/* The sum of the Hk x Wk window at win (rows W apart) in row-major order. */
static POOL_T pool_window_sum(const POOL_T *win, int W, int Hk, int Wk)
{
    POOL_T sum = POOL_ZERO;
    for (int kh = 0; kh < Hk; kh++)
        for (int kw = 0; kw < Wk; kw++)
            sum = POOL_ADD(sum, win[kh * W + kw]);
    return sum;
}

/* The maximum of the Hk x Wk window at win (rows W apart), compared as
 * binary32 (the conversion is exact, so is the order); a NaN wins, like the
 * argmax below. */
static POOL_T pool_window_max(const POOL_T *win, int W, int Hk, int Wk)
{
    POOL_T best = win[0];
    float best_f = POOL_TO_F(best);
    for (int kh = 0; kh < Hk; kh++)
        for (int kw = 0; kw < Wk; kw++) {
            const float v = POOL_TO_F(win[kh * W + kw]);
            if (v > best_f || v != v) {
                best_f = v;
                best = win[kh * W + kw];
            }
        }
    return POOL_PICK(best_f, best);
}

/* The forward steps: every output element of this core's slice of the C*Ho
 * output rows is the mean (is_max 0) or the maximum (is_max 1) of its
 * window. Always inlined with a constant is_max, so each step compiles to
 * its own loop (not inlined, GCC and clang call it with is_max at run time). */
static inline __attribute__((always_inline)) void pool_fw(const POOL_ARGS *pa, int is_max)
{
    const struct pool_geom g = pool_geometry(pa);
    const POOL_T *in = pa->input->data;
    POOL_T *out = pa->output->data;
    const POOL_T inv = is_max ? POOL_ZERO : pool_reciprocal(&g);
    int first, last;
    pool_core_slice(g.C * g.Ho, &first, &last);
    for (int u = first; u < last; u++) {
        const int c = u / g.Ho;
        const int oh = u - c * g.Ho;
        const int ih0 = oh * g.Hs;
        const POOL_T *in_rows = in + (c * g.H + ih0) * g.W;
        POOL_T *out_row = out + u * g.Wo;
        for (int ow = 0; ow < g.Wo; ow++) {
            const POOL_T *win = in_rows + ow * g.Ws;
            out_row[ow] = is_max ? pool_window_max(win, g.W, g.Hk, g.Wk)
                                 : POOL_MUL(pool_window_sum(win, g.W, g.Hk, g.Wk), inv);
        }
    }
}

void POOL_NAME(avg, fw)(void *pool_args)
{
    pool_fw(pool_args, 0);
}

void POOL_NAME(max, fw)(void *pool_args)
{
    pool_fw(pool_args, 1);
}

/* Row dx_row (W elements) of one channel's input gradient: element w is inv
 * times the sum of dy over the windows that cover it, whose rows are the n
 * rows from dy_rows (Wo apart). The n rows' column sums go first into
 * dx_row[0, Wo) (Wo <= W); then the row is written from its last element
 * down: element w reads the sums of windows ow <= w / Ws <= w, none of them
 * overwritten yet (the sum at w itself read before w is written). Every sum
 * starts at +0, as an accumulation into a zeroed gradient does. */
static void pool_avg_bw_row(const struct pool_geom *g, const POOL_T *dy_rows, int n, POOL_T *dx_row,
                            POOL_T inv)
{
    const int Wo = g->Wo, Wk = g->Wk, Ws = g->Ws;
    PTL_COPY_ELEMS(dx_row, dy_rows, Wo);
    for (int r = 1; r < n; r++) {
        const POOL_T *const dy_r = dy_rows + r * Wo;
        for (int ow = 0; ow < Wo; ow++)
            dx_row[ow] = POOL_ADD(dx_row[ow], dy_r[ow]);
    }
    int w = g->W; /* dx_row[w, W) is written */
    if (Wk <= Ws) { /* a column is in one window or none: window by window */
        for (int ow = Wo - 1; ow >= 0; ow--) {
            const int w0 = ow * Ws, w1 = w0 + Wk;
            const POOL_T v = POOL_MUL(POOL_ADD(POOL_ZERO, dx_row[ow]), inv);
            PTL_FILL_ELEMS(dx_row + w1, w - w1, POOL_ZERO); /* after the window */
            for (int x = w0; x < w1; x++)
                dx_row[x] = v;
            w = w0;
        }
        return;
    }
    while (w-- > 0) {
        const int ow0 = pool_first_window(w, Wk, Ws), ow1 = pool_last_window(w, Ws, Wo);
        POOL_T sum = POOL_ZERO;
        for (int ow = ow0; ow <= ow1; ow++)
            sum = POOL_ADD(sum, dx_row[ow]);
        dx_row[w] = POOL_MUL(sum, inv);
    }
}

void POOL_NAME(avg, bw)(void *pool_args)
{
    const POOL_ARGS *pa = pool_args;
    const struct pool_geom g = pool_geometry(pa);
    const POOL_T *dy = pa->output->diff;
    POOL_T *dx = pa->input->diff;
    const POOL_T inv = pool_reciprocal(&g);
    int first, last;
    pool_core_slice(g.C * g.H, &first, &last);
    for (int u = first; u < last; u++) {
        const int c = u / g.H;
        const int h = u - c * g.H;
        const int oh0 = pool_first_window(h, g.Hk, g.Hs);
        const int oh1 = pool_last_window(h, g.Hs, g.Ho);
        POOL_T *dx_row = dx + u * g.W;
        if (oh1 < oh0) { /* no window covers the row */
            PTL_FILL_ELEMS(dx_row, g.W, POOL_ZERO);
            continue;
        }
        pool_avg_bw_row(&g, dy + (c * g.Ho + oh0) * g.Wo, oh1 - oh0 + 1, dx_row, inv);
    }
}

/* Offset (kh*W + kw) of the selected element of a window whose first element
 * is win: the first maximum in row-major order, or the last NaN. */
static int pool_window_argmax(const POOL_T *win, int W, int Hk, int Wk)
{
    float best = POOL_TO_F(win[0]);
    int arg = 0;
    for (int kh = 0; kh < Hk; kh++)
        for (int kw = 0; kw < Wk; kw++) {
            const float v = POOL_TO_F(win[kh * W + kw]);
            if (v > best || v != v) {
                best = v;
                arg = kh * W + kw;
            }
        }
    return arg;
}

/* Input rows [r0, r1) of one channel: zero their gradient, then add the
 * gradient of every window that touches them and selects one of them.
 * Windows that straddle two cores' bands are scanned by both; each adds only
 * to its own rows. */
static void pool_max_bw_band(const struct pool_geom *g, const POOL_T *x_c, const POOL_T *dy_c,
                             POOL_T *dx_c, int r0, int r1)
{
    PTL_FILL_ELEMS(dx_c + r0 * g->W, (r1 - r0) * g->W, POOL_ZERO);
    const int oh0 = pool_first_window(r0, g->Hk, g->Hs);
    const int oh1 = pool_last_window(r1 - 1, g->Hs, g->Ho);
    const int lo = r0 * g->W, hi = r1 * g->W; /* owned offsets in the channel */
    for (int oh = oh0; oh <= oh1; oh++) {
        const int ih0 = oh * g->Hs;
        for (int ow = 0; ow < g->Wo; ow++) {
            const int start = ih0 * g->W + ow * g->Ws;
            const int at = start + pool_window_argmax(x_c + start, g->W, g->Hk, g->Wk);
            if (at >= lo && at < hi)
                dx_c[at] = POOL_ADD(dx_c[at], dy_c[oh * g->Wo + ow]);
        }
    }
}

void POOL_NAME(max, bw)(void *pool_args)
{
    const POOL_ARGS *pa = pool_args;
    const struct pool_geom g = pool_geometry(pa);
    const int plane = g.H * g.W, out_plane = g.Ho * g.Wo;
    int first, last;
    pool_core_slice(g.C * g.H, &first, &last);
    if (first >= last)
        return;
    for (int c = first / g.H; c * g.H < last; c++) {
        const int r0 = first > c * g.H ? first - c * g.H : 0;
        const int r1 = last < (c + 1) * g.H ? last - c * g.H : g.H;
        pool_max_bw_band(&g, pa->input->data + c * plane, pa->output->diff + c * out_plane,
                         pa->input->diff + c * plane, r0, r1);
    }
}
