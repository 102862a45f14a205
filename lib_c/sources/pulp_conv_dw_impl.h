/*
 * pulp_conv_dw_impl.h (internal): the depthwise convolution steps, written
 * once for both element types (contract in include/pulp_conv_dw_fp32.h).
 *
 * Include it once per type after defining:
 *   CONV_T, CONV_ZERO    element type and its +0
 *   CONV_MAC(acc, a, b)  acc + a * b, rounded once per step
 *   DW_ARGS              struct DepthWise_Conv_args[_fp16]
 * It defines static dw_fw(), dw_wg(), dw_ig() and dw_bw(), each taking the
 * args struct; the .c file wraps them in the public names.
 *
 * The loops address every tensor through element strides of its channel, row
 * and column axes, so the same loops serve CHW and HWC; only dw_geometry()
 * knows the layouts. Taps that fall in the padding are excluded by loop
 * bounds computed once per row or column, not tested per element.
 */
#include "pulp_conv_ranges.h"

/* Sizes, geometry and the element strides (channel, row, column) of each
 * tensor; data and diff of a tensor share its strides. */
struct dw_geom {
    int C, H, W, Hk, Wk, Ho, Wo;
    int sh, sw, U, L;
    int in_c, in_h, in_w;
    int out_c, out_h, out_w;
    int k_c, k_h, k_w;
};

struct dw_job {
    const DW_ARGS *args;
    struct dw_geom g;
};

static void dw_geometry(const DW_ARGS *a, struct dw_geom *g)
{
    g->C = a->input->C;
    g->H = a->input->H;
    g->W = a->input->W;
    g->Hk = a->coeff->H;
    g->Wk = a->coeff->W;
    g->sh = a->stride_h;
    g->sw = a->stride_w;
    g->U = a->Upad;
    g->L = a->Lpad;
    g->Ho = (g->H + a->Upad + a->Dpad - g->Hk) / g->sh + 1;
    g->Wo = (g->W + a->Lpad + a->Rpad - g->Wk) / g->sw + 1;
    if (a->HWC) {
        g->in_c = 1, g->in_h = g->W * g->C, g->in_w = g->C;
        g->out_c = 1, g->out_h = g->Wo * g->C, g->out_w = g->C;
        g->k_c = 1, g->k_h = g->Wk * g->C, g->k_w = g->C;
    } else {
        g->in_c = g->H * g->W, g->in_h = g->W, g->in_w = 1;
        g->out_c = g->Ho * g->Wo, g->out_h = g->Wo, g->out_w = 1;
        g->k_c = g->Hk * g->Wk, g->k_h = g->Wk, g->k_w = 1;
    }
}

/* FW, split over the C*Ho output rows. */
static void dw_fw_team(void *job_ptr)
{
    const struct dw_job *job = job_ptr;
    const struct dw_geom *g = &job->g;
    const CONV_T *in = job->args->input->data, *w = job->args->coeff->data;
    CONV_T *out = job->args->output->data;
    int first, last;
    conv_core_slice(g->C * g->Ho, &first, &last);
    for (int r = first; r < last; r++) {
        const int c = r / g->Ho, ho = r % g->Ho;
        const int h0 = ho * g->sh - g->U;
        int kh0, kh1;
        conv_inside_range(h0, 1, g->H, g->Hk, &kh0, &kh1);
        const CONV_T *x_c = in + c * g->in_c, *k_c = w + c * g->k_c;
        const int in_w = g->in_w, k_w = g->k_w;
        for (int wo = 0; wo < g->Wo; wo++) {
            const int w0 = wo * g->sw - g->L;
            int kw0, kw1;
            conv_inside_range(w0, 1, g->W, g->Wk, &kw0, &kw1);
            CONV_T acc = CONV_ZERO;
            for (int kh = kh0; kh < kh1; kh++) {
                const CONV_T *x = x_c + (h0 + kh) * g->in_h + (w0 + kw0) * in_w;
                const CONV_T *k = k_c + kh * g->k_h + kw0 * k_w;
                for (int n = 0, xi = 0, ki = 0; n < kw1 - kw0; n++, xi += in_w, ki += k_w)
                    acc = CONV_MAC(acc, k[ki], x[xi]);
            }
            out[c * g->out_c + ho * g->out_h + wo * g->out_w] = acc;
        }
    }
}

