/*
 * Operations of the Conv2D family: the layer (forked inside the primitive),
 * and the standalone unrollings and block transpose (forked here, by the
 * caller, as the API says).
 *
 * Every op starts with the same 13 params, the layer's geometry:
 *   Ci, H, W, Co, Hk, Wk, stride_h, stride_w, Lpad, Rpad, Upad, Dpad, HWC
 * (Ho and Wo follow from them). Tensors are in the layout HWC says.
 * The work buffers are allocated per step at exactly the size the library's
 * contract gives (pulp_conv2d_fp32.h), guarded and NaN-filled.
 *
 * The FP32 and FP16 versions differ only in types and names, so both are
 * stamped out from one body by CONV2D_OPS(...).
 */
#include <stdlib.h>

#include "pmsis.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

enum { CONV_STEP_FW = 0, CONV_STEP_WG = 1, CONV_STEP_IG = 2 };
enum { GEOMETRY_PARAMS = 13 };

struct conv_geometry {
    int Ci, H, W, Co, Hk, Wk, sh, sw, L, R, U, D, hwc;
    int Ho, Wo;
    uint32_t n_in, n_w, n_out; /* element counts of input, weights, output */
};

/* Reads and checks the geometry params; emits an ERROR record when they do
 * not describe a convolution. */
static int read_geometry(const struct ptl_case *c, uint32_t n_params, struct conv_geometry *g,
                         uint32_t vi)
{
    int status = ptl_expect_params(c, n_params, vi);
    if (status)
        return status;
    const int32_t *p = c->params;
    *g = (struct conv_geometry){p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10],
                                p[11], p[12], 0, 0, 0, 0, 0};
    int sizes_ok = g->Ci > 0 && g->H > 0 && g->W > 0 && g->Co > 0 && g->Hk > 0 && g->Wk > 0 &&
                   g->sh > 0 && g->sw > 0 && g->L >= 0 && g->R >= 0 && g->U >= 0 && g->D >= 0;
    if (!sizes_ok || g->H + g->U + g->D < g->Hk || g->W + g->L + g->R < g->Wk) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "conv geometry: sizes and strides must be >= 1, pads >= 0, "
                                             "and the padded input at least as large as the kernel");
        return PTL_ERR_BAD_CASE;
    }
    g->Ho = (g->H + g->U + g->D - g->Hk) / g->sh + 1;
    g->Wo = (g->W + g->L + g->R - g->Wk) / g->sw + 1;
    g->n_in = (uint32_t)(g->Ci * g->H * g->W);
    g->n_w = (uint32_t)(g->Co * g->Ci * g->Hk * g->Wk);
    g->n_out = (uint32_t)(g->Co * g->Ho * g->Wo);
    return PTL_OK;
}

/* Element counts of the work buffers a step needs (0: none). */
static uint32_t i2c_count(const struct conv_geometry *g, int step)
{
    if (step == CONV_STEP_IG)
        return (uint32_t)(g->Co * g->Hk * g->Wk * g->H * g->W);
    return (uint32_t)(g->Ci * g->Hk * g->Wk * g->Ho * g->Wo);
}

static uint32_t bt_count(const struct conv_geometry *g, int step)
{
    return step == CONV_STEP_IG || (step == CONV_STEP_WG && g->hwc) ? g->n_w : 0;
}

static int first_error(int a, int b)
{
    return a ? a : b;
}

static int no_memory(uint32_t vi)
{
    ptl_emit_error(vi, PTL_ERR_NO_MEMORY, "out of memory allocating outputs or work buffers");
    return PTL_ERR_NO_MEMORY;
}

