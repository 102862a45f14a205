/*
 * layer_tiles.h: the pointwise convolution and the linear layer as calls on
 * tensors in place (pw_prepare/pw_run) and as whole layers cut into tiles
 * (struct pw_layer, struct linear_layer: each tile's copies and its call on
 * near buffers, for tiled_layer.h). Shared by their own runner ops
 * (ops_conv_pw.c, ops_linalg.c) and the training step that chains them
 * (ops_train_ds_cnn.c); static inline, so each runner unit compiles its
 * own copy for its dtype (ptl_op_dtype.h must come first). It includes
 * pulp_train.h for its includers, which must not include it again: the
 * umbrella header of some published versions has no include guard, nor
 * have all the headers it includes (a second inclusion redefines struct
 * blob).
 */
#ifndef LAYER_TILES_H
#define LAYER_TILES_H

#include "ptl_op_dtype.h"
#include "pulp_train.h"
#include "tiled_layer.h"

/* ---- The pointwise (1x1) convolution ----------------------------------------------------
 * Tensors (CHW): x [Ci x H x W], W [Co x Ci], dy and y [Co x H x W]
 * (HWC: x [H x W x Ci], W [Ci x Co], dy and y [H x W x Co]). */

struct pw_shape {
    int Ci, Co, H, W, hwc, step;
};

/* Elements of transpose_buffer the step needs (the published contract,
 * shared/TRAINLIB_API.md): Ci*Co for IG in both layouts, Ci*H*W for WG in
 * HWC; FW and WG in CHW none; BW the larger of WG's and IG's. */
static inline uint32_t pw_transpose_count(const struct pw_shape *s, int step)
{
    if (step == PTL_STEP_BW) {
        const uint32_t wg = pw_transpose_count(s, PTL_STEP_WG), ig = pw_transpose_count(s, PTL_STEP_IG);
        return wg > ig ? wg : ig;
    }
    if (step == PTL_STEP_IG)
        return (uint32_t)(s->Ci * s->Co);
    if (step == PTL_STEP_WG && s->hwc)
        return (uint32_t)(s->Ci * s->H * s->W);
    return 0;
}

/* One call of a step on tensors already in place: its blobs and args
 * (pw_prepare), then the call (pw_run). The kernel index goes to all three
 * opt_matmul_type_* fields. */
struct pw_call {
    struct PTL_S(blob) input, coeff, output;
    struct PTL_S(PointWise_Conv_args) args;
    int step;
};

static inline void pw_prepare(struct pw_call *call, const struct pw_shape *s, PTL_T *x, PTL_T *w, PTL_T *dy, PTL_T *y,
                       PTL_T *dw, PTL_T *dx, PTL_T *transpose, int kernel)
{
    const int n_in = s->Ci * s->H * s->W, n_out = s->Co * s->H * s->W, n_w = s->Ci * s->Co;
    const int bw = s->step == PTL_STEP_BW;
    call->input = (struct PTL_S(blob)){.data = x, .diff = dx, .dim = n_in, .W = s->W, .H = s->H, .C = s->Ci};
    call->coeff = (struct PTL_S(blob)){.data = w, .diff = dw, .dim = n_w, .W = 1, .H = 1, .C = s->Ci};
    call->output = (struct PTL_S(blob)){.data = y, .diff = dy, .dim = n_out, .W = s->W, .H = s->H, .C = s->Co};
    call->args = (struct PTL_S(PointWise_Conv_args)){
        .input = &call->input,
        .coeff = &call->coeff,
        .output = &call->output,
        .transpose_buffer = transpose,
        .skip_wg_grad = !(s->step == PTL_STEP_WG || bw),
        .skip_in_grad = !(s->step == PTL_STEP_IG || bw),
        .opt_matmul_type_fw = kernel,
        .opt_matmul_type_wg = kernel,
        .opt_matmul_type_ig = kernel,
        .HWC = s->hwc,
    };
    call->step = s->step;
}

static inline void pw_run(struct pw_call *call)
{
    if (call->step == PTL_STEP_FW)
        PTL_F(pulp_conv_pw_, _fw_cl)(&call->args);
    else if (call->step == PTL_STEP_BW)
        PTL_F(pulp_conv_pw_, _bw_cl)(&call->args);
    else if (call->step == PTL_STEP_WG)
        PTL_F(pulp_conv_pw_, _bw_param_grads_cl)(&call->args);
    else
        PTL_F(pulp_conv_pw_, _bw_input_grads_cl)(&call->args);
}

struct pw_layer {
    struct pw_shape s;
    int tco, tci, th, kernel;
    PTL_T *x, *w, *dy, *y, *dw, *dx; /* in far memory */
    PTL_T *transpose;                /* near: the largest tile's */
};

