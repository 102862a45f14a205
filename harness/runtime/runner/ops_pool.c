/*
 * Runner ops of the pooling family: average and max pooling, FW and BW.
 * Pooling is forked by the caller (the API says so), so the runner forks
 * each primitive on the variant's team.
 *
 * Compiled once per dtype (ptl_op_dtype.h). Shapes are CHW:
 * x [C x H x W], dy and y [C x Ho x Wo], dx like x.
 * Only the buffers the step reads are copied (the footprint in
 * harness/catalogue/pool.py counts the same ones): FW x; average BW dy; max BW
 * x, dy and the FW's y (output->data): the page does not say how max BW finds
 * each window's maximum, and comparing x with y is one way. Average BW gets no
 * output->data.
 */
#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

#define POOL_PARAMS "C H W Hker Wker Hstride Wstride step"
#define POOL_INPUTS "x dy"
#define MAXPOOL_INPUTS "x dy y"
#define POOL_OUTPUTS "y dx"


struct pool_shape {
    int C, H, W, Hk, Wk, Hs, Ws, Ho, Wo, step;
};

/* Reads and checks the params; PTL_OK or an ERROR record and PTL_ERR_BAD_CASE. */
static int pool_read_shape(const struct ptl_case *c, uint32_t vi, struct pool_shape *s)
{
    *s = (struct pool_shape){
        .C = ptl_param(c, "C", vi),
        .H = ptl_param(c, "H", vi),
        .W = ptl_param(c, "W", vi),
        .Hk = ptl_param(c, "Hker", vi),
        .Wk = ptl_param(c, "Wker", vi),
        .Hs = ptl_param(c, "Hstride", vi),
        .Ws = ptl_param(c, "Wstride", vi),
        .step = ptl_param(c, "step", vi),
    };
    if (s->C < 1 || s->Hk < 1 || s->Wk < 1 || s->Hk > s->H || s->Wk > s->W || s->Hs < 1 ||
        s->Ws < 1 || (s->step != PTL_STEP_FW && s->step != PTL_STEP_BW)) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE,
                       "pool params need C >= 1, 1 <= Hker <= H, 1 <= Wker <= W, strides >= 1, step FW or BW");
        return PTL_ERR_BAD_CASE;
    }
    s->Ho = (s->H - s->Hk) / s->Hs + 1;
    s->Wo = (s->W - s->Wk) / s->Ws + 1;
    return PTL_OK;
}

typedef void (*primitive_fn)(void *);

static int run_pool(const struct ptl_case *c, struct ptl_variant v, uint32_t vi, primitive_fn fw_fn,
                    primitive_fn bw_fn, int bw_reads_x)
{
    struct pool_shape s;
    int status = pool_read_shape(c, vi, &s);
    if (status)
        return status;
    const uint32_t n_in = (uint32_t)(s.C * s.H * s.W), n_out = (uint32_t)(s.C * s.Ho * s.Wo);
    const int fw = s.step == PTL_STEP_FW;
    const int needs_x = fw || bw_reads_x, needs_dy = !fw;
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *x = needs_x ? op_frame_input(&f, "x", n_in) : NULL;
    PTL_T *dy = needs_dy ? op_frame_input(&f, "dy", n_out) : NULL;
    PTL_T *y_fw = !fw && bw_reads_x ? op_frame_input(&f, "y", n_out) : NULL;
    PTL_T *out = op_frame_output(&f, fw ? "y" : "dx", fw ? n_out : n_in);
    if (f.status)
        return op_frame_finish(&f, 0);
    struct PTL_S(blob) input = {.data = x, .diff = fw ? NULL : out, .dim = (int)n_in,
                                .W = s.W, .H = s.H, .C = s.C};
    struct PTL_S(blob) output = {.data = fw ? out : y_fw, .diff = dy, .dim = (int)n_out,
                                 .W = s.Wo, .H = s.Ho, .C = s.C};
    struct PTL_S(pool_args) args = {.input = &input, .output = &output, .Hker = s.Hk, .Wker = s.Wk,
                                    .Hstride = s.Hs, .Wstride = s.Ws};
    return op_frame_fork(&f, v, fw ? fw_fn : bw_fn, &args);
}

static int run_avgpool(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    return run_pool(c, v, vi, PTL_F(pulp_avgpool_, _fw_cl), PTL_F(pulp_avgpool_, _bw_cl), 0);
}

/* Max pool BW finds the selected element of each window, from x (and y). */
static int run_maxpool(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    return run_pool(c, v, vi, PTL_F(pulp_maxpool_, _fw_cl), PTL_F(pulp_maxpool_, _bw_cl), 1);
}

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("avgpool"), POOL_PARAMS, POOL_INPUTS, POOL_OUTPUTS, "none", run_avgpool},
    {PTL_OP_NAME("maxpool"), POOL_PARAMS, MAXPOOL_INPUTS, POOL_OUTPUTS, "none", run_maxpool},
    {0},
};
