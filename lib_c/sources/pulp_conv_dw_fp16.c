/*
 * pulp_conv_dw_fp16.c: FP16 depthwise convolution with direct kernels
 * (shapes and semantics in pulp_conv_dw_fp16.h).
 *
 * The loops address every tensor through element strides of its channel, row
 * and column axes, so the same loops serve CHW and HWC; only dw_geometry()
 * knows the layouts. Taps that fall in the padding are excluded by loop
 * bounds computed once per row or column, not tested per element.
 */
#include "pulp_conv_dw_fp16.h"
#include "pulp_conv_window.h"

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
    const struct DepthWise_Conv_args_fp16 *args;
    struct dw_geom g;
};

static void dw_geometry(const struct DepthWise_Conv_args_fp16 *a, struct dw_geom *g)
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

static void dw_fw_team(void *job_ptr)
{
    const struct dw_job *job = job_ptr;
    const struct dw_geom *g = &job->g;
    const fp16 *in = job->args->input->data, *w = job->args->coeff->data;
    fp16 *out = job->args->output->data;
    int first, last;
    pulp_conv_core_slice(g->C * g->Ho, &first, &last);
    for (int r = first; r < last; r++) {
        const int c = r / g->Ho, ho = r % g->Ho;
        const int h0 = ho * g->sh - g->U;
        int kh0, kh1;
        pulp_conv_taps_inside(h0, g->Hk, g->H, &kh0, &kh1);
        const fp16 *x_c = in + c * g->in_c, *k_c = w + c * g->k_c;
        const int in_w = g->in_w, k_w = g->k_w;
        for (int wo = 0; wo < g->Wo; wo++) {
            const int w0 = wo * g->sw - g->L;
            int kw0, kw1;
            pulp_conv_taps_inside(w0, g->Wk, g->W, &kw0, &kw1);
            fp16 acc = fp16_zero();
            for (int kh = kh0; kh < kh1; kh++) {
                const fp16 *x = x_c + (h0 + kh) * g->in_h + (w0 + kw0) * in_w;
                const fp16 *k = k_c + kh * g->k_h + kw0 * k_w;
                for (int n = 0, xi = 0, ki = 0; n < kw1 - kw0; n++, xi += in_w, ki += k_w)
                    acc = fp16_fma(k[ki], x[xi], acc);
            }
            out[c * g->out_c + ho * g->out_h + wo * g->out_w] = acc;
        }
    }
}

static void dw_wg_team(void *job_ptr)
{
    const struct dw_job *job = job_ptr;
    const struct dw_geom *g = &job->g;
    const fp16 *in = job->args->input->data, *dout = job->args->output->diff;
    fp16 *dw = job->args->coeff->diff;
    int first, last;
    pulp_conv_core_slice(g->C * g->Hk * g->Wk, &first, &last);
    for (int r = first; r < last; r++) {
        const int c = r / (g->Hk * g->Wk), kh = r / g->Wk % g->Hk, kw = r % g->Wk;
        int ho0, ho1, wo0, wo1;
        pulp_conv_strided_between(g->U - kh, g->H + g->U - kh, g->sh, g->Ho, &ho0, &ho1);
        pulp_conv_strided_between(g->L - kw, g->W + g->L - kw, g->sw, g->Wo, &wo0, &wo1);
        const int out_w = g->out_w, x_step = g->sw * g->in_w;
        fp16 acc = fp16_zero();
        for (int ho = ho0; ho < ho1; ho++) {
            const fp16 *dy = dout + c * g->out_c + ho * g->out_h + wo0 * out_w;
            const fp16 *x = in + c * g->in_c + (ho * g->sh - g->U + kh) * g->in_h +
                             (wo0 * g->sw - g->L + kw) * g->in_w;
            for (int n = 0, di = 0, xi = 0; n < wo1 - wo0; n++, di += out_w, xi += x_step)
                acc = fp16_fma(dy[di], x[xi], acc);
        }
        dw[c * g->k_c + kh * g->k_h + kw * g->k_w] = acc;
    }
}

static void dw_ig_team(void *job_ptr)
{
    const struct dw_job *job = job_ptr;
    const struct dw_geom *g = &job->g;
    const fp16 *w = job->args->coeff->data, *dout = job->args->output->diff;
    fp16 *din = job->args->input->diff;
    int first, last;
    const int out_w = g->out_w, k_step = g->sw * g->k_w;
    pulp_conv_core_slice(g->C * g->H, &first, &last);
    for (int r = first; r < last; r++) {
        const int c = r / g->H, hi = r % g->H;
        /* Outputs whose window covers input row hi: kh = hi + U - ho*sh in [0, Hk). */
        int ho0, ho1;
        pulp_conv_strided_between(hi + g->U - g->Hk + 1, hi + g->U + 1, g->sh, g->Ho, &ho0, &ho1);
        for (int wi = 0; wi < g->W; wi++) {
            int wo0, wo1;
            pulp_conv_strided_between(wi + g->L - g->Wk + 1, wi + g->L + 1, g->sw, g->Wo, &wo0, &wo1);
            fp16 acc = fp16_zero();
            for (int ho = ho0; ho < ho1; ho++) {
                const fp16 *dy = dout + c * g->out_c + ho * g->out_h + wo0 * out_w;
                const fp16 *k = w + c * g->k_c + (hi + g->U - ho * g->sh) * g->k_h;
                /* kw = wi + L - wo*sw falls by sw per output. */
                for (int n = 0, di = 0, ki = (wi + g->L - wo0 * g->sw) * g->k_w; n < wo1 - wo0;
                     n++, di += out_w, ki -= k_step)
                    acc = fp16_fma(k[ki], dy[di], acc);
            }
            din[c * g->in_c + hi * g->in_h + wi * g->in_w] = acc;
        }
    }
}

static void dw_fork(void *DepthWise_Conv_args_fp16, void (*team)(void *))
{
    struct dw_job job;
    job.args = DepthWise_Conv_args_fp16;
    dw_geometry(job.args, &job.g);
    pi_cl_team_fork(NUM_CORES, team, &job);
}

void pulp_conv_dw_fp16_fw_cl(void *DepthWise_Conv_args_fp16)
{
    dw_fork(DepthWise_Conv_args_fp16, dw_fw_team);
}

void pulp_conv_dw_fp16_bw_cl(void *DepthWise_Conv_args_fp16)
{
    const struct DepthWise_Conv_args_fp16 *a = DepthWise_Conv_args_fp16;
    if (!a->skip_wg_grad)
        pulp_conv_dw_fp16_bw_param_grads_cl(DepthWise_Conv_args_fp16);
    if (!a->skip_in_grad)
        pulp_conv_dw_fp16_bw_input_grads_cl(DepthWise_Conv_args_fp16);
}

void pulp_conv_dw_fp16_bw_param_grads_cl(void *DepthWise_Conv_args_fp16)
{
    dw_fork(DepthWise_Conv_args_fp16, dw_wg_team);
}

void pulp_conv_dw_fp16_bw_input_grads_cl(void *DepthWise_Conv_args_fp16)
{
    dw_fork(DepthWise_Conv_args_fp16, dw_ig_team);
}