#define CONV2D_OPS(SUFFIX, T, DTYPE, BLOB, CONV_ARGS, CONV_FW, CONV_WG, CONV_IG, UNROLL_ARGS,          \
                   IM2COL, IM2ROW, BT_ARGS, BLOCKTRANSP)                                               \
    /* params: geometry, use_bias, use_im2col, use_dma, step. tensors: x, W, bias [Co], dOut.       \
     * out: FW y; WG dW (+ db); IG dx. */                                                          \
    static int run_conv2d_##SUFFIX(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)    \
    {                                                                                              \
        struct conv_geometry g;                                                                    \
        int status = read_geometry(c, GEOMETRY_PARAMS + 4, &g, vi);                                \
        if (status)                                                                                \
            return status;                                                                         \
        const int use_bias = c->params[13], use_im2col = c->params[14], step = c->params[16];      \
        if (step < CONV_STEP_FW || step > CONV_STEP_IG) {                                          \
            ptl_emit_error(vi, PTL_ERR_BAD_CASE, "conv2d step must be 0, 1 or 2");                 \
            return PTL_ERR_BAD_CASE;                                                               \
        }                                                                                          \
        T *x = ptl_input_copy(c, 0, DTYPE, g.n_in, vi);                                            \
        T *w = ptl_input_copy(c, 1, DTYPE, g.n_w, vi);                                             \
        T *b = ptl_input_copy(c, 2, DTYPE, (uint32_t)g.Co, vi);                                    \
        T *dy = ptl_input_copy(c, 3, DTYPE, g.n_out, vi);                                          \
        const uint32_t n_i2c = use_im2col ? i2c_count(&g, step) : 0;                               \
        const uint32_t n_bt = use_im2col ? bt_count(&g, step) : 0;                                 \
        T *i2c = n_i2c ? ptl_scratch_alloc(DTYPE, n_i2c) : NULL;                                   \
        T *bt = n_bt ? ptl_scratch_alloc(DTYPE, n_bt) : NULL;                                      \
        const int with_db = step == CONV_STEP_WG && use_bias;                                      \
        const uint32_t n_result = step == CONV_STEP_FW ? g.n_out : step == CONV_STEP_WG ? g.n_w : g.n_in; \
        T *out = ptl_output_alloc(DTYPE, n_result);                                                \
        T *db = with_db ? ptl_output_alloc(DTYPE, (uint32_t)g.Co) : NULL;                          \
        if (!x || !w || !b || !dy || !out || (n_i2c && !i2c) || (n_bt && !bt) || (with_db && !db)) { \
            status = x && w && b && dy ? no_memory(vi) : PTL_ERR_BAD_CASE;                         \
            free(x);                                                                               \
            free(w);                                                                               \
            free(b);                                                                               \
            free(dy);                                                                              \
            ptl_scratch_release(vi, DTYPE, i2c, n_i2c);                                            \
            ptl_scratch_release(vi, DTYPE, bt, n_bt);                                              \
            ptl_scratch_release(vi, DTYPE, out, n_result);                                         \
            ptl_scratch_release(vi, DTYPE, db, (uint32_t)g.Co);                                    \
            return status;                                                                         \
        }                                                                                          \
        struct BLOB input = {x, step == CONV_STEP_IG ? out : NULL, (int)g.n_in, g.W, g.H, g.Ci};   \
        struct BLOB coeff = {w, step == CONV_STEP_WG ? out : NULL, (int)g.n_w, g.Wk, g.Hk, g.Ci};  \
        struct BLOB bias = {b, db, g.Co, 1, 1, g.Co};                                              \
        struct BLOB output = {step == CONV_STEP_FW ? out : NULL, dy, (int)g.n_out, g.Wo, g.Ho, g.Co}; \
        struct CONV_ARGS args = {                                                                  \
            .input = &input, .coeff = &coeff, .bias = &bias, .output = &output,                    \
            .Lpad = g.L, .Rpad = g.R, .Upad = g.U, .Dpad = g.D,                                    \
            .stride_h = g.sh, .stride_w = g.sw,                                                    \
            .i2c_buffer = i2c, .bt_buffer = bt,                                                    \
            .skip_wg_grad = step != CONV_STEP_WG, .skip_in_grad = step != CONV_STEP_IG,            \
            .HWC = g.hwc,                                                                          \
            .opt_matmul_type_fw = v.kernel, .opt_matmul_type_wg = v.kernel,                        \
            .opt_matmul_type_ig = v.kernel,                                                        \
            .USE_BIASES = use_bias, .USE_IM2COL = use_im2col, .USE_DMA_IM2COL = c->params[15],     \
        };                                                                                         \
        ptl_measure_begin(vi);                                                                     \
        if (step == CONV_STEP_FW)                                                                  \
            CONV_FW(&args);                                                                        \
        else if (step == CONV_STEP_WG)                                                             \
            CONV_WG(&args);                                                                        \
        else                                                                                       \
            CONV_IG(&args);                                                                        \
        ptl_measure_end(vi);                                                                       \
        free(x);                                                                                   \
        free(w);                                                                                   \
        free(b);                                                                                   \
        free(dy);                                                                                  \
        status = ptl_scratch_release(vi, DTYPE, i2c, n_i2c);                                       \
        status = first_error(status, ptl_scratch_release(vi, DTYPE, bt, n_bt));                    \
        status = first_error(status, ptl_output_emit(vi, 0, DTYPE, out, n_result));                \
        if (with_db)                                                                               \
            status = first_error(status, ptl_output_emit(vi, 1, DTYPE, db, (uint32_t)g.Co));       \
        return status;                                                                             \
    }                                                                                              \
                                                                                                   \
    /* params: geometry, use_dma, mod. tensor: mod 0 x, mod 1 dOut. out: the unrolled matrix,     \
     * T x P (im2col) or P x T (im2row). */                                                        \
    static int run_unroll_##SUFFIX(const struct ptl_case *c, struct ptl_variant v, uint32_t vi,   \
                                   void (*unroll)(void *))                                         \
    {                                                                                              \
        struct conv_geometry g;                                                                    \
        int status = read_geometry(c, GEOMETRY_PARAMS + 2, &g, vi);                                \
        if (status)                                                                                \
            return status;                                                                         \
        const int mod = c->params[14];                                                             \
        if (mod != 0 && mod != 1) {                                                                \
            ptl_emit_error(vi, PTL_ERR_BAD_CASE, "im2col mod must be 0 or 1");                     \
            return PTL_ERR_BAD_CASE;                                                               \
        }                                                                                          \
        T *src = ptl_input_copy(c, 0, DTYPE, mod ? g.n_out : g.n_in, vi);                          \
        const uint32_t n = i2c_count(&g, mod ? CONV_STEP_IG : CONV_STEP_FW);                       \
        T *buffer = ptl_output_alloc(DTYPE, n);                                                    \
        if (!src || !buffer) {                                                                     \
            free(src);                                                                             \
            ptl_scratch_release(vi, DTYPE, buffer, n);                                             \
            return src ? no_memory(vi) : PTL_ERR_BAD_CASE;                                         \
        }                                                                                          \
        struct BLOB input = {mod ? NULL : src, NULL, (int)g.n_in, g.W, g.H, g.Ci};                 \
        struct BLOB coeff = {NULL, NULL, (int)g.n_w, g.Wk, g.Hk, g.Ci};                            \
        struct BLOB output = {NULL, mod ? src : NULL, (int)g.n_out, g.Wo, g.Ho, g.Co};             \
        struct UNROLL_ARGS args = {                                                                \
            .input = &input, .c = &coeff, .output = &output, .pBuffer = buffer,                    \
            .Lpad = g.L, .Rpad = g.R, .Upad = g.U, .Dpad = g.D, .mod = mod,                        \
            .stride_w = g.sw, .stride_h = g.sh, .HWC = g.hwc, .USE_DMA = c->params[13],            \
        };                                                                                         \
        ptl_measure_begin(vi);                                                                     \
        pi_cl_team_fork(v.cores, unroll, &args);                                                   \
        ptl_measure_end(vi);                                                                       \
        free(src);                                                                                 \
        return ptl_output_emit(vi, 0, DTYPE, buffer, n);                                           \
    }                                                                                              \
                                                                                                   \
    static int run_im2col_##SUFFIX(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)    \
    {                                                                                              \
        return run_unroll_##SUFFIX(c, v, vi, IM2COL);                                              \
    }                                                                                              \
                                                                                                   \
    static int run_im2row_##SUFFIX(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)    \
    {                                                                                              \
        return run_unroll_##SUFFIX(c, v, vi, IM2ROW);                                              \
    }                                                                                              \
                                                                                                   \
    /* params: Ci, Co, Hk, Wk, HWC. tensor: W. out: the block-transposed weights. */               \
    static int run_blocktransp_##SUFFIX(const struct ptl_case *c, struct ptl_variant v, uint32_t vi) \
    {                                                                                              \
        int status = ptl_expect_params(c, 5, vi);                                                  \
        if (status)                                                                                \
            return status;                                                                         \
        const int32_t *p = c->params;                                                              \
        if (p[0] < 1 || p[1] < 1 || p[2] < 1 || p[3] < 1) {                                        \
            ptl_emit_error(vi, PTL_ERR_BAD_CASE, "blocktransp sizes must be >= 1");                \
            return PTL_ERR_BAD_CASE;                                                               \
        }                                                                                          \
        const uint32_t n = (uint32_t)(p[0] * p[1] * p[2] * p[3]);                                  \
        T *w = ptl_input_copy(c, 0, DTYPE, n, vi);                                                 \
        T *bt = ptl_output_alloc(DTYPE, n);                                                        \
        if (!w || !bt) {                                                                           \
            free(w);                                                                               \
            ptl_scratch_release(vi, DTYPE, bt, n);                                                 \
            return w ? no_memory(vi) : PTL_ERR_BAD_CASE;                                           \
        }                                                                                          \
        struct BT_ARGS args = {.weights = w, .bt_weights = bt, .Cin = p[0], .Cout = p[1],          \
                               .Hk = p[2], .Wk = p[3], .HWC = p[4]};                               \
        ptl_measure_begin(vi);                                                                     \
        pi_cl_team_fork(v.cores, BLOCKTRANSP, &args);                                              \
        ptl_measure_end(vi);                                                                       \
        free(w);                                                                                   \
        return ptl_output_emit(vi, 0, DTYPE, bt, n);                                               \
    }

