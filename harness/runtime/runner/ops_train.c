/*
 * Runner op of the training runs: a small CNN trained for N steps on the
 * device, with the library's own primitives chained as a deployment chains
 * them (batch 1, one sample per step, plain gradient descent):
 *
 *   x -> conv2d 3x3 (pad 1, no bias) -> ReLU -> maxpool 2x2/2 -> linear (no
 *   bias) -> CrossEntropy(t); backward in reverse; SGD on what is trained.
 *
 * Compiled once per dtype (ptl_op_dtype.h). Params:
 *   Ci H W Co   the conv's geometry (H and W even: the pool halves them)
 *   K           classes (linear outputs); F = Co * H/2 * W/2 its inputs
 *   S N         samples in the data set, steps (step k uses sample k mod S)
 *   lr_micro    learning rate in millionths, as the sgd op takes it
 *   frozen      bit 0: the conv is frozen, bit 1: the linear layer is; a
 *               frozen layer is neither given a weight gradient
 *               (skip_wg_grad) nor updated
 * Tensors in: x [S x Ci x H x W], t [S x K] (targets), w1 [Co x Ci x 3 x 3],
 * w2 [K x F] (the initial weights). Out, one row per step: loss [N], the
 * gradients g1 [N x |w1|] and g2 [N x |w2|] (rows of a frozen layer are
 * zero: the runner clears them, no primitive writes them) and the weights
 * after the step's update w1s [N x |w1|], w2s [N x |w2|].
 *
 * The matmuls use kernel 0 (mm); the whole run is one measurement.
 *
 * train_dsblock (FP32): a depthwise-separable block with InstanceNorm and a
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
 * train_transformer (FP32): a transformer block, trained the same way:
 *
 *   x [L x E] -> LayerNorm (fixed weight and bias: the API has its FW only,
 *   so it sits on the data) -> transpose to I = z^T [E x L] -> multi-head
 *   self-attention -> + I (residual) -> linear (E*L -> K) -> CrossEntropy;
 *   backward: CE, linear, residual, attention; SGD on wq, wk, wv, wo and the
 *   linear weights (the attention biases stay fixed: the API computes no
 *   bias gradients).
 *
 * Params L E F heads K S N lr_micro. Tensors in: x [S x L x E], t [S x K],
 * params [P] = wq, wk, wv, wo [E x F each, as Mhsa_args holds them], linear
 * [K x E*L]; fixed [2E + 3F] = LayerNorm weight and bias, bq, bk, bv. Out,
 * one row per step: loss [N], grads [N x P] (in the parameters' layout: the
 * API writes coeff_in_*->diff as F x E, the transpose of the weights, so the
 * op transposes them before the update, as a deployment must), weights
 * [N x P] after the update.
 */
#include <string.h>

#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

#define TRAIN_PARAMS "Ci H W Co K S N lr_micro frozen"
#define TRAIN_INPUTS "x t w1 w2"
#define TRAIN_OUTPUTS "loss g1 g2 w1s w2s"

/* The losses carry no fp32 in their FP32 names. */
#if PTL_OP_FP == 32
#define CROSS_ENTROPY_FW pulp_CrossEntropyLoss
#define CROSS_ENTROPY_BW pulp_CrossEntropyLoss_backward
#else
#define CROSS_ENTROPY_FW pulp_CrossEntropyLoss_fp16
#define CROSS_ENTROPY_BW pulp_CrossEntropyLoss_backward_fp16
#endif

enum { FROZEN_CONV = 1, FROZEN_LINEAR = 2 };

struct cnn_shape {
    int Ci, H, W, Co, K, S, N, lr_micro, frozen;
    uint32_t n_x, n_z1, n_p, n_w1, n_w2; /* one sample, conv output, pooled, weights */
};

