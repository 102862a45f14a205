/*
 * pulp_pooling_fp32.c: FP32 average and max pooling of the fake library, CHW, no padding.
 * Per-core bodies (the caller forks): the channels are split over the cores
 * (all but the max pooling FW, below).
 */
#include "pulp_pooling_fp32.h"

/* This core's channels [*first, *last): blocks of ceil(C / cores). */
static void channel_share(int C, int *first, int *last)
{
    const int cores = NUM_CORES, block = (C + cores - 1) / cores;
    const int start = pi_core_id() * block;
    *first = start < C ? start : C;
    *last = start + block < C ? start + block : C;
}

/* First maximum of the window at (oh, ow), in row-major window order. */
static int window_argmax(const struct pool_args *p, const float *x, int oh, int ow)
{
    const int W = p->input->W;
    int best = oh * p->Hstride * W + ow * p->Wstride;
    for (int kh = 0; kh < p->Hker; kh++)
        for (int kw = 0; kw < p->Wker; kw++) {
            const int at = (oh * p->Hstride + kh) * W + ow * p->Wstride + kw;
            if (x[at] > x[best])
                best = at;
        }
    return best;
}

void pulp_avgpool_fp32_fw_cl(void *pool_args)
{
    const struct pool_args *p = pool_args;
    const struct blob *in = p->input, *out = p->output;
    const float scale = (float)(1.0f / (float)(p->Hker * p->Wker));
    int first, last;
    channel_share(in->C, &first, &last);
    for (int c = first; c < last; c++) {
        const float *x = in->data + c * in->H * in->W;
        for (int oh = 0; oh < out->H; oh++)
            for (int ow = 0; ow < out->W; ow++) {
                float sum = 0.0f;
                for (int kh = 0; kh < p->Hker; kh++)
                    for (int kw = 0; kw < p->Wker; kw++)
                        sum += x[(oh * p->Hstride + kh) * in->W + ow * p->Wstride + kw];
                out->data[(c * out->H + oh) * out->W + ow] = sum * scale;
            }
    }
}

/* First and last output index whose window covers input position n. */
static void covering(int n, int kernel, int stride, int n_out, int *lo, int *hi)
{
    const int from = n - kernel + 1;
    *lo = from <= 0 ? 0 : (from + stride - 1) / stride;
    *hi = n / stride < n_out - 1 ? n / stride : n_out - 1;
}

/* input->diff: for each element, the sum of the output gradients of the
 * windows that cover it, times 1/(Hker*Wker). */
void pulp_avgpool_fp32_bw_cl(void *pool_args)
{
    const struct pool_args *p = pool_args;
    const struct blob *in = p->input, *out = p->output;
    const float scale = (float)(1.0f / (float)(p->Hker * p->Wker));
    int first, last;
    channel_share(in->C, &first, &last);
    for (int c = first; c < last; c++) {
        const float *dy = out->diff + c * out->H * out->W;
        for (int h = 0; h < in->H; h++)
            for (int w = 0; w < in->W; w++) {
                int oh0, oh1, ow0, ow1;
                covering(h, p->Hker, p->Hstride, out->H, &oh0, &oh1);
                covering(w, p->Wker, p->Wstride, out->W, &ow0, &ow1);
                float sum = 0.0f;
                for (int oh = oh0; oh <= oh1; oh++)
                    for (int ow = ow0; ow <= ow1; ow++)
                        sum += dy[oh * out->W + ow];
                in->diff[(c * in->H + h) * in->W + w] = sum * scale;
            }
    }
}

/* Works out this core's channels and then loops over every channel, as the
 * published pad_tensor does: every core writes the whole output, the same
 * values, so the results are right in any order of the cores, and only
 * ThreadSanitizer sees the race. */
void pulp_maxpool_fp32_fw_cl(void *pool_args)
{
    const struct pool_args *p = pool_args;
    const struct blob *in = p->input, *out = p->output;
    int first, last;
    channel_share(in->C, &first, &last);
    (void)first, (void)last;
    for (int c = 0; c < in->C; c++) {
        const float *x = in->data + c * in->H * in->W;
        for (int oh = 0; oh < out->H; oh++)
            for (int ow = 0; ow < out->W; ow++)
                out->data[(c * out->H + oh) * out->W + ow] = x[window_argmax(p, x, oh, ow)];
    }
}

/* input->diff: each window's output gradient goes to its first maximum. */
void pulp_maxpool_fp32_bw_cl(void *pool_args)
{
    const struct pool_args *p = pool_args;
    const struct blob *in = p->input, *out = p->output;
    int first, last;
    channel_share(in->C, &first, &last);
    for (int c = first; c < last; c++) {
        const float *x = in->data + c * in->H * in->W;
        float *dx = in->diff + c * in->H * in->W;
        for (int i = 0; i < in->H * in->W; i++)
            dx[i] = 0.0f;
        for (int oh = 0; oh < out->H; oh++)
            for (int ow = 0; ow < out->W; ow++)
                dx[window_argmax(p, x, oh, ow)] += out->diff[(c * out->H + oh) * out->W + ow];
    }
}
