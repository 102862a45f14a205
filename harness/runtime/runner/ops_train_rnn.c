/*
 * Runner op of the recurrent training run (FP32): an RNN unrolled over a
 * sequence by chaining the layer's calls, trained with backpropagation
 * through time, then a linear layer and CrossEntropy on the last state:
 *
 *   h_-1 = 0;  h_t = tanh(x_t Wx + h_t-1 Ws), t = 0 .. T-1  (one
 *   pulp_rnn_fp32_fw_cl call per step, N = 1: its output row is fed back as
 *   the next call's state, as shared/TRAINLIB_API_MORE.md says a sequence
 *   must be chained, since the call holds no recurrence)
 *   logits = Wl h_T-1 (linear, no bias) -> CrossEntropy(t)
 *
 * Backward through time. The layer's BW gives the gradients of its weights
 * and of its input, not of its state. Its formulas (input->diff = G Wx^T,
 * coeff_x->diff = X^T G) are linear in the pair (input, coeff_x), so the op
 * calls it on the stacked step u_t = [x_t, h_t-1] (1 x K+M) with the stacked
 * weights W = [Wx; Ws] (K+M x M, the layout the parameters already have):
 * input->diff = G W^T = [dx_t, dh_t-1] and coeff_x->diff = u_t^T G =
 * [dWx_t; dWs_t], one call per step, from t = T-1 down to 0, dh_t-1 feeding
 * the next call's output->diff. The steps' weight gradients are summed with
 * the library's vect_sum; SGD (pulp_gradient_descent_fp32) updates W and Wl.
 *
 * Params T K M C S N lr_micro: sequence length, inputs, hidden units,
 * classes, samples in the data set, training steps (step k uses sample
 * k mod S), learning rate in millionths. Tensors in: x [S x T x K], t [S x C]
 * (targets), params [P] = W [(K+M) x M] (Wx rows, then Ws rows), Wl [C x M].
 * Out, one row per step: loss [N], grads [N x P] (as params), weights [N x P]
 * after the update. The linear layer uses the variant's matmul kernel; the
 * whole run is one measurement.
 *
 * A unit of its own: a library whose RNN does not build loses this run
 * only, not the other training runs.
 */
#include <string.h>

#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

#if PTL_OP_FP == 32

struct rnn_run_shape {
    int T, K, M, C, S, N, lr_micro;
};

static int read_rnn_run_shape(const struct ptl_case *c, uint32_t vi, struct rnn_run_shape *s)
{
    *s = (struct rnn_run_shape){
        .T = ptl_param(c, "T", vi), .K = ptl_param(c, "K", vi), .M = ptl_param(c, "M", vi),
        .C = ptl_param(c, "C", vi), .S = ptl_param(c, "S", vi), .N = ptl_param(c, "N", vi),
        .lr_micro = ptl_param(c, "lr_micro", vi),
    };
    if (s->T < 1 || s->T > 64 || s->K < 1 || s->K > 64 || s->M < 1 || s->M > 64 || s->C < 2 || s->C > 64 ||
        s->S < 1 || s->S > 1000 || s->N < 1 || s->N > 1000 || s->lr_micro < 0 || s->lr_micro > 1000000) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "train_rnn needs 1 <= T, K, M <= 64, 2 <= C <= 64, "
                                             "1 <= S, N <= 1000, 0 <= lr_micro <= 1000000");
        return PTL_ERR_BAD_CASE;
    }
    return PTL_OK;
}

static struct blob row_blob(float *data, float *diff, int width)
{
    return (struct blob){.data = data, .diff = diff, .dim = width, .W = width, .H = 1, .C = 1};
}

