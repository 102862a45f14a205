/*
 * Runner ops of the transposed 2D convolution: FW, WG and IG, and BW (both
 * gradients from one pulp_transp_conv2d_*_bw_cl call), forked inside the
 * primitive.
 *   transp_conv2d         USE_IM2COL = 1: the gather and a matmul of the
 *                         variant's kernel (all three opt_matmul_type_*).
 *   transp_conv2d_direct  USE_IM2COL = 0: the direct kernels, no kernel index.
 *
 * Compiled once per dtype (ptl_op_dtype.h). The params are the layer's
 * geometry, named as the API names its fields:
 *   Ci H W Co Hk Wk stride_h stride_w inLpad inRpad inUpad inDpad HWC USE_BIASES step
 * The pads crop the full output: Ho = (H - 1) * stride_h + Hk - inUpad - inDpad,
 * Wo likewise (a negative pad extends it). Tensors, in the layout HWC says:
 *   x [Ci x H x W], W [Ci x Co x Hk x Wk], b [Co], dy and y [Co x Ho x Wo]
 *   (HWC: x [H x W x Ci], W [Ci x Hk x Wk x Co], dy and y [Ho x Wo x Co]);
 * dW is laid out like W, db like b, dx like x. Only the tensors a step reads
 * are copied; the work buffers are allocated at the size the step needs
 * (pulp_transp_conv2d_fp32.h), guarded and NaN-filled.
 *
 * FW accumulates into output->data and IG into input->diff (the API's
 * contract, shared/TRAINLIB_API.md, "Transposed Conv2D": "the caller zeroes
 * them first"), so those two outputs, and only they, start as zeros
 * (op_frame_output_zeroed); every other output starts as poison (NaN).
 */
#include <stdlib.h>

#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

#define TRANSP_PARAMS "Ci H W Co Hk Wk stride_h stride_w inLpad inRpad inUpad inDpad HWC USE_BIASES step"
#define TRANSP_INPUTS "x W b dy"
#define TRANSP_OUTPUTS "y dW db dx"


struct tc_shape {
    int Ci, H, W, Co, Hk, Wk, sh, sw, L, R, U, D, hwc, bias, step;
    int Ho, Wo;
};

static int tc_read_shape(const struct ptl_case *c, uint32_t vi, struct tc_shape *s)
{
    *s = (struct tc_shape){
        .Ci = ptl_param(c, "Ci", vi),
        .H = ptl_param(c, "H", vi),
        .W = ptl_param(c, "W", vi),
        .Co = ptl_param(c, "Co", vi),
        .Hk = ptl_param(c, "Hk", vi),
        .Wk = ptl_param(c, "Wk", vi),
        .sh = ptl_param(c, "stride_h", vi),
        .sw = ptl_param(c, "stride_w", vi),
        .L = ptl_param(c, "inLpad", vi),
        .R = ptl_param(c, "inRpad", vi),
        .U = ptl_param(c, "inUpad", vi),
        .D = ptl_param(c, "inDpad", vi),
        .hwc = ptl_param(c, "HWC", vi),
        .bias = ptl_param(c, "USE_BIASES", vi),
        .step = ptl_param(c, "step", vi),
    };
    const int ok = s->Ci > 0 && s->H > 0 && s->W > 0 && s->Co > 0 && s->Hk > 0 && s->Wk > 0 && s->sh > 0 &&
                   s->sw > 0 && (s->hwc == 0 || s->hwc == 1) && (s->bias == 0 || s->bias == 1) &&
                   s->step >= PTL_STEP_FW && s->step <= PTL_STEP_BW;
    s->Ho = (s->H - 1) * s->sh + s->Hk - s->U - s->D;
    s->Wo = (s->W - 1) * s->sw + s->Wk - s->L - s->R;
    if (!ok || s->Ho < 1 || s->Wo < 1) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "transp_conv2d: sizes and strides must be >= 1, HWC and USE_BIASES "
                                             "0 or 1, step FW, WG, IG or BW, and the pads must leave an output");
        return PTL_ERR_BAD_CASE;
    }
    return PTL_OK;
}

/* Elements of i2c_buffer and bt_buffer the step needs with USE_IM2COL = 1
 * (pulp_transp_conv2d_fp32.h); 0: none. BW (WG, then IG, into the same
 * buffers) needs the larger of the two. */
static uint32_t tc_i2c_count(const struct tc_shape *s)
{
    const int taps = s->Hk * s->Wk;
    if (s->step == PTL_STEP_FW)
        return (uint32_t)(s->Ci * taps * s->Ho * s->Wo);
    return (uint32_t)(s->Co * taps * s->H * s->W);
}

