/*
 * pulp_pooling_fp16.c: FP16 average and max pooling (shapes, tie rule and
 * rounding order in pulp_pooling_fp32.h and pulp_pooling_fp16.h). The
 * caller forks the team.
 *
 * Work split: the forward steps give each core a contiguous slice of the
 * C*Ho output rows; the backward steps a contiguous slice of the C*H input
 * rows, so each core owns the gradient elements it writes even where windows
 * overlap (no atomics, no barrier, and the summation order of an element is
 * the same for every core count).
 */
#include "pulp_pooling_fp16.h"

struct pool_geom {
    int C, H, W;    /* input */
    int Ho, Wo;     /* output */
    int Hk, Wk, Hs, Ws;
};

static struct pool_geom pool_geometry(const struct pool_args_fp16 *pa)
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
    const int cores = NUM_CORES, id = pi_core_id();
    *first = (int)((long long)units * id / cores);
    *last = (int)((long long)units * (id + 1) / cores);
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

/* 1/(Hk*Wk) rounded to fp16. The binary32 quotient is correctly rounded and
 * its conversion rounds again, but this double rounding is harmless: it can
 * only differ from one rounding if the binary32 quotient lands exactly on a
 * 16-bit midpoint m = M * 2^-f (M odd, < 2^12) while 1/K != m. Then
 * |1/K - m| = |2^f - K*M| / (K * 2^f) >= 1/(K * 2^f), i.e. a relative
 * distance >= 1/(K*M) > 2^-12/K, larger than binary32's 2^-24 for every
 * K = Hk*Wk <= 2048 (the header's limit), so binary32 cannot round 1/K onto m. */
static fp16 pool_reciprocal(const struct pool_geom *g)
{
    return fp16_from_f32(1.0f / (float)(g->Hk * g->Wk));
}

void pulp_avgpool_fp16_fw_cl(void *pool_args_fp16)
{
    const struct pool_args_fp16 *pa = pool_args_fp16;
    const struct pool_geom g = pool_geometry(pa);
    const fp16 *in = pa->input->data;
    fp16 *out = pa->output->data;
    const fp16 inv = pool_reciprocal(&g);
    int first, last;
    pool_core_slice(g.C * g.Ho, &first, &last);
    for (int u = first; u < last; u++) {
        const int c = u / g.Ho;
        const int oh = u - c * g.Ho;
        const int ih0 = oh * g.Hs;
        const fp16 *in_rows = in + (c * g.H + ih0) * g.W;
        fp16 *out_row = out + u * g.Wo;
        for (int ow = 0; ow < g.Wo; ow++) {
            const fp16 *win = in_rows + ow * g.Ws;
            fp16 sum = fp16_zero();
            for (int kh = 0; kh < g.Hk; kh++)
                for (int kw = 0; kw < g.Wk; kw++)
                    sum = fp16_add(sum, win[kh * g.W + kw]);
            out_row[ow] = fp16_mul(sum, inv);
        }
    }
}

void pulp_avgpool_fp16_bw_cl(void *pool_args_fp16)
{
    const struct pool_args_fp16 *pa = pool_args_fp16;
    const struct pool_geom g = pool_geometry(pa);
    const fp16 *dy = pa->output->diff;
    fp16 *dx = pa->input->diff;
    const fp16 inv = pool_reciprocal(&g);
    int first, last;
    pool_core_slice(g.C * g.H, &first, &last);
    for (int u = first; u < last; u++) {
        const int c = u / g.H;
        const int h = u - c * g.H;
        const int oh0 = pool_first_window(h, g.Hk, g.Hs);
        const int oh1 = pool_last_window(h, g.Hs, g.Ho);
        const fp16 *dy_c = dy + c * g.Ho * g.Wo;
        fp16 *dx_row = dx + u * g.W;
        for (int w = 0; w < g.W; w++) {
            const int ow0 = pool_first_window(w, g.Wk, g.Ws);
            const int ow1 = pool_last_window(w, g.Ws, g.Wo);
            fp16 sum = fp16_zero();
            for (int oh = oh0; oh <= oh1; oh++)
                for (int ow = ow0; ow <= ow1; ow++)
                    sum = fp16_add(sum, dy_c[oh * g.Wo + ow]);
            dx_row[w] = fp16_mul(sum, inv);
        }
    }
}

