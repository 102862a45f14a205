/*
 * Runner ops of the pointwise (1x1) convolution: FW, WG and IG, and BW (both
 * gradients from one pulp_conv_pw_*_bw_cl call), forked inside the primitive;
 * and conv_pw_layer, a whole layer run tile by tile with its tensors in far
 * memory and the DMA moving the tiles (below). Every variant sets all three
 * opt_matmul_type_* fields to its kernel index.
 *
 * Compiled once per dtype (ptl_op_dtype.h). Tensors, in the layout HWC says:
 *   x [Ci x H x W], W [Co x Ci], dy and y [Co x H x W]
 *   (HWC: x [H x W x Ci], W [Ci x Co], dy and y [H x W x Co]);
 * dW is laid out like W, dx like x. Only the tensors a step reads are copied
 * (the footprint in harness/catalogue/conv_dw_pw.py counts the same ones);
 * transpose_buffer is allocated, guarded and NaN-filled, at the size the
 * step needs (pulp_conv_pw_fp32.h), and not at all where it needs none.
 */
#include <stdlib.h>

#include "layer_tiles.h"
#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "tiled_layer.h"

#define CONV_PW_PARAMS "Ci Co H W HWC step"
#define CONV_PW_INPUTS "x W dy"
#define CONV_PW_OUTPUTS "y dW dx"

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
        s->step < PTL_STEP_FW || s->step > PTL_STEP_BW) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "conv_pw: Ci, Co, H, W must be >= 1, HWC 0 or 1, step FW, WG, IG or BW");
        return PTL_ERR_BAD_CASE;
    }
    return PTL_OK;
}

static int run_conv_pw(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    struct pw_shape s;
    int status = pw_read_shape(c, vi, &s);
    if (status)
        return status;
    const uint32_t n_in = (uint32_t)(s.Ci * s.H * s.W), n_out = (uint32_t)(s.Co * s.H * s.W);
    const uint32_t n_w = (uint32_t)(s.Ci * s.Co);
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
    PTL_T *transpose = op_frame_scratch(&f, pw_transpose_count(&s, s.step));
    if (f.status)
        return op_frame_finish(&f, 0);
    struct pw_call call;
    pw_prepare(&call, &s, x, w, dy, y, dw, dx, transpose, v.kernel);
    ptl_measure_begin(vi);
    pw_run(&call);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

/* ---- A whole layer, tiled, its tensors in far memory ------------------------------------
 * conv_pw_layer: the layer run tile by tile with its tensors in far memory
 * and the DMA moving the tiles, double-buffered (tiled_layer.h); the
 * measured region is the whole layer, transfers included. CHW. Tiles (the
 * tiler's axes, harness/autotune/layers.py): FW Co x H rows, WG Co x Ci, IG
 * Ci x H rows, row-major over that grid; the edge tiles are smaller. Every
 * tile computes its slice of the output whole (its reduction is not cut), so
 * the tiles write disjoint slices. */
#define CONV_PW_LAYER_PARAMS "Ci Co H W HWC step tCo tCi tH"

static int pw_read_layer(const struct ptl_case *c, uint32_t vi, struct pw_layer *l)
{
    int status = pw_read_shape(c, vi, &l->s);
    if (status)
        return status;
    l->tco = ptl_param(c, "tCo", vi);
    l->tci = ptl_param(c, "tCi", vi);
    l->th = ptl_param(c, "tH", vi);
    const struct pw_shape *s = &l->s;
    if (s->hwc || s->step == PTL_STEP_BW || l->tco < 1 || l->tco > s->Co || l->tci < 1 || l->tci > s->Ci ||
        l->th < 1 || l->th > s->H) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "conv_pw_layer: CHW, step fw, wg or ig, tiles 1 to the size");
        return PTL_ERR_BAD_CASE;
    }
    return PTL_OK;
}

static int run_conv_pw_layer(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    struct pw_layer l = {.kernel = v.kernel};
    int status = pw_read_layer(c, vi, &l);
    if (status)
        return status;
    const struct pw_shape *s = &l.s;
    const uint32_t n_in = (uint32_t)(s->Ci * s->H * s->W), n_out = (uint32_t)(s->Co * s->H * s->W);
    const uint32_t n_w = (uint32_t)(s->Ci * s->Co);
    const int fw = s->step == PTL_STEP_FW, wg = s->step == PTL_STEP_WG, ig = s->step == PTL_STEP_IG;
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    ptl_place_buffers(PTL_PLACE_FAR);
    l.x = fw || wg ? op_frame_input(&f, "x", n_in) : NULL;
    l.w = fw || ig ? op_frame_input(&f, "W", n_w) : NULL;
    l.dy = wg || ig ? op_frame_input(&f, "dy", n_out) : NULL;
    l.y = fw ? op_frame_output(&f, "y", n_out) : NULL;
    l.dw = wg ? op_frame_output(&f, "dW", n_w) : NULL;
    l.dx = ig ? op_frame_output(&f, "dx", n_in) : NULL;
    const struct tiled_layer layer = {.tiles = pw_tile_count(&l), .tile_at = pw_tile_at, .compute = pw_compute,
                                       .op = &l};
    struct tiled_buffers near;
    tiled_layer_buffers(&f, &layer, &near);
    struct pw_shape largest;
    struct tiled_tile unused = {0};
    pw_tile(&l, 0, &largest, &unused);
    ptl_place_buffers(PTL_PLACE_NEAR);
    l.transpose = op_frame_scratch(&f, pw_transpose_count(&largest, s->step));
    return tiled_layer_measure(&f, &layer, &near, sizeof(PTL_T));
}

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("conv_pw"), CONV_PW_PARAMS, CONV_PW_INPUTS, CONV_PW_OUTPUTS, PTL_KERNEL_TABLE, run_conv_pw},
    {PTL_OP_NAME("conv_pw_layer"), CONV_PW_LAYER_PARAMS, CONV_PW_INPUTS, CONV_PW_OUTPUTS, PTL_KERNEL_TABLE,
     run_conv_pw_layer},
    {0},
};
