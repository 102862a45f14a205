/*
 * Runner ops of the Conv2D family: the layer (forked inside the primitive),
 * and the standalone unrollings and block transpose (forked here, by the
 * caller, as the API says).
 *
 * Compiled once per dtype (ptl_op_dtype.h). The conv2d and unrolling ops
 * start with the layer's geometry, named as the API names its fields:
 *   Ci H W Co Hk Wk stride_h stride_w Lpad Rpad Upad Dpad HWC
 * (Ho and Wo follow from them). Tensors are in the layout HWC says:
 *   x [Ci x H x W], W [Co x Ci x Hk x Wk], b [Co], dy and y [Co x Ho x Wo]
 *   (HWC: x [H x W x Ci], W [Co x Hk x Wk x Ci], dy and y [Ho x Wo x Co]).
 * Only the tensors a step reads are copied. The work buffers are allocated
 * per step at the size the API gives (pulp_conv2d_fp32.h), guarded and
 * NaN-filled.
 */
#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

#define CONV_GEOMETRY "Ci H W Co Hk Wk stride_h stride_w Lpad Rpad Upad Dpad HWC"
/* conv2d: USE_IM2COL = 1, the unrolling and a matmul of the variant's kernel. */
#define CONV2D_PARAMS CONV_GEOMETRY " USE_BIASES USE_DMA_IM2COL step"
#define CONV2D_INPUTS "x W b dy"
#define CONV2D_OUTPUTS "y dW db dx"
/* USE_IM2COL = 0, the direct kernels: they take no kernel index, so they are
 * an op of their own whose variants name no matmul kernel. */
#define CONV2D_DIRECT_PARAMS CONV_GEOMETRY " USE_BIASES step"
/* mod 0 unrolls x, mod 1 dy; the other input is not read. */
#define UNROLL_PARAMS CONV_GEOMETRY " USE_DMA mod"
#define UNROLL_INPUTS "x dy"
#define UNROLL_OUTPUTS "X"
#define BLOCKTRANSP_PARAMS "Cin Cout Hk Wk HWC"
#define BLOCKTRANSP_INPUTS "W"
#define BLOCKTRANSP_OUTPUTS "BT"

/* BW: both gradients from one pulp_conv2d_*_bw_cl call (WG, then IG, in the
 * same work buffers). */

struct conv_geometry {
    int Ci, H, W, Co, Hk, Wk, sh, sw, L, R, U, D, hwc;
    int Ho, Wo;
    uint32_t n_in, n_w, n_out; /* element counts of input, weights, output */
};

/* Reads and checks the geometry params; PTL_OK or an ERROR record and
 * PTL_ERR_BAD_CASE. */
static int read_geometry(const struct ptl_case *c, uint32_t vi, struct conv_geometry *g)
{
    *g = (struct conv_geometry){
        .Ci = ptl_param(c, "Ci", vi),
        .H = ptl_param(c, "H", vi),
        .W = ptl_param(c, "W", vi),
        .Co = ptl_param(c, "Co", vi),
        .Hk = ptl_param(c, "Hk", vi),
        .Wk = ptl_param(c, "Wk", vi),
        .sh = ptl_param(c, "stride_h", vi),
        .sw = ptl_param(c, "stride_w", vi),
        .L = ptl_param(c, "Lpad", vi),
        .R = ptl_param(c, "Rpad", vi),
        .U = ptl_param(c, "Upad", vi),
        .D = ptl_param(c, "Dpad", vi),
        .hwc = ptl_param(c, "HWC", vi),
    };
    const int sizes_ok = g->Ci > 0 && g->H > 0 && g->W > 0 && g->Co > 0 && g->Hk > 0 && g->Wk > 0 &&
                         g->sh > 0 && g->sw > 0 && g->L >= 0 && g->R >= 0 && g->U >= 0 && g->D >= 0 &&
                         (g->hwc == 0 || g->hwc == 1);
    if (!sizes_ok || g->H + g->U + g->D < g->Hk || g->W + g->L + g->R < g->Wk) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "conv geometry: sizes and strides must be >= 1, pads >= 0, HWC 0 "
                                             "or 1, and the padded input at least as large as the kernel");
        return PTL_ERR_BAD_CASE;
    }
    g->Ho = (g->H + g->U + g->D - g->Hk) / g->sh + 1;
    g->Wo = (g->W + g->L + g->R - g->Wk) / g->sw + 1;
    g->n_in = (uint32_t)(g->Ci * g->H * g->W);
    g->n_w = (uint32_t)(g->Co * g->Ci * g->Hk * g->Wk);
    g->n_out = (uint32_t)(g->Co * g->Ho * g->Wo);
    return PTL_OK;
}

/* Elements of i2c_buffer: the unrolling of mod 0 (FW, WG) or mod 1 (IG). */
static uint32_t i2c_count(const struct conv_geometry *g, int mod)
{
    if (mod)
        return (uint32_t)(g->Co * g->Hk * g->Wk * g->H * g->W);
    return (uint32_t)(g->Ci * g->Hk * g->Wk * g->Ho * g->Wo);
}

