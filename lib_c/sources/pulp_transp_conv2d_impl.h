/*
 * pulp_transp_conv2d_impl.h (internal): the transposed 2D convolution steps,
 * written once for both element types (contract, padding, buffers and sums
 * in include/pulp_transp_conv2d_fp32.h).
 *
 * Include it once per type after defining:
 *   CONV_T, CONV_ZERO            element type and its +0
 *   CONV_MAC(acc, a, b)          acc + a * b, rounded once per step
 *   CONV_ADD(a, b)               a + b
 *   TC_ARGS                      struct Transp_Conv2D_args[_fp16]
 *   CONV_MM_ARGS, CONV_MGR_ARGS  struct matMul_args[_fp16], struct mm_manager_args[_fp16]
 *   CONV_MM_MANAGER              mm_manager[_fp16]
 * It defines static tc_fw(), tc_wg(), tc_ig() and tc_bw(), each taking the
 * args struct; the .c file wraps them in the public names.
 *
 * Every loop addresses a tensor through the element strides of its axes
 * (struct tc_geom), so the same loops serve CHW and HWC; only tc_geometry()
 * knows the layouts. Positions outside the input or the output are excluded
 * by loop bounds, or become exact zeros in the gathered operands.
 *
 * The gathered operands are indexed by (tap, position): entry (k, p) sits at
 * buf[k * ks + p * ps], with (ks, ps) = (positions, 1) for a col buffer (one
 * row per tap) and (1, taps) for a row buffer (one row per position). A
 * tap's index k is its offset in the matrix it is multiplied with:
 *   FW: k = (ci*Hk + kh)*Wk + kw, the columns of bt (CHW) or the rows of W (HWC);
 *   IG, WG: k = co*w_co + kh*w_kh + kw*w_kw, the offset of (co, kh, kw) inside
 *   one ci block of W in its layout.
 */
#include "pulp_conv_ranges.h"
#include "pulp_elem_loops.h"
#include "pulp_mm_args.h"

#ifdef OPTIMIZE
#define TC_MATMUL_TYPE(opt) (opt)
#else
#define TC_MATMUL_TYPE(opt) ((void)(opt), 0)
#endif

/* Sizes, geometry and element strides: input (ci, row, col), output
 * (co, row, col), weights (ci, co, kh, kw). data and diff share them. */
struct tc_geom {
    int Ci, Co, H, W, Hk, Wk, Ho, Wo;
    int sh, sw, U, L;
    int in_c, in_h, in_w;
    int out_c, out_h, out_w;
    int w_ci, w_co, w_kh, w_kw;
};

struct tc_job {
    const TC_ARGS *args;
    struct tc_geom g;
    CONV_MM_ARGS mm;
    CONV_MGR_ARGS mgr;
};

static void tc_geometry(const TC_ARGS *a, struct tc_geom *g)
{
    g->Ci = a->input->C;
    g->H = a->input->H;
    g->W = a->input->W;
    g->Co = a->output->C;
    g->Hk = a->coeff->H;
    g->Wk = a->coeff->W;
    g->sh = a->stride_h;
    g->sw = a->stride_w;
    g->U = a->inUpad;
    g->L = a->inLpad;
    g->Ho = (g->H - 1) * g->sh + g->Hk - a->inUpad - a->inDpad;
    g->Wo = (g->W - 1) * g->sw + g->Wk - a->inLpad - a->inRpad;
    if (a->HWC) {
        g->in_c = 1, g->in_h = g->W * g->Ci, g->in_w = g->Ci;
        g->out_c = 1, g->out_h = g->Wo * g->Co, g->out_w = g->Co;
        g->w_ci = g->Hk * g->Wk * g->Co, g->w_co = 1, g->w_kh = g->Wk * g->Co, g->w_kw = g->Co;
    } else {
        g->in_c = g->H * g->W, g->in_h = g->W, g->in_w = 1;
        g->out_c = g->Ho * g->Wo, g->out_h = g->Wo, g->out_w = 1;
        g->w_ci = g->Co * g->Hk * g->Wk, g->w_co = g->Hk * g->Wk, g->w_kh = g->Wk, g->w_kw = 1;
    }
}

