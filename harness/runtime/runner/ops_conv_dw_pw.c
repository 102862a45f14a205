/*
 * Operations of the pointwise, depthwise and transposed-convolution family.
 *
 * Each op reads the geometry from its params, copies the inputs, allocates
 * guarded outputs and the scratch buffers (transpose, im2col, block
 * transpose) exactly as large as the primitive's header documents, runs one
 * step between ptl_measure_begin/end, emits that step's outputs in a fixed
 * order and checks the scratch guards. Every variant sets all three
 * opt_matmul_type_* fields to its kernel index.
 *
 * The FP32 and FP16 versions differ only in types and names, so both are
 * stamped out from one body by CONV_DW_PW_OPS(...).
 */
#include <stdlib.h>
#include <string.h>

#include "pmsis.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

_Static_assert(sizeof(fp16) == 2, "fp16 must be a 16-bit type");

/* The step param of every op. */
enum { OP_STEP_FW = 0, OP_STEP_WG = 1, OP_STEP_IG = 2 };

/* ---- the buffers of one variant ----------------------------------------------
 * Inputs are heap copies of the payload tensors, taken in order; outputs are
 * emitted in the order they were added; scratch buffers are guarded like
 * outputs but only checked. */

#define FRAME_MAX 4

struct frame {
    const struct ptl_case *c;
    uint32_t vi, dtype;
    int status; /* first failure while setting up */
    int n_in, n_out, n_scratch;
    void *in[FRAME_MAX];
    void *out[FRAME_MAX];
    uint32_t out_count[FRAME_MAX];
    void *scratch[FRAME_MAX];
    uint32_t scratch_count[FRAME_MAX];
};

static void frame_init(struct frame *f, const struct ptl_case *c, uint32_t vi, uint32_t dtype)
{
    memset(f, 0, sizeof *f);
    f->c = c;
    f->vi = vi;
    f->dtype = dtype;
}

static void frame_fail(struct frame *f, int status, const char *why)
{
    if (f->status)
        return;
    f->status = status;
    if (why)
        ptl_emit_error(f->vi, status, why);
}

/* The next input tensor, which must hold `count` elements. */
static void *frame_input(struct frame *f, int count)
{
    void *p = ptl_input_copy(f->c, (uint32_t)f->n_in, f->dtype, (uint32_t)count, f->vi);
    f->in[f->n_in++] = p;
    if (!p)
        frame_fail(f, PTL_ERR_BAD_CASE, NULL); /* ptl_input_copy has said why */
    return p;
}

static void *frame_guarded(struct frame *f, void *p, int count, void **slot, uint32_t *count_slot)
{
    *slot = p;
    *count_slot = (uint32_t)count;
    if (!p)
        frame_fail(f, PTL_ERR_NO_MEMORY, "out of memory allocating an output or scratch buffer");
    return p;
}

/* The next output tensor. */
static void *frame_output(struct frame *f, int count)
{
    f->n_out++;
    return frame_guarded(f, ptl_output_alloc(f->dtype, (uint32_t)count), count, &f->out[f->n_out - 1],
                         &f->out_count[f->n_out - 1]);
}

/* A scratch buffer of `count` elements; NULL (not allocated) when count is 0. */
static void *frame_scratch(struct frame *f, int count)
{
    if (count <= 0)
        return NULL;
    f->n_scratch++;
    return frame_guarded(f, ptl_scratch_alloc(f->dtype, (uint32_t)count), count, &f->scratch[f->n_scratch - 1],
                         &f->scratch_count[f->n_scratch - 1]);
}

/* Frees everything; emits the outputs when the primitive ran. Returns the
 * variant's status. */
static int frame_finish(struct frame *f, int ran)
{
    int status = f->status;
    for (int i = 0; i < f->n_in; i++)
        free(f->in[i]);
    for (int i = 0; i < f->n_out; i++) {
        if (!f->out[i])
            continue;
        int s = ran ? ptl_output_emit(f->vi, (uint32_t)i, f->dtype, f->out[i], f->out_count[i])
                    : ptl_scratch_release(f->vi, f->dtype, f->out[i], f->out_count[i]);
        status = status ? status : s;
    }
    for (int i = 0; i < f->n_scratch; i++) {
        int s = ptl_scratch_release(f->vi, f->dtype, f->scratch[i], f->scratch_count[i]);
        status = status ? status : s;
    }
    return status;
}

/* ---- geometry from the params ------------------------------------------------ */

static int all_positive(const int32_t *p, int n)
{
    for (int i = 0; i < n; i++)
        if (p[i] < 1)
            return 0;
    return 1;
}

/* Pointwise params: Ci, Co, H, W, HWC, step. */
struct pw_case {
    int Ci, Co, H, W, HWC, step;
    int transpose_count; /* elements of transpose_buffer (pulp_conv_pw_fp32.h) */
};

