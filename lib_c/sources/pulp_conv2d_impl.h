/*
 * pulp_conv2d_impl.h (internal): the Conv2D steps, written once for both
 * element types (contract in include/pulp_conv2d_fp32.h).
 *
 * Include it once per type after defining:
 *   CONV_T, CONV_ZERO            element type and its +0
 *   CONV_MAC(acc, a, b)          acc + a * b, rounded once per step
 *   CONV_ADD(a, b)               a + b
 *   CONV_ARGS                    struct Conv2D_args[_fp16]
 *   CONV_MM_ARGS, CONV_MGR_ARGS  struct matMul_args[_fp16], struct mm_manager_args[_fp16]
 *   CONV_MM_MANAGER              mm_manager[_fp16]
 *   CONV_UNROLL_ARGS, CONV_BT_ARGS  struct im2col_args[_fp16], struct blocktransp_args[_fp16]
 *   CONV_IM2COL, CONV_IM2ROW, CONV_BLOCKTRANSP  the public unrollings of that type
 * and after including pulp_im2col_impl.h for that type (the IG unrolling of
 * a strided or padded layer, which the public mod 1 does not do).
 * It defines static conv_fw(), conv_wg(), conv_ig() and conv_bw(), each
 * taking the args struct; the .c file wraps them in the public names.
 *
 * The direct kernels address every tensor through element strides (struct
 * conv_geom), so one loop nest serves CHW and HWC. Each core takes a
 * contiguous slice of output rows: FW (co, ho), WG (co, ci), IG (ci, h).
 */
#include "pulp_conv_ranges.h"

#ifdef OPTIMIZE
#define CONV_MATMUL_TYPE(opt) (opt)
#else
#define CONV_MATMUL_TYPE(opt) ((void)(opt), 0)
#endif

struct conv_geom {
    int Ci, H, W, Co, Ho, Wo, Hk, Wk;
    int sh, sw, U, L;
    int xc, xy, xx;         /* input (and its gradient): channel, row, column */
    int wco, wci, wky, wkx; /* weights: out channel, in channel, row, column */
    int yc, yy, yx;         /* output (and its gradient) */
};

static struct conv_geom conv_geom_of(const CONV_ARGS *a)
{
    struct conv_geom g;
    g.Ci = a->input->C;
    g.H = a->input->H;
    g.W = a->input->W;
    g.Co = a->output->C;
    g.Ho = a->output->H;
    g.Wo = a->output->W;
    g.Hk = a->coeff->H;
    g.Wk = a->coeff->W;
    g.sh = a->stride_h;
    g.sw = a->stride_w;
    g.U = a->Upad;
    g.L = a->Lpad;
    if (a->HWC) {
        g.xc = 1, g.xy = g.W * g.Ci, g.xx = g.Ci;
        g.wco = g.Hk * g.Wk * g.Ci, g.wci = 1, g.wky = g.Wk * g.Ci, g.wkx = g.Ci;
        g.yc = 1, g.yy = g.Wo * g.Co, g.yx = g.Co;
    } else {
        g.xc = g.H * g.W, g.xy = g.W, g.xx = 1;
        g.wco = g.Ci * g.Hk * g.Wk, g.wci = g.Hk * g.Wk, g.wky = g.Wk, g.wkx = 1;
        g.yc = g.Ho * g.Wo, g.yy = g.Wo, g.yx = 1;
    }
    return g;
}

/* ---- direct kernels ----------------------------------------------------------- */

struct conv_direct_job {
    const CONV_ARGS *args;
    struct conv_geom g;
};

/* db[co] = sum over the P output pixels p (row by row) of dOut(co, p), for
 * this core's co. */
static void conv_bias_grad(const CONV_ARGS *a, int Co, int P)
{
    const CONV_T *dy = a->output->diff;
    CONV_T *db = a->bias->diff;
    const int sc = a->HWC ? 1 : P, sp = a->HWC ? Co : 1; /* element strides of co and p */
    int first, last;
    conv_core_slice(Co, &first, &last);
    for (int co = first; co < last; co++) {
        CONV_T acc = CONV_ZERO;
        for (int p = 0; p < P; p++)
            acc = CONV_ADD(acc, dy[co * sc + p * sp]);
        db[co] = acc;
    }
}