static int run_train_rnn(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    struct rnn_run_shape s;
    int status = read_rnn_run_shape(c, vi, &s);
    if (status)
        return status;
    const int T = s.T, K = s.K, M = s.M, U = s.K + s.M;    /* U: the stacked step's width */
    const uint32_t N = (uint32_t)s.N, n_w = (uint32_t)(U * M), n_l = (uint32_t)(s.C * M), P = n_w + n_l;
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    float *xs = op_frame_input(&f, "x", (uint32_t)(s.S * T * K));
    float *ts = op_frame_input(&f, "t", (uint32_t)(s.S * s.C));
    float *params0 = op_frame_input(&f, "params", P);
    float *loss = op_frame_output(&f, "loss", N);
    float *grads = op_frame_output(&f, "grads", N * P);
    float *weights = op_frame_output(&f, "weights", N * P);
    float *params = op_frame_scratch(&f, 2 * P);                  /* data, then the gradients */
    /* u [T x U], h [T x M], du [U], dh [M], logits (data, diff), temp, grad. temp_buffer is
     * "for BW transpose operations" (pulp_rnn_fp32.h), no size given: the largest operand of
     * the stacked step's BW, its U x M weights (a row of u or h is smaller). */
    float *seq = op_frame_scratch(&f, (uint32_t)(T * U + T * M + U + M + 2 * s.C + U * M + M));
    float *step_grads = op_frame_scratch(&f, (uint32_t)(U * M + M * M));   /* coeff_x, coeff_s diffs */
    float *work = op_frame_scratch(&f, 1);                                  /* the loss */
    if (f.status)
        return op_frame_finish(&f, 0);
    memcpy(params, params0, P * sizeof(float));
    float *grad = params + P;
    float *u = seq, *h = u + T * U, *du = h + T * M, *dh = du + U, *logits = dh + M;
    float *temp = logits + 2 * s.C, *grad_buf = temp + U * M;
    float *dw_step = step_grads, *dws_unused = step_grads + U * M;

    struct blob x_t, state, out, u_t;
    struct blob wx = {.data = params, .diff = NULL, .dim = K * M, .W = M, .H = K, .C = 1};
    struct blob ws = {.data = params + K * M, .diff = dws_unused, .dim = M * M, .W = M, .H = M, .C = 1};
    struct blob w_all = {.data = params, .diff = dw_step, .dim = (int)n_w, .W = M, .H = U, .C = 1};
    struct Rnn_args fw = {.input = &x_t, .state = &state, .output = &out, .coeff_x = &wx, .coeff_s = &ws,
                          .temp_buffer = temp, .grad_buffer = grad_buf};
    struct Rnn_args bw = {.input = &u_t, .state = &state, .output = &out, .coeff_x = &w_all, .coeff_s = &ws,
                          .temp_buffer = temp, .grad_buffer = grad_buf};
    struct blob last = row_blob(h + (T - 1) * M, dh, M);
    struct blob bl = {.data = logits, .diff = logits + s.C, .dim = s.C, .W = 1, .H = 1, .C = s.C};
    struct blob wl = {.data = params + n_w, .diff = grad + n_w, .dim = (int)n_l, .W = M, .H = s.C, .C = 1};
    struct blob none = {.data = NULL, .diff = NULL, .dim = 0, .W = 0, .H = 0, .C = 0};
    struct Linear_args linear = {.input = &last, .coeff = &wl, .bias = &none, .output = &bl, .skip_wg_grad = 0,
                                 .skip_in_grad = 0, .opt_matmul_type_fw = v.kernel, .opt_matmul_type_wg = v.kernel,
                                 .opt_matmul_type_ig = v.kernel, .use_biases = 0};
    struct loss_args ce = {.output = &bl, .target = NULL, .wr_loss = work};
    struct vect_sum_args accumulate = {.op_1 = grad, .op_2 = dw_step, .dest = grad, .size = (int)n_w};
    struct blob all = {.data = params, .diff = grad, .dim = (int)P, .W = (int)P, .H = 1, .C = 1};
    /* weight_decay_lambda (older versions of the struct lack it, ops_optim.c) is the initializer's 0. */
    struct optim_args sgd = {.weights = &all, .biases = &none, .learning_rate = (float)s.lr_micro / 1000000.0f,
                             .use_biases = 0};

    ptl_measure_begin(vi);
    for (int step = 0; step < s.N; step++) {
        const float *x = xs + (size_t)(step % s.S) * (size_t)(T * K);
        ce.target = ts + (size_t)(step % s.S) * (size_t)s.C;
        memset(u + K, 0, (size_t)M * sizeof(float));                  /* h_-1 = 0 */
        for (int t = 0; t < T; t++) {
            float *ut = u + t * U;
            memcpy(ut, x + t * K, (size_t)K * sizeof(float));
            x_t = row_blob(ut, NULL, K);
            state = row_blob(ut + K, NULL, M);
            out = row_blob(h + t * M, NULL, M);
            pulp_rnn_fp32_fw_cl(&fw);
            if (t + 1 < T)                                            /* the output row is the next state */
                memcpy(u + (t + 1) * U + K, h + t * M, (size_t)M * sizeof(float));
        }
        pulp_linear_fp32_fw_cl(&linear);
        pulp_CrossEntropyLoss(&ce);
        loss[step] = *work;
        pulp_CrossEntropyLoss_backward(&ce);
        pulp_linear_fp32_bw_cl(&linear);                              /* dWl, and dh_T-1 into dh */
        for (int t = T - 1; t >= 0; t--) {
            float *ut = u + t * U;
            u_t = row_blob(ut, du, U);
            state = row_blob(ut + K, NULL, M);
            out = row_blob(h + t * M, dh, M);
            pulp_rnn_fp32_bw_cl(&bw);
            if (t == T - 1)
                memcpy(grad, dw_step, n_w * sizeof(float));
            else
                pi_cl_team_fork(v.cores, vect_sum, &accumulate);
            memcpy(dh, du + K, (size_t)M * sizeof(float));             /* dh_t-1 for the step before */
        }
        memcpy(grads + (size_t)step * P, grad, P * sizeof(float));
        pi_cl_team_fork(v.cores, pulp_gradient_descent_fp32, &sgd);
        memcpy(weights + (size_t)step * P, params, P * sizeof(float));
    }
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("train_rnn"), "T K M C S N lr_micro", "x t params", "loss grads weights", "none", run_train_rnn},
    {0},
};

#else /* the RNN is FP32 only in the API */

const struct ptl_op PTL_OP_TABLE[] = {
    {0},
};

#endif