static const char *pw_case_from(const struct ptl_case *c, struct pw_case *k)
{
    const int32_t *p = c->params;
    k->Ci = p[0], k->Co = p[1], k->H = p[2], k->W = p[3], k->HWC = p[4], k->step = p[5];
    if (!all_positive(p, 4) || k->step < OP_STEP_FW || k->step > OP_STEP_IG)
        return "conv_pw: Ci, Co, H, W must be >= 1 and step 0, 1 or 2";
    k->transpose_count = k->step == OP_STEP_IG && !k->HWC   ? k->Ci * k->Co
                         : k->step == OP_STEP_WG && k->HWC ? k->Co * k->H * k->W
                                                           : 0;
    return NULL;
}

/* Depthwise params: C, H, W, Hk, Wk, stride_h, stride_w, Lpad, Rpad, Upad,
 * Dpad, HWC, step. */
struct dw_case {
    int C, H, W, Hk, Wk, sh, sw, L, R, U, D, HWC, step;
    int Ho, Wo;
};

static const char *dw_case_from(const struct ptl_case *c, struct dw_case *k)
{
    const int32_t *p = c->params;
    k->C = p[0], k->H = p[1], k->W = p[2], k->Hk = p[3], k->Wk = p[4], k->sh = p[5], k->sw = p[6];
    k->L = p[7], k->R = p[8], k->U = p[9], k->D = p[10], k->HWC = p[11], k->step = p[12];
    if (!all_positive(p, 7) || k->L < 0 || k->R < 0 || k->U < 0 || k->D < 0 ||
        k->step < OP_STEP_FW || k->step > OP_STEP_IG)
        return "conv_dw: sizes and strides must be >= 1, pads >= 0, step 0, 1 or 2";
    if (k->H + k->U + k->D < k->Hk || k->W + k->L + k->R < k->Wk)
        return "conv_dw: the kernel is larger than the padded input";
    k->Ho = (k->H + k->U + k->D - k->Hk) / k->sh + 1;
    k->Wo = (k->W + k->L + k->R - k->Wk) / k->sw + 1;
    return NULL;
}

/* Transposed conv params: Ci, Co, H, W, Hk, Wk, stride_h, stride_w, inLpad,
 * inRpad, inUpad, inDpad, HWC, use_biases, use_im2col, step. */
struct tc_case {
    int Ci, Co, H, W, Hk, Wk, sh, sw, L, R, U, D, HWC, bias, im2col, step;
    int Ho, Wo;
    int i2c_count, bt_count; /* buffer elements (pulp_transp_conv2d_fp32.h) */
};

static const char *tc_case_from(const struct ptl_case *c, struct tc_case *k)
{
    const int32_t *p = c->params;
    k->Ci = p[0], k->Co = p[1], k->H = p[2], k->W = p[3], k->Hk = p[4], k->Wk = p[5];
    k->sh = p[6], k->sw = p[7], k->L = p[8], k->R = p[9], k->U = p[10], k->D = p[11];
    k->HWC = p[12], k->bias = p[13], k->im2col = p[14], k->step = p[15];
    k->Ho = (k->H - 1) * k->sh + k->Hk - k->U - k->D;
    k->Wo = (k->W - 1) * k->sw + k->Wk - k->L - k->R;
    if (!all_positive(p, 8) || k->step < OP_STEP_FW || k->step > OP_STEP_IG)
        return "transp_conv2d: sizes and strides must be >= 1, step 0, 1 or 2";
    if (k->Ho < 1 || k->Wo < 1)
        return "transp_conv2d: the pads crop the whole output";
    const int taps = k->Hk * k->Wk;
    k->i2c_count = !k->im2col              ? 0
                   : k->step == OP_STEP_FW ? k->Ci * taps * k->Ho * k->Wo
                                           : k->Co * taps * k->H * k->W;
    k->bt_count = !k->im2col                          ? 0
                  : k->step == OP_STEP_FW && !k->HWC ? k->Ci * k->Co * taps
                  : k->step == OP_STEP_WG && k->HWC  ? k->Ci * k->H * k->W
                                                     : 0;
    return NULL;
}

static int bad_params(uint32_t vi, const char *why)
{
    ptl_emit_error(vi, PTL_ERR_BAD_CASE, why);
    return PTL_ERR_BAD_CASE;
}

/* Picks the primitive of a step. */
#define STEP_FN(step, FW, WG, IG) ((step) == OP_STEP_FW ? FW : (step) == OP_STEP_WG ? WG : IG)

