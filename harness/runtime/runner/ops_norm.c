/*
 * Runner ops of the normalizations. BatchNorm, LayerNorm and RMSNorm (FP32
 * FW) follow InstanceNorm below; NoNorm is ops_nonorm.c.
 *
 * InstanceNorm: FW (running statistics computed and stored, or
 * frozen and read), WG, IG and BW (WG then IG), forked inside the primitive
 * (NUM_CORES, which the runner has set to the variant's core count). No
 * matmul: kernel 0.
 *
 * InstanceNorm is compiled per dtype; the other norms are FP32 only. Params:
 *   C H W    the tensor, CHW; D = H * W
 *   step     FW, WG (bw_param_grads), IG (bw_input_grads) or BW (bw)
 *   frozen   freeze_running_params
 * Tensors in: x [C x D], coeff [2C] (gamma then beta), dy [C x D], and the
 * running statistics mean, var, stdev [C]. Out: FW y [C x D] and the
 * statistics after the call (mean_out, var_out, stdev_out: they start as
 * the inputs, so a frozen FW must leave them exactly); WG and BW dcoeff
 * [2C] (dgamma then dbeta); IG and BW dx [C x D].
 */
#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

/* Each family's own header, where the library has one that its umbrella
 * header leaves out (the published pulp_train.h has no pulp_rmsnorm_fp32.h):
 * an undeclared RMSNorm must not fail the four other norms of this unit. */
#if PTL_OP_FP == 32 && __has_include("pulp_rmsnorm_fp32.h")
#include "pulp_rmsnorm_fp32.h"
#endif


/* instnorm_skip's `skip`: the BW with WG or IG skipped (skip_wg_grad,
 * skip_in_grad: "`_bw_cl` = WG then IG unless skipped"). The skipped
 * gradient starts as a copy of the finite input dcoeff0 or dx0 and must
 * come back as it. */
enum { IN_SKIP_NONE = 0, IN_SKIP_WG = 1, IN_SKIP_IG = 2 };

static int instnorm_variant(const struct ptl_case *c, uint32_t vi, int skip)
{
    const int C = ptl_param(c, "C", vi), H = ptl_param(c, "H", vi), W = ptl_param(c, "W", vi);
    const int step = ptl_param(c, "step", vi), frozen = ptl_param(c, "frozen", vi);
    if (C < 1 || H < 1 || W < 1 || step < PTL_STEP_FW || step > PTL_STEP_BW || (frozen != 0 && frozen != 1)) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "instnorm params need C, H, W >= 1, step FW, WG, IG or BW, "
                                             "frozen 0 or 1");
        return PTL_ERR_BAD_CASE;
    }
    const uint32_t n = (uint32_t)(C * H * W), nc = (uint32_t)C;
    const int fw = step == PTL_STEP_FW, wg = step == PTL_STEP_WG || step == PTL_STEP_BW;
    const int ig = step == PTL_STEP_IG || step == PTL_STEP_BW;
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *x = op_frame_input(&f, "x", n);
    PTL_T *coeff = op_frame_input(&f, "coeff", 2 * nc);
    PTL_T *dy = fw ? NULL : op_frame_input(&f, "dy", n);
    PTL_T *mean = fw ? op_frame_output_from(&f, "mean", "mean_out", nc) : op_frame_input(&f, "mean", nc);
    PTL_T *var = fw ? op_frame_output_from(&f, "var", "var_out", nc) : op_frame_input(&f, "var", nc);
    PTL_T *stdev = fw ? op_frame_output_from(&f, "stdev", "stdev_out", nc) : op_frame_input(&f, "stdev", nc);
    PTL_T *y = fw ? op_frame_output(&f, "y", n) : NULL;
    PTL_T *dcoeff = skip == IN_SKIP_WG ? op_frame_output_from(&f, "dcoeff0", "dcoeff", 2 * nc)
                    : wg ? op_frame_output(&f, "dcoeff", 2 * nc) : NULL;
    /* WG writes no input gradient, but TRAINLIB_API.md does not say that
     * input->diff may then be NULL (the published body forms input->diff +
     * c * D there): WG gets a guarded NaN buffer that nothing reads. */
    PTL_T *dx = skip == IN_SKIP_IG ? op_frame_output_from(&f, "dx0", "dx", n)
                : ig ? op_frame_output(&f, "dx", n) : wg ? op_frame_scratch(&f, n) : NULL;
    if (f.status)
        return op_frame_finish(&f, 0);
    struct PTL_S(blob) input = {.data = x, .diff = dx, .dim = (int)n, .W = W, .H = H, .C = C};
    struct PTL_S(blob) output = {.data = y, .diff = dy, .dim = (int)n, .W = W, .H = H, .C = C};
    struct PTL_S(blob) coeff_blob = {.data = coeff, .diff = dcoeff, .dim = 2 * C, .W = 1, .H = 1, .C = 2 * C};
    struct PTL_S(InstNorm_args) args = {
        .input = &input, .output = &output, .coeff = &coeff_blob,
        .running_mean = mean, .running_var = var, .running_stdev = stdev,
        .freeze_running_params = frozen, .skip_wg_grad = !wg || skip == IN_SKIP_WG,
        .skip_in_grad = !ig || skip == IN_SKIP_IG,
    };
    ptl_measure_begin(vi);
    if (fw)
        PTL_F(pulp_instnorm_, _fw_cl)(&args);
    else if (step == PTL_STEP_WG)
        PTL_F(pulp_instnorm_, _bw_param_grads_cl)(&args);
    else if (step == PTL_STEP_IG)
        PTL_F(pulp_instnorm_, _bw_input_grads_cl)(&args);
    else
        PTL_F(pulp_instnorm_, _bw_cl)(&args);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

