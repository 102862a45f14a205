/*
 * Runner op of the CORDIC cosine and sine: one call per angle, single core
 * (a scalar function). Param n; tensor angle [n] in; cos, sin [n] out.
 */
#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

static int run_cordic(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v;
    const int n = ptl_param(c, "n", vi);
    if (n < 1) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "cordic needs n >= 1");
        return PTL_ERR_BAD_CASE;
    }
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *angle = op_frame_input(&f, "angle", (uint32_t)n);
    PTL_T *cos = op_frame_output(&f, "cos", (uint32_t)n);
    PTL_T *sin = op_frame_output(&f, "sin", (uint32_t)n);
    if (f.status)
        return op_frame_finish(&f, 0);
    ptl_measure_begin(vi);
    for (int i = 0; i < n; i++)
        PTL_F(cordic_cos_sin_, )(angle[i], &cos[i], &sin[i]);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("cordic"), "n", "angle", "cos sin", "none", run_cordic},
    {0},
};
