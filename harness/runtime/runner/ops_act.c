/*
 * Runner ops of the activations family: ReLU, LeakyReLU and Sigmoid, FW and
 * BW, forked inside the primitive (the API's wrappers fork NUM_CORES, which
 * the runner has set to the variant's core count). No matmul: kernel 0.
 *
 * GELU, tanh (FP32) and SwiGLU are per-core bodies the runner forks (below).
 *
 * Compiled once per dtype (ptl_op_dtype.h). Params:
 *   n            element count (input->dim); every tensor is a flat [n]
 *   slope_milli  LeakyReLU only: negative_slope = slope_milli / 1000, computed
 *                as the binary32 quotient (float)slope_milli / 1000.0f and, for
 *                fp16, rounded once more to fp16 (golden/act.py does the same)
 *   step         FW or BW (enum ptl_step)
 * Tensors: x (input->data), y (output->data), dy (output->diff) in; y (FW)
 * or dx (BW, input->diff) out. Sigmoid takes y as an input: its BW reads
 * the forward result from output->data, not x. Only the tensors a step
 * reads are copied, and the buffers a step does not use are NULL in the
 * blobs: FW x; ReLU and LeakyReLU BW x and dy; Sigmoid BW y and dy.
 */
#include <stdlib.h>

#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

#define ACT_OUTPUTS "y dx"


typedef void (*primitive_fn)(void *);

/* Which tensor the BW step reads besides dy: x (input->data) or y (output->data). */
enum act_bw_reads { ACT_BW_READS_X, ACT_BW_READS_Y };

/* Reads n and step; PTL_OK or an ERROR record and PTL_ERR_BAD_CASE. */
static int act_read_shape(const struct ptl_case *c, uint32_t vi, int *n, int *step)
{
    *n = ptl_param(c, "n", vi);
    *step = ptl_param(c, "step", vi);
    if (*n < 1 || (*step != PTL_STEP_FW && *step != PTL_STEP_BW)) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "activation params need n >= 1 and step FW or BW");
        return PTL_ERR_BAD_CASE;
    }
    return PTL_OK;
}

/* Sets up the blobs of one variant, calls fw_fn or bw_fn on `args` (an args
 * struct whose input/output point at *input and *output) and emits its output. */
static int run_act(const struct ptl_case *c, uint32_t vi, int n, int step, enum act_bw_reads bw_reads,
                   struct PTL_S(blob) *input, struct PTL_S(blob) *output, void *args,
                   primitive_fn fw_fn, primitive_fn bw_fn)
{
    const int fw = step == PTL_STEP_FW;
    const uint32_t count = (uint32_t)n;
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *x = fw || bw_reads == ACT_BW_READS_X ? op_frame_input(&f, "x", count) : NULL;
    PTL_T *y_in = !fw && bw_reads == ACT_BW_READS_Y ? op_frame_input(&f, "y", count) : NULL;
    PTL_T *dy = fw ? NULL : op_frame_input(&f, "dy", count);
    PTL_T *y = fw ? op_frame_output(&f, "y", count) : NULL;
    PTL_T *dx = fw ? NULL : op_frame_output(&f, "dx", count);
    if (f.status)
        return op_frame_finish(&f, 0);
    *input = (struct PTL_S(blob)){.data = x, .diff = dx, .dim = n, .W = 1, .H = 1, .C = n};
    *output = (struct PTL_S(blob)){.data = fw ? y : y_in, .diff = dy, .dim = n, .W = 1, .H = 1, .C = n};
    ptl_measure_begin(vi);
    (fw ? fw_fn : bw_fn)(args);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

static int run_act_args(const struct ptl_case *c, uint32_t vi, enum act_bw_reads bw_reads,
                        primitive_fn fw_fn, primitive_fn bw_fn)
{
    int n, step;
    int status = act_read_shape(c, vi, &n, &step);
    if (status)
        return status;
    struct PTL_S(blob) input, output;
    struct PTL_S(act_args) args = {.input = &input, .output = &output, .H = 1, .W = 1};
    return run_act(c, vi, n, step, bw_reads, &input, &output, &args, fw_fn, bw_fn);
}

static int run_relu(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v; /* direct code: no kernel index */
    return run_act_args(c, vi, ACT_BW_READS_X, PTL_F(pulp_relu_, _fw_cl), PTL_F(pulp_relu_, _bw_cl));
}

static int run_sigmoid(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v;
    return run_act_args(c, vi, ACT_BW_READS_Y, PTL_F(pulp_sigmoid_, _fw_cl), PTL_F(pulp_sigmoid_, _bw_cl));
}

static int run_leakyrelu(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v;
    int n, step;
    int status = act_read_shape(c, vi, &n, &step);
    if (status)
        return status;
    const int slope_milli = ptl_param(c, "slope_milli", vi);
    if (slope_milli < 0 || slope_milli > 1000) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "leakyrelu needs 0 <= slope_milli <= 1000 (the slope in thousandths)");
        return PTL_ERR_BAD_CASE;
    }
    const float slope = (float)slope_milli / 1000.0f;
    struct PTL_S(blob) input, output;
