/*
 * Runner ops of the losses family: MSE, L1, berHu and CrossEntropy, forward
 * (the scalar loss) and backward (the gradient in output->diff).
 *
 * The losses run on one core (the API says so), so the runner calls each
 * primitive directly, as a deployment calls it from the cluster's master
 * core; the catalogue runs them with cores (1,) only.
 *
 * Compiled once per dtype (ptl_op_dtype.h). Tensors: o and t [N]; outputs
 * loss [1] (FW, the *wr_loss the primitive writes) and do [N] (BW, the
 * output->diff it overwrites). Both steps read o and t, nothing else, and
 * write nothing else (TRAINLIB_API_MORE.md, losses): o and t are emitted
 * after the call too, as o_after and t_after, which must be the inputs.
 *
 * berHu's alpha is a float field; the params are ints, so it travels as
 * alpha_milli (0..1000): alpha = (float)alpha_milli / 1000.0f in binary32,
 * then rounded once to fp16 for the FP16 op (the FP16 args hold an fp16).
 */
#include <stdlib.h>

#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

#define LOSS_INPUTS "o t"
#define LOSS_OUTPUTS "loss do o_after t_after"


typedef void (*primitive_fn)(void *);

/* Reads N and step; PTL_OK or an ERROR record and PTL_ERR_BAD_CASE. */
static int loss_read_shape(const struct ptl_case *c, uint32_t vi, int *n, int *step)
{
    *n = ptl_param(c, "N", vi);
    *step = ptl_param(c, "step", vi);
    if (*n < 1 || (*step != PTL_STEP_FW && *step != PTL_STEP_BW)) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "loss params need N >= 1 and step FW or BW");
        return PTL_ERR_BAD_CASE;
    }
    return PTL_OK;
}

/* Sets up output (o, and its diff for BW) and *target / *wr_loss, calls
 * fw_fn or bw_fn on args (which points at them), emits what the step makes. */
static int run_loss(const struct ptl_case *c, uint32_t vi, int n, int step, struct PTL_S(blob) *output,
                    PTL_T **target, PTL_T **wr_loss, void *args, primitive_fn fw_fn, primitive_fn bw_fn)
{
    const int fw = step == PTL_STEP_FW;
    const uint32_t count = (uint32_t)n;
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *o = op_frame_output_from(&f, "o", "o_after", count);
    PTL_T *t = op_frame_output_from(&f, "t", "t_after", count);
    PTL_T *loss = fw ? op_frame_output(&f, "loss", 1) : NULL;
    PTL_T *grad = fw ? NULL : op_frame_output(&f, "do", count);
    if (f.status)
        return op_frame_finish(&f, 0);
    *output = (struct PTL_S(blob)){.data = o, .diff = grad, .dim = n, .W = n, .H = 1, .C = 1};
    *target = t;
    *wr_loss = loss;
    ptl_measure_begin(vi);
    (fw ? fw_fn : bw_fn)(args);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

static int run_plain_loss(const struct ptl_case *c, uint32_t vi, primitive_fn fw_fn, primitive_fn bw_fn)
{
    int n, step;
    int status = loss_read_shape(c, vi, &n, &step);
    if (status)
        return status;
    struct PTL_S(blob) output;
    struct PTL_S(loss_args) args = {.output = &output, .target = NULL, .wr_loss = NULL};
    return run_loss(c, vi, n, step, &output, &args.target, &args.wr_loss, &args, fw_fn, bw_fn);
}

static int run_mse(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v; /* direct code on one core: no kernel index, no team */
#if PTL_OP_FP == 32
    return run_plain_loss(c, vi, pulp_MSELoss, pulp_MSELoss_backward);
#else
    return run_plain_loss(c, vi, pulp_MSELoss_fp16, pulp_MSELoss_backward_fp16);
#endif
}

static int run_l1(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v;
#if PTL_OP_FP == 32
    return run_plain_loss(c, vi, pulp_L1Loss, pulp_L1Loss_backward);
#else
    return run_plain_loss(c, vi, pulp_L1Loss_fp16, pulp_L1Loss_backward_fp16);
#endif
}

static int run_crossentropy(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v;
#if PTL_OP_FP == 32
    return run_plain_loss(c, vi, pulp_CrossEntropyLoss, pulp_CrossEntropyLoss_backward);
#else
    return run_plain_loss(c, vi, pulp_CrossEntropyLoss_fp16, pulp_CrossEntropyLoss_backward_fp16);
#endif
}

static int run_berhu(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v;
    int n, step;
    int status = loss_read_shape(c, vi, &n, &step);
    if (status)
        return status;
    const int alpha_milli = ptl_param(c, "alpha_milli", vi);
    if (alpha_milli < 0 || alpha_milli > 1000) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "berhu needs 0 <= alpha_milli <= 1000 (alpha in thousandths)");
        return PTL_ERR_BAD_CASE;
    }
    const float alpha = (float)alpha_milli / 1000.0f;
    struct PTL_S(blob) output;
#if PTL_OP_FP == 32
    struct berHu_loss_args args = {.output = &output, .target = NULL, .wr_loss = NULL, .alpha = alpha};
    return run_loss(c, vi, n, step, &output, &args.target, &args.wr_loss, &args, pulp_berHuLoss,
                    pulp_berHuLoss_backward);
#else
    struct berHu_loss_args_fp16 args = {.output = &output, .target = NULL, .wr_loss = NULL,
                                        .alpha = PTL_FROM_F32(alpha)};
    return run_loss(c, vi, n, step, &output, &args.target, &args.wr_loss, &args, pulp_berHuLoss_fp16,
                    pulp_berHuLoss_backward_fp16);
#endif
}

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("mse_loss"), "N step", LOSS_INPUTS, LOSS_OUTPUTS, "none", run_mse},
    {PTL_OP_NAME("l1_loss"), "N step", LOSS_INPUTS, LOSS_OUTPUTS, "none", run_l1},
    {PTL_OP_NAME("berhu_loss"), "N alpha_milli step", LOSS_INPUTS, LOSS_OUTPUTS, "none", run_berhu},
    {PTL_OP_NAME("ce_loss"), "N step", LOSS_INPUTS, LOSS_OUTPUTS, "none", run_crossentropy},
    {0},
};
