/*
 * Runner op of a training run: a depthwise-separable block with InstanceNorm and a
 * residual connection, trained the same way:
 *
 *   x -> depthwise 3x3 (pad 1) -> pointwise C -> C -> InstanceNorm (running
 *   statistics recomputed every step) -> ReLU -> + x (residual) -> maxpool
 *   2x2/2 -> linear -> CrossEntropy; backward in reverse, the sum node adding
 *   the residual's gradient to the input's; SGD on all four parameter sets.
 *
 * Params C H W K S N lr_micro (C in = C out). Tensors in: x [S x C x H x W],
 * t [S x K], and the initial parameters params [P] = depthwise weights
 * [C x 9], pointwise [C x C], InstanceNorm gamma and beta [2C], linear
 * [K x F] (F = C * H/2 * W/2), concatenated. Out, one row per step: loss
 * [N], grads [N x P] (the four gradients, concatenated as params), weights
 * [N x P] (after the update), dx [N x C*H*W] (the gradient of the input: the
 * block's input gradient plus the residual's).
 *
 * Each network is its own runner unit (ops_train_*.c), so a library source that
 * one network needs and that does not build fails only that network's cases.
 */
#include <string.h>

#include "dw_fields.h"
#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

/* FP32 only: the FP16 compilation of this unit has no ops. */
#if PTL_OP_FP == 32

struct ds_shape {
    int C, H, W, K, S, N, lr_micro;
    uint32_t n_x, n_p, n_dw, n_pw, n_in, n_l, n_params;
};

static int read_ds_shape(const struct ptl_case *c, uint32_t vi, struct ds_shape *s)
{
    *s = (struct ds_shape){
        .C = ptl_param(c, "C", vi), .H = ptl_param(c, "H", vi), .W = ptl_param(c, "W", vi),
        .K = ptl_param(c, "K", vi), .S = ptl_param(c, "S", vi), .N = ptl_param(c, "N", vi),
        .lr_micro = ptl_param(c, "lr_micro", vi),
    };
    if (s->C < 1 || s->C > 64 || s->K < 2 || s->K > 64 || s->S < 1 || s->S > 1000 || s->N < 1 || s->N > 1000 ||
        s->H < 2 || s->W < 2 || s->H > 64 || s->W > 64 || s->H % 2 || s->W % 2 || s->lr_micro < 0 ||
        s->lr_micro > 1000000) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "train_dsblock needs 1 <= C <= 64, even 2 <= H, W <= 64, 2 <= K <= 64, "
                                             "1 <= S, N <= 1000, 0 <= lr_micro <= 1000000");
        return PTL_ERR_BAD_CASE;
    }
    s->n_x = (uint32_t)(s->C * s->H * s->W);
    s->n_p = s->n_x / 4;
    s->n_dw = (uint32_t)(s->C * 9);
    s->n_pw = (uint32_t)(s->C * s->C);
    s->n_in = (uint32_t)(2 * s->C);
    s->n_l = (uint32_t)s->K * s->n_p;
    s->n_params = s->n_dw + s->n_pw + s->n_in + s->n_l;
    return PTL_OK;
}

