/*
 * Runner ops of the softmax: the row softmax FW and BW (softmax_args, H rows
 * of W, forked inside the primitive) and, in FP32, the vector softmax. No
 * matmul: kernel 0.
 *
 * Compiled once per dtype (ptl_op_dtype.h). softmax params: H W step (FW or
 * BW); tensors x [H x W] (FW), y and dy [H x W] (BW: y is the forward
 * output, output_data); out y (FW) or dx (BW). maxes and sums are guarded
 * scratch of H elements. vector_softmax (FP32): param n; in x [n]; out y [n];
 * buffer_n_cores is scratch of the variant's core count.
 */
#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

static int run_softmax(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v; /* direct code: no kernel index */
    const int H = ptl_param(c, "H", vi), W = ptl_param(c, "W", vi), step = ptl_param(c, "step", vi);
    if (H < 1 || W < 1 || (step != PTL_STEP_FW && step != PTL_STEP_BW)) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "softmax params need H, W >= 1 and step FW or BW");
        return PTL_ERR_BAD_CASE;
    }
    const int fw = step == PTL_STEP_FW;
    const uint32_t n = (uint32_t)(H * W);
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *x = fw ? op_frame_input(&f, "x", n) : NULL;
    PTL_T *y_in = fw ? NULL : op_frame_input(&f, "y", n);
    PTL_T *dy = fw ? NULL : op_frame_input(&f, "dy", n);
    PTL_T *y = fw ? op_frame_output(&f, "y", n) : NULL;
    PTL_T *dx = fw ? NULL : op_frame_output(&f, "dx", n);
    PTL_T *maxes = op_frame_scratch(&f, (uint32_t)H);
    PTL_T *sums = op_frame_scratch(&f, (uint32_t)H);
    if (f.status)
        return op_frame_finish(&f, 0);
    struct PTL_S(softmax_args) args = {
        .input_data = x, .input_diff = dx, .output_data = fw ? y : y_in, .output_diff = dy,
        .H = H, .W = W, .L = 0, .n_heads = 1, .global_max = NULL, .partial_exp_sum = NULL,
        .maxes = maxes, .sums = sums,
    };
    void (*const call)(void *) = fw ? PTL_F(pulp_softmax_, _fw_cl) : PTL_F(pulp_softmax_, _bw_cl);
    ptl_measure_begin(vi); /* the call alone */
    call(&args);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

#if PTL_OP_FP == 32
static int run_vector_softmax(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    const int n = ptl_param(c, "n", vi);
    if (n < 1) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "vector_softmax needs n >= 1");
        return PTL_ERR_BAD_CASE;
    }
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    float *x = op_frame_input(&f, "x", (uint32_t)n);
    float *y = op_frame_output(&f, "y", (uint32_t)n);
    float *buffer = op_frame_scratch(&f, (uint32_t)v.cores);
    if (f.status)
        return op_frame_finish(&f, 0);
    ptl_measure_begin(vi);
    pulp_vector_softmax_fp32(y, x, buffer, (unsigned int)n);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}
#endif

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("softmax"), "H W step", "x y dy", "y dx", "none", run_softmax},
#if PTL_OP_FP == 32
    {PTL_OP_NAME("vector_softmax"), "n", "x", "y", "none", run_vector_softmax},
#endif
    {0},
};