/* Input position whose tap k lands on output position o (o = i*stride + k - pad),
 * or -1 when none does. */
static int input_at(int o, int k, int stride, int pad, int n_in)
{
    const int t = o + pad - k;
    if (t < 0 || t % stride)
        return -1;
    return t / stride < n_in ? t / stride : -1;
}

/* Output position that tap k of input position i lands on, or -1 outside. */
static int output_at(int i, int k, int stride, int pad, int n_out)
{
    const int o = i * stride + k - pad;
    return o >= 0 && o < n_out ? o : -1;
}

/* ---- direct kernels ---------------------------------------------------------
 * The published contract: FW accumulates into output->data (starting from the
 * bias instead with USE_BIASES) and IG into input->diff, so the caller zeroes
 * them first. WG overwrites. */

static void tc_fw_direct(const struct tc_job *job)
{
    const struct tc_geom *g = &job->g;
    const TC_ARGS *a = job->args;
    const CONV_T *in = a->input->data, *w = a->coeff->data;
    CONV_T *out = a->output->data;
    int first, last;
    conv_core_slice(g->Co * g->Ho, &first, &last);
    for (int r = first; r < last; r++) {
        const int co = r / g->Ho, y = r % g->Ho;
        int i0, i1;
        /* Inputs whose tap kh = y + U - i*sh is in [0, Hk): the flipped tap is. */
        conv_inside_range(g->Hk - 1 - y - g->U, g->sh, g->Hk, g->H, &i0, &i1);
        for (int x = 0; x < g->Wo; x++) {
            int j0, j1;
            conv_inside_range(g->Wk - 1 - x - g->L, g->sw, g->Wk, g->W, &j0, &j1);
            CONV_T *dst = out + co * g->out_c + y * g->out_h + x * g->out_w;
            CONV_T acc = a->USE_BIASES ? a->bias->data[co] : *dst;
            for (int ci = 0; ci < g->Ci; ci++)
                for (int i = i0; i < i1; i++) {
                    const CONV_T *src = in + ci * g->in_c + i * g->in_h;
                    const CONV_T *k = w + ci * g->w_ci + co * g->w_co + (y + g->U - i * g->sh) * g->w_kh;
                    for (int j = j0; j < j1; j++)
                        acc = CONV_MAC(acc, src[j * g->in_w], k[(x + g->L - j * g->sw) * g->w_kw]);
                }
            *dst = acc;
        }
    }
}

static void tc_ig_direct(const struct tc_job *job)
{
    const struct tc_geom *g = &job->g;
    const CONV_T *w = job->args->coeff->data, *dout = job->args->output->diff;
    CONV_T *din = job->args->input->diff;
    int first, last;
    conv_core_slice(g->Ci * g->H, &first, &last);
    for (int r = first; r < last; r++) {
        const int ci = r / g->H, i = r % g->H;
        const int y0 = i * g->sh - g->U;
        int kh0, kh1;
        conv_inside_range(y0, 1, g->Ho, g->Hk, &kh0, &kh1);
        for (int j = 0; j < g->W; j++) {
            const int x0 = j * g->sw - g->L;
            int kw0, kw1;
            conv_inside_range(x0, 1, g->Wo, g->Wk, &kw0, &kw1);
            CONV_T *dst = din + ci * g->in_c + i * g->in_h + j * g->in_w;
            CONV_T acc = *dst;
            for (int co = 0; co < g->Co; co++)
                for (int kh = kh0; kh < kh1; kh++) {
                    const CONV_T *dy = dout + co * g->out_c + (y0 + kh) * g->out_h;
                    const CONV_T *k = w + ci * g->w_ci + co * g->w_co + kh * g->w_kh;
                    for (int kw = kw0; kw < kw1; kw++)
                        acc = CONV_MAC(acc, k[kw * g->w_kw], dy[(x0 + kw) * g->out_w]);
                }
            *dst = acc;
        }
    }
}