static int read_cnn_shape(const struct ptl_case *c, uint32_t vi, struct cnn_shape *s)
{
    *s = (struct cnn_shape){
        .Ci = ptl_param(c, "Ci", vi), .H = ptl_param(c, "H", vi), .W = ptl_param(c, "W", vi),
        .Co = ptl_param(c, "Co", vi), .K = ptl_param(c, "K", vi), .S = ptl_param(c, "S", vi),
        .N = ptl_param(c, "N", vi), .lr_micro = ptl_param(c, "lr_micro", vi),
        .frozen = ptl_param(c, "frozen", vi),
    };
    if (s->Ci < 1 || s->Co < 1 || s->K < 2 || s->S < 1 || s->N < 1 || s->H < 2 || s->W < 2 || s->H % 2 ||
        s->W % 2 || s->H > 64 || s->W > 64 || s->Ci > 64 || s->Co > 64 || s->K > 64 || s->N > 1000 ||
        s->S > 1000 || s->lr_micro < 0 || s->lr_micro > 1000000 || s->frozen < 0 || s->frozen > 3) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "train_cnn needs 1 <= Ci, Co <= 64, even 2 <= H, W <= 64, "
                                             "2 <= K <= 64, 1 <= S, N <= 1000, 0 <= lr_micro <= 1000000, "
                                             "0 <= frozen <= 3");
        return PTL_ERR_BAD_CASE;
    }
    s->n_x = (uint32_t)(s->Ci * s->H * s->W);
    s->n_z1 = (uint32_t)(s->Co * s->H * s->W);
    s->n_p = (uint32_t)(s->Co * (s->H / 2) * (s->W / 2));
    s->n_w1 = (uint32_t)(s->Co * s->Ci * 9);
    s->n_w2 = (uint32_t)s->K * s->n_p;
    return PTL_OK;
}

/* The network's tensors, as blobs the primitives share: each layer's output
 * blob is the next one's input, data forward and diff backward. */
struct cnn_blobs {
    struct PTL_S(blob) x, w1, z1, a1, p, w2, z2;
};

static void copy_row(PTL_T *rows, int k, const PTL_T *from, uint32_t count)
{
    memcpy(rows + (size_t)k * count, from, count * sizeof(PTL_T));
}

