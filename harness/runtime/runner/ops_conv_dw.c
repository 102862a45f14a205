/*
 * Runner ops of the depthwise convolution: FW, WG and IG, and BW (both
 * gradients from one pulp_conv_dw_*_bw_cl call), with direct kernels (no
 * matmul, so the variant's kernel is 0), forked inside the primitive.
 *
 * Compiled once per dtype (ptl_op_dtype.h). The params are the layer's
 * geometry, named as the API names its fields:
 *   C H W Hk Wk stride_h stride_w Lpad Rpad Upad Dpad HWC step
 * with Ho = (H + Upad + Dpad - Hk) / stride_h + 1, Wo likewise. Tensors, in
 * the layout HWC says:
 *   x [C x H x W], W [C x Hk x Wk], dy and y [C x Ho x Wo]
 *   (HWC: x [H x W x C], W [Hk x Wk x C], dy and y [Ho x Wo x C]);
 * dW is laid out like W, dx like x. Only the tensors a step reads are copied.
 */
#include <stdlib.h>

#include "dw_fields.h"
#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

#define CONV_DW_PARAMS "C H W Hk Wk stride_h stride_w Lpad Rpad Upad Dpad HWC step"
#define CONV_DW_INPUTS "x W dy"
#define CONV_DW_OUTPUTS "y dW dx"


struct dw_shape {
    int C, H, W, Hk, Wk, sh, sw, L, R, U, D, hwc, step;
    int Ho, Wo;
};

static int dw_read_shape(const struct ptl_case *c, uint32_t vi, struct dw_shape *s)
{
    *s = (struct dw_shape){
        .C = ptl_param(c, "C", vi),
        .H = ptl_param(c, "H", vi),
        .W = ptl_param(c, "W", vi),
        .Hk = ptl_param(c, "Hk", vi),
        .Wk = ptl_param(c, "Wk", vi),
        .sh = ptl_param(c, "stride_h", vi),
        .sw = ptl_param(c, "stride_w", vi),
        .L = ptl_param(c, "Lpad", vi),
        .R = ptl_param(c, "Rpad", vi),
        .U = ptl_param(c, "Upad", vi),
        .D = ptl_param(c, "Dpad", vi),
        .hwc = ptl_param(c, "HWC", vi),
        .step = ptl_param(c, "step", vi),
    };
    const int ok = s->C > 0 && s->H > 0 && s->W > 0 && s->Hk > 0 && s->Wk > 0 && s->sh > 0 && s->sw > 0 &&
                   s->L >= 0 && s->R >= 0 && s->U >= 0 && s->D >= 0 && (s->hwc == 0 || s->hwc == 1) &&
                   s->step >= PTL_STEP_FW && s->step <= PTL_STEP_BW;
    if (!ok || s->H + s->U + s->D < s->Hk || s->W + s->L + s->R < s->Wk) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "conv_dw: sizes and strides must be >= 1, pads >= 0, HWC 0 or 1, "
                                             "step FW, WG, IG or BW, and the padded input at least as large as the kernel");
        return PTL_ERR_BAD_CASE;
    }
    s->Ho = (s->H + s->U + s->D - s->Hk) / s->sh + 1;
    s->Wo = (s->W + s->L + s->R - s->Wk) / s->sw + 1;
    return PTL_OK;
}

static int run_conv_dw(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v; /* direct kernels: no kernel index */
    struct dw_shape s;
    int status = dw_read_shape(c, vi, &s);
    if (status)
        return status;
#if !DW_HAS_STRIDES /* against such a library only stride-1 cases run, the others are unsupported */
    if (s.sh != 1 || s.sw != 1) {
        ptl_emit_error(vi, PTL_ERR_UNSUPPORTED, PTL_S_NAME(DepthWise_Conv_args)
                       " has no field stride_h/stride_w: only stride 1 can run against this library");
        return PTL_ERR_UNSUPPORTED;
    }
#endif
    const uint32_t n_in = (uint32_t)(s.C * s.H * s.W), n_out = (uint32_t)(s.C * s.Ho * s.Wo);
    const uint32_t n_w = (uint32_t)(s.C * s.Hk * s.Wk);
    const int fw = s.step == PTL_STEP_FW, bw = s.step == PTL_STEP_BW;
    const int wg = s.step == PTL_STEP_WG || bw, ig = s.step == PTL_STEP_IG || bw;
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *x = fw || wg ? op_frame_input(&f, "x", n_in) : NULL;
    PTL_T *w = fw || ig ? op_frame_input(&f, "W", n_w) : NULL;
    PTL_T *dy = wg || ig ? op_frame_input(&f, "dy", n_out) : NULL;
    PTL_T *y = fw ? op_frame_output(&f, "y", n_out) : NULL;
    PTL_T *dw = wg ? op_frame_output(&f, "dW", n_w) : NULL;
    PTL_T *dx = ig ? op_frame_output(&f, "dx", n_in) : NULL;
    if (f.status)
        return op_frame_finish(&f, 0);
    struct PTL_S(blob) input = {.data = x, .diff = dx, .dim = (int)n_in, .W = s.W, .H = s.H, .C = s.C};
    struct PTL_S(blob) coeff = {.data = w, .diff = dw, .dim = (int)n_w, .W = s.Wk, .H = s.Hk, .C = s.C};
    struct PTL_S(blob) output = {.data = y, .diff = dy, .dim = (int)n_out, .W = s.Wo, .H = s.Ho, .C = s.C};
    struct PTL_S(DepthWise_Conv_args) args = {
        .input = &input,
        .coeff = &coeff,
        .output = &output,
#if DW_HAS_STRIDES
        .stride_h = s.sh,
        .stride_w = s.sw,
#endif
        .Lpad = s.L,
        .Rpad = s.R,
        .Upad = s.U,
        .Dpad = s.D,
        .skip_wg_grad = !wg,
        .skip_in_grad = !ig,
        .HWC = s.hwc,
    };
    ptl_measure_begin(vi);
    if (fw)
        PTL_F(pulp_conv_dw_, _fw_cl)(&args);
    else if (bw)
        PTL_F(pulp_conv_dw_, _bw_cl)(&args);
    else if (wg)
        PTL_F(pulp_conv_dw_, _bw_param_grads_cl)(&args);
    else
        PTL_F(pulp_conv_dw_, _bw_input_grads_cl)(&args);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("conv_dw"), CONV_DW_PARAMS, CONV_DW_INPUTS, CONV_DW_OUTPUTS, "none", run_conv_dw},
    {0},
};