static void tc_wg_direct(const struct tc_job *job)
{
    const struct tc_geom *g = &job->g;
    const CONV_T *in = job->args->input->data, *dout = job->args->output->diff;
    CONV_T *dw = job->args->coeff->diff;
    const int taps = g->Hk * g->Wk;
    int first, last;
    conv_core_slice(g->Ci * g->Co * taps, &first, &last);
    for (int r = first; r < last; r++) {
        const int ci = r / (g->Co * taps), co = r / taps % g->Co;
        const int kh = r % taps / g->Wk, kw = r % g->Wk;
        int i0, i1, j0, j1;
        conv_inside_range(kh - g->U, g->sh, g->Ho, g->H, &i0, &i1);
        conv_inside_range(kw - g->L, g->sw, g->Wo, g->W, &j0, &j1);
        CONV_T acc = CONV_ZERO;
        for (int i = i0; i < i1; i++) {
            const CONV_T *src = in + ci * g->in_c + i * g->in_h;
            const CONV_T *dy = dout + co * g->out_c + (i * g->sh + kh - g->U) * g->out_h;
            for (int j = j0; j < j1; j++)
                acc = CONV_MAC(acc, src[j * g->in_w], dy[(j * g->sw + kw - g->L) * g->out_w]);
        }
        dw[ci * g->w_ci + co * g->w_co + kh * g->w_kh + kw * g->w_kw] = acc;
    }
}

/* dbias[co] = sum of dOut[co] over the output, split over co. */
static void tc_bias_grad(const struct tc_job *job)
{
    const struct tc_geom *g = &job->g;
    const CONV_T *dout = job->args->output->diff;
    int first, last;
    conv_core_slice(g->Co, &first, &last);
    for (int co = first; co < last; co++) {
        CONV_T acc = CONV_ZERO;
        for (int y = 0; y < g->Ho; y++)
            for (int x = 0; x < g->Wo; x++)
                acc = CONV_ADD(acc, dout[co * g->out_c + y * g->out_h + x * g->out_w]);
        job->args->bias->diff[co] = acc;
    }
}

/* ---- gathered operands for the matmul path ---------------------------------- */

/* FW operand: entry ((ci*Hk + kh)*Wk + kw, y*Wo + x) = in[ci][i][j] where
 * y = i*sh + kh - U and x = j*sw + kw - L, else 0. Split over the taps. */
static void tc_gather_fw(const struct tc_geom *g, const CONV_T *in, CONV_T *buf, int ks, int ps)
{
    const int taps = g->Hk * g->Wk;
    int first, last;
    conv_core_slice(g->Ci * taps, &first, &last);
    for (int k = first; k < last; k++) {
        const int ci = k / taps, kh = k % taps / g->Wk, kw = k % g->Wk;
        /* The x that some j lands on: x = x0 + m*sw from j = j0 + m, m < n.
         * Worked out once per tap: no division per entry. */
        int x0, j0, n;
        conv_dilated_range(g->L - kw, g->sw, g->W, g->Wo, &x0, &j0, &n);
        for (int y = 0; y < g->Ho; y++) {
            const int i = input_at(y, kh, g->sh, g->U, g->H);
            CONV_T *row = buf + k * ks + y * g->Wo * ps;
            for (int x = 0; x < g->Wo; x++)
                row[x * ps] = CONV_ZERO;
            if (i < 0 || n == 0) /* (src would point outside) */
                continue;
            const CONV_T *src = in + ci * g->in_c + i * g->in_h + j0 * g->in_w;
            for (int m = 0, x = x0; m < n; m++, x += g->sw, src += g->in_w)
                row[x * ps] = *src;
        }
    }
}

/* IG/WG operand: entry (co*w_co + kh*w_kh + kw*w_kw, i*W + j) =
 * dOut[co][i*sh + kh - U][j*sw + kw - L], or 0 outside the output. */
