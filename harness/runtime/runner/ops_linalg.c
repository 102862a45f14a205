/*
 * Runner ops of the linear-algebra family: the matmul kernels through
 * mm_manager (forked by the caller, as the API says), mm_manager given a
 * kernel index out of range, the linear layer
 * (which forks itself), and linear_layer, a whole layer run tile by tile
 * with its tensors in far memory and the DMA moving the tiles.
 *
 * Compiled once per dtype (ptl_op_dtype.h). Every API struct is filled by
 * field name, so a library whose struct differs fails to compile here
 * instead of running with fields in the wrong places.
 */
#include "layer_tiles.h"
#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "tiled_layer.h"

/* ---- matmul ----------------------------------------------------------------------
 * C [N x M] = A [N x K] . B, with B [K x M], or [M x K] when trans_B.
 * bias: 0 none; 1 one bias per column (bias_transposed = 0, M entries);
 * 2 one bias per row (bias_transposed = 1, N entries), added by mm_manager
 * after the kernel; 3 a bias of M entries given with USE_BIASES = 0, which
 * mm_manager adds only "if USE_BIASES" (TRAINLIB_API.md): C must be A.B. */

enum { MM_BIAS_NONE = 0, MM_BIAS_PER_COLUMN = 1, MM_BIAS_PER_ROW = 2, MM_BIAS_UNUSED = 3 };

static int run_matmul(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    const int N = ptl_param(c, "N", vi), M = ptl_param(c, "M", vi), K = ptl_param(c, "K", vi);
    const int trans_B = ptl_param(c, "trans_B", vi), bias_mode = ptl_param(c, "bias", vi);
    if (N < 1 || M < 1 || K < 1 || (trans_B != 0 && trans_B != 1) || bias_mode < MM_BIAS_NONE ||
        bias_mode > MM_BIAS_UNUSED) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "matmul params need N, M, K >= 1, trans_B 0 or 1, bias 0 to 3");
        return PTL_ERR_BAD_CASE;
    }
    const uint32_t bias_count = (uint32_t)(bias_mode == MM_BIAS_PER_ROW ? N : M);
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *A = op_frame_input(&f, "A", (uint32_t)(N * K));
    PTL_T *B = op_frame_input(&f, "B", (uint32_t)(K * M));
    PTL_T *bias = bias_mode ? op_frame_input(&f, "bias", bias_count) : NULL;
    PTL_T *C = op_frame_output(&f, "C", (uint32_t)(N * M));
    if (f.status)
        return op_frame_finish(&f, 0);
    struct PTL_S(matMul_args) mm = {
        .A = A, .B = B, .C = C, .N = N, .M = M, .K = K, .trans_B = trans_B,
        .bias = bias, .bias_dim = bias_mode ? (int)bias_count : 0,
        .USE_BIASES = bias_mode == MM_BIAS_PER_COLUMN || bias_mode == MM_BIAS_PER_ROW,
        .bias_transposed = bias_mode == MM_BIAS_PER_ROW,
    };
    struct PTL_S(mm_manager_args) manager = {
        .mm_args = &mm, .mm_dw_args = NULL, .layer_type = LAYER_LINEAR, .step_type = STEP_FW,
        .matmul_type = v.kernel,
    };
    return op_frame_fork(&f, v, PTL_S(mm_manager), &manager);
}

/* ---- matmul_bad_index --------------------------------------------------------------
 * mm_manager asked for a kernel index out of the library's range: "an error
 * the caller must be able to see" (TRAINLIB_API.md), the page not saying
 * how. `where` picks the index: BAD_INDEX_BELOW -1, BAD_INDEX_PAST_END the
 * first index past the library's table (PTL_LIBRARY_KERNELS, from the
 * build's probes). C starts as a copy of the finite input C0, not as
 * poison, so that the harness can tell a C the call left alone from one it
 * wrote NaN into; the harness reads the variant's printed lines as well. */

enum { BAD_INDEX_BELOW = 0, BAD_INDEX_PAST_END = 1 };