static uint32_t tc_bt_count(const struct tc_shape *s)
{
    if (s->step == PTL_STEP_FW && !s->hwc)
        return (uint32_t)(s->Ci * s->Co * s->Hk * s->Wk);
    if ((s->step == PTL_STEP_WG || s->step == PTL_STEP_BW) && s->hwc)
        return (uint32_t)(s->Ci * s->H * s->W);
    return 0;
}

static int run_transp(const struct ptl_case *c, struct ptl_variant v, uint32_t vi, int use_im2col)
{
    struct tc_shape s;
    int status = tc_read_shape(c, vi, &s);
    if (status)
        return status;
    const uint32_t n_in = (uint32_t)(s.Ci * s.H * s.W), n_out = (uint32_t)(s.Co * s.Ho * s.Wo);
    const uint32_t n_w = (uint32_t)(s.Ci * s.Co * s.Hk * s.Wk), n_b = (uint32_t)s.Co;
    const int fw = s.step == PTL_STEP_FW, bw = s.step == PTL_STEP_BW;
    const int wg = s.step == PTL_STEP_WG || bw, ig = s.step == PTL_STEP_IG || bw;
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *x = fw || wg ? op_frame_input(&f, "x", n_in) : NULL;
    PTL_T *w = fw || ig ? op_frame_input(&f, "W", n_w) : NULL;
    PTL_T *b = fw && s.bias ? op_frame_input(&f, "b", n_b) : NULL;
    PTL_T *dy = wg || ig ? op_frame_input(&f, "dy", n_out) : NULL;
    PTL_T *y = fw ? op_frame_output_zeroed(&f, "y", n_out) : NULL;
    PTL_T *dw = wg ? op_frame_output(&f, "dW", n_w) : NULL;
    PTL_T *db = wg && s.bias ? op_frame_output(&f, "db", n_b) : NULL;
    PTL_T *dx = ig ? op_frame_output_zeroed(&f, "dx", n_in) : NULL;
    PTL_T *i2c = use_im2col ? op_frame_scratch(&f, tc_i2c_count(&s)) : NULL;
    PTL_T *bt = use_im2col ? op_frame_scratch(&f, tc_bt_count(&s)) : NULL;
    if (f.status)
        return op_frame_finish(&f, 0);
    struct PTL_S(blob) input = {.data = x, .diff = dx, .dim = (int)n_in, .W = s.W, .H = s.H, .C = s.Ci};
    struct PTL_S(blob) coeff = {.data = w, .diff = dw, .dim = (int)n_w, .W = s.Wk, .H = s.Hk, .C = s.Ci};
    struct PTL_S(blob) bias = {.data = b, .diff = db, .dim = s.Co, .W = 1, .H = 1, .C = s.Co};
    struct PTL_S(blob) output = {.data = y, .diff = dy, .dim = (int)n_out, .W = s.Wo, .H = s.Ho, .C = s.Co};
    struct PTL_S(Transp_Conv2D_args) args = {
        .input = &input,
        .coeff = &coeff,
        .bias = &bias,
        .output = &output,
        .inLpad = s.L,
        .inRpad = s.R,
        .inUpad = s.U,
        .inDpad = s.D,
        .stride_h = s.sh,
        .stride_w = s.sw,
        .i2c_buffer = i2c,
        .bt_buffer = bt,
        .skip_wg_grad = !wg,
        .skip_in_grad = !ig,
        .HWC = s.hwc,
        .opt_matmul_type_fw = v.kernel,
        .opt_matmul_type_wg = v.kernel,
        .opt_matmul_type_ig = v.kernel,
        .USE_BIASES = s.bias,
        .USE_IM2COL = use_im2col,
        .USE_DMA_IM2COL = 0,
    };
    ptl_measure_begin(vi);
    if (fw)
        PTL_F(pulp_transp_conv2d_, _fw_cl)(&args);
    else if (bw)
        PTL_F(pulp_transp_conv2d_, _bw_cl)(&args);
    else if (wg)
        PTL_F(pulp_transp_conv2d_, _bw_param_grads_cl)(&args);
    else
        PTL_F(pulp_transp_conv2d_, _bw_input_grads_cl)(&args);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

static int run_transp_conv2d(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    return run_transp(c, v, vi, 1);
}

static int run_transp_conv2d_direct(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    return run_transp(c, v, vi, 0);
}

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("transp_conv2d"), TRANSP_PARAMS, TRANSP_INPUTS, TRANSP_OUTPUTS, PTL_KERNEL_TABLE,
     run_transp_conv2d},
    {PTL_OP_NAME("transp_conv2d_direct"), TRANSP_PARAMS, TRANSP_INPUTS, TRANSP_OUTPUTS, "none",
     run_transp_conv2d_direct},
    {0},
};