CONV2D_OPS(fp32, float, PTL_DTYPE_F32, blob, Conv2D_args, pulp_conv2d_fp32_fw_cl,
           pulp_conv2d_fp32_bw_param_grads_cl, pulp_conv2d_fp32_bw_input_grads_cl, im2col_args,
           pulp_im2col_fp32, pulp_im2row_fp32, blocktransp_args, pulp_blocktransp_fp32)
CONV2D_OPS(fp16, fp16, PTL_DTYPE_F16, blob_fp16, Conv2D_args_fp16, pulp_conv2d_fp16_fw_cl,
           pulp_conv2d_fp16_bw_param_grads_cl, pulp_conv2d_fp16_bw_input_grads_cl,
           im2col_args_fp16, pulp_im2col_fp16, pulp_im2row_fp16, blocktransp_args_fp16,
           pulp_blocktransp_fp16)

const struct ptl_op ptl_ops_conv2d[] = {
    {"conv2d_fp32", run_conv2d_fp32},
    {"conv2d_fp16", run_conv2d_fp16},
    {"im2col_fp32", run_im2col_fp32},
    {"im2col_fp16", run_im2col_fp16},
    {"im2row_fp32", run_im2row_fp32},
    {"im2row_fp16", run_im2row_fp16},
    {"blocktransp_fp32", run_blocktransp_fp32},
    {"blocktransp_fp16", run_blocktransp_fp16},
    {0, 0},
};