static int run_train_dsblock(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    struct ds_shape s;
    int status = read_ds_shape(c, vi, &s);
    if (status)
        return status;
    const uint32_t N = (uint32_t)s.N, P = s.n_params;
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    float *xs = op_frame_input(&f, "x", (uint32_t)s.S * s.n_x);
    float *ts = op_frame_input(&f, "t", (uint32_t)(s.S * s.K));
    float *params0 = op_frame_input(&f, "params", P);
    float *loss = op_frame_output(&f, "loss", N);
    float *grads = op_frame_output(&f, "grads", N * P);
    float *weights = op_frame_output(&f, "weights", N * P);
    float *dxs = op_frame_output(&f, "dx", N * s.n_x);
    /* x data and diff, z1, z2, z3, a, r (data, diff each), p, logits (data, diff) */
    float *act = op_frame_scratch(&f, 2 * (6 * s.n_x + s.n_p + (uint32_t)s.K));
    float *params = op_frame_scratch(&f, 2 * P);     /* data, then diff */
    float *work = op_frame_scratch(&f, s.n_pw + 3 * (uint32_t)s.C + 1);
    if (f.status)
        return op_frame_finish(&f, 0);
    memcpy(params, params0, P * sizeof(float));
    float *grad = params + P;
    float *transpose_buffer = work, *stats = work + s.n_pw, *wr_loss = stats + 3 * s.C;
    float *x_diff = act, *z1 = x_diff + s.n_x, *z2 = z1 + 2 * s.n_x, *z3 = z2 + 2 * s.n_x, *a = z3 + 2 * s.n_x;
    float *r = a + 2 * s.n_x, *p = r + 2 * s.n_x, *z4 = p + 2 * s.n_p;
    const int H2 = s.H / 2, W2 = s.W / 2;
    const uint32_t o_pw = s.n_dw, o_in = o_pw + s.n_pw, o_l = o_in + s.n_in;
    struct blob bx = {.data = NULL, .diff = x_diff, .dim = (int)s.n_x, .W = s.W, .H = s.H, .C = s.C};
    struct blob b1 = {.data = z1, .diff = z1 + s.n_x, .dim = (int)s.n_x, .W = s.W, .H = s.H, .C = s.C};
    struct blob b2 = {.data = z2, .diff = z2 + s.n_x, .dim = (int)s.n_x, .W = s.W, .H = s.H, .C = s.C};
    struct blob b3 = {.data = z3, .diff = z3 + s.n_x, .dim = (int)s.n_x, .W = s.W, .H = s.H, .C = s.C};
    struct blob ba = {.data = a, .diff = a + s.n_x, .dim = (int)s.n_x, .W = s.W, .H = s.H, .C = s.C};
    struct blob br = {.data = r, .diff = r + s.n_x, .dim = (int)s.n_x, .W = s.W, .H = s.H, .C = s.C};
    struct blob bp = {.data = p, .diff = p + s.n_p, .dim = (int)s.n_p, .W = W2, .H = H2, .C = s.C};
    struct blob b4 = {.data = z4, .diff = z4 + s.K, .dim = s.K, .W = 1, .H = 1, .C = s.K};
    struct blob w_dw = {.data = params, .diff = grad, .dim = (int)s.n_dw, .W = 3, .H = 3, .C = s.C};
    struct blob w_pw = {.data = params + o_pw, .diff = grad + o_pw, .dim = (int)s.n_pw, .W = 1, .H = 1, .C = s.C};
    struct blob w_in = {.data = params + o_in, .diff = grad + o_in, .dim = (int)s.n_in, .W = 1, .H = 1, .C = s.n_in};
    struct blob w_l = {.data = params + o_l, .diff = grad + o_l, .dim = (int)s.n_l, .W = (int)s.n_p, .H = s.K, .C = 1};
    struct blob no_biases = {.data = NULL, .diff = NULL, .dim = 0, .W = 0, .H = 0, .C = 0};
    struct DepthWise_Conv_args dw = {.input = &bx, .coeff = &w_dw, .output = &b1,
#if DW_HAS_STRIDES /* stride 1, all the depthwise layer needs: none where the struct lacks them */
                                     .stride_h = 1, .stride_w = 1,
#endif
                                     .Lpad = 1, .Rpad = 1, .Upad = 1, .Dpad = 1, .skip_wg_grad = 0,
                                     .skip_in_grad = 0, .HWC = 0};
    struct PointWise_Conv_args pw = {.input = &b1, .coeff = &w_pw, .output = &b2,
                                     .transpose_buffer = transpose_buffer, .skip_wg_grad = 0, .skip_in_grad = 0,
                                     .opt_matmul_type_fw = 0, .opt_matmul_type_wg = 0, .opt_matmul_type_ig = 0,
                                     .HWC = 0};
    struct InstNorm_args in = {.input = &b2, .output = &b3, .coeff = &w_in, .running_mean = stats,
                               .running_var = stats + s.C, .running_stdev = stats + 2 * s.C,
                               .freeze_running_params = 0, .skip_wg_grad = 0, .skip_in_grad = 0};
    struct act_args relu = {.input = &b3, .output = &ba, .H = 1, .W = 1};
    struct SkipConn_args skip = {.skip = &bx, .lout = &ba, .output = &br, .skip_in_grad = 0};
    struct pool_args pool = {.input = &br, .output = &bp, .Hker = 2, .Wker = 2, .Hstride = 2, .Wstride = 2};
    struct Linear_args linear = {.input = &bp, .coeff = &w_l, .bias = &no_biases, .output = &b4, .skip_wg_grad = 0,
                                 .skip_in_grad = 0, .opt_matmul_type_fw = 0, .opt_matmul_type_wg = 0,
                                 .opt_matmul_type_ig = 0, .use_biases = 0};
    struct loss_args ce = {.output = &b4, .target = NULL, .wr_loss = wr_loss};
    struct blob all = {.data = params, .diff = grad, .dim = (int)P, .W = (int)P, .H = 1, .C = 1};
    /* weight_decay_lambda (older versions of the struct lack it, ops_optim.c) is the initializer's 0. */
    struct optim_args sgd = {.weights = &all, .biases = &no_biases, .learning_rate = (float)s.lr_micro / 1000000.0f,
                             .use_biases = 0};

    ptl_measure_begin(vi);
    for (int k = 0; k < s.N; k++) {
        bx.data = xs + (size_t)(k % s.S) * s.n_x;
        ce.target = ts + (size_t)(k % s.S) * s.K;
        pulp_conv_dw_fp32_fw_cl(&dw);
        pulp_conv_pw_fp32_fw_cl(&pw);
        pulp_instnorm_fp32_fw_cl(&in);
        pulp_relu_fp32_fw_cl(&relu);
        pulp_residualconn_fp32_fw(&skip);
        pi_cl_team_fork(v.cores, pulp_maxpool_fp32_fw_cl, &pool);
        pulp_linear_fp32_fw_cl(&linear);
        pulp_CrossEntropyLoss(&ce);
        loss[k] = *wr_loss;
        pulp_CrossEntropyLoss_backward(&ce);
        pulp_linear_fp32_bw_cl(&linear);
        pi_cl_team_fork(v.cores, pulp_maxpool_fp32_bw_cl, &pool);
        pulp_residualconn_fp32_bw(&skip);
        pulp_relu_fp32_bw_cl(&relu);
        pulp_instnorm_fp32_bw_cl(&in);
        pulp_conv_pw_fp32_bw_cl(&pw);
        pulp_conv_dw_fp32_bw_cl(&dw);
        pulp_sumnode_fp32_bw(&skip);
        memcpy(grads + (size_t)k * P, grad, P * sizeof(float));
        memcpy(dxs + (size_t)k * s.n_x, x_diff, s.n_x * sizeof(float));
        pi_cl_team_fork(v.cores, pulp_gradient_descent_fp32, &sgd);
        memcpy(weights + (size_t)k * P, params, P * sizeof(float));
    }
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

#endif

const struct ptl_op PTL_OP_TABLE[] = {
#if PTL_OP_FP == 32
    {PTL_OP_NAME("train_dsblock"), "C H W K S N lr_micro", "x t params", "loss grads weights dx", "none",
     run_train_dsblock},
#endif
    {0},
};