static inline int pw_tile_count(const struct pw_layer *l)
{
    const struct pw_shape *s = &l->s;
    if (s->step == PTL_STEP_FW)
        return tiles_along(s->Co, l->tco) * tiles_along(s->H, l->th);
    if (s->step == PTL_STEP_WG)
        return tiles_along(s->Co, l->tco) * tiles_along(s->Ci, l->tci);
    return tiles_along(s->Ci, l->tci) * tiles_along(s->H, l->th);
}

/* Tile t's call shape and copies: in[0], in[1] and out[0] are FW: W rows,
 * x rows -> y; WG: dy, x -> dW; IG: W columns, dy rows -> dx. */
static inline void pw_tile(const struct pw_layer *l, int t, struct pw_shape *call, struct tiled_tile *tile)
{
    const struct pw_shape *s = &l->s;
    const int hw = s->H * s->W, step = s->step;
    const int a_tile = step == PTL_STEP_IG ? l->tci : l->tco, b_tile = step == PTL_STEP_WG ? l->tci : l->th;
    const int a_length = step == PTL_STEP_IG ? s->Ci : s->Co, b_length = step == PTL_STEP_WG ? s->Ci : s->H;
    const int per_row = tiles_along(b_length, b_tile);
    const int a0 = t / per_row * a_tile, b0 = t % per_row * b_tile;
    const int na = a_length - a0 < a_tile ? a_length - a0 : a_tile;
    const int nb = b_length - b0 < b_tile ? b_length - b0 : b_tile;
    if (step == PTL_STEP_FW) { /* a: Co, b: H rows */
        *call = (struct pw_shape){.Ci = s->Ci, .Co = na, .H = nb, .W = s->W, .step = step};
        tile->in[0] = tiled_block(l->w + a0 * s->Ci, na * s->Ci);
        tile->in[1] = tiled_rows(l->x + b0 * s->W, nb * s->W, s->Ci, hw);
        tile->out[0] = tiled_rows(l->y + a0 * hw + b0 * s->W, nb * s->W, na, hw);
    } else if (step == PTL_STEP_WG) { /* a: Co, b: Ci */
        *call = (struct pw_shape){.Ci = nb, .Co = na, .H = s->H, .W = s->W, .step = step};
        tile->in[0] = tiled_block(l->dy + a0 * hw, na * hw);
        tile->in[1] = tiled_block(l->x + b0 * hw, nb * hw);
        tile->out[0] = tiled_rows(l->dw + a0 * s->Ci + b0, nb, na, s->Ci);
    } else { /* IG, a: Ci, b: H rows */
        *call = (struct pw_shape){.Ci = na, .Co = s->Co, .H = nb, .W = s->W, .step = step};
        tile->in[0] = tiled_rows(l->w + a0, na, s->Co, s->Ci);
        tile->in[1] = tiled_rows(l->dy + b0 * s->W, nb * s->W, s->Co, hw);
        tile->out[0] = tiled_rows(l->dx + a0 * hw + b0 * s->W, nb * s->W, na, hw);
    }
}

static inline void pw_tile_at(const void *op, int t, struct tiled_tile *tile)
{
    struct pw_shape call;
    pw_tile(op, t, &call, tile);
}

static inline void pw_compute(const void *op, int t, void *const in[TILED_MAX_IN], void *const out[TILED_MAX_OUT])
{
    const struct pw_layer *l = op;
    struct pw_shape s;
    struct tiled_tile unused = {0};
    pw_tile(l, t, &s, &unused);
    struct pw_call call;
    if (s.step == PTL_STEP_FW)
        pw_prepare(&call, &s, in[1], in[0], NULL, out[0], NULL, NULL, l->transpose, l->kernel);
    else if (s.step == PTL_STEP_WG)
        pw_prepare(&call, &s, in[1], NULL, in[0], NULL, out[0], NULL, l->transpose, l->kernel);
    else
        pw_prepare(&call, &s, NULL, in[0], in[1], NULL, NULL, out[0], l->transpose, l->kernel);
    pw_run(&call);
}

/* ---- The linear layer: y [out] = W [out x in] x [in] (+ b [out]) ---------------------------------- */

/* The step's call: FW, WG (bw_param_grads) or IG (bw_input_grads). */
static inline void linear_call(struct PTL_S(Linear_args) *args, int step)
{
    if (step == PTL_STEP_FW)
        PTL_F(pulp_linear_, _fw_cl)(args);
    else if (step == PTL_STEP_WG)
        PTL_F(pulp_linear_, _bw_param_grads_cl)(args);
    else
        PTL_F(pulp_linear_, _bw_input_grads_cl)(args);
}

struct linear_layer {
    int in, out, bias, step, tout, tinp, kernel;
    PTL_T *x, *w, *b, *dy, *y, *dw, *db, *dx; /* in far memory */
};