static int run_matmul_bad_index(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    const int N = ptl_param(c, "N", vi), M = ptl_param(c, "M", vi), K = ptl_param(c, "K", vi);
    const int where = ptl_param(c, "where", vi);
    if (N < 1 || M < 1 || K < 1 || (where != BAD_INDEX_BELOW && where != BAD_INDEX_PAST_END)) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "matmul_bad_index params need N, M, K >= 1, where 0 or 1");
        return PTL_ERR_BAD_CASE;
    }
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *A = op_frame_input(&f, "A", (uint32_t)(N * K));
    PTL_T *B = op_frame_input(&f, "B", (uint32_t)(K * M));
    PTL_T *C = op_frame_output_from(&f, "C0", "C", (uint32_t)(N * M));
    if (f.status)
        return op_frame_finish(&f, 0);
    struct PTL_S(matMul_args) mm = {
        .A = A, .B = B, .C = C, .N = N, .M = M, .K = K, .trans_B = 0,
        .bias = NULL, .bias_dim = 0, .USE_BIASES = 0, .bias_transposed = 0,
    };
    struct PTL_S(mm_manager_args) manager = {
        .mm_args = &mm, .mm_dw_args = NULL, .layer_type = LAYER_LINEAR, .step_type = STEP_FW,
        .matmul_type = where == BAD_INDEX_BELOW ? -1 : PTL_LIBRARY_KERNELS,
    };
    return op_frame_fork(&f, v, PTL_S(mm_manager), &manager);
}

/* ---- linear ----------------------------------------------------------------------
 * y [out] = W [out x in] . x [in] (+ b [out]). FW emits y; WG dW [out x in]
 * (and db [out] with the bias); IG dx [in]. WG overwrites bias->diff and
 * must not read it (TRAINLIB_API.md, contract details), so db starts as
 * poison (NaN), like every output the API does not say a call accumulates into. */

static int run_linear(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    const int in = ptl_param(c, "in", vi), out = ptl_param(c, "out", vi);
    const int use_bias = ptl_param(c, "use_biases", vi), step = ptl_param(c, "step", vi);
    if (in < 1 || out < 1 || (use_bias != 0 && use_bias != 1) || step < PTL_STEP_FW || step > PTL_STEP_IG) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "linear params need in, out >= 1, use_biases 0 or 1, step FW, WG or IG");
        return PTL_ERR_BAD_CASE;
    }
    const uint32_t n_in = (uint32_t)in, n_out = (uint32_t)out, n_w = n_in * n_out;
    const int fw = step == PTL_STEP_FW, wg = step == PTL_STEP_WG, ig = step == PTL_STEP_IG;
    /* Each step gets the tensors it reads: FW x, W (b); WG x, dy; IG W, dy. */
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *x = fw || wg ? op_frame_input(&f, "x", n_in) : NULL;
    PTL_T *w = fw || ig ? op_frame_input(&f, "W", n_w) : NULL;
    PTL_T *b = fw && use_bias ? op_frame_input(&f, "b", n_out) : NULL;
    PTL_T *dy = wg || ig ? op_frame_input(&f, "dy", n_out) : NULL;
    PTL_T *y = fw ? op_frame_output(&f, "y", n_out) : NULL;
    PTL_T *dw = wg ? op_frame_output(&f, "dW", n_w) : NULL;
    PTL_T *db = wg && use_bias ? op_frame_output(&f, "db", n_out) : NULL;
    PTL_T *dx = ig ? op_frame_output(&f, "dx", n_in) : NULL;
    if (f.status)
        return op_frame_finish(&f, 0);
    struct PTL_S(blob) input = {.data = x, .diff = dx, .dim = in, .W = 1, .H = 1, .C = in};
    struct PTL_S(blob) coeff = {.data = w, .diff = dw, .dim = in * out, .W = in, .H = out, .C = 1};
    struct PTL_S(blob) bias = {.data = b, .diff = db, .dim = out, .W = 1, .H = 1, .C = out};
    struct PTL_S(blob) output = {.data = y, .diff = dy, .dim = out, .W = 1, .H = 1, .C = out};
    struct PTL_S(Linear_args) args = {
        .input = &input, .coeff = &coeff, .bias = &bias, .output = &output,
        .skip_wg_grad = !wg, .skip_in_grad = !ig,
        .opt_matmul_type_fw = v.kernel, .opt_matmul_type_wg = v.kernel, .opt_matmul_type_ig = v.kernel,
        .use_biases = use_bias,
    };
    ptl_measure_begin(vi);
    linear_call(&args, step);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