#if PTL_OP_FP == 32
    struct leakyrelu_args args = {.input = &input, .output = &output, .negative_slope = slope};
#else
    struct leakyrelu_args_fp16 args = {.input = &input, .output = &output, .negative_slope = PTL_FROM_F32(slope)};
#endif
    return run_act(c, vi, n, step, ACT_BW_READS_X, &input, &output, &args, PTL_F(pulp_leakyrelu_, _fw_cl),
                   PTL_F(pulp_leakyrelu_, _bw_cl));
}

/*
 * GELU, tanh (FP32) and SwiGLU: per-core bodies that the caller forks, so
 * the runner forks them on the variant's team. Param n; tensors x (and the
 * gate b for SwiGLU) in, y out.
 */
struct forked_io {
    struct op_frame f;
    int n;
    PTL_T *x, *b, *y;
};

/* Reads n and sets up the buffers; PTL_OK, or the variant's status. */
static int forked_io_open(struct forked_io *io, const struct ptl_case *c, uint32_t vi, int gated)
{
    io->n = ptl_param(c, "n", vi);
    if (io->n < 1) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "element-wise activations need n >= 1");
        return PTL_ERR_BAD_CASE;
    }
    op_frame_init(&io->f, c, vi, PTL_DTYPE);
    io->x = op_frame_input(&io->f, "x", (uint32_t)io->n);
    io->b = gated ? op_frame_input(&io->f, "b", (uint32_t)io->n) : NULL;
    io->y = op_frame_output(&io->f, "y", (uint32_t)io->n);
    return io->f.status ? op_frame_finish(&io->f, 0) : PTL_OK;
}


static int run_gelu(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    struct forked_io io;
    int status = forked_io_open(&io, c, vi, 0);
    if (status)
        return status;
    /* The page does not say which field holds GELU's element count: dim, C x H x W and the
     * args' H x W all say n. */
    struct PTL_S(blob) input = {.data = io.x, .diff = NULL, .dim = io.n, .W = io.n, .H = 1, .C = 1};
    struct PTL_S(blob) output = {.data = io.y, .diff = NULL, .dim = io.n, .W = io.n, .H = 1, .C = 1};
    struct PTL_S(act_args) args = {.input = &input, .output = &output, .H = 1, .W = io.n};
#if PTL_OP_FP == 32
    return op_frame_fork(&io.f, v, pulp_gelu_tanh_approx_fp32_fw_cl, &args);
#else
    return op_frame_fork(&io.f, v, pulp_gelu_fp16_fw_cl, &args);
#endif
}

static int run_swiglu(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    struct forked_io io;
    int status = forked_io_open(&io, c, vi, 1);
    if (status)
        return status;
    struct PTL_S(swiglu_args) args = {.in1 = io.x, .in2 = io.b, .out = io.y, .dim = io.n};
    return op_frame_fork(&io.f, v, PTL_F(pulp_swiglu_, _cl), &args);
}

#if PTL_OP_FP == 32
static int run_tanh(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    struct forked_io io;
    int status = forked_io_open(&io, c, vi, 0);
    if (status)
        return status;
    struct tanh_args args = {.input = io.x, .dim = io.n, .output = io.y};
    return op_frame_fork(&io.f, v, tanh_prll, &args);
}
#endif

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("relu"), "n step", "x dy", ACT_OUTPUTS, "none", run_relu},
    {PTL_OP_NAME("leakyrelu"), "n slope_milli step", "x dy", ACT_OUTPUTS, "none", run_leakyrelu},
    {PTL_OP_NAME("sigmoid"), "n step", "x y dy", ACT_OUTPUTS, "none", run_sigmoid},
    {PTL_OP_NAME("gelu"), "n alone", "x", "y", "none", run_gelu},
    {PTL_OP_NAME("swiglu"), "n alone", "x b", "y", "none", run_swiglu},
#if PTL_OP_FP == 32
    {PTL_OP_NAME("tanh"), "n alone", "x", "y", "none", run_tanh},
#endif
    {0},
};