static void tc_gather_bw(const struct tc_geom *g, const CONV_T *dout, CONV_T *buf, int ks, int ps)
{
    const int taps = g->Hk * g->Wk;
    int first, last;
    conv_core_slice(g->Co * taps, &first, &last);
    for (int t = first; t < last; t++) {
        const int co = t / taps, kh = t % taps / g->Wk, kw = t % g->Wk;
        const int k = co * g->w_co + kh * g->w_kh + kw * g->w_kw;
        for (int i = 0; i < g->H; i++) {
            const int y = output_at(i, kh, g->sh, g->U, g->Ho);
            for (int j = 0; j < g->W; j++) {
                const int x = y < 0 ? -1 : output_at(j, kw, g->sw, g->L, g->Wo);
                buf[k * ks + (i * g->W + j) * ps] =
                    x < 0 ? CONV_ZERO : dout[co * g->out_c + y * g->out_h + x * g->out_w];
            }
        }
    }
}

/* dst[c][r] = src[r][c] for a rows x cols src, split over dst's rows. */
static void tc_transpose(const CONV_T *src, CONV_T *dst, int rows, int cols)
{
    int first, last;
    conv_core_slice(cols, &first, &last);
    for (int c = first; c < last; c++)
        for (int r = 0; r < rows; r++)
            dst[c * rows + r] = src[r * cols + c];
}

/* ---- steps -------------------------------------------------------------------- */

static void tc_fw_team(void *job_ptr)
{
    struct tc_job *job = job_ptr;
    const struct tc_geom *g = &job->g;
    const TC_ARGS *a = job->args;
    if (!a->USE_IM2COL) {
        tc_fw_direct(job);
        return;
    }
    const int K = g->Ci * g->Hk * g->Wk, P = g->Ho * g->Wo;
    if (a->HWC) {
        tc_gather_fw(g, a->input->data, a->i2c_buffer, 1, K);
    } else {
        tc_gather_fw(g, a->input->data, a->i2c_buffer, P, 1);
        /* bt[co][(ci, kh, kw)] = W[ci][co][kh][kw]: W is Ci x (Co x taps) blocks. */
        const int taps = g->Hk * g->Wk;
        int first, last;
        conv_core_slice(g->Co, &first, &last);
        for (int co = first; co < last; co++)
            for (int ci = 0; ci < g->Ci; ci++)
                PTL_COPY_ELEMS(a->bt_buffer + (co * g->Ci + ci) * taps, a->coeff->data + ci * g->w_ci + co * taps,
                               taps);
    }
    pi_cl_team_barrier();
    CONV_MM_MANAGER(&job->mgr);
}

static void tc_ig_team(void *job_ptr)
{
    struct tc_job *job = job_ptr;
    const struct tc_geom *g = &job->g;
    const TC_ARGS *a = job->args;
    if (!a->USE_IM2COL) {
        tc_ig_direct(job);
        return;
    }
    const int K = g->Co * g->Hk * g->Wk, P = g->H * g->W;
    if (a->HWC)
        tc_gather_bw(g, a->output->diff, a->i2c_buffer, 1, K);
    else
        tc_gather_bw(g, a->output->diff, a->i2c_buffer, P, 1);
    pi_cl_team_barrier();
    CONV_MM_MANAGER(&job->mgr);
}

static void tc_wg_team(void *job_ptr)
{
    struct tc_job *job = job_ptr;
    const struct tc_geom *g = &job->g;
    const TC_ARGS *a = job->args;
    if (a->USE_BIASES)
        tc_bias_grad(job);
    if (!a->USE_IM2COL) {
        tc_wg_direct(job);
        return;
    }
    const int K = g->Co * g->Hk * g->Wk, P = g->H * g->W;
    if (a->HWC) {
        tc_gather_bw(g, a->output->diff, a->i2c_buffer, 1, K);
        tc_transpose(a->input->data, a->bt_buffer, P, g->Ci);
    } else {
        tc_gather_bw(g, a->output->diff, a->i2c_buffer, P, 1);
    }
    pi_cl_team_barrier();
    CONV_MM_MANAGER(&job->mgr);
}