static void conv_direct_fw_team(void *job_ptr)
{
    const struct conv_direct_job *job = job_ptr;
    const CONV_ARGS *a = job->args;
    const struct conv_geom g = job->g;
    const CONV_T *x = a->input->data, *w = a->coeff->data;
    const CONV_T *bias = a->USE_BIASES ? a->bias->data : NULL;
    CONV_T *y = a->output->data;
    int first, last;
    conv_core_slice(g.Co * g.Ho, &first, &last);
    for (int r = first; r < last; r++) {
        const int co = r / g.Ho, ho = r - co * g.Ho;
        const int iy0 = ho * g.sh - g.U;
        int kh0, kh1;
        conv_inside_range(iy0, 1, g.H, g.Hk, &kh0, &kh1);
        for (int wo = 0; wo < g.Wo; wo++) {
            const int ix0 = wo * g.sw - g.L;
            int kw0, kw1;
            conv_inside_range(ix0, 1, g.W, g.Wk, &kw0, &kw1);
            CONV_T acc = CONV_ZERO;
            for (int ci = 0; ci < g.Ci; ci++)
                for (int kh = kh0; kh < kh1; kh++) {
                    const CONV_T *xr = x + ci * g.xc + (iy0 + kh) * g.xy + (ix0 + kw0) * g.xx;
                    const CONV_T *wr = w + co * g.wco + ci * g.wci + kh * g.wky + kw0 * g.wkx;
                    for (int k = 0; k < kw1 - kw0; k++)
                        acc = CONV_MAC(acc, xr[k * g.xx], wr[k * g.wkx]);
                }
            if (bias)
                acc = CONV_ADD(acc, bias[co]);
            y[co * g.yc + ho * g.yy + wo * g.yx] = acc;
        }
    }
}

static void conv_direct_wg_team(void *job_ptr)
{
    const struct conv_direct_job *job = job_ptr;
    const CONV_ARGS *a = job->args;
    const struct conv_geom g = job->g;
    const CONV_T *x = a->input->data, *dy = a->output->diff;
    CONV_T *dw = a->coeff->diff;
    int first, last;
    conv_core_slice(g.Co * g.Ci, &first, &last);
    for (int r = first; r < last; r++) {
        const int co = r / g.Ci, ci = r - co * g.Ci;
        for (int kh = 0; kh < g.Hk; kh++) {
            int ho0, ho1;
            conv_inside_range(kh - g.U, g.sh, g.H, g.Ho, &ho0, &ho1);
            for (int kw = 0; kw < g.Wk; kw++) {
                int wo0, wo1;
                conv_inside_range(kw - g.L, g.sw, g.W, g.Wo, &wo0, &wo1);
                CONV_T acc = CONV_ZERO;
                for (int ho = ho0; ho < ho1; ho++) {
                    const CONV_T *dyr = dy + co * g.yc + ho * g.yy + wo0 * g.yx;
                    const CONV_T *xr = x + ci * g.xc + (ho * g.sh + kh - g.U) * g.xy
                                       + (wo0 * g.sw + kw - g.L) * g.xx;
                    for (int k = 0; k < wo1 - wo0; k++)
                        acc = CONV_MAC(acc, dyr[k * g.yx], xr[k * g.sw * g.xx]);
                }
                dw[co * g.wco + ci * g.wci + kh * g.wky + kw * g.wkx] = acc;
            }
        }
    }
    if (a->USE_BIASES)
        conv_bias_grad(a, g.Co, g.Ho * g.Wo);
}