static int run_instnorm(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v; /* direct code: no kernel index */
    return instnorm_variant(c, vi, IN_SKIP_NONE);
}

static int run_instnorm_skip(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v;
    const int skip = ptl_param(c, "skip", vi);
    if (ptl_param(c, "step", vi) != PTL_STEP_BW || (skip != IN_SKIP_WG && skip != IN_SKIP_IG)) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "instnorm_skip params need step BW and skip 1 (WG) or 2 (IG)");
        return PTL_ERR_BAD_CASE;
    }
    return instnorm_variant(c, vi, skip);
}

#if PTL_OP_FP == 32

/*
 * BatchNorm: params B C H W eps_micro; x [B x C x H x W], coeff [2C]
 * (weight_data then bias_data) in; y out. LayerNorm: rows n (step_size),
 * eps_micro; x [rows x n], coeff [2n] (weight then bias); y. RMSNorm: n;
 * x, coeff [n] (weight); y. eps = eps_micro / 1000000 in binary32.
 * RMSNorm's bodies, forked by the runner on the variant's cores:
 * sum_of_squares: n; x in; sum [1] out: the partials the cores wrote to
 * buffer[core] (NaN until written), added in core order as
 * rmsnorm_parallelized_fp32 adds them (the API fixes no split of the
 * elements, only that the partials add up). weighted_scaling: n; x, coeff
 * [n + 1] (w, then scaling_factor) in; y out.
 */
struct norm_io {
    struct op_frame f;
    float *x, *coeff, *y;
};

static int norm_io_open(struct norm_io *io, const struct ptl_case *c, uint32_t vi, uint32_t n, uint32_t n_coeff)
{
    op_frame_init(&io->f, c, vi, PTL_DTYPE);
    io->x = op_frame_input(&io->f, "x", n);
    io->coeff = op_frame_input(&io->f, "coeff", n_coeff);
    io->y = op_frame_output(&io->f, "y", n);
    return io->f.status ? op_frame_finish(&io->f, 0) : PTL_OK;
}

/* A primitive that forks its own team, called once, measured. */
static int norm_io_called(struct norm_io *io, uint32_t vi, void (*call)(void *), void *args)
{
    ptl_measure_begin(vi);
    call(args);
    ptl_measure_end(vi);
    return op_frame_finish(&io->f, 1);
}

static int run_batchnorm(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v;
    const int B = ptl_param(c, "B", vi), C = ptl_param(c, "C", vi), H = ptl_param(c, "H", vi);
    const int W = ptl_param(c, "W", vi), eps_micro = ptl_param(c, "eps_micro", vi);
    if (B < 1 || C < 1 || H < 1 || W < 1 || eps_micro < 1) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "batchnorm needs B, C, H, W, eps_micro >= 1");
        return PTL_ERR_BAD_CASE;
    }
    struct norm_io io;
    int status = norm_io_open(&io, c, vi, (uint32_t)(B * C * H * W), (uint32_t)(2 * C));
    if (status)
        return status;
    float eps = (float)eps_micro / 1000000.0f;
    struct blob input = {.data = io.x, .diff = NULL, .dim = B * C * H * W, .W = W, .H = H, .C = C};
    struct blob output = {.data = io.y, .diff = NULL, .dim = B * C * H * W, .W = W, .H = H, .C = C};
    struct BatchNorm_args_fp32 args = {
        .input = &input, .output = &output, .coeff = NULL, .bias = NULL, .batch_size = B,
        .running_mean = NULL, .running_var = NULL, .running_stdev = NULL, .freeze_running_params = 0,
        .skip_wg_grad = 1, .skip_in_grad = 1, .weight_data = io.coeff, .bias_data = io.coeff + C, .eps = &eps,
        .B = B, .C = C, .H = H, .W = W,
    };
    return norm_io_called(&io, vi, pulp_batch_norm_fp32_fw_cl, &args);
}