/* Elements of bt_buffer (0: the step does not use it): the block-transposed
 * weights for IG, the transposed output gradient for WG in HWC; BW the
 * larger of the two. */
static uint32_t bt_count(const struct conv_geometry *g, int step)
{
    if (step == PTL_STEP_BW) {
        const uint32_t wg = bt_count(g, PTL_STEP_WG), ig = bt_count(g, PTL_STEP_IG);
        return wg > ig ? wg : ig;
    }
    if (step == PTL_STEP_IG)
        return g->n_w;
    return step == PTL_STEP_WG && g->hwc ? g->n_out : 0;
}

/* ---- the layer -------------------------------------------------------------------- */

static int run_conv2d_path(const struct ptl_case *c, struct ptl_variant v, uint32_t vi, int use_im2col,
                           int use_dma)
{
    struct conv_geometry g;
    int status = read_geometry(c, vi, &g);
    if (status)
        return status;
    const int use_bias = ptl_param(c, "USE_BIASES", vi), step = ptl_param(c, "step", vi);
    if (step < PTL_STEP_FW || step > PTL_STEP_BW || (use_bias != 0 && use_bias != 1) ||
        (use_im2col != 0 && use_im2col != 1) || (use_dma != 0 && use_dma != 1)) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "conv2d: step must be 0 to 3, and the USE_ flags 0 or 1");
        return PTL_ERR_BAD_CASE;
    }
    const int fw = step == PTL_STEP_FW, bw = step == PTL_STEP_BW;
    const int wg = step == PTL_STEP_WG || bw, ig = step == PTL_STEP_IG || bw;
    const uint32_t i2c_wg = i2c_count(&g, 0), i2c_ig = i2c_count(&g, 1);
    const int reads_x = fw || wg, reads_w = fw || ig, reads_b = fw && use_bias, reads_dy = wg || ig;
    const int with_db = wg && use_bias;
    const uint32_t n_i2c = !use_im2col ? 0 : bw ? (i2c_wg > i2c_ig ? i2c_wg : i2c_ig) : ig ? i2c_ig : i2c_wg;
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *x = reads_x ? op_frame_input(&f, "x", g.n_in) : NULL;
    PTL_T *w = reads_w ? op_frame_input(&f, "W", g.n_w) : NULL;
    PTL_T *b = reads_b ? op_frame_input(&f, "b", (uint32_t)g.Co) : NULL;
    PTL_T *dy = reads_dy ? op_frame_input(&f, "dy", g.n_out) : NULL;
    PTL_T *i2c = op_frame_scratch(&f, n_i2c);
    PTL_T *bt = op_frame_scratch(&f, use_im2col ? bt_count(&g, step) : 0);
    PTL_T *y = fw ? op_frame_output(&f, "y", g.n_out) : NULL;
    PTL_T *dw = wg ? op_frame_output(&f, "dW", g.n_w) : NULL;
    PTL_T *db = with_db ? op_frame_output(&f, "db", (uint32_t)g.Co) : NULL;
    PTL_T *dx = ig ? op_frame_output(&f, "dx", g.n_in) : NULL;
    if (f.status)
        return op_frame_finish(&f, 0);
    struct PTL_S(blob) input = {.data = x, .diff = dx, .dim = (int)g.n_in, .W = g.W, .H = g.H, .C = g.Ci};
    struct PTL_S(blob) coeff = {.data = w, .diff = dw, .dim = (int)g.n_w, .W = g.Wk, .H = g.Hk, .C = g.Ci};
    struct PTL_S(blob) bias = {.data = b, .diff = db, .dim = g.Co, .W = 1, .H = 1, .C = g.Co};
    struct PTL_S(blob) output = {.data = y, .diff = dy, .dim = (int)g.n_out, .W = g.Wo, .H = g.Ho, .C = g.Co};
    struct PTL_S(Conv2D_args) args = {
        .input = &input,
        .coeff = &coeff,
        .bias = &bias,
        .output = &output,
        .Lpad = g.L,
        .Rpad = g.R,
        .Upad = g.U,
        .Dpad = g.D,
        .stride_h = g.sh,
        .stride_w = g.sw,
        .i2c_buffer = i2c,
        .bt_buffer = bt,
        .skip_wg_grad = !wg,
        .skip_in_grad = !ig,
        .HWC = g.hwc,
        .opt_matmul_type_fw = v.kernel,
        .opt_matmul_type_wg = v.kernel,
        .opt_matmul_type_ig = v.kernel,
        .USE_BIASES = use_bias,
        .USE_IM2COL = use_im2col,
        .USE_DMA_IM2COL = use_dma,
    };
    ptl_measure_begin(vi);
    if (fw)
        PTL_F(pulp_conv2d_, _fw_cl)(&args);
    else if (bw)
        PTL_F(pulp_conv2d_, _bw_cl)(&args);
    else if (wg)
        PTL_F(pulp_conv2d_, _bw_param_grads_cl)(&args);
    else
        PTL_F(pulp_conv2d_, _bw_input_grads_cl)(&args);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