static void conv_direct_ig_team(void *job_ptr)
{
    const struct conv_direct_job *job = job_ptr;
    const CONV_ARGS *a = job->args;
    const struct conv_geom g = job->g;
    const CONV_T *w = a->coeff->data, *dy = a->output->diff;
    CONV_T *dx = a->input->diff;
    int first, last;
    conv_core_slice(g.Ci * g.H, &first, &last);
    for (int r = first; r < last; r++) {
        const int ci = r / g.H, h = r - ci * g.H;
        for (int xw = 0; xw < g.W; xw++) {
            CONV_T acc = CONV_ZERO;
            for (int co = 0; co < g.Co; co++)
                for (int kh = 0; kh < g.Hk; kh++) {
                    /* The output row whose tap kh reads input row h. */
                    const int ty = h + g.U - kh;
                    if (ty < 0 || ty % g.sh || ty / g.sh >= g.Ho)
                        continue;
                    const CONV_T *dyr = dy + co * g.yc + (ty / g.sh) * g.yy;
                    const CONV_T *wr = w + co * g.wco + ci * g.wci + kh * g.wky;
                    for (int kw = 0; kw < g.Wk; kw++) {
                        const int tx = xw + g.L - kw;
                        if (tx < 0 || tx % g.sw || tx / g.sw >= g.Wo)
                            continue;
                        acc = CONV_MAC(acc, wr[kw * g.wkx], dyr[(tx / g.sw) * g.yx]);
                    }
                }
            dx[ci * g.xc + h * g.xy + xw * g.xx] = acc;
        }
    }
}

static void conv_direct(const CONV_ARGS *a, void (*team)(void *))
{
    struct conv_direct_job job = {a, conv_geom_of(a)};
    pi_cl_team_fork(NUM_CORES, team, &job);
}

/* ---- im2col + matmul ------------------------------------------------------------ */

struct conv_mm_job {
    const CONV_ARGS *args;
    CONV_UNROLL_ARGS unroll;
    CONV_BT_ARGS bt;
    CONV_MM_ARGS mm;
    CONV_MGR_ARGS mgr;
};

/* The job of one step of the layer of geometry g: the unrolling of mod
 * `mod` into i2c_buffer, and the product C[N x M] = A[N x K] . B (B stored
 * K x M, or M x K with trans_B) through mm_manager with kernel matmul_type. */
static void conv_mm_job_init(struct conv_mm_job *job, const CONV_ARGS *a, const struct conv_geom *g, int mod,
                             int step, int matmul_type, CONV_T *A, CONV_T *B, CONV_T *C, int N, int K, int M,
                             int trans_B)
{
    job->args = a;
    job->unroll = (CONV_UNROLL_ARGS){
        .input = a->input,
        .c = a->coeff,
        .output = a->output,
        .pBuffer = a->i2c_buffer,
        .Lpad = a->Lpad,
        .Rpad = a->Rpad,
        .Upad = a->Upad,
        .Dpad = a->Dpad,
        .mod = mod,
        .stride_w = a->stride_w,
        .stride_h = a->stride_h,
        .HWC = a->HWC,
        .USE_DMA = a->USE_DMA_IM2COL,
    };
    job->bt = (CONV_BT_ARGS){
        .weights = a->coeff->data,
        .bt_weights = a->bt_buffer,
        .Cin = g->Ci,
        .Cout = g->Co,
        .Hk = g->Hk,
        .Wk = g->Wk,
        .HWC = a->HWC,
    };
    job->mm = (CONV_MM_ARGS){
        .A = A,
        .B = B,
        .C = C,
        .N = N,
        .M = M,
        .K = K,
        .trans_B = trans_B,
        .H = g->H,
        .W = g->W,
        .pW = g->Wk,
        .pH = g->Hk,
        .pCin = g->Ci,
        .pCout = g->Co,
        .stride_h = a->stride_h,
        .stride_w = a->stride_w,
        .Lpad = a->Lpad,
        .Rpad = a->Rpad,
        .Upad = a->Upad,
        .Dpad = a->Dpad,
        .bias = NULL,
        .bias_dim = 0,
        .USE_BIASES = 0,
        .bias_transposed = 0,
        .HWC = a->HWC,
    };
    job->mgr = (CONV_MGR_ARGS){
        .mm_args = &job->mm,
        .mm_dw_args = NULL,
        .layer_type = LAYER_CONV2D,
        .step_type = step,
        .matmul_type = CONV_MATMUL_TYPE(matmul_type),
    };
}

static void conv_mm_fw_team(void *job_ptr)
{
    struct conv_mm_job *job = job_ptr;
    if (job->args->HWC)
        CONV_IM2ROW(&job->unroll);
    else
        CONV_IM2COL(&job->unroll);
    pi_cl_team_barrier();
    CONV_MM_MANAGER(&job->mgr);
}

