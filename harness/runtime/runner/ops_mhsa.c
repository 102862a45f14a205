/*
 * Runner op of multi-head self-attention (pulp_mhsa_fp32.h, pulp_mhsa_fp16.h):
 * FW or BW, forked inside the primitive. The variant's kernel is the matmul
 * index of the step (opt_matmul_type_fw for FW, opt_matmul_type_wg for BW;
 * all three fields carry it).
 *
 * Params: L E F heads step (FW or BW). Tensors in (the layouts of the
 * header: x = I = X^T, E x L; weights as the args hold them):
 *   FW: x [E*L], wq wk wv [E*F], bq bk bv [F], wo [E*F];
 *   BW: x, wq wk wv, wo, and what the FW left: q k v a [F*L], p [heads*L*L];
 *       dy [E*L] (output->diff).
 * Out: FW q k v a p y; BW dwo da dv dk dq dwq dwk dwv dx (dx starts as zeros:
 * the BW adds into it; the others start as NaN). Scratch (guarded):
 * temp_buffer max(E*F, F*L, L*L), grad and both halves of head_buffer L*L,
 * maxes and sums L; in BW softmax_buffer->diff heads*L*L.
 */
#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

/* A blob of `rows` x `cols` elements (C = 1). */
static struct PTL_S(blob) mh_blob(PTL_T *data, PTL_T *diff, int rows, int cols)
{
    return (struct PTL_S(blob)){.data = data, .diff = diff, .dim = rows * cols, .W = cols, .H = rows, .C = 1};
}