#define CONV_DW_PW_OPS(SUFFIX, T, DTYPE, BLOB, PW_ARGS, PW, DW_ARGS, DW, TC_ARGS, TC)                  \
    /* tensors: x, W [Co x Ci], dy. out: FW y; WG dW; IG dx (layouts as the HWC param says). */     \
    static int run_conv_pw_##SUFFIX(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)      \
    {                                                                                                \
        struct pw_case k;                                                                            \
        if (ptl_expect_params(c, 6, vi))                                                             \
            return PTL_ERR_BAD_CASE;                                                                 \
        const char *why = pw_case_from(c, &k);                                                       \
        if (why)                                                                                     \
            return bad_params(vi, why);                                                              \
        const int n_in = k.Ci * k.H * k.W, n_out = k.Co * k.H * k.W, n_w = k.Co * k.Ci;              \
        struct frame f;                                                                              \
        frame_init(&f, c, vi, DTYPE);                                                                \
        T *x = frame_input(&f, n_in), *w = frame_input(&f, n_w), *dy = frame_input(&f, n_out);       \
        T *y = k.step == OP_STEP_FW ? frame_output(&f, n_out) : NULL;                                \
        T *dw = k.step == OP_STEP_WG ? frame_output(&f, n_w) : NULL;                                 \
        T *dx = k.step == OP_STEP_IG ? frame_output(&f, n_in) : NULL;                                \
        T *transpose = frame_scratch(&f, k.transpose_count);                                         \
        if (f.status)                                                                                \
            return frame_finish(&f, 0);                                                              \
        struct BLOB input = {x, dx, n_in, k.W, k.H, k.Ci};                                           \
        struct BLOB coeff = {w, dw, n_w, 1, 1, k.Ci};                                                \
        struct BLOB output = {y, dy, n_out, k.W, k.H, k.Co};                                         \
        struct PW_ARGS args = {                                                                      \
            .input = &input, .coeff = &coeff, .output = &output, .transpose_buffer = transpose,      \
            .skip_wg_grad = k.step != OP_STEP_WG, .skip_in_grad = k.step != OP_STEP_IG,              \
            .opt_matmul_type_fw = v.kernel, .opt_matmul_type_wg = v.kernel,                          \
            .opt_matmul_type_ig = v.kernel, .HWC = k.HWC,                                            \
        };                                                                                           \
        ptl_measure_begin(vi);                                                                       \
        STEP_FN(k.step, PW##_fw_cl, PW##_bw_param_grads_cl, PW##_bw_input_grads_cl)(&args);          \
        ptl_measure_end(vi);                                                                         \
        return frame_finish(&f, 1);                                                                  \
    }                                                                                                \
                                                                                                     \
    /* tensors: x, W [C x Hk x Wk or Hk x Wk x C], dy. out: FW y; WG dW; IG dx. */                   \
    static int run_conv_dw_##SUFFIX(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)      \
    {                                                                                                \
        (void)v;                                                                                     \
        struct dw_case k;                                                                            \
        if (ptl_expect_params(c, 13, vi))                                                            \
            return PTL_ERR_BAD_CASE;                                                                 \
        const char *why = dw_case_from(c, &k);                                                       \
        if (why)                                                                                     \
            return bad_params(vi, why);                                                              \
        const int n_in = k.C * k.H * k.W, n_out = k.C * k.Ho * k.Wo, n_w = k.C * k.Hk * k.Wk;        \
        struct frame f;                                                                              \
        frame_init(&f, c, vi, DTYPE);                                                                \
        T *x = frame_input(&f, n_in), *w = frame_input(&f, n_w), *dy = frame_input(&f, n_out);       \
        T *y = k.step == OP_STEP_FW ? frame_output(&f, n_out) : NULL;                                \
        T *dw = k.step == OP_STEP_WG ? frame_output(&f, n_w) : NULL;                                 \
        T *dx = k.step == OP_STEP_IG ? frame_output(&f, n_in) : NULL;                                \
        if (f.status)                                                                                \
            return frame_finish(&f, 0);                                                              \
        struct BLOB input = {x, dx, n_in, k.W, k.H, k.C};                                            \
        struct BLOB coeff = {w, dw, n_w, k.Wk, k.Hk, k.C};                                           \
        struct BLOB output = {y, dy, n_out, k.Wo, k.Ho, k.C};                                        \
        struct DW_ARGS args = {                                                                      \
            .input = &input, .coeff = &coeff, .output = &output,                                     \
            .stride_h = k.sh, .stride_w = k.sw, .Lpad = k.L, .Rpad = k.R, .Upad = k.U, .Dpad = k.D,  \
            .skip_wg_grad = k.step != OP_STEP_WG, .skip_in_grad = k.step != OP_STEP_IG,              \
            .HWC = k.HWC,                                                                            \
        };                                                                                           \
        ptl_measure_begin(vi);                                                                       \
        STEP_FN(k.step, DW##_fw_cl, DW##_bw_param_grads_cl, DW##_bw_input_grads_cl)(&args);          \
        ptl_measure_end(vi);                                                                         \
        return frame_finish(&f, 1);                                                                  \
    }                                                                                                \
                                                                                                     \
    /* tensors: x, W [Ci x Co x Hk x Wk or Ci x Hk x Wk x Co], b [Co], dy.                           \
     * out: FW y; WG dW (+ db with use_biases); IG dx. */                                            \
    static int run_transp_conv2d_##SUFFIX(const struct ptl_case *c, struct ptl_variant v,           \
                                          uint32_t vi)                                               \
    {                                                                                                \
        struct tc_case k;                                                                            \
        if (ptl_expect_params(c, 16, vi))                                                            \
            return PTL_ERR_BAD_CASE;                                                                 \
        const char *why = tc_case_from(c, &k);                                                       \
        if (why)                                                                                     \
            return bad_params(vi, why);                                                              \
        const int n_in = k.Ci * k.H * k.W, n_out = k.Co * k.Ho * k.Wo;                               \
        const int n_w = k.Ci * k.Co * k.Hk * k.Wk;                                                   \
        struct frame f;                                                                              \
        frame_init(&f, c, vi, DTYPE);                                                                \
        T *x = frame_input(&f, n_in), *w = frame_input(&f, n_w), *b = frame_input(&f, k.Co);         \
        T *dy = frame_input(&f, n_out);                                                              \
        T *y = k.step == OP_STEP_FW ? frame_output(&f, n_out) : NULL;                                \
        T *dw = k.step == OP_STEP_WG ? frame_output(&f, n_w) : NULL;                                 \
        T *db = k.step == OP_STEP_WG && k.bias ? frame_output(&f, k.Co) : NULL;                      \
        T *dx = k.step == OP_STEP_IG ? frame_output(&f, n_in) : NULL;                                \
        T *i2c = frame_scratch(&f, k.i2c_count), *bt = frame_scratch(&f, k.bt_count);                \
        if (f.status)                                                                                \
            return frame_finish(&f, 0);                                                              \
        struct BLOB input = {x, dx, n_in, k.W, k.H, k.Ci};                                           \
        struct BLOB coeff = {w, dw, n_w, k.Wk, k.Hk, k.Ci};                                          \
        struct BLOB bias = {b, db, k.Co, 1, 1, k.Co};                                                \
        struct BLOB output = {y, dy, n_out, k.Wo, k.Ho, k.Co};                                       \
        struct TC_ARGS args = {                                                                      \
            .input = &input, .coeff = &coeff, .bias = &bias, .output = &output,                      \
            .inLpad = k.L, .inRpad = k.R, .inUpad = k.U, .inDpad = k.D,                              \
            .stride_h = k.sh, .stride_w = k.sw, .i2c_buffer = i2c, .bt_buffer = bt,                  \
            .skip_wg_grad = k.step != OP_STEP_WG, .skip_in_grad = k.step != OP_STEP_IG,              \
            .HWC = k.HWC, .opt_matmul_type_fw = v.kernel, .opt_matmul_type_wg = v.kernel,            \
            .opt_matmul_type_ig = v.kernel, .USE_BIASES = k.bias, .USE_IM2COL = k.im2col,            \
        };                                                                                           \
        ptl_measure_begin(vi);                                                                       \
        STEP_FN(k.step, TC##_fw_cl, TC##_bw_param_grads_cl, TC##_bw_input_grads_cl)(&args);          \
        ptl_measure_end(vi);                                                                         \
        return frame_finish(&f, 1);                                                                  \
    }

CONV_DW_PW_OPS(fp32, float, PTL_DTYPE_F32, blob, PointWise_Conv_args, pulp_conv_pw_fp32,
               DepthWise_Conv_args, pulp_conv_dw_fp32, Transp_Conv2D_args, pulp_transp_conv2d_fp32)
CONV_DW_PW_OPS(fp16, fp16, PTL_DTYPE_F16, blob_fp16, PointWise_Conv_args_fp16, pulp_conv_pw_fp16,
               DepthWise_Conv_args_fp16, pulp_conv_dw_fp16, Transp_Conv2D_args_fp16,
               pulp_transp_conv2d_fp16)

const struct ptl_op ptl_ops_conv_dw_pw[] = {
    {"conv_pw_fp32", run_conv_pw_fp32},
    {"conv_pw_fp16", run_conv_pw_fp16},
    {"conv_dw_fp32", run_conv_dw_fp32},
    {"conv_dw_fp16", run_conv_dw_fp16},
    {"transp_conv2d_fp32", run_transp_conv2d_fp32},
    {"transp_conv2d_fp16", run_transp_conv2d_fp16},
    {0, 0},
};