/* FW whose unrolling is the input itself (conv_unrolls_in_place): the product alone. */
static void conv_mm_fw_in_place_team(void *job_ptr)
{
    struct conv_mm_job *job = job_ptr;
    CONV_MM_MANAGER(&job->mgr);
}

/* WG after its unrolling: dB and, in HWC, dOut transposed, then the product.
 * Inlined in both its teams: clang made it a function of its own, and a
 * team's call cost each core about 10 instructions. */
static inline __attribute__((always_inline)) void conv_mm_wg_product(struct conv_mm_job *job)
{
    const CONV_ARGS *a = job->args;
    const int Co = job->mm.N, P = job->mm.K; /* dW[Co x T] = dOut[Co x P] . X^T */
    if (a->USE_BIASES)
        conv_bias_grad(a, Co, P); /* reads only dOut: no wait for the unrolling */
    if (a->HWC) {
        /* bt_buffer[co][p] = dOut[p][co]: dOut as the Co x P operand A. */
        const CONV_T *dy = a->output->diff;
        CONV_T *dyt = a->bt_buffer;
        int first, last;
        conv_core_slice(Co, &first, &last);
        for (int co = first; co < last; co++)
            for (int p = 0; p < P; p++)
                dyt[co * P + p] = dy[p * Co + co];
    }
    pi_cl_team_barrier();
    CONV_MM_MANAGER(&job->mgr);
}

static void conv_mm_wg_team(void *job_ptr)
{
    struct conv_mm_job *job = job_ptr;
    CONV_IM2COL(&job->unroll);
    conv_mm_wg_product(job);
}

static void conv_mm_wg_in_place_team(void *job_ptr)
{
    conv_mm_wg_product(job_ptr);
}

/* IG whose unrolling is dOut itself: the weights' block transposition, then the product. */
static void conv_mm_ig_in_place_team(void *job_ptr)
{
    struct conv_mm_job *job = job_ptr;
    CONV_BLOCKTRANSP(&job->bt);
    pi_cl_team_barrier();
    CONV_MM_MANAGER(&job->mgr);
}

/* The IG unrolling of the layer, strides and pads included: the public
 * mod 1 ignores them (as the API says), so it is done here. */
static void conv_mm_ig_team(void *job_ptr)
{
    struct conv_mm_job *job = job_ptr;
    CONV_BLOCKTRANSP(&job->bt);
    if (job->args->HWC) {
        unroll_rows_of(&job->unroll, 1);
    } else {
        const struct unroll_geom ig = unroll_geom_of(&job->unroll, 1);
        unroll_cols_of(&ig, job->unroll.pBuffer, job->unroll.USE_DMA);
    }
    pi_cl_team_barrier();
    CONV_MM_MANAGER(&job->mgr);
}

/* ---- steps ------------------------------------------------------------------------ */

/* Whether the layer's unrollings are their sources as they are: a 1x1
 * kernel with strides 1 and an output grid the input's size, so that window
 * p's one tap reads pixel p. (With strides 1 a 1x1 kernel has Ho = H + Upad
 * + Dpad, Wo likewise: the sizes say that there are no pads.) FW and WG's
 * unrolling is then the input, IG's dOut, in either layout; the matmul
 * reads them in place (the *_in_place_team functions) and i2c_buffer is
 * neither written nor read. The test of a 1x1 kernel's rest is a call of
 * its own, on the args, so that a step with a larger kernel pays two
 * compares for it (clang computed every compare without branches, about 20
 * instructions per step) and the geometry can stay in registers. */
__attribute__((noinline)) static int conv_1x1_unrolls_in_place(const CONV_ARGS *a)
{
    return a->stride_h == 1 && a->stride_w == 1 && a->output->H == a->input->H && a->output->W == a->input->W;
}

static inline int conv_unrolls_in_place(const CONV_ARGS *a, const struct conv_geom *g)
{
    return g->Hk == 1 && g->Wk == 1 && conv_1x1_unrolls_in_place(a);
}

/* Each step is its im2col path, a function of its own so that the direct
 * path does not pay for its frame (GCC and clang saved every register the
 * im2col path uses before the test of USE_IM2COL), or the direct path. */
