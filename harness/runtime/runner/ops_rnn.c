/*
 * Runner op of the RNN layer (pulp_rnn_fp32.h): FW or BW, forked inside the
 * primitive (NUM_CORES, which the runner has set to the variant's core
 * count). No matmul index: kernel 0. FP32 only (the FP16 table is empty).
 *
 * Params: N K M step (FW or BW). Tensors in: x [N*K], s [N*M] (state),
 * wx [K*M], ws [M*M]; BW also y [N*M] (output->data) and dy [N*M]
 * (output->diff). Out: y (FW); dwx [K*M], dws [M*M], dx [N*K] (BW).
 * temp_buffer and grad_buffer are guarded scratch of N*M.
 */
#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

#if PTL_OP_FP == 32

static int run_rnn(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v;
    const int N = ptl_param(c, "N", vi), K = ptl_param(c, "K", vi), M = ptl_param(c, "M", vi);
    const int step = ptl_param(c, "step", vi);
    if (N < 1 || K < 1 || M < 1 || (step != PTL_STEP_FW && step != PTL_STEP_BW)) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "rnn params need N, K, M >= 1 and step FW or BW");
        return PTL_ERR_BAD_CASE;
    }
    const int fw = step == PTL_STEP_FW;
    const uint32_t nk = (uint32_t)(N * K), nm = (uint32_t)(N * M), km = (uint32_t)(K * M), mm = (uint32_t)(M * M);
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    struct blob input = {.data = op_frame_input(&f, "x", nk), .diff = fw ? NULL : op_frame_output(&f, "dx", nk),
                         .dim = (int)nk, .W = K, .H = N, .C = 1};
    struct blob state = {.data = op_frame_input(&f, "s", nm), .diff = NULL, .dim = (int)nm, .W = M, .H = N, .C = 1};
    struct blob coeff_x = {.data = op_frame_input(&f, "wx", km), .diff = fw ? NULL : op_frame_output(&f, "dwx", km),
                           .dim = (int)km, .W = M, .H = K, .C = 1};
    struct blob coeff_s = {.data = op_frame_input(&f, "ws", mm), .diff = fw ? NULL : op_frame_output(&f, "dws", mm),
                           .dim = (int)mm, .W = M, .H = M, .C = 1};
    struct blob output = {.data = fw ? op_frame_output(&f, "y", nm) : op_frame_input(&f, "y", nm),
                          .diff = fw ? NULL : op_frame_input(&f, "dy", nm), .dim = (int)nm, .W = M, .H = N, .C = 1};
    /* temp_buffer: "for BW transpose operations" (pulp_rnn_fp32.h), no size given: room for the
     * transpose of any operand the BW's products take (X, S: N x K, N x M; Wx: K x M). */
    float *temp = op_frame_scratch(&f, op_frame_max3(nk, nm, km));
    float *grad = op_frame_scratch(&f, nm);
    if (f.status)
        return op_frame_finish(&f, 0);
    struct Rnn_args args = {.input = &input, .state = &state, .output = &output, .coeff_x = &coeff_x,
                            .coeff_s = &coeff_s, .temp_buffer = temp, .grad_buffer = grad};
    void (*const call)(void *) = fw ? pulp_rnn_fp32_fw_cl : pulp_rnn_fp32_bw_cl;
    ptl_measure_begin(vi); /* the call alone */
    call(&args);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("rnn"), "N K M step", "x s wx ws y dy", "y dwx dws dx", "none", run_rnn},
    {0},
};

#else /* the RNN is FP32 only in the API */

const struct ptl_op PTL_OP_TABLE[] = {
    {0},
};

#endif
