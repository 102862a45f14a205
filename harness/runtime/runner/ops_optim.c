/*
 * Runner op of the optimizer: plain gradient descent (SGD), with and without
 * weight decay, with and without biases.
 *
 * The optimizer is a per-core body forked by the caller (the API says so),
 * so the runner forks it on the variant's team, as a deployment would.
 *
 * Compiled once per dtype (ptl_op_dtype.h). Tensors: w, dw [nw]; b, db [nb].
 * The update is in place, so the inputs are copied into guarded output
 * buffers that the primitive updates: w_new and dw_new (the gradient,
 * decayed in place when lambda != 0), b_new and db_new. With use_biases 0
 * the biases blob is given whole all the same (a layer whose biases are
 * frozen): the page updates it only "use_biases == 1", so b_new and db_new
 * must come back as b and db.
 *
 * learning_rate and weight_decay_lambda are floats; the params are ints, so
 * they travel in millionths: lr_micro, lambda_micro (0..1000000), and the op
 * makes (float)x_micro / 1000000.0f in binary32, rounded once more to fp16
 * for the FP16 op (whose args hold fp16). golden/losses.py rounds the same.
 */
#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

/* Older versions of the published struct have no weight_decay_lambda (its
 * branch dnadalini-patch-4, for one): against such a library only the cases
 * without decay run, and the others are unsupported. */
#define SGD_HAS_DECAY PTL_HAS_FIELD(optim_args, weight_decay_lambda)

#define OPTIM_PARAMS "nw nb use_biases lr_micro lambda_micro"
#define OPTIM_INPUTS "w dw b db"
#define OPTIM_OUTPUTS "w_new dw_new b_new db_new"

static int run_sgd(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    const int nw = ptl_param(c, "nw", vi), nb = ptl_param(c, "nb", vi);
    const int use_biases = ptl_param(c, "use_biases", vi);
    const int lr_micro = ptl_param(c, "lr_micro", vi), lambda_micro = ptl_param(c, "lambda_micro", vi);
    if (nw < 1 || nb < 1 || (use_biases != 0 && use_biases != 1) || lr_micro < 0 || lr_micro > 1000000 ||
        lambda_micro < 0 || lambda_micro > 1000000) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "sgd params need nw, nb >= 1, use_biases 0 or 1, "
                                             "0 <= lr_micro, lambda_micro <= 1000000");
        return PTL_ERR_BAD_CASE;
    }
#if !SGD_HAS_DECAY
    if (lambda_micro != 0) {
        ptl_emit_error(vi, PTL_ERR_UNSUPPORTED, PTL_S_NAME(optim_args) " has no field weight_decay_lambda: only "
                                                "cases without weight decay can run against this library");
        return PTL_ERR_UNSUPPORTED;
    }
#endif
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *w = op_frame_output_from(&f, "w", "w_new", (uint32_t)nw);
    PTL_T *dw = op_frame_output_from(&f, "dw", "dw_new", (uint32_t)nw);
    PTL_T *b = op_frame_output_from(&f, "b", "b_new", (uint32_t)nb);
    PTL_T *db = op_frame_output_from(&f, "db", "db_new", (uint32_t)nb);
    if (f.status)
        return op_frame_finish(&f, 0);
    const float lr = (float)lr_micro / 1000000.0f;
    struct PTL_S(blob) weights = {.data = w, .diff = dw, .dim = nw, .W = nw, .H = 1, .C = 1};
    struct PTL_S(blob) biases = {.data = b, .diff = db, .dim = nb, .W = nb, .H = 1, .C = 1};
#if PTL_OP_FP == 32
    struct optim_args args = {.weights = &weights, .biases = &biases, .learning_rate = lr,
#if SGD_HAS_DECAY
                              .weight_decay_lambda = (float)lambda_micro / 1000000.0f,
#endif
                              .use_biases = use_biases};
#else
    struct optim_args_fp16 args = {.weights = &weights, .biases = &biases, .learning_rate = PTL_FROM_F32(lr),
#if SGD_HAS_DECAY
                                   .weight_decay_lambda = PTL_FROM_F32((float)lambda_micro / 1000000.0f),
#endif
                                   .use_biases = use_biases};
#endif
    return op_frame_fork(&f, v, PTL_F(pulp_gradient_descent_, ), &args);
}

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("sgd"), OPTIM_PARAMS, OPTIM_INPUTS, OPTIM_OUTPUTS, "none", run_sgd},
    {0},
};