static int run_conv2d(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    return run_conv2d_path(c, v, vi, 1, ptl_param(c, "USE_DMA_IM2COL", vi));
}

static int run_conv2d_direct(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    return run_conv2d_path(c, v, vi, 0, 0);
}

/* ---- the unrollings ---------------------------------------------------------------- */

typedef void (*primitive_fn)(void *);

/* X, T x P (im2col) or P x T (im2row), of x (mod 0) or dy (mod 1). */
static int run_unroll(const struct ptl_case *c, struct ptl_variant v, uint32_t vi, primitive_fn unroll)
{
    struct conv_geometry g;
    int status = read_geometry(c, vi, &g);
    if (status)
        return status;
    const int mod = ptl_param(c, "mod", vi), use_dma = ptl_param(c, "USE_DMA", vi);
    if ((mod != 0 && mod != 1) || (use_dma != 0 && use_dma != 1)) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "im2col: mod and USE_DMA must be 0 or 1");
        return PTL_ERR_BAD_CASE;
    }
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *src = mod ? op_frame_input(&f, "dy", g.n_out) : op_frame_input(&f, "x", g.n_in);
    PTL_T *buffer = op_frame_output(&f, "X", i2c_count(&g, mod));
    if (f.status)
        return op_frame_finish(&f, 0);
    struct PTL_S(blob) input = {.data = mod ? NULL : src, .diff = NULL, .dim = (int)g.n_in,
                                .W = g.W, .H = g.H, .C = g.Ci};
    struct PTL_S(blob) coeff = {.data = NULL, .diff = NULL, .dim = (int)g.n_w, .W = g.Wk, .H = g.Hk, .C = g.Ci};
    struct PTL_S(blob) output = {.data = NULL, .diff = mod ? src : NULL, .dim = (int)g.n_out,
                                 .W = g.Wo, .H = g.Ho, .C = g.Co};
    struct PTL_S(im2col_args) args = {
        .input = &input,
        .c = &coeff,
        .output = &output,
        .pBuffer = buffer,
        .Lpad = g.L,
        .Rpad = g.R,
        .Upad = g.U,
        .Dpad = g.D,
        .mod = mod,
        .stride_w = g.sw,
        .stride_h = g.sh,
        .HWC = g.hwc,
        .USE_DMA = use_dma,
    };
    return op_frame_fork(&f, v, unroll, &args);
}

static int run_im2col(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    return run_unroll(c, v, vi, PTL_F(pulp_im2col_, ));
}

static int run_im2row(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    return run_unroll(c, v, vi, PTL_F(pulp_im2row_, ));
}

/* ---- the block transpose ------------------------------------------------------------ */

static int run_blocktransp(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    const int Ci = ptl_param(c, "Cin", vi), Co = ptl_param(c, "Cout", vi);
    const int Hk = ptl_param(c, "Hk", vi), Wk = ptl_param(c, "Wk", vi), hwc = ptl_param(c, "HWC", vi);
    if (Ci < 1 || Co < 1 || Hk < 1 || Wk < 1 || (hwc != 0 && hwc != 1)) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "blocktransp: sizes must be >= 1 and HWC 0 or 1");
        return PTL_ERR_BAD_CASE;
    }
    const uint32_t n = (uint32_t)(Ci * Co * Hk * Wk);
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *w = op_frame_input(&f, "W", n);
    PTL_T *bt = op_frame_output(&f, "BT", n);
    if (f.status)
        return op_frame_finish(&f, 0);
    struct PTL_S(blocktransp_args) args = {.weights = w, .bt_weights = bt, .Cin = Ci, .Cout = Co,
                                           .Hk = Hk, .Wk = Wk, .HWC = hwc};
    return op_frame_fork(&f, v, PTL_F(pulp_blocktransp_, ), &args);
}

const struct ptl_op PTL_OP_TABLE[] = {
    {.name = PTL_OP_NAME("conv2d"), .params = CONV2D_PARAMS, .inputs = CONV2D_INPUTS,
     .outputs = CONV2D_OUTPUTS, .kernels = PTL_KERNEL_TABLE, .run = run_conv2d},
    {.name = PTL_OP_NAME("conv2d_direct"), .params = CONV2D_DIRECT_PARAMS, .inputs = CONV2D_INPUTS,
     .outputs = CONV2D_OUTPUTS, .kernels = "none", .run = run_conv2d_direct},
    {.name = PTL_OP_NAME("im2col"), .params = UNROLL_PARAMS, .inputs = UNROLL_INPUTS,
     .outputs = UNROLL_OUTPUTS, .kernels = "none", .run = run_im2col},
    {.name = PTL_OP_NAME("im2row"), .params = UNROLL_PARAMS, .inputs = UNROLL_INPUTS,
     .outputs = UNROLL_OUTPUTS, .kernels = "none", .run = run_im2row},
    {.name = PTL_OP_NAME("blocktransp"), .params = BLOCKTRANSP_PARAMS, .inputs = BLOCKTRANSP_INPUTS,
     .outputs = BLOCKTRANSP_OUTPUTS, .kernels = "none", .run = run_blocktransp},
    {0},
};