/* Tile t: its output block [o0, o0 + no) x [i0, i0 + ni) (FW and IG cut one axis) and its copies:
 * FW in W rows, x, b -> y; WG dy, x -> dW, db; IG W columns, dy -> dx. */
static inline void linear_tile(const struct linear_layer *l, int t, int *o0, int *no, int *i0, int *ni,
                        struct tiled_tile *tile)
{
    const int per_row = l->step == PTL_STEP_WG ? tiles_along(l->in, l->tinp) : 1;
    const int a = t / per_row, b = t % per_row;
    *o0 = l->step == PTL_STEP_IG ? 0 : a * l->tout;
    *i0 = l->step == PTL_STEP_IG ? a * l->tinp : l->step == PTL_STEP_WG ? b * l->tinp : 0;
    *no = l->step == PTL_STEP_IG ? l->out : (l->out - *o0 < l->tout ? l->out - *o0 : l->tout);
    *ni = l->step == PTL_STEP_FW ? l->in : (l->in - *i0 < l->tinp ? l->in - *i0 : l->tinp);
    if (l->step == PTL_STEP_FW) {
        tile->in[0] = tiled_block(l->w + *o0 * l->in, *no * l->in);
        tile->in[1] = tiled_block(l->x, l->in);
        tile->in[2] = tiled_rows(l->bias ? l->b + *o0 : NULL, *no, l->bias, 0);   /* no bias: b is NULL */
        tile->out[0] = tiled_block(l->y + *o0, *no);
    } else if (l->step == PTL_STEP_WG) {
        tile->in[0] = tiled_block(l->dy + *o0, *no);
        tile->in[1] = tiled_block(l->x + *i0, *ni);
        tile->out[0] = tiled_rows(l->dw + *o0 * l->in + *i0, *ni, *no, l->in);
        tile->out[1] = tiled_rows(l->bias ? l->db + *o0 : NULL, *no, l->bias && *i0 == 0, 0);
    } else {
        tile->in[0] = tiled_rows(l->w + *i0, *ni, l->out, l->in);
        tile->in[1] = tiled_block(l->dy, l->out);
        tile->out[0] = tiled_block(l->dx + *i0, *ni);
    }
}

static inline void linear_tile_at(const void *op, int t, struct tiled_tile *tile)
{
    int o0, no, i0, ni;
    linear_tile(op, t, &o0, &no, &i0, &ni, tile);
}

static inline void linear_compute(const void *op, int t, void *const in[TILED_MAX_IN], void *const out[TILED_MAX_OUT])
{
    const struct linear_layer *l = op;
    int o0, no, i0, ni;
    struct tiled_tile copies = {0};
    linear_tile(l, t, &o0, &no, &i0, &ni, &copies);
    const int fw = l->step == PTL_STEP_FW, wg = l->step == PTL_STEP_WG;
    const int bias = l->bias && (fw || (wg && i0 == 0));
    PTL_T *x = fw ? in[1] : wg ? in[1] : NULL, *w = wg ? NULL : in[0], *dy = fw ? NULL : wg ? in[0] : in[1];
    struct PTL_S(blob) input = {.data = x, .diff = l->step == PTL_STEP_IG ? out[0] : NULL, .dim = ni,
                                .W = 1, .H = 1, .C = ni};
    struct PTL_S(blob) coeff = {.data = w, .diff = wg ? out[0] : NULL, .dim = ni * no, .W = ni, .H = no, .C = 1};
    struct PTL_S(blob) bias_blob = {.data = fw ? in[2] : NULL, .diff = wg ? out[1] : NULL, .dim = no,
                                    .W = 1, .H = 1, .C = no};
    struct PTL_S(blob) output = {.data = fw ? out[0] : NULL, .diff = dy, .dim = no, .W = 1, .H = 1, .C = no};
    struct PTL_S(Linear_args) args = {
        .input = &input, .coeff = &coeff, .bias = &bias_blob, .output = &output,
        .skip_wg_grad = !wg, .skip_in_grad = l->step != PTL_STEP_IG,
        .opt_matmul_type_fw = l->kernel, .opt_matmul_type_wg = l->kernel, .opt_matmul_type_ig = l->kernel,
        .use_biases = bias,
    };
    linear_call(&args, l->step);
}

static inline int linear_tile_count(const struct linear_layer *l)
{
    if (l->step == PTL_STEP_FW)
        return tiles_along(l->out, l->tout);
    if (l->step == PTL_STEP_WG)
        return tiles_along(l->out, l->tout) * tiles_along(l->in, l->tinp);
    return tiles_along(l->in, l->tinp);
}

#endif /* LAYER_TILES_H */
