/*
 * Runner op of the interpolation (pulp_interpolation_fp32.h): nearest
 * neighbour or bilinear, the self-forking call (NUM_CORES, which the runner
 * has set to the variant's core count). FP32 only (the FP16 table is empty).
 *
 * Params: C Hi Wi Ho Wo, mode (0 nearest, 1 bilinear), data and grad (the
 * interpolate_data and interpolate_gradient flags). Tensors in: x, g
 * [C*Hi*Wi] (input->data, input->diff), y0, g0 [C*Ho*Wo] (what
 * output->data and output->diff hold before the call). Out: y, dy: each
 * starts as y0 or g0, so a flag that is off must leave it exactly so.
 */
#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

#if PTL_OP_FP == 32

static int run_interpolation(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v;
    const int C = ptl_param(c, "C", vi), Hi = ptl_param(c, "Hi", vi), Wi = ptl_param(c, "Wi", vi);
    const int Ho = ptl_param(c, "Ho", vi), Wo = ptl_param(c, "Wo", vi), mode = ptl_param(c, "mode", vi);
    const int data = ptl_param(c, "data", vi), grad = ptl_param(c, "grad", vi);
    if (C < 1 || Hi < 1 || Wi < 1 || Ho < 1 || Wo < 1 || (mode != 0 && mode != 1) || (data & ~1) || (grad & ~1)) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "interpolation needs C, Hi, Wi, Ho, Wo >= 1, mode 0 (nearest) or 1 "
                                             "(bilinear), data and grad 0 or 1");
        return PTL_ERR_BAD_CASE;
    }
    const uint32_t n_in = (uint32_t)(C * Hi * Wi), n_out = (uint32_t)(C * Ho * Wo);
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    struct blob input = {.data = op_frame_input(&f, "x", n_in), .diff = op_frame_input(&f, "g", n_in),
                         .dim = (int)n_in, .W = Wi, .H = Hi, .C = C};
    struct blob output = {.data = op_frame_output_from(&f, "y0", "y", n_out),
                          .diff = op_frame_output_from(&f, "g0", "dy", n_out), .dim = (int)n_out, .W = Wo, .H = Ho,
                          .C = C};
    if (f.status)
        return op_frame_finish(&f, 0);
    struct interpolation_args args = {.input = &input, .output = &output, .interpolate_data = data,
                                      .interpolate_gradient = grad};
    ptl_measure_begin(vi);
    if (mode == 0)
        pulp_nearest_neighbour_interpolation_fp32_cl(&args);
    else
        pulp_bilinear_interpolation_fp32_cl(&args);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("interpolation"), "C Hi Wi Ho Wo mode data grad", "x g y0 g0", "y dy", "none", run_interpolation},
    {0},
};

#else /* the interpolation is FP32 only in the API */

const struct ptl_op PTL_OP_TABLE[] = {
    {0},
};

#endif