/* ---- A whole linear layer, tiled, its tensors in far memory ----------------------------
 * linear_layer: the layer run tile by tile, its tensors in far memory and
 * the DMA moving the tiles, double-buffered (tiled_layer.h); the measured
 * region is the whole layer. Tiles (the tiler's axes): FW out, WG out x in,
 * IG in; each computes its slice of the output over its whole reduction.
 * With the bias, WG's db comes from the tiles of the first input block (the
 * others call with use_biases 0), so every output element is written once. */
#define LINEAR_LAYER_PARAMS "in out use_biases step tout tinp"

static int run_linear_layer(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    struct linear_layer l = {
        .in = ptl_param(c, "in", vi), .out = ptl_param(c, "out", vi), .bias = ptl_param(c, "use_biases", vi),
        .step = ptl_param(c, "step", vi), .tout = ptl_param(c, "tout", vi), .tinp = ptl_param(c, "tinp", vi),
        .kernel = v.kernel,
    };
    if (l.in < 1 || l.out < 1 || (l.bias != 0 && l.bias != 1) || l.step < PTL_STEP_FW ||
        l.step > PTL_STEP_IG || (l.step == PTL_STEP_IG && l.bias) || l.tout < 1 || l.tout > l.out ||
        l.tinp < 1 || l.tinp > l.in) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "linear_layer params need in, out >= 1, use_biases 0 or 1 (0 in "
                                             "IG), step FW, WG or IG, tiles 1 to the size");
        return PTL_ERR_BAD_CASE;
    }
    const int fw = l.step == PTL_STEP_FW, wg = l.step == PTL_STEP_WG, ig = l.step == PTL_STEP_IG;
    const uint32_t n_in = (uint32_t)l.in, n_out = (uint32_t)l.out, n_w = n_in * n_out;
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    ptl_place_buffers(PTL_PLACE_FAR);
    l.x = fw || wg ? op_frame_input(&f, "x", n_in) : NULL;
    l.w = fw || ig ? op_frame_input(&f, "W", n_w) : NULL;
    l.b = fw && l.bias ? op_frame_input(&f, "b", n_out) : NULL;
    l.dy = wg || ig ? op_frame_input(&f, "dy", n_out) : NULL;
    l.y = fw ? op_frame_output(&f, "y", n_out) : NULL;
    l.dw = wg ? op_frame_output(&f, "dW", n_w) : NULL;
    l.db = wg && l.bias ? op_frame_output(&f, "db", n_out) : NULL;
    l.dx = ig ? op_frame_output(&f, "dx", n_in) : NULL;
    const struct tiled_layer layer = {.tiles = linear_tile_count(&l), .tile_at = linear_tile_at, .compute = linear_compute,
                                       .op = &l};
    struct tiled_buffers near;
    tiled_layer_buffers(&f, &layer, &near);
    return tiled_layer_measure(&f, &layer, &near, sizeof(PTL_T));
}

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("matmul"), "N M K trans_B bias", "A B bias", "C", PTL_KERNEL_TABLE, run_matmul},
    /* One core alone (the `alone` param, op_frame_fork): its block of rows or columns. */
    {PTL_OP_NAME("matmul_alone"), "N M K trans_B bias alone", "A B bias", "C", PTL_KERNEL_TABLE, run_matmul},
    {PTL_OP_NAME("matmul_bad_index"), "N M K where", "A B C0", "C", "none", run_matmul_bad_index},
    {PTL_OP_NAME("linear"), "in out use_biases step", "x W b dy", "y dW db dx", PTL_KERNEL_TABLE, run_linear},
    {PTL_OP_NAME("linear_layer"), LINEAR_LAYER_PARAMS, "x W b dy", "y dW db dx", PTL_KERNEL_TABLE,
     run_linear_layer},
    {0},
};
