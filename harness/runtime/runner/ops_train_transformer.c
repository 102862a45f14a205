/*
 * Runner op of a training run: a transformer block, trained the same way:
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
 *
 * Each network is its own runner unit (ops_train_*.c), so a library source that
 * one network needs and that does not build fails only that network's cases.
 */
#include <string.h>

#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

/* FP32 only: the FP16 compilation of this unit has no ops. */
#if PTL_OP_FP == 32
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
    const uint32_t temp_n = op_frame_max3(Wn, FL, LL);
    /* head (data, diff) heads x L x L each: "Attention scores for every head" (pulp_mhsa_fp32.h) */
    float *attn = op_frame_scratch(&f, 8 * FL + 4 * HLL + LL + temp_n + 2 * L);
    float *params = op_frame_scratch(&f, 2 * P + 3 * Wn);   /* data, diff (params' layout), raw dq/dk/dv coeffs */
    float *work = op_frame_scratch(&f, 2);                   /* the loss, eps */
    if (f.status)
        return op_frame_finish(&f, 0);
    memcpy(params, params0, P * sizeof(float));
    float *grad = params + P, *raw = grad + P;
    float *z = act, *zT = z + X, *y = zT + 2 * X, *r = y + 2 * X, *logits = r + 2 * X;
    float *q = attn, *k = q + 2 * FL, *vv = k + 2 * FL, *am = vv + 2 * FL, *p = am + 2 * FL;
    float *head = p + 2 * HLL, *grad_buf = head + 2 * HLL, *temp = grad_buf + LL, *maxes = temp + temp_n;
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
    struct blob bhead = {.data = head, .diff = head + HLL, .dim = (int)HLL, .W = s.L, .H = s.heads * s.L, .C = 1};
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
    /* weight_decay_lambda (older versions of the struct lack it, ops_optim.c) is the initializer's 0. */
    struct optim_args sgd = {.weights = &all, .biases = &none, .learning_rate = (float)s.lr_micro / 1000000.0f,
                             .use_biases = 0};

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
#if PTL_OP_FP == 32
    {PTL_OP_NAME("train_transformer"), "L E F heads K S N lr_micro", "x t params fixed", "loss grads weights",
     "none", run_train_transformer},
#endif
    {0},
};
