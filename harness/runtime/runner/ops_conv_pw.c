/*
 * Runner ops of the pointwise (1x1) convolution: FW, WG and IG, and BW (both
 * gradients from one pulp_conv_pw_*_bw_cl call), forked inside the primitive. Every variant sets all three opt_matmul_type_*
 * fields to its kernel index.
 *
 * Compiled once per dtype (ptl_op_dtype.h). Tensors, in the layout HWC says:
 *   x [Ci x H x W], W [Co x Ci], dy and y [Co x H x W]
 *   (HWC: x [H x W x Ci], W [Ci x Co], dy and y [H x W x Co]);
 * dW is laid out like W, dx like x. Only the tensors a step reads are copied
 * (the footprint in suite/catalogue/conv_dw_pw.py counts the same ones);
 * transpose_buffer is allocated, guarded and NaN-filled, at the size the
 * step needs (pulp_conv_pw_fp32.h), and not at all where it needs none.
 */
#include <stdlib.h>

#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

#define CONV_PW_PARAMS "Ci Co H W HWC step"
#define CONV_PW_INPUTS "x W dy"
#define CONV_PW_OUTPUTS "y dW dx"

enum { PW_STEP_FW = 0, PW_STEP_WG = 1, PW_STEP_IG = 2, PW_STEP_BW = 3 };

struct pw_shape {
    int Ci, Co, H, W, hwc, step;
};

static int pw_read_shape(const struct ptl_case *c, uint32_t vi, struct pw_shape *s)
{
    *s = (struct pw_shape){
        .Ci = ptl_param(c, "Ci", vi),
        .Co = ptl_param(c, "Co", vi),
        .H = ptl_param(c, "H", vi),
        .W = ptl_param(c, "W", vi),
        .hwc = ptl_param(c, "HWC", vi),
        .step = ptl_param(c, "step", vi),
    };
    if (s->Ci < 1 || s->Co < 1 || s->H < 1 || s->W < 1 || (s->hwc != 0 && s->hwc != 1) ||
        s->step < PW_STEP_FW || s->step > PW_STEP_BW) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "conv_pw: Ci, Co, H, W must be >= 1, HWC 0 or 1, step 0 to 3");
        return PTL_ERR_BAD_CASE;
    }
    return PTL_OK;
}

/* Elements of transpose_buffer the step needs (the published contract,
 * shared/TRAINLIB_API.md): Ci*Co for IG in both layouts, Ci*H*W for WG in
 * HWC; FW and WG in CHW none; BW the larger of WG's and IG's. */
static uint32_t pw_transpose_count(const struct pw_shape *s, int step)
{
    if (step == PW_STEP_BW) {
        const uint32_t wg = pw_transpose_count(s, PW_STEP_WG), ig = pw_transpose_count(s, PW_STEP_IG);
        return wg > ig ? wg : ig;
    }
    if (step == PW_STEP_IG)
        return (uint32_t)(s->Ci * s->Co);
    if (step == PW_STEP_WG && s->hwc)
        return (uint32_t)(s->Ci * s->H * s->W);
    return 0;
}

static int run_conv_pw(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    struct pw_shape s;
    int status = pw_read_shape(c, vi, &s);
    if (status)
        return status;
    const uint32_t n_in = (uint32_t)(s.Ci * s.H * s.W), n_out = (uint32_t)(s.Co * s.H * s.W);
    const uint32_t n_w = (uint32_t)(s.Ci * s.Co);
    const int fw = s.step == PW_STEP_FW, bw = s.step == PW_STEP_BW;
    const int wg = s.step == PW_STEP_WG || bw, ig = s.step == PW_STEP_IG || bw;
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *x = fw || wg ? op_frame_input(&f, "x", n_in) : NULL;
    PTL_T *w = fw || ig ? op_frame_input(&f, "W", n_w) : NULL;
    PTL_T *dy = wg || ig ? op_frame_input(&f, "dy", n_out) : NULL;
    PTL_T *y = fw ? op_frame_output(&f, "y", n_out) : NULL;
    PTL_T *dw = wg ? op_frame_output(&f, "dW", n_w) : NULL;
    PTL_T *dx = ig ? op_frame_output(&f, "dx", n_in) : NULL;
    PTL_T *transpose = op_frame_scratch(&f, pw_transpose_count(&s, s.step));
    if (f.status)
        return op_frame_finish(&f, 0);
    struct PTL_S(blob) input = {.data = x, .diff = dx, .dim = (int)n_in, .W = s.W, .H = s.H, .C = s.Ci};
    struct PTL_S(blob) coeff = {.data = w, .diff = dw, .dim = (int)n_w, .W = 1, .H = 1, .C = s.Ci};
    struct PTL_S(blob) output = {.data = y, .diff = dy, .dim = (int)n_out, .W = s.W, .H = s.H, .C = s.Co};
    struct PTL_S(PointWise_Conv_args) args = {
        .input = &input,
        .coeff = &coeff,
        .output = &output,
        .transpose_buffer = transpose,
        .skip_wg_grad = !wg,
        .skip_in_grad = !ig,
        .opt_matmul_type_fw = v.kernel,
        .opt_matmul_type_wg = v.kernel,
        .opt_matmul_type_ig = v.kernel,
        .HWC = s.hwc,
    };
    ptl_measure_begin(vi);
    if (fw)
        PTL_F(pulp_conv_pw_, _fw_cl)(&args);
    else if (bw)
        PTL_F(pulp_conv_pw_, _bw_cl)(&args);
    else if (wg)
        PTL_F(pulp_conv_pw_, _bw_param_grads_cl)(&args);
    else
        PTL_F(pulp_conv_pw_, _bw_input_grads_cl)(&args);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("conv_pw"), CONV_PW_PARAMS, CONV_PW_INPUTS, CONV_PW_OUTPUTS, PTL_KERNEL_TABLE, run_conv_pw},
    {0},
};
