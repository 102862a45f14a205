/*
 * Runner op of the residual connection: the forward sum, the sum node's
 * backward (skip->diff += output->diff) and the residual backward
 * (lout->diff = output->diff), forked inside the primitive (NUM_CORES, which
 * the runner has set to the variant's core count). No matmul: kernel 0.
 *
 * Compiled once per dtype (ptl_op_dtype.h). Params:
 *   n             element count of every tensor
 *   step          FW, SUMNODE_BW (sum node BW) or BW (residual BW)
 *   skip_in_grad  the sum node's flag (1: skip->diff is left alone)
 *   mismatch      which blob is one element short, so that the call must
 *                 write nothing: 0 none; 1 the blob the step combines with
 *                 output (FW, residual BW: lout; sum node: skip); 2 the
 *                 output blob itself; 3 skip (FW only, whose three blobs
 *                 are all checked). Each size check of the API is thus
 *                 exercised on its own, inputs and outputs alike.
 *                 A short output blob of the FW is also a short buffer:
 *                 y then has n - 1 elements between guard words, so a call
 *                 that sums over another blob's dim breaks a guard.
 * Tensors in: skip, lout (FW), dy (output->diff, BW), dskip (the skip
 * gradient the sum node adds to), old (what the FW output and the residual
 * BW's lout->diff hold before the call). Out: y (FW), dskip_new (sum node:
 * dskip after the call), dlout (residual BW). Each output starts as the
 * input it is made from (old, dskip), so a call that writes nothing leaves
 * exactly that.
 */
#include <string.h>

#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

/* The mismatch param: which blob is one element short. RES_SHORT_LOUT is
 * never a value of its own: it is what RES_SHORT_COMBINED means for FW and
 * the residual BW. */
enum { RES_SHORT_NONE = 0, RES_SHORT_COMBINED = 1, RES_SHORT_OUTPUT = 2, RES_SHORT_SKIP = 3, RES_SHORT_LOUT = 4 };

#if PTL_OP_FP == 32
#define RES_FW pulp_residualconn_fp32_fw
#define RES_SUMNODE pulp_sumnode_fp32_bw
#define RES_BW pulp_residualconn_fp32_bw
#else
#define RES_FW pulp_residualconn_fp16_fw
#define RES_SUMNODE pulp_sumnode_fp16_bw
#define RES_BW pulp_residualconn_fp16_bw
#endif

static int run_residual(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v; /* direct code: no kernel index */
    const int n = ptl_param(c, "n", vi), step = ptl_param(c, "step", vi);
    const int skip_in_grad = ptl_param(c, "skip_in_grad", vi), mismatch = ptl_param(c, "mismatch", vi);
    const int max_mismatch = step == PTL_STEP_FW ? RES_SHORT_SKIP : RES_SHORT_OUTPUT;
    if (n < 2 || (step != PTL_STEP_FW && step != PTL_STEP_SUMNODE_BW && step != PTL_STEP_BW) || (skip_in_grad != 0 && skip_in_grad != 1) ||
        mismatch < RES_SHORT_NONE || mismatch > max_mismatch) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "residual params need n >= 2, step FW, SUMNODE_BW or BW (residual), "
                                             "skip_in_grad 0 or 1, mismatch 0..2 (FW: 0..3)");
        return PTL_ERR_BAD_CASE;
    }
    const uint32_t count = (uint32_t)n;
    const int short_output = mismatch == RES_SHORT_OUTPUT;
    const uint32_t y_count = step == PTL_STEP_FW && short_output ? count - 1 : count;
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *skip = step == PTL_STEP_FW ? op_frame_input(&f, "skip", count) : NULL;
    PTL_T *lout = step == PTL_STEP_FW ? op_frame_input(&f, "lout", count) : NULL;
    PTL_T *dy = step != PTL_STEP_FW ? op_frame_input(&f, "dy", count) : NULL;
    PTL_T *old_y = step == PTL_STEP_FW ? op_frame_input(&f, "old", count) : NULL;
    PTL_T *y = step == PTL_STEP_FW ? op_frame_output(&f, "y", y_count) : NULL;
    PTL_T *dskip = step == PTL_STEP_SUMNODE_BW ? op_frame_output_from(&f, "dskip", "dskip_new", count) : NULL;
    PTL_T *dlout = step == PTL_STEP_BW ? op_frame_output_from(&f, "old", "dlout", count) : NULL;
    if (f.status)
        return op_frame_finish(&f, 0);
    if (y) /* y holds what it held before the call (old), as far as its buffer goes */
        memcpy(y, old_y, (size_t)y_count * sizeof(PTL_T));
    const int combined = step == PTL_STEP_SUMNODE_BW ? RES_SHORT_SKIP : RES_SHORT_LOUT;
    const int skip_short = mismatch == RES_SHORT_SKIP || (mismatch == RES_SHORT_COMBINED && combined == RES_SHORT_SKIP);
    const int lout_short = mismatch == RES_SHORT_COMBINED && combined == RES_SHORT_LOUT;
    struct PTL_S(blob) skip_blob = {.data = skip, .diff = dskip, .dim = n - skip_short, .W = n, .H = 1, .C = 1};
    struct PTL_S(blob) lout_blob = {.data = lout, .diff = dlout, .dim = n - lout_short, .W = n, .H = 1, .C = 1};
    struct PTL_S(blob) output_blob = {.data = y, .diff = dy, .dim = n - short_output, .W = n, .H = 1, .C = 1};
    struct PTL_S(SkipConn_args) args = {.skip = &skip_blob, .lout = &lout_blob, .output = &output_blob,
                                        .skip_in_grad = skip_in_grad};
    /* the step's function chosen before the region: it measures the call alone */
    void (*const call)(void *) = step == PTL_STEP_FW ? RES_FW : step == PTL_STEP_SUMNODE_BW ? RES_SUMNODE : RES_BW;
    ptl_measure_begin(vi);
    call(&args);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("residual"), "n step skip_in_grad mismatch", "skip lout dy dskip old", "y dskip_new dlout",
     "none", run_residual},
    {0},
};