static int run_train_cnn(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    struct cnn_shape s;
    int status = read_cnn_shape(c, vi, &s);
    if (status)
        return status;
    const uint32_t N = (uint32_t)s.N;
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *xs = op_frame_input(&f, "x", (uint32_t)s.S * s.n_x);
    PTL_T *ts = op_frame_input(&f, "t", (uint32_t)(s.S * s.K));
    PTL_T *w1_0 = op_frame_input(&f, "w1", s.n_w1);
    PTL_T *w2_0 = op_frame_input(&f, "w2", s.n_w2);
    PTL_T *loss = op_frame_output(&f, "loss", N);
    PTL_T *g1s = op_frame_output(&f, "g1", N * s.n_w1);
    PTL_T *g2s = op_frame_output(&f, "g2", N * s.n_w2);
    PTL_T *w1s = op_frame_output(&f, "w1s", N * s.n_w1);
    PTL_T *w2s = op_frame_output(&f, "w2s", N * s.n_w2);
    /* Activations and their gradients in one work buffer: z1, a1 (conv
     * output, ReLU output), p (pooled), z2 (logits), each data then diff. */
    const uint32_t n_act = 2 * (2 * s.n_z1 + s.n_p + (uint32_t)s.K);
    PTL_T *act = op_frame_scratch(&f, n_act);
    PTL_T *w1 = op_frame_scratch(&f, 2 * s.n_w1); /* data, diff */
    PTL_T *w2 = op_frame_scratch(&f, 2 * s.n_w2);
    /* im2col of the conv, FW and WG: Ci*3*3 x H*W (stride 1, pad 1). */
    PTL_T *i2c = op_frame_scratch(&f, s.n_w1 / (uint32_t)s.Co * (uint32_t)(s.H * s.W));
    PTL_T *wr_loss = op_frame_scratch(&f, 1);
    if (f.status)
        return op_frame_finish(&f, 0);
    memcpy(w1, w1_0, s.n_w1 * sizeof(PTL_T));
    memcpy(w2, w2_0, s.n_w2 * sizeof(PTL_T));
    PTL_T *z1 = act, *a1 = z1 + 2 * s.n_z1, *p = a1 + 2 * s.n_z1, *z2 = p + 2 * s.n_p;

    const int H2 = s.H / 2, W2 = s.W / 2;
    struct cnn_blobs b = {
        .x = {.data = NULL, .diff = NULL, .dim = (int)s.n_x, .W = s.W, .H = s.H, .C = s.Ci},
        .w1 = {.data = w1, .diff = w1 + s.n_w1, .dim = (int)s.n_w1, .W = 3, .H = 3, .C = s.Ci},
        .z1 = {.data = z1, .diff = z1 + s.n_z1, .dim = (int)s.n_z1, .W = s.W, .H = s.H, .C = s.Co},
        .a1 = {.data = a1, .diff = a1 + s.n_z1, .dim = (int)s.n_z1, .W = s.W, .H = s.H, .C = s.Co},
        .p = {.data = p, .diff = p + s.n_p, .dim = (int)s.n_p, .W = W2, .H = H2, .C = s.Co},
        .w2 = {.data = w2, .diff = w2 + s.n_w2, .dim = (int)s.n_w2, .W = (int)s.n_p, .H = s.K, .C = 1},
        .z2 = {.data = z2, .diff = z2 + s.K, .dim = s.K, .W = 1, .H = 1, .C = s.K},
    };
    const int train_conv = !(s.frozen & FROZEN_CONV), train_linear = !(s.frozen & FROZEN_LINEAR);
    /* No layer uses biases; they get an empty blob, never a NULL one. */
    struct PTL_S(blob) no_biases = {.data = NULL, .diff = NULL, .dim = 0, .W = 0, .H = 0, .C = 0};
    struct PTL_S(Conv2D_args) conv = {
        .input = &b.x, .coeff = &b.w1, .bias = &no_biases, .output = &b.z1,
        .Lpad = 1, .Rpad = 1, .Upad = 1, .Dpad = 1, .stride_h = 1, .stride_w = 1,
        .i2c_buffer = i2c, .bt_buffer = NULL,
        .skip_wg_grad = !train_conv, .skip_in_grad = 1, /* the first layer needs no input gradient */
        .HWC = 0, .opt_matmul_type_fw = 0, .opt_matmul_type_wg = 0, .opt_matmul_type_ig = 0,
        .USE_BIASES = 0, .USE_IM2COL = 1, .USE_DMA_IM2COL = 0,
    };
    struct PTL_S(act_args) relu = {.input = &b.z1, .output = &b.a1, .H = 1, .W = 1};
    struct PTL_S(pool_args) pool = {.input = &b.a1, .output = &b.p, .Hker = 2, .Wker = 2, .Hstride = 2,
                                    .Wstride = 2};
    struct PTL_S(Linear_args) linear = {
        .input = &b.p, .coeff = &b.w2, .bias = &no_biases, .output = &b.z2,
        .skip_wg_grad = !train_linear, .skip_in_grad = 0,
        .opt_matmul_type_fw = 0, .opt_matmul_type_wg = 0, .opt_matmul_type_ig = 0, .use_biases = 0,
    };
    struct PTL_S(loss_args) ce = {.output = &b.z2, .target = NULL, .wr_loss = wr_loss};
    const float lr = (float)s.lr_micro / 1000000.0f;
#if PTL_OP_FP == 32
    struct optim_args sgd1 = {.weights = &b.w1, .biases = &no_biases, .learning_rate = lr,
                              .weight_decay_lambda = 0.0f, .use_biases = 0};
    struct optim_args sgd2 = {.weights = &b.w2, .biases = &no_biases, .learning_rate = lr,
                              .weight_decay_lambda = 0.0f, .use_biases = 0};
#else
    struct optim_args_fp16 sgd1 = {.weights = &b.w1, .biases = &no_biases, .learning_rate = fp16_from_f32(lr),
                                   .weight_decay_lambda = fp16_from_f32(0.0f), .use_biases = 0};
    struct optim_args_fp16 sgd2 = {.weights = &b.w2, .biases = &no_biases, .learning_rate = fp16_from_f32(lr),
                                   .weight_decay_lambda = fp16_from_f32(0.0f), .use_biases = 0};
#endif

    ptl_measure_begin(vi);
    for (int k = 0; k < s.N; k++) {
        const int sample = k % s.S;
        b.x.data = xs + (size_t)sample * s.n_x;
        ce.target = ts + (size_t)sample * s.K;
        /* forward */
        PTL_F(pulp_conv2d_, _fw_cl)(&conv);
        PTL_F(pulp_relu_, _fw_cl)(&relu);
        pi_cl_team_fork(v.cores, PTL_F(pulp_maxpool_, _fw_cl), &pool);
        PTL_F(pulp_linear_, _fw_cl)(&linear);
        CROSS_ENTROPY_FW(&ce);
        loss[k] = *wr_loss;
        /* backward */
        CROSS_ENTROPY_BW(&ce);
        PTL_F(pulp_linear_, _bw_cl)(&linear);
        pi_cl_team_fork(v.cores, PTL_F(pulp_maxpool_, _bw_cl), &pool);
        PTL_F(pulp_relu_, _bw_cl)(&relu);
        if (train_conv)
            PTL_F(pulp_conv2d_, _bw_param_grads_cl)(&conv);
        /* gradients as the step computed them, then the update */
        if (train_conv)
            copy_row(g1s, k, b.w1.diff, s.n_w1);
        else
            memset(g1s + (size_t)k * s.n_w1, 0, s.n_w1 * sizeof(PTL_T));
        if (train_linear)
            copy_row(g2s, k, b.w2.diff, s.n_w2);
        else
            memset(g2s + (size_t)k * s.n_w2, 0, s.n_w2 * sizeof(PTL_T));
        if (train_conv)
            pi_cl_team_fork(v.cores, PTL_F(pulp_gradient_descent_, ), &sgd1);
        if (train_linear)
            pi_cl_team_fork(v.cores, PTL_F(pulp_gradient_descent_, ), &sgd2);
        copy_row(w1s, k, b.w1.data, s.n_w1);
        copy_row(w2s, k, b.w2.data, s.n_w2);
    }
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

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
    struct DepthWise_Conv_args dw = {.input = &bx, .coeff = &w_dw, .output = &b1, .stride_h = 1, .stride_w = 1,
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
    struct optim_args sgd = {.weights = &all, .biases = &no_biases, .learning_rate = (float)s.lr_micro / 1000000.0f,
                             .weight_decay_lambda = 0.0f, .use_biases = 0};

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

struct tf_shape {
    int L, E, F, heads, K, S, N, lr_micro;
    uint32_t n_x, n_w, n_l, n_params;
};

static int read_tf_shape(const struct ptl_case *c, uint32_t vi, struct tf_shape *s)
{
    *s = (struct tf_shape){
        .L = ptl_param(c, "L", vi), .E = ptl_param(c, "E", vi), .F = ptl_param(c, "F", vi),
        .heads = ptl_param(c, "heads", vi), .K = ptl_param(c, "K", vi), .S = ptl_param(c, "S", vi),
        .N = ptl_param(c, "N", vi), .lr_micro = ptl_param(c, "lr_micro", vi),
    };
    if (s->L < 1 || s->L > 64 || s->E < 2 || s->E > 64 || s->F < 1 || s->F > 64 || s->heads < 1 ||
        s->F % s->heads || s->K < 2 || s->K > 64 || s->S < 1 || s->S > 1000 || s->N < 1 || s->N > 1000 ||
        s->lr_micro < 0 || s->lr_micro > 1000000) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "train_transformer needs 1 <= L <= 64, 2 <= E <= 64, 1 <= F <= 64 "
                                             "divided by heads, 2 <= K <= 64, 1 <= S, N <= 1000, "
                                             "0 <= lr_micro <= 1000000");
        return PTL_ERR_BAD_CASE;
    }
    s->n_x = (uint32_t)(s->L * s->E);
    s->n_w = (uint32_t)(s->E * s->F);
    s->n_l = (uint32_t)s->K * s->n_x;
    s->n_params = 4 * s->n_w + s->n_l;
    return PTL_OK;
}

