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
 * Each network is its own runner unit (ops_train_*.c), so a library source that
 * one network needs and that does not build fails only that network's cases.
 *
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
    /* No weight decay: weight_decay_lambda, which older versions of the
     * published struct lack (ops_optim.c), is left to the initializer's 0. */
#if PTL_OP_FP == 32
    struct optim_args sgd1 = {.weights = &b.w1, .biases = &no_biases, .learning_rate = lr, .use_biases = 0};
    struct optim_args sgd2 = {.weights = &b.w2, .biases = &no_biases, .learning_rate = lr, .use_biases = 0};
#else
    struct optim_args_fp16 sgd1 = {.weights = &b.w1, .biases = &no_biases, .learning_rate = PTL_FROM_F32(lr),
                                   .use_biases = 0};
    struct optim_args_fp16 sgd2 = {.weights = &b.w2, .biases = &no_biases, .learning_rate = PTL_FROM_F32(lr),
                                   .use_biases = 0};
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
        else /* the report row of a frozen layer, after the step: no primitive output is zeroed */
            memset(g1s + (size_t)k * s.n_w1, 0, s.n_w1 * sizeof(PTL_T));
        if (train_linear)
            copy_row(g2s, k, b.w2.diff, s.n_w2);
        else /* likewise: the frozen linear layer's report row */
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

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("train_cnn"), TRAIN_PARAMS, TRAIN_INPUTS, TRAIN_OUTPUTS, "none", run_train_cnn},
    {0},
};