void pulp_maxpool_fp16_fw_cl(void *pool_args_fp16)
{
    const struct pool_args_fp16 *pa = pool_args_fp16;
    const struct pool_geom g = pool_geometry(pa);
    const fp16 *in = pa->input->data;
    fp16 *out = pa->output->data;
    int first, last;
    pool_core_slice(g.C * g.Ho, &first, &last);
    for (int u = first; u < last; u++) {
        const int c = u / g.Ho;
        const int oh = u - c * g.Ho;
        const int ih0 = oh * g.Hs;
        const fp16 *in_rows = in + (c * g.H + ih0) * g.W;
        fp16 *out_row = out + u * g.Wo;
        for (int ow = 0; ow < g.Wo; ow++) {
            const fp16 *win = in_rows + ow * g.Ws;
            /* Compared as binary32: the conversion is exact, so is the order. */
            fp16 best = win[0];
            float best_f = fp16_to_f32(best);
            for (int kh = 0; kh < g.Hk; kh++)
                for (int kw = 0; kw < g.Wk; kw++) {
                    const float v = fp16_to_f32(win[kh * g.W + kw]);
                    if (v > best_f || v != v) { /* a NaN wins, like the argmax below */
                        best_f = v;
                        best = win[kh * g.W + kw];
                    }
                }
            out_row[ow] = best;
        }
    }
}

/* Offset (kh*W + kw) of the selected element of a window whose first element
 * is win: the first maximum in row-major order, or the last NaN. */
static int maxpool_window_argmax(const fp16 *win, int W, int Hk, int Wk)
{
    float best = fp16_to_f32(win[0]);
    int arg = 0;
    for (int kh = 0; kh < Hk; kh++)
        for (int kw = 0; kw < Wk; kw++) {
            const float v = fp16_to_f32(win[kh * W + kw]);
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
static void maxpool_bw_band(const struct pool_geom *g, const fp16 *x_c, const fp16 *dy_c,
                            fp16 *dx_c, int r0, int r1)
{
    for (int i = r0 * g->W; i < r1 * g->W; i++)
        dx_c[i] = fp16_zero();
    const int oh0 = pool_first_window(r0, g->Hk, g->Hs);
    const int oh1 = pool_last_window(r1 - 1, g->Hs, g->Ho);
    const int lo = r0 * g->W, hi = r1 * g->W; /* owned offsets in the channel */
    for (int oh = oh0; oh <= oh1; oh++) {
        const int ih0 = oh * g->Hs;
        for (int ow = 0; ow < g->Wo; ow++) {
            const int start = ih0 * g->W + ow * g->Ws;
            const int at = start + maxpool_window_argmax(x_c + start, g->W, g->Hk, g->Wk);
            if (at >= lo && at < hi)
                dx_c[at] = fp16_add(dx_c[at], dy_c[oh * g->Wo + ow]);
        }
    }
}

void pulp_maxpool_fp16_bw_cl(void *pool_args_fp16)
{
    const struct pool_args_fp16 *pa = pool_args_fp16;
    const struct pool_geom g = pool_geometry(pa);
    const int plane = g.H * g.W, out_plane = g.Ho * g.Wo;
    int first, last;
    pool_core_slice(g.C * g.H, &first, &last);
    if (first >= last)
        return;
    for (int c = first / g.H; c * g.H < last; c++) {
        const int r0 = first > c * g.H ? first - c * g.H : 0;
        const int r1 = last < (c + 1) * g.H ? last - c * g.H : g.H;
        maxpool_bw_band(&g, pa->input->data + c * plane, pa->output->diff + c * out_plane,
                        pa->input->diff + c * plane, r0, r1);
    }
}