/* WG, split over the C*Hk*Wk weights. */
static void dw_wg_team(void *job_ptr)
{
    const struct dw_job *job = job_ptr;
    const struct dw_geom *g = &job->g;
    const CONV_T *in = job->args->input->data, *dout = job->args->output->diff;
    CONV_T *dw = job->args->coeff->diff;
    int first, last;
    conv_core_slice(g->C * g->Hk * g->Wk, &first, &last);
    for (int r = first; r < last; r++) {
        const int c = r / (g->Hk * g->Wk), kh = r / g->Wk % g->Hk, kw = r % g->Wk;
        /* Outputs whose tap (kh, kw) reads inside the input. */
        int ho0, ho1, wo0, wo1;
        conv_inside_range(kh - g->U, g->sh, g->H, g->Ho, &ho0, &ho1);
        conv_inside_range(kw - g->L, g->sw, g->W, g->Wo, &wo0, &wo1);
        const int out_w = g->out_w, x_step = g->sw * g->in_w;
        CONV_T acc = CONV_ZERO;
        for (int ho = ho0; ho < ho1; ho++) {
            const CONV_T *dy = dout + c * g->out_c + ho * g->out_h + wo0 * out_w;
            const CONV_T *x = in + c * g->in_c + (ho * g->sh - g->U + kh) * g->in_h +
                              (wo0 * g->sw - g->L + kw) * g->in_w;
            for (int n = 0, di = 0, xi = 0; n < wo1 - wo0; n++, di += out_w, xi += x_step)
                acc = CONV_MAC(acc, dy[di], x[xi]);
        }
        dw[c * g->k_c + kh * g->k_h + kw * g->k_w] = acc;
    }
}

/* IG, split over the C*H input rows. */
static void dw_ig_team(void *job_ptr)
{
    const struct dw_job *job = job_ptr;
    const struct dw_geom *g = &job->g;
    const CONV_T *w = job->args->coeff->data, *dout = job->args->output->diff;
    CONV_T *din = job->args->input->diff;
    const int out_w = g->out_w, k_step = g->sw * g->k_w;
    int first, last;
    conv_core_slice(g->C * g->H, &first, &last);
    for (int r = first; r < last; r++) {
        const int c = r / g->H, hi = r % g->H;
        /* Outputs whose window covers input row hi, i.e. whose tap
         * kh = hi + U - ho*sh is in [0, Hk): the flipped tap
         * Hk-1-kh = ho*sh + Hk-1-hi-U is. */
        int ho0, ho1;
        conv_inside_range(g->Hk - 1 - hi - g->U, g->sh, g->Hk, g->Ho, &ho0, &ho1);
        for (int wi = 0; wi < g->W; wi++) {
            int wo0, wo1;
            conv_inside_range(g->Wk - 1 - wi - g->L, g->sw, g->Wk, g->Wo, &wo0, &wo1);
            CONV_T acc = CONV_ZERO;
            for (int ho = ho0; ho < ho1; ho++) {
                const CONV_T *dy = dout + c * g->out_c + ho * g->out_h + wo0 * out_w;
                const CONV_T *k = w + c * g->k_c + (hi + g->U - ho * g->sh) * g->k_h;
                /* kw = wi + L - wo*sw falls by sw per output. */
                for (int n = 0, di = 0, ki = (wi + g->L - wo0 * g->sw) * g->k_w; n < wo1 - wo0;
                     n++, di += out_w, ki -= k_step)
                    acc = CONV_MAC(acc, k[ki], dy[di]);
            }
            din[c * g->in_c + hi * g->in_h + wi * g->in_w] = acc;
        }
    }
}

static void dw_fork(const DW_ARGS *a, void (*team)(void *))
{
    struct dw_job job;
    job.args = a;
    dw_geometry(a, &job.g);
    pi_cl_team_fork(NUM_CORES, team, &job);
}

static void dw_fw(const DW_ARGS *a)
{
    dw_fork(a, dw_fw_team);
}

static void dw_wg(const DW_ARGS *a)
{
    dw_fork(a, dw_wg_team);
}

static void dw_ig(const DW_ARGS *a)
{
    dw_fork(a, dw_ig_team);
}

static void dw_bw(const DW_ARGS *a)
{
    if (!a->skip_wg_grad)
        dw_wg(a);
    if (!a->skip_in_grad)
        dw_ig(a);
}
