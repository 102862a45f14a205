/*
 * pulp_pooling_fp32.c: FP32 average and max pooling (shapes, tie rule and
 * rounding order in pulp_pooling_fp32.h). The caller forks the team.
 *
 * Work split: the forward steps give each core a contiguous slice of the
 * C*Ho output rows; the backward steps a contiguous slice of the C*H input
 * rows, so each core owns the gradient elements it writes even where windows
 * overlap (no atomics, no barrier, and the summation order of an element is
 * the same for every core count).
 */
#include "pulp_pooling_fp32.h"

struct pool_geom {
    int C, H, W;    /* input */
    int Ho, Wo;     /* output */
    int Hk, Wk, Hs, Ws;
};

static struct pool_geom pool_geometry(const struct pool_args *pa)
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

/* 1/(Hk*Wk) rounded once to float: the quotient of two exact floats. */
static float pool_reciprocal(const struct pool_geom *g)
{
    return 1.0f / (float)(g->Hk * g->Wk);
}

void pulp_avgpool_fp32_fw_cl(void *pool_args)
{
    const struct pool_args *pa = pool_args;
    const struct pool_geom g = pool_geometry(pa);
    const float *in = pa->input->data;
    float *out = pa->output->data;
    const float inv = pool_reciprocal(&g);
    int first, last;
    pool_core_slice(g.C * g.Ho, &first, &last);
    for (int u = first; u < last; u++) {
        const int c = u / g.Ho;
        const int oh = u - c * g.Ho;
        const int ih0 = oh * g.Hs;
        const float *in_rows = in + (c * g.H + ih0) * g.W;
        float *out_row = out + u * g.Wo;
        for (int ow = 0; ow < g.Wo; ow++) {
            const float *win = in_rows + ow * g.Ws;
            float sum = 0.0f;
            for (int kh = 0; kh < g.Hk; kh++)
                for (int kw = 0; kw < g.Wk; kw++)
                    sum += win[kh * g.W + kw];
            out_row[ow] = sum * inv;
        }
    }
}

void pulp_avgpool_fp32_bw_cl(void *pool_args)
{
    const struct pool_args *pa = pool_args;
    const struct pool_geom g = pool_geometry(pa);
    const float *dy = pa->output->diff;
    float *dx = pa->input->diff;
    const float inv = pool_reciprocal(&g);
    int first, last;
    pool_core_slice(g.C * g.H, &first, &last);
    for (int u = first; u < last; u++) {
        const int c = u / g.H;
        const int h = u - c * g.H;
        const int oh0 = pool_first_window(h, g.Hk, g.Hs);
        const int oh1 = pool_last_window(h, g.Hs, g.Ho);
        const float *dy_c = dy + c * g.Ho * g.Wo;
        float *dx_row = dx + u * g.W;
        for (int w = 0; w < g.W; w++) {
            const int ow0 = pool_first_window(w, g.Wk, g.Ws);
            const int ow1 = pool_last_window(w, g.Ws, g.Wo);
            float sum = 0.0f;
            for (int oh = oh0; oh <= oh1; oh++)
                for (int ow = ow0; ow <= ow1; ow++)
                    sum += dy_c[oh * g.Wo + ow];
            dx_row[w] = sum * inv;
        }
    }
}

void pulp_maxpool_fp32_fw_cl(void *pool_args)
{
    const struct pool_args *pa = pool_args;
    const struct pool_geom g = pool_geometry(pa);
    const float *in = pa->input->data;
    float *out = pa->output->data;
    int first, last;
    pool_core_slice(g.C * g.Ho, &first, &last);
    for (int u = first; u < last; u++) {
        const int c = u / g.Ho;
        const int oh = u - c * g.Ho;
        const int ih0 = oh * g.Hs;
        const float *in_rows = in + (c * g.H + ih0) * g.W;
        float *out_row = out + u * g.Wo;
        for (int ow = 0; ow < g.Wo; ow++) {
            const float *win = in_rows + ow * g.Ws;
            float best = win[0];
            for (int kh = 0; kh < g.Hk; kh++)
                for (int kw = 0; kw < g.Wk; kw++) {
                    const float v = win[kh * g.W + kw];
                    if (v > best || v != v) /* a NaN wins, like the argmax below */
                        best = v;
                }
            out_row[ow] = best;
        }
    }
}

/* Offset (kh*W + kw) of the selected element of a window whose first element
 * is win: the first maximum in row-major order, or the last NaN. */
static int maxpool_window_argmax(const float *win, int W, int Hk, int Wk)
{
    float best = win[0];
    int arg = 0;
    for (int kh = 0; kh < Hk; kh++)
        for (int kw = 0; kw < Wk; kw++) {
            const float v = win[kh * W + kw];
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
static void maxpool_bw_band(const struct pool_geom *g, const float *x_c, const float *dy_c,
                            float *dx_c, int r0, int r1)
{
    for (int i = r0 * g->W; i < r1 * g->W; i++)
        dx_c[i] = 0.0f;
    const int oh0 = pool_first_window(r0, g->Hk, g->Hs);
    const int oh1 = pool_last_window(r1 - 1, g->Hs, g->Ho);
    const int lo = r0 * g->W, hi = r1 * g->W; /* owned offsets in the channel */
    for (int oh = oh0; oh <= oh1; oh++) {
        const int ih0 = oh * g->Hs;
        for (int ow = 0; ow < g->Wo; ow++) {
            const int start = ih0 * g->W + ow * g->Ws;
            const int at = start + maxpool_window_argmax(x_c + start, g->W, g->Hk, g->Wk);
            if (at >= lo && at < hi)
                dx_c[at] += dy_c[oh * g->Wo + ow];
        }
    }
}

void pulp_maxpool_fp32_bw_cl(void *pool_args)
{
    const struct pool_args *pa = pool_args;
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
