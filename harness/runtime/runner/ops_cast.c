/*
 * Runner ops of the casts between FP32 and the build's FP16 format, in the
 * FP16 unit only (the case's dtype is the fp16 side; the fp32 side travels
 * as FP32 tensors). Per-core bodies forked on the variant's team.
 *   cast_to_fp16: param n; x [n] FP32 in; y [n] fp16 out.
 *   cast_to_fp32: param n; x [n] fp16 in; y [n] FP32 out.
 */
#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

#if PTL_OP_FP == 16

static int run_cast(const struct ptl_case *c, struct ptl_variant v, uint32_t vi, int to_fp16)
{
    const int n = ptl_param(c, "n", vi);
    if (n < 1) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "casts need n >= 1");
        return PTL_ERR_BAD_CASE;
    }
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    const uint32_t from = to_fp16 ? PTL_DTYPE_F32 : PTL_DTYPE_F16, to = to_fp16 ? PTL_DTYPE_F16 : PTL_DTYPE_F32;
    void *x = op_frame_input_as(&f, "x", (uint32_t)n, from);
    void *y = op_frame_output_as(&f, "y", (uint32_t)n, to);
    struct cast_32t16_args down = {.source = x, .destination = y, .size = n};
    struct cast_16t32_args up = {.source = x, .destination = y, .size = n};
    return to_fp16 ? op_frame_fork(&f, v, cast_fp32_tensor_to_fp16, &down)
                   : op_frame_fork(&f, v, cast_fp16_tensor_to_fp32, &up);
}

static int run_cast_to_fp16(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    return run_cast(c, v, vi, 1);
}

static int run_cast_to_fp32(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    return run_cast(c, v, vi, 0);
}

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("cast_to_fp16"), "n alone", "x", "y", "none", run_cast_to_fp16},
    {PTL_OP_NAME("cast_to_fp32"), "n alone", "x", "y", "none", run_cast_to_fp32},
    {0},
};

#else /* the casts live in the FP16 unit */

const struct ptl_op PTL_OP_TABLE[] = {
    {0},
};

#endif