static int run_mhsa(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    const int L = ptl_param(c, "L", vi), E = ptl_param(c, "E", vi), F = ptl_param(c, "F", vi);
    const int heads = ptl_param(c, "heads", vi), step = ptl_param(c, "step", vi);
    if (L < 1 || E < 1 || F < 1 || heads < 1 || F % heads || (step != PTL_STEP_FW && step != PTL_STEP_BW)) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "mhsa params need L, E, F, heads >= 1, heads dividing F, "
                                             "and step FW or BW");
        return PTL_ERR_BAD_CASE;
    }
    const int fw = step == PTL_STEP_FW;
    const uint32_t el = (uint32_t)(E * L), ef = (uint32_t)(E * F), fl = (uint32_t)(F * L), ll = (uint32_t)(L * L);
    const uint32_t pl = (uint32_t)heads * ll;
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *x = op_frame_input(&f, "x", el);
    PTL_T *wq = op_frame_input(&f, "wq", ef), *wk = op_frame_input(&f, "wk", ef), *wv = op_frame_input(&f, "wv", ef);
    PTL_T *wo = op_frame_input(&f, "wo", ef);
    PTL_T *bq = fw ? op_frame_input(&f, "bq", (uint32_t)F) : NULL;
    PTL_T *bk = fw ? op_frame_input(&f, "bk", (uint32_t)F) : NULL;
    PTL_T *bv = fw ? op_frame_input(&f, "bv", (uint32_t)F) : NULL;
    PTL_T *q = fw ? op_frame_output(&f, "q", fl) : op_frame_input(&f, "q", fl);
    PTL_T *k = fw ? op_frame_output(&f, "k", fl) : op_frame_input(&f, "k", fl);
    PTL_T *vv = fw ? op_frame_output(&f, "v", fl) : op_frame_input(&f, "v", fl);
    PTL_T *a = fw ? op_frame_output(&f, "a", fl) : op_frame_input(&f, "a", fl);
    PTL_T *p = fw ? op_frame_output(&f, "p", pl) : op_frame_input(&f, "p", pl);
    PTL_T *y = fw ? op_frame_output(&f, "y", el) : NULL;
    PTL_T *dy = fw ? NULL : op_frame_input(&f, "dy", el);
    PTL_T *dwo = fw ? NULL : op_frame_output(&f, "dwo", ef);
    PTL_T *da = fw ? NULL : op_frame_output(&f, "da", fl);
    PTL_T *dv = fw ? NULL : op_frame_output(&f, "dv", fl);
    PTL_T *dk = fw ? NULL : op_frame_output(&f, "dk", fl);
    PTL_T *dq = fw ? NULL : op_frame_output(&f, "dq", fl);
    PTL_T *dwq = fw ? NULL : op_frame_output(&f, "dwq", ef);
    PTL_T *dwk = fw ? NULL : op_frame_output(&f, "dwk", ef);
    PTL_T *dwv = fw ? NULL : op_frame_output(&f, "dwv", ef);
    /* input->diff += Cq dq + Ck dk + Cv dv (zero first): TRAINLIB_API_MORE.md */
    PTL_T *dx = fw ? NULL : op_frame_output_zeroed(&f, "dx", el);
    PTL_T *temp = op_frame_scratch(&f, op_frame_max3(ef, fl, ll));
    PTL_T *grad = op_frame_scratch(&f, ll);
    /* head_buffer: "Attention scores for every head" (pulp_mhsa_fp32.h), heads x L x L each half;
     * the page gives no size, so a library may keep every head's there. */
    PTL_T *head_data = op_frame_scratch(&f, pl), *head_diff = op_frame_scratch(&f, pl);
    PTL_T *maxes = op_frame_scratch(&f, (uint32_t)L), *sums = op_frame_scratch(&f, (uint32_t)L);
    PTL_T *p_diff = fw ? NULL : op_frame_scratch(&f, pl);
    if (f.status)
        return op_frame_finish(&f, 0);

    struct PTL_S(blob) input = mh_blob(x, dx, L, E), output = mh_blob(y, dy, L, E);
    struct PTL_S(blob) coeff_q = mh_blob(wq, dwq, E, F), coeff_k = mh_blob(wk, dwk, E, F);
    struct PTL_S(blob) coeff_v = mh_blob(wv, dwv, E, F), coeff_o = mh_blob(wo, dwo, E, F);
    struct PTL_S(blob) bias_q = mh_blob(bq, NULL, 1, F), bias_k = mh_blob(bk, NULL, 1, F);
    struct PTL_S(blob) bias_v = mh_blob(bv, NULL, 1, F), bias_o = mh_blob(NULL, NULL, 1, E);
    struct PTL_S(blob) qb = mh_blob(q, dq, L, F), kb = mh_blob(k, dk, L, F), vb = mh_blob(vv, dv, L, F);
    struct PTL_S(blob) attention = mh_blob(a, da, L, F);
    struct PTL_S(blob) head = mh_blob(head_data, head_diff, heads * L, L), softmax = mh_blob(p, p_diff, heads * L, L);
    struct PTL_S(Mhsa_args) args = {
        .input = &input, .input_bn = NULL, .n_heads = heads,
        .opt_matmul_type_fw = v.kernel, .opt_matmul_type_wg = v.kernel, .opt_matmul_type_ig = v.kernel,
        .output = &output, .coeff_in_q = &coeff_q, .coeff_in_k = &coeff_k, .coeff_in_v = &coeff_v,
        .bias_in_q = &bias_q, .bias_in_k = &bias_k, .bias_in_v = &bias_v, .coeff_out = &coeff_o,
        .bias_out = &bias_o, .q = &qb, .k = &kb, .v = &vb, .attention_map = &attention,
        .temp_buffer = temp, .grad = grad, .head_buffer = &head, .softmax_buffer = &softmax,
        .global_max = NULL, .partial_exp_sum = NULL, .maxes = maxes, .sums = sums,
    };
    ptl_measure_begin(vi);
    if (fw)
        PTL_F(pulp_mhsa_, _fw_cl)(&args);
    else
        PTL_F(pulp_mhsa_, _bw_cl)(&args);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("mhsa"), "L E F heads step", "x wq wk wv bq bk bv wo q k v a p dy",
     "q k v a p y dwo da dv dk dq dwq dwk dwv dx", PTL_KERNEL_TABLE, run_mhsa},
    {0},
};