/* out (M x N) = in (N x M) transposed, on the team. */
static void tf_transpose(int cores, float *in, float *out, int N, int M)
{
    struct transp_args t = {.in_matrix = in, .out_matrix = out, .N = N, .M = M,
                            .dim = NULL, .transposed_axes = NULL, .n_dim = 2};
    pi_cl_team_fork(cores, transpose_matrix, &t);
}

static int run_train_transformer(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    struct tf_shape s;
    int status = read_tf_shape(c, vi, &s);
    if (status)
        return status;
    const uint32_t N = (uint32_t)s.N, P = s.n_params, X = s.n_x, Wn = s.n_w;
    const uint32_t L = (uint32_t)s.L, E = (uint32_t)s.E, Fn = (uint32_t)s.F;
    const uint32_t FL = Fn * L, LL = L * L, HLL = (uint32_t)s.heads * LL;
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    float *xs = op_frame_input(&f, "x", (uint32_t)s.S * X);
    float *ts = op_frame_input(&f, "t", (uint32_t)(s.S * s.K));
    float *params0 = op_frame_input(&f, "params", P);
    float *fixed = op_frame_input(&f, "fixed", 2 * E + 3 * Fn);    /* LayerNorm weight, bias; bq, bk, bv */
    float *loss = op_frame_output(&f, "loss", N);
    float *grads = op_frame_output(&f, "grads", N * P);
    float *weights = op_frame_output(&f, "weights", N * P);
    /* z, zT and its diff, y and r (data, diff each), logits (data, diff) */
    float *act = op_frame_scratch(&f, 7 * X + 2 * (uint32_t)s.K);
    /* q, k, v, a (data, diff each), p (data, diff), head (data, diff), grad, temp, maxes, sums */
    uint32_t temp_n = Wn > FL ? Wn : FL;
    temp_n = temp_n > LL ? temp_n : LL;
    float *attn = op_frame_scratch(&f, 8 * FL + 2 * HLL + 3 * LL + temp_n + 2 * L);
    float *params = op_frame_scratch(&f, 2 * P + 3 * Wn);   /* data, diff (params' layout), raw dq/dk/dv coeffs */
    float *work = op_frame_scratch(&f, 2);                   /* the loss, eps */
    if (f.status)
        return op_frame_finish(&f, 0);
    memcpy(params, params0, P * sizeof(float));
    float *grad = params + P, *raw = grad + P;
    float *z = act, *zT = z + X, *y = zT + 2 * X, *r = y + 2 * X, *logits = r + 2 * X;
    float *q = attn, *k = q + 2 * FL, *vv = k + 2 * FL, *am = vv + 2 * FL, *p = am + 2 * FL;
    float *head = p + 2 * HLL, *grad_buf = head + 2 * LL, *temp = grad_buf + LL, *maxes = temp + temp_n;
    float *sums = maxes + L, *wr_loss = work, *eps = work + 1;
    *eps = 1e-5f;
    struct blob bzT = {.data = zT, .diff = zT + X, .dim = (int)X, .W = s.E, .H = s.L, .C = 1};
    struct blob by = {.data = y, .diff = y + X, .dim = (int)X, .W = s.E, .H = s.L, .C = 1};
    struct blob br = {.data = r, .diff = r + X, .dim = (int)X, .W = s.E, .H = s.L, .C = 1};
    struct blob bl = {.data = logits, .diff = logits + s.K, .dim = s.K, .W = 1, .H = 1, .C = s.K};
    struct blob wq = {.data = params, .diff = raw, .dim = (int)Wn, .W = s.F, .H = s.E, .C = 1};
    struct blob wk = {.data = params + Wn, .diff = raw + Wn, .dim = (int)Wn, .W = s.F, .H = s.E, .C = 1};
    struct blob wv = {.data = params + 2 * Wn, .diff = raw + 2 * Wn, .dim = (int)Wn, .W = s.F, .H = s.E, .C = 1};
    struct blob wo = {.data = params + 3 * Wn, .diff = grad + 3 * Wn, .dim = (int)Wn, .W = s.F, .H = s.E, .C = 1};
    struct blob wl = {.data = params + 4 * Wn, .diff = grad + 4 * Wn, .dim = (int)s.n_l, .W = (int)X, .H = s.K,
                      .C = 1};
    struct blob bq = {.data = fixed + 2 * E, .diff = NULL, .dim = s.F, .W = s.F, .H = 1, .C = 1};
    struct blob bk = {.data = fixed + 2 * E + Fn, .diff = NULL, .dim = s.F, .W = s.F, .H = 1, .C = 1};
    struct blob bv = {.data = fixed + 2 * E + 2 * Fn, .diff = NULL, .dim = s.F, .W = s.F, .H = 1, .C = 1};
    struct blob none = {.data = NULL, .diff = NULL, .dim = 0, .W = 0, .H = 0, .C = 0};
    struct blob bq_t = {.data = q, .diff = q + FL, .dim = (int)FL, .W = s.L, .H = s.F, .C = 1};
    struct blob bk_t = {.data = k, .diff = k + FL, .dim = (int)FL, .W = s.L, .H = s.F, .C = 1};
    struct blob bv_t = {.data = vv, .diff = vv + FL, .dim = (int)FL, .W = s.L, .H = s.F, .C = 1};
    struct blob bam = {.data = am, .diff = am + FL, .dim = (int)FL, .W = s.F, .H = s.L, .C = 1};
    struct blob bhead = {.data = head, .diff = head + LL, .dim = (int)LL, .W = s.L, .H = s.L, .C = 1};
    struct blob bsm = {.data = p, .diff = p + HLL, .dim = (int)HLL, .W = s.L, .H = s.heads * s.L, .C = 1};
    struct LayerNorm_args_fp32 ln = {.x = NULL, .weight = fixed, .bias = fixed + E, .output = z, .eps = eps,
                                     .size = (int)X, .step_size = s.E};
    struct Mhsa_args mhsa = {
        .input = &bzT, .input_bn = NULL, .n_heads = s.heads, .opt_matmul_type_fw = v.kernel,
        .opt_matmul_type_wg = v.kernel, .opt_matmul_type_ig = v.kernel, .output = &by, .coeff_in_q = &wq,
        .coeff_in_k = &wk, .coeff_in_v = &wv, .bias_in_q = &bq, .bias_in_k = &bk, .bias_in_v = &bv,
        .coeff_out = &wo, .bias_out = &none, .q = &bq_t, .k = &bk_t, .v = &bv_t, .attention_map = &bam,
        .temp_buffer = temp, .grad = grad_buf, .head_buffer = &bhead, .softmax_buffer = &bsm,
        .global_max = NULL, .partial_exp_sum = NULL, .maxes = maxes, .sums = sums,
    };
    struct SkipConn_args skip = {.skip = &bzT, .lout = &by, .output = &br, .skip_in_grad = 1};
    struct Linear_args linear = {.input = &br, .coeff = &wl, .bias = &none, .output = &bl, .skip_wg_grad = 0,
                                 .skip_in_grad = 0, .opt_matmul_type_fw = v.kernel, .opt_matmul_type_wg = v.kernel,
                                 .opt_matmul_type_ig = v.kernel, .use_biases = 0};
    struct loss_args ce = {.output = &bl, .target = NULL, .wr_loss = wr_loss};
    struct blob all = {.data = params, .diff = grad, .dim = (int)P, .W = (int)P, .H = 1, .C = 1};
    struct optim_args sgd = {.weights = &all, .biases = &none, .learning_rate = (float)s.lr_micro / 1000000.0f,
                             .weight_decay_lambda = 0.0f, .use_biases = 0};

    ptl_measure_begin(vi);
    for (int step = 0; step < s.N; step++) {
        ln.x = xs + (size_t)(step % s.S) * X;
        ce.target = ts + (size_t)(step % s.S) * s.K;
        pi_cl_team_fork(v.cores, pulp_layerNorm_fp32_fw_cl, &ln);
        tf_transpose(v.cores, z, zT, s.L, s.E);                        /* I = z^T, E x L */
        pulp_mhsa_fp32_fw_cl(&mhsa);
        pulp_residualconn_fp32_fw(&skip);
        pulp_linear_fp32_fw_cl(&linear);
        pulp_CrossEntropyLoss(&ce);
        loss[step] = *wr_loss;
        pulp_CrossEntropyLoss_backward(&ce);
        pulp_linear_fp32_bw_cl(&linear);
        pulp_residualconn_fp32_bw(&skip);
        pulp_mhsa_fp32_bw_cl(&mhsa);
        /* the API writes coeff_in_*->diff in torch's layout (F x E), the
         * transpose of the weights it updates: back to E x F first */
        for (int w = 0; w < 3; w++)
            tf_transpose(v.cores, raw + w * Wn, grad + w * Wn, s.F, s.E);
        memcpy(grads + (size_t)step * P, grad, P * sizeof(float));
        pi_cl_team_fork(v.cores, pulp_gradient_descent_fp32, &sgd);
        memcpy(weights + (size_t)step * P, params, P * sizeof(float));
    }
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}
#endif

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("train_cnn"), TRAIN_PARAMS, TRAIN_INPUTS, TRAIN_OUTPUTS, "none", run_train_cnn},
#if PTL_OP_FP == 32
    {PTL_OP_NAME("train_dsblock"), "C H W K S N lr_micro", "x t params", "loss grads weights dx", "none",
     run_train_dsblock},
    {PTL_OP_NAME("train_transformer"), "L E F heads K S N lr_micro", "x t params fixed", "loss grads weights",
     "none", run_train_transformer},
#endif
    {0},
};
