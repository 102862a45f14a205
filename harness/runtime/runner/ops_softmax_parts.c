/*
 * Runner ops of the softmax's parts (pulp_softmax_fp32.h, and their FP16
 * twins): per-core bodies, forked here on the variant's cores. A unit of their own, so that
 * a library whose parts differ from these still builds its row softmax.
 * Params H W (rows of W) or dim; in place parts copy their operand
 * to the output first.
 *   row_max: x [H*W], m [H] in; maxes [H] out (m updated).
 *   row_div: x [H*W], s [H] in; y out (x divided in place).
 *   div, scalar_mul: dim; x [dim], coeff [1] (n, scalar) in; y out (in place).
 *   sm_bw_op_1: a, b [H*W] in; s [H] out.  sm_bw_op_2: a, b [H*W], s [H] in; y out.
 *   mm_bias_add: H W t; x [H*W], bias [t ? H : W] in; y out (in place).
 */
#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

static int part_shape(const struct ptl_case *c, uint32_t vi, const char *name, int *rows, int *cols)
{
    *rows = ptl_param(c, "H", vi);
    *cols = ptl_param(c, "W", vi);
    if (*rows < 1 || *cols < 1) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, name);
        return PTL_ERR_BAD_CASE;
    }
    return 0;
}

static int run_row_max(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    int H, W;
    if (part_shape(c, vi, "row_max needs H, W >= 1", &H, &W))
        return PTL_ERR_BAD_CASE;
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *x = op_frame_input(&f, "x", (uint32_t)(H * W));
    PTL_T *maxes = op_frame_output_from(&f, "m", "maxes", (uint32_t)H);
    if (f.status)
        return op_frame_finish(&f, 0);
    struct PTL_S(max_args) args = {.input = x, .H = H, .W = W, .maxes = maxes,
#if PTL_HAS_FIELD(max_args, dim) /* FP16's last field, which the API reads as W (pulp_max_fp16_cl) */
                                  .dim = W,
#endif
    };
    return op_frame_fork(&f, v, PTL_F(pulp_row_max_, _cl), &args);
}

static int run_row_div(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    int H, W;
    if (part_shape(c, vi, "row_div needs H, W >= 1", &H, &W))
        return PTL_ERR_BAD_CASE;
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *y = op_frame_output_from(&f, "x", "y", (uint32_t)(H * W));
    PTL_T *sums = op_frame_input(&f, "s", (uint32_t)H);
    if (f.status)
        return op_frame_finish(&f, 0);
    struct PTL_S(row_div_args) args = {.input = y, .H = H, .W = W, .sums = sums};
    return op_frame_fork(&f, v, PTL_F(pulp_row_div_, _cl), &args);
}

static int run_scaled(const struct ptl_case *c, struct ptl_variant v, uint32_t vi, int divide)
{
    const int dim = ptl_param(c, "dim", vi);
    if (dim < 1) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "div and scalar_mul need dim >= 1");
        return PTL_ERR_BAD_CASE;
    }
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *y = op_frame_output_from(&f, "x", "y", (uint32_t)dim);
    PTL_T *coeff = op_frame_input(&f, "coeff", 1);
    if (f.status)
        return op_frame_finish(&f, 0);
    if (divide) {
        struct PTL_S(div_args) args = {.input = y, .n = coeff[0], .dim = dim};
        return op_frame_fork(&f, v, PTL_F(pulp_div_, _cl), &args);
    }
    struct PTL_S(scalar_mul_args) args = {.input = y, .scalar = coeff[0], .dim = dim};
    return op_frame_fork(&f, v, PTL_F(pulp_scalar_mul_, _cl), &args);
}

static int run_div(const struct ptl_case *c, struct ptl_variant v, uint32_t vi) { return run_scaled(c, v, vi, 1); }
static int run_scalar_mul(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    return run_scaled(c, v, vi, 0);
}

static int run_sm_bw_op(const struct ptl_case *c, struct ptl_variant v, uint32_t vi, int op)
{
    int H, W;
    if (part_shape(c, vi, "sm_bw_op needs H, W >= 1", &H, &W))
        return PTL_ERR_BAD_CASE;
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *a = op_frame_input(&f, "a", (uint32_t)(H * W));
    PTL_T *b = op_frame_input(&f, "b", (uint32_t)(H * W));
    PTL_T *s = op == 1 ? op_frame_output(&f, "s", (uint32_t)H) : op_frame_input(&f, "s", (uint32_t)H);
    PTL_T *y = op == 2 ? op_frame_output(&f, "y", (uint32_t)(H * W)) : NULL;
    if (f.status)
        return op_frame_finish(&f, 0);
    if (op == 1) {
        struct PTL_S(sm_bw_op_1_args) args = {.A = a, .B = b, .S = s, .H = H, .W = W};
        return op_frame_fork(&f, v, PTL_S(pulp_sm_bw_op_1), &args);
    }
    struct PTL_S(sm_bw_op_2_args) args = {.A = a, .B = b, .S = s, .output = y, .H = H, .W = W};
    return op_frame_fork(&f, v, PTL_S(pulp_sm_bw_op_2), &args);
}

static int run_sm_bw_op_1(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    return run_sm_bw_op(c, v, vi, 1);
}
static int run_sm_bw_op_2(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    return run_sm_bw_op(c, v, vi, 2);
}

static int run_mm_bias_add(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    int H, W;
    const int t = ptl_param(c, "t", vi);
    if (part_shape(c, vi, "mm_bias_add needs H, W >= 1", &H, &W))
        return PTL_ERR_BAD_CASE;
    if (t != 0 && t != 1) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "mm_bias_add needs t 0 (bias per column) or 1 (per row)");
        return PTL_ERR_BAD_CASE;
    }
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *y = op_frame_output_from(&f, "x", "y", (uint32_t)(H * W));
    PTL_T *bias = op_frame_input(&f, "bias", (uint32_t)(t ? H : W));
    if (f.status)
        return op_frame_finish(&f, 0);
    struct PTL_S(mm_bias_add_args) args = {.mat = y, .bias = bias, .H = H, .W = W, .t = t};
    return op_frame_fork(&f, v, PTL_S(mm_bias_add_transposed), &args);
}

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("row_max"), "H W", "x m", "maxes", "none", run_row_max},
    {PTL_OP_NAME("row_div"), "H W", "x s", "y", "none", run_row_div},
    {PTL_OP_NAME("div"), "dim alone", "x coeff", "y", "none", run_div},
    {PTL_OP_NAME("scalar_mul"), "dim alone", "x coeff", "y", "none", run_scalar_mul},
    {PTL_OP_NAME("sm_bw_op_1"), "H W", "a b", "s", "none", run_sm_bw_op_1},
    {PTL_OP_NAME("sm_bw_op_2"), "H W", "a b s", "y", "none", run_sm_bw_op_2},
    {PTL_OP_NAME("mm_bias_add_transposed"), "H W t", "x bias", "y", "none", run_mm_bias_add},
    {0},
};