static int run_layernorm(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    const int rows = ptl_param(c, "rows", vi), n = ptl_param(c, "n", vi), eps_micro = ptl_param(c, "eps_micro", vi);
    if (rows < 1 || n < 1 || eps_micro < 1) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "layernorm needs rows, n, eps_micro >= 1");
        return PTL_ERR_BAD_CASE;
    }
    struct norm_io io;
    int status = norm_io_open(&io, c, vi, (uint32_t)(rows * n), (uint32_t)(2 * n));
    if (status)
        return status;
    float eps = (float)eps_micro / 1000000.0f;
    struct LayerNorm_args_fp32 args = {.x = io.x, .weight = io.coeff, .bias = io.coeff + n, .output = io.y,
                                       .eps = &eps, .size = rows * n, .step_size = n};
    return op_frame_fork(&io.f, v, pulp_layerNorm_fp32_fw_cl, &args);
}

struct rmsnorm_call {
    float *o, *x, *weight, *buffer;
    int size;
};

static void rmsnorm_call(void *args)
{
    struct rmsnorm_call *r = args;
    rmsnorm_parallelized_fp32(r->o, r->x, r->weight, r->buffer, r->size);
}

static int run_rmsnorm(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    const int n = ptl_param(c, "n", vi);
    if (n < 1) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "rmsnorm needs n >= 1");
        return PTL_ERR_BAD_CASE;
    }
    struct norm_io io;
    int status = norm_io_open(&io, c, vi, (uint32_t)n, (uint32_t)n);
    if (status)
        return status;
    struct rmsnorm_call args = {.o = io.y, .x = io.x, .weight = io.coeff,
                                .buffer = op_frame_scratch(&io.f, (uint32_t)v.cores), .size = n};
    if (io.f.status)
        return op_frame_finish(&io.f, 0);
    return norm_io_called(&io, vi, rmsnorm_call, &args);
}

static int run_sum_of_squares(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    const int n = ptl_param(c, "n", vi);
    if (n < 1) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "sum_of_squares needs n >= 1");
        return PTL_ERR_BAD_CASE;
    }
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    float *x = op_frame_input(&f, "x", (uint32_t)n);
    float *sum = op_frame_output(&f, "sum", 1);
    float *partials = op_frame_scratch(&f, (uint32_t)v.cores);
    if (f.status)
        return op_frame_finish(&f, 0);
    struct sum_of_squares_args args = {.out = partials, .in = x, .size = (unsigned int)n};
    ptl_measure_begin(vi);
    pi_cl_team_fork(v.cores, sum_of_squares_fp32_cl, &args);
    ptl_measure_end(vi);
    *sum = 0.0f;
    for (int k = 0; k < v.cores; k++)
        *sum += partials[k];
    return op_frame_finish(&f, 1);
}

static int run_weighted_scaling(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    const int n = ptl_param(c, "n", vi);
    if (n < 1) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "weighted_scaling needs n >= 1");
        return PTL_ERR_BAD_CASE;
    }
    struct norm_io io;
    int status = norm_io_open(&io, c, vi, (uint32_t)n, (uint32_t)n + 1);
    if (status)
        return status;
    struct weighted_scaling_args args = {.out = io.y, .in = io.x, .w = io.coeff, .scaling_factor = io.coeff[n],
                                         .size = (unsigned int)n};
    return op_frame_fork(&io.f, v, weighted_scaling_fp32_cl, &args);
}

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("batchnorm"), "B C H W eps_micro", "x coeff", "y", "none", run_batchnorm},
    {PTL_OP_NAME("layernorm"), "rows n eps_micro alone", "x coeff", "y", "none", run_layernorm},
    {PTL_OP_NAME("rmsnorm"), "n", "x coeff", "y", "none", run_rmsnorm},
    {PTL_OP_NAME("sum_of_squares"), "n", "x", "sum", "none", run_sum_of_squares},
    {PTL_OP_NAME("weighted_scaling"), "n", "x coeff", "y", "none", run_weighted_scaling},
    {PTL_OP_NAME("instnorm"), "C H W step frozen", "x coeff dy mean var stdev",
     "y mean_out var_out stdev_out dcoeff dx", "none", run_instnorm},
    {PTL_OP_NAME("instnorm_skip"), "C H W step frozen skip", "x coeff dy mean var stdev dcoeff0 dx0",
     "y mean_out var_out stdev_out dcoeff dx", "none", run_instnorm_skip},
    {0},
};

#else /* FP16: InstanceNorm only (the other norms are FP32 in the API) */

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("instnorm"), "C H W step frozen", "x coeff dy mean var stdev",
     "y mean_out var_out stdev_out dcoeff dx", "none", run_instnorm},
    {PTL_OP_NAME("instnorm_skip"), "C H W step frozen skip", "x coeff dy mean var stdev dcoeff0 dx0",
     "y mean_out var_out stdev_out dcoeff dx", "none", run_instnorm_skip},
    {0},
};

#endif
