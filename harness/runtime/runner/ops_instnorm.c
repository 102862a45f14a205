/*
 * Runner op of InstanceNorm: FW (running statistics computed and stored, or
 * frozen and read), WG, IG and BW (WG then IG), forked inside the primitive
 * (NUM_CORES, which the runner has set to the variant's core count). No
 * matmul: kernel 0.
 *
 * Compiled for FP32 (the FP16 table is empty). Params:
 *   C H W    the tensor, CHW; D = H * W
 *   step     0 FW, 1 WG (bw_param_grads), 2 IG (bw_input_grads), 3 BW (bw)
 *   frozen   freeze_running_params
 * Tensors in: x [C x D], coeff [2C] (gamma then beta), dy [C x D], and the
 * running statistics mean, var, stdev [C]. Out: FW y [C x D] and the
 * statistics after the call (mean_out, var_out, stdev_out: they start as
 * the inputs, so a frozen FW must leave them exactly); WG and BW dcoeff
 * [2C] (dgamma then dbeta); IG and BW dx [C x D].
 */
#include <string.h>

#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

#if PTL_OP_FP == 32

enum { IN_STEP_FW = 0, IN_STEP_WG = 1, IN_STEP_IG = 2, IN_STEP_BW = 3 };

/* A guarded output holding a copy of the input `name`; NULL after a failure. */
static float *output_from(struct op_frame *f, const char *input, const char *output, uint32_t count)
{
    float *src = op_frame_input(f, input, count);
    float *dst = op_frame_output(f, output, count);
    if (src && dst)
        memcpy(dst, src, count * sizeof(float));
    return dst;
}

static int run_instnorm(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v; /* direct code: no kernel index */
    const int C = ptl_param(c, "C", vi), H = ptl_param(c, "H", vi), W = ptl_param(c, "W", vi);
    const int step = ptl_param(c, "step", vi), frozen = ptl_param(c, "frozen", vi);
    if (C < 1 || H < 1 || W < 1 || step < IN_STEP_FW || step > IN_STEP_BW || (frozen != 0 && frozen != 1)) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "instnorm params need C, H, W >= 1, step 0 (FW), 1 (WG), 2 (IG) "
                                             "or 3 (BW), frozen 0 or 1");
        return PTL_ERR_BAD_CASE;
    }
    const uint32_t n = (uint32_t)(C * H * W), nc = (uint32_t)C;
    const int fw = step == IN_STEP_FW, wg = step == IN_STEP_WG || step == IN_STEP_BW;
    const int ig = step == IN_STEP_IG || step == IN_STEP_BW;
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    float *x = op_frame_input(&f, "x", n);
    float *coeff = op_frame_input(&f, "coeff", 2 * nc);
    float *dy = fw ? NULL : op_frame_input(&f, "dy", n);
    float *mean = fw ? output_from(&f, "mean", "mean_out", nc) : op_frame_input(&f, "mean", nc);
    float *var = fw ? output_from(&f, "var", "var_out", nc) : op_frame_input(&f, "var", nc);
    float *stdev = fw ? output_from(&f, "stdev", "stdev_out", nc) : op_frame_input(&f, "stdev", nc);
    float *y = fw ? op_frame_output(&f, "y", n) : NULL;
    float *dcoeff = wg ? op_frame_output(&f, "dcoeff", 2 * nc) : NULL;
    float *dx = ig ? op_frame_output(&f, "dx", n) : NULL;
    if (f.status)
        return op_frame_finish(&f, 0);
    struct blob input = {.data = x, .diff = dx, .dim = (int)n, .W = W, .H = H, .C = C};
    struct blob output = {.data = y, .diff = dy, .dim = (int)n, .W = W, .H = H, .C = C};
    struct blob coeff_blob = {.data = coeff, .diff = dcoeff, .dim = 2 * C, .W = 1, .H = 1, .C = 2 * C};
    struct InstNorm_args args = {
        .input = &input, .output = &output, .coeff = &coeff_blob,
        .running_mean = mean, .running_var = var, .running_stdev = stdev,
        .freeze_running_params = frozen, .skip_wg_grad = !wg, .skip_in_grad = !ig,
    };
    ptl_measure_begin(vi);
    if (fw)
        pulp_instnorm_fp32_fw_cl(&args);
    else if (step == IN_STEP_WG)
        pulp_instnorm_fp32_bw_param_grads_cl(&args);
    else if (step == IN_STEP_IG)
        pulp_instnorm_fp32_bw_input_grads_cl(&args);
    else
        pulp_instnorm_fp32_bw_cl(&args);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("instnorm"), "C H W step frozen", "x coeff dy mean var stdev",
     "y mean_out var_out stdev_out dcoeff dx", "none", run_instnorm},
    {0},
};

#else /* no FP16 InstanceNorm in lib_c yet */

const struct ptl_op PTL_OP_TABLE[] = {
    {0},
};

#endif