__attribute__((noinline)) static void conv_fw_im2col(const CONV_ARGS *a)
{
    const struct conv_geom geom = conv_geom_of(a), *const g = &geom;
    struct conv_mm_job job;
    const int taps = g->Ci * g->Hk * g->Wk, P = g->Ho * g->Wo;
    const int in_place = conv_unrolls_in_place(a, g);
    CONV_T *X = in_place ? a->input->data : a->i2c_buffer; /* the unrolled input: P x T in HWC, T x P in CHW */
    if (a->HWC)
        conv_mm_job_init(&job, a, g, 0, STEP_FW, a->opt_matmul_type_fw, X, a->coeff->data,
                         a->output->data, P, taps, g->Co, 1);
    else
        conv_mm_job_init(&job, a, g, 0, STEP_FW, a->opt_matmul_type_fw, a->coeff->data, X,
                         a->output->data, g->Co, taps, P, 0);
    if (a->USE_BIASES) {
        job.mm.bias = a->bias->data;
        job.mm.bias_dim = g->Co;
        job.mm.USE_BIASES = 1;
        job.mm.bias_transposed = !a->HWC; /* HWC: one bias per column of C, CHW: per row */
    }
    pi_cl_team_fork(NUM_CORES, in_place ? conv_mm_fw_in_place_team : conv_mm_fw_team, &job);
}

static void conv_fw(const CONV_ARGS *a)
{
    if (a->USE_IM2COL)
        conv_fw_im2col(a);
    else
        conv_direct(a, conv_direct_fw_team);
}

__attribute__((noinline)) static void conv_wg_im2col(const CONV_ARGS *a)
{
    const struct conv_geom geom = conv_geom_of(a), *const g = &geom;
    struct conv_mm_job job;
    const int taps = g->Ci * g->Hk * g->Wk, P = g->Ho * g->Wo;
    /* dW[Co x T] = dOut[Co x P] . im2col(in)^T; in HWC dOut is P x Co and
     * goes through bt_buffer transposed first. im2col(in) is T x P (trans_B);
     * in place it is the input, T x P in CHW, P x T in HWC (not transposed). */
    CONV_T *dy = a->HWC ? a->bt_buffer : a->output->diff;
    const int in_place = conv_unrolls_in_place(a, g);
    conv_mm_job_init(&job, a, g, 0, STEP_WGT_GRAD, a->opt_matmul_type_wg, dy,
                     in_place ? a->input->data : a->i2c_buffer, a->coeff->diff, g->Co, P, taps,
                     !(in_place && a->HWC));
    pi_cl_team_fork(NUM_CORES, in_place ? conv_mm_wg_in_place_team : conv_mm_wg_team, &job);
}

static void conv_wg(const CONV_ARGS *a)
{
    if (a->USE_IM2COL)
        conv_wg_im2col(a);
    else
        conv_direct(a, conv_direct_wg_team);
}

__attribute__((noinline)) static void conv_ig_im2col(const CONV_ARGS *a)
{
    const struct conv_geom geom = conv_geom_of(a), *const g = &geom;
    struct conv_mm_job job;
    const int taps = g->Co * g->Hk * g->Wk, P = g->H * g->W;
    const int in_place = conv_unrolls_in_place(a, g);
    CONV_T *X = in_place ? a->output->diff : a->i2c_buffer; /* the unrolled dOut: P x T in HWC, T x P in CHW */
    if (a->HWC)
        conv_mm_job_init(&job, a, g, 1, STEP_IN_GRAD, a->opt_matmul_type_ig, X, a->bt_buffer,
                         a->input->diff, P, taps, g->Ci, 1);
    else
        conv_mm_job_init(&job, a, g, 1, STEP_IN_GRAD, a->opt_matmul_type_ig, a->bt_buffer, X,
                         a->input->diff, g->Ci, taps, P, 0);
    pi_cl_team_fork(NUM_CORES, in_place ? conv_mm_ig_in_place_team : conv_mm_ig_team, &job);
}

static void conv_ig(const CONV_ARGS *a)
{
    if (a->USE_IM2COL)
        conv_ig_im2col(a);
    else
        conv_direct(a, conv_direct_ig_team);
}

static void conv_bw(const CONV_ARGS *a)
{
    if (!a->skip_wg_grad)
        conv_wg(a);
    if (!a->skip_in_grad)
        conv_ig(a);
}