/* Sets up the job (geometry and the step's product) and runs team on it.
 * Every field is set, none by memset (pulp_mm_args.h). */
static void tc_fork(const TC_ARGS *a, int step, void (*team)(void *))
{
    struct tc_job job;
    job.args = a;
    struct tc_geom *g = &job.g;
    tc_geometry(a, g);
    const int P_in = g->H * g->W, P_out = g->Ho * g->Wo;
    const int K_fw = g->Ci * g->Hk * g->Wk, K_bw = g->Co * g->Hk * g->Wk;
    CONV_T *A, *B, *C;
    int N, M, K, trans_B = 0, type;
    if (step == STEP_FW) {
        type = a->opt_matmul_type_fw;
        if (a->HWC) /* out[P_out x Co] = row[P_out x K] . W[K x Co] */
            A = a->i2c_buffer, B = a->coeff->data, N = P_out, M = g->Co;
        else        /* out[Co x P_out] = bt[Co x K] . col[K x P_out] */
            A = a->bt_buffer, B = a->i2c_buffer, N = g->Co, M = P_out;
        C = a->output->data, K = K_fw;
    } else if (step == STEP_IN_GRAD) {
        type = a->opt_matmul_type_ig;
        if (a->HWC) /* dIn[P_in x Ci] = row[P_in x K] . W^T, W stored Ci x K */
            A = a->i2c_buffer, B = a->coeff->data, N = P_in, M = g->Ci, trans_B = 1;
        else        /* dIn[Ci x P_in] = W[Ci x K] . col[K x P_in] */
            A = a->coeff->data, B = a->i2c_buffer, N = g->Ci, M = P_in;
        C = a->input->diff, K = K_bw;
    } else {
        type = a->opt_matmul_type_wg;
        if (a->HWC) /* dW[Ci x K] = in^T[Ci x P_in] . row[P_in x K] */
            A = a->bt_buffer, B = a->i2c_buffer;
        else        /* dW[Ci x K] = in[Ci x P_in] . col^T, col stored K x P_in */
            A = a->input->data, B = a->i2c_buffer, trans_B = 1;
        C = a->coeff->diff, N = g->Ci, M = K_bw, K = P_in;
    }
    /* FW's bias: one per row of C in CHW (Co x P_out), one per column in HWC. */
    CONV_T *const bias = step == STEP_FW && a->USE_BIASES ? a->bias->data : NULL;
    CONV_MM_ARGS *mm = &job.mm;
    PTL_MM_PLAIN_INIT(job.mm, A, B, C, N, K, M, trans_B, bias);
    if (bias && a->HWC)
        mm->bias_dim = g->Co, mm->bias_transposed = 0;
    mm->H = g->H, mm->W = g->W, mm->pH = g->Hk, mm->pW = g->Wk, mm->pCin = g->Ci, mm->pCout = g->Co;
    mm->stride_h = g->sh, mm->stride_w = g->sw, mm->HWC = a->HWC;
    mm->Lpad = a->inLpad, mm->Rpad = a->inRpad, mm->Upad = a->inUpad, mm->Dpad = a->inDpad;
    PTL_MGR_INIT(job.mgr, mm, LAYER_CONV2D, step, TC_MATMUL_TYPE(type));
    pi_cl_team_fork(NUM_CORES, team, &job);
}

static void tc_fw(const TC_ARGS *a)
{
    tc_fork(a, STEP_FW, tc_fw_team);
}

static void tc_wg(const TC_ARGS *a)
{
    tc_fork(a, STEP_WGT_GRAD, tc_wg_team);
}

static void tc_ig(const TC_ARGS *a)
{
    tc_fork(a, STEP_IN_GRAD, tc_ig_team);
}

static void tc_bw(const TC_ARGS *a)
{
    if (!a->skip_wg_grad)
        tc_wg(a);
    if (!a->skip_in_grad)
        tc_ig(a);
}
