/*
 * Runner op of NoNorm's forward (Nonorm_args, a per-core body the runner
 * forks on the variant's cores), in every dtype. A unit of its own, so that
 * a library without the FP16 body (older ones) still builds the FP16
 * InstanceNorm of ops_norm.c.
 *
 * Params rows (input->H) n (input->W); x [rows x n], coeff [2n] (coeff,
 * then bias) in; y out.
 */
#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

static int run_nonorm(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    const int rows = ptl_param(c, "rows", vi), n = ptl_param(c, "n", vi);
    if (rows < 1 || n < 1) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "nonorm needs rows, n >= 1");
        return PTL_ERR_BAD_CASE;
    }
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *x = op_frame_input(&f, "x", (uint32_t)(rows * n));
    PTL_T *coeff = op_frame_input(&f, "coeff", (uint32_t)(2 * n));
    PTL_T *y = op_frame_output(&f, "y", (uint32_t)(rows * n));
    if (f.status)
        return op_frame_finish(&f, 0);
    struct PTL_S(blob) input = {.data = x, .diff = NULL, .dim = rows * n, .W = n, .H = rows, .C = 1};
    struct PTL_S(blob) gamma = {.data = coeff, .diff = NULL, .dim = n, .W = n, .H = 1, .C = 1};
    struct PTL_S(blob) beta = {.data = coeff + n, .diff = NULL, .dim = n, .W = n, .H = 1, .C = 1};
    struct PTL_S(blob) output = {.data = y, .diff = NULL, .dim = rows * n, .W = n, .H = rows, .C = 1};
    struct PTL_S(Nonorm_args) args = {.input = &input, .coeff = &gamma, .bias = &beta, .output = &output};
    return op_frame_fork(&f, v, PTL_F(pulp_nonorm_, _fw_cl), &args);
}

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("nonorm"), "rows n alone", "x coeff", "y", "none", run_nonorm},
    {0},
};
