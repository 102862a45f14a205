/*
 * Runner op of a whole training step of DS-CNN (networks/ds_cnn.toml) run as
 * a PULP deployment runs it: every tensor in far memory (L2 on GVSOC), every
 * pass of the step tiled, its tiles moved into near memory (L1) by the DMA
 * and double-buffered with the compute (tiled_layer.h).
 *
 *   x [1 x H x W] -> conv2d Hk x Wk, stride sh x sw, pads U D L R, C channels -> ReLU
 *   -> 4 x (depthwise 3x3, pad 1 -> ReLU -> pointwise C -> C -> ReLU)
 *   -> average pool over the whole map -> linear C -> K with a bias -> CrossEntropy;
 *   backward in reverse (the first conv has no input gradient), SGD on every parameter.
 *
 * Params H W C Hk Wk sh sw U D L R K S N lr_micro near_bytes. Inputs:
 * x [S x H x W], t [S x K], params [P] (the conv [C x Hk x Wk], per block the
 * depthwise [C x 9] and the pointwise [C x C], then the linear weights
 * [K x C] and bias [K], concatenated), config [passes x 3]: per pass that goes
 * through a matmul kernel (ds_cnn_passes.def), its kernel index and its two
 * tiles, small integers carried as FP32 (exact). Out, one row per step:
 * loss [N], grads [N x P] (in params' layout), weights [N x P] (after the
 * update); step k reads its weights from row k-1, step 0 from row 0, which
 * starts as params and is updated in place (so that the run keeps no other
 * copy of them: at the DS-CNN shape L2 holds little more than this). And
 * the last step's intermediates, which are the step's own working tensors:
 * acts [9 x C*Ho*Wo] and grad_maps [9 x C*Ho*Wo] (struct step_tensors) and
 * heads [C + K + K + C] (the pooled p, the logits z, dz and dp), so that each
 * pass is judged on its own inputs.
 *
 * Every pass carves its two sets of tile buffers from one near arena of
 * near_bytes; a tile 0 in config, and every tile of the passes that go
 * through no matmul (depthwise, ReLU backward, pooling, the loss, SGD), is
 * the largest that fits: the whole length, halved (the larger of the two
 * first) until the buffers fit. The ReLU forward runs on each producing
 * tile before it leaves near memory; the backward masks by the stored
 * activation (> 0). The measured region is the N steps.
 */
#include <string.h>

#include "dw_fields.h"
#include "layer_tiles.h"
#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "tiled_layer.h"

/* FP32 only: the FP16 compilation of this unit has no ops. */
#if PTL_OP_FP == 32

#define DS_CNN_PASS(layer, step, a, b) PASS_##layer##_##step,
enum {
#include "ds_cnn_passes.def"
    PASSES
};
#undef DS_CNN_PASS

#define BLOCKS 4
#define DW_TAPS 9

struct net {
    int H, W, C, Hk, Wk, sh, sw, U, D, L, R, K, S, N, lr_micro, near_bytes;
    int Ho, Wo, cores;
    uint32_t n_x, n_o, n_a, n_w1, n_dw, n_pw, P;
    int config[PASSES][3]; /* kernel, tile a, tile b */
    void *arena;           /* near_bytes of near memory */
};

static uint32_t block_offset(const struct net *n, int b) { return n->n_w1 + (uint32_t)b * (n->n_dw + n->n_pw); }
static uint32_t fc_offset(const struct net *n) { return block_offset(n, BLOCKS); }

static int min_int(int a, int b) { return a < b ? a : b; }

/* ---- one pass: its tiles fitted to the arena, then run -------------------------------- */

struct pass {
    const void *op;
    void (*tile_at)(const void *op, int t, struct tiled_tile *tile);
    void (*compute)(const void *op, int t, void *const in[TILED_MAX_IN], void *const out[TILED_MAX_OUT]);
    int (*count)(const void *op);
    uint32_t (*work)(const void *op); /* near work elements; NULL: none */
    void **work_buffer;               /* where the op keeps it */
    int *tile[2];                     /* the op's tile fields (NULL: no such axis) */
    int length[2];
    int fixed[2]; /* 0: the largest that fits */
};

static int run_pass(const struct net *n, struct pass *p)
{
    for (int i = 0; i < 2; i++)
        if (p->tile[i])
            *p->tile[i] = p->fixed[i] ? p->fixed[i] : p->length[i];
    for (;;) {
        const struct tiled_layer layer = {.tiles = p->count(p->op), .tile_at = p->tile_at, .compute = p->compute,
                                           .op = p->op};
        struct tiled_buffers near;
        void *work = NULL;
        if (tiled_layer_carve(&layer, sizeof(float), p->work ? p->work(p->op) : 0, n->arena,
                              (uint32_t)n->near_bytes, &near, &work) == 0) {
            if (p->work_buffer)
                *p->work_buffer = work;
            tiled_layer_run(&layer, &near, sizeof(float));
            return PTL_OK;
        }
        int shrink = -1;
        for (int i = 0; i < 2; i++)
            if (p->tile[i] && !p->fixed[i] && *p->tile[i] > 1 && (shrink < 0 || *p->tile[i] > *p->tile[shrink]))
                shrink = i;
        if (shrink < 0)
            return PTL_ERR_NO_MEMORY;
        *p->tile[shrink] = (*p->tile[shrink] + 1) / 2;
    }
}

static void relu_in_place(float *y, int count)
{
    struct blob b = {.data = y, .diff = NULL, .dim = count, .W = count, .H = 1, .C = 1};
    struct act_args relu = {.input = &b, .output = &b, .H = 1, .W = 1};
    pulp_relu_fp32_fw_cl(&relu);
}

/* ---- the first conv: FW and WG, tiles along Co, Ci = 1 ---------------------------------- */

struct conv1_op {
    const struct net *n;
    int step, kernel, tco;
    const float *x, *w, *dy; /* far */
    float *y, *dw;           /* far */
    void *i2c;               /* near */
};

static int conv1_count(const void *op)
{
    const struct conv1_op *c = op;
    return tiles_along(c->n->C, c->tco);
}

static void conv1_tile_at(const void *op, int t, struct tiled_tile *tile)
{
    const struct conv1_op *c = op;
    const struct net *n = c->n;
    const int c0 = t * c->tco, nc = min_int(c->tco, n->C - c0), taps = n->Hk * n->Wk, n_o = (int)n->n_o;
    tile->in[0] = tiled_block(c->x, (int)n->n_x);
    if (c->step == PTL_STEP_FW) {
        tile->in[1] = tiled_block(c->w + c0 * taps, nc * taps);
        tile->out[0] = tiled_block(c->y + c0 * n_o, nc * n_o);
    } else {
        tile->in[1] = tiled_block(c->dy + c0 * n_o, nc * n_o);
        tile->out[0] = tiled_block(c->dw + c0 * taps, nc * taps);
    }
}

static uint32_t conv1_work(const void *op)
{
    const struct conv1_op *c = op;
    return (uint32_t)(c->n->Hk * c->n->Wk) * c->n->n_o; /* the im2col of one input channel */
}

static void conv1_compute(const void *op, int t, void *const in[TILED_MAX_IN], void *const out[TILED_MAX_OUT])
{
    const struct conv1_op *c = op;
    const struct net *n = c->n;
    const int nc = min_int(c->tco, n->C - t * c->tco), taps = n->Hk * n->Wk, fw = c->step == PTL_STEP_FW;
    struct blob input = {.data = in[0], .diff = NULL, .dim = (int)n->n_x, .W = n->W, .H = n->H, .C = 1};
    struct blob coeff = {.data = fw ? in[1] : NULL, .diff = fw ? NULL : out[0], .dim = nc * taps, .W = n->Wk,
                         .H = n->Hk, .C = 1};
    struct blob output = {.data = fw ? out[0] : NULL, .diff = fw ? NULL : in[1], .dim = nc * (int)n->n_o,
                          .W = n->Wo, .H = n->Ho, .C = nc};
    struct blob no_bias = {.data = NULL, .diff = NULL, .dim = 0, .W = 0, .H = 0, .C = 0};
    struct Conv2D_args args = {
        .input = &input, .coeff = &coeff, .bias = &no_bias, .output = &output,
        .Lpad = n->L, .Rpad = n->R, .Upad = n->U, .Dpad = n->D, .stride_h = n->sh, .stride_w = n->sw,
        .i2c_buffer = c->i2c, .bt_buffer = NULL, .skip_wg_grad = fw, .skip_in_grad = 1, .HWC = 0,
        .opt_matmul_type_fw = c->kernel, .opt_matmul_type_wg = c->kernel, .opt_matmul_type_ig = c->kernel,
        .USE_BIASES = 0, .USE_IM2COL = 1, .USE_DMA_IM2COL = 0,
    };
    if (fw) {
        pulp_conv2d_fp32_fw_cl(&args);
        relu_in_place(out[0], output.dim);
    } else {
        pulp_conv2d_fp32_bw_param_grads_cl(&args);
    }
}

/* ---- the depthwise conv: FW, WG, IG, tiles along C ----------------------------------------- */

struct dw_op {
    const struct net *n;
    int step, tc;
    const float *x, *w, *dy; /* far */
    float *y, *dw, *dx;      /* far */
};

static int dw_count(const void *op)
{
    const struct dw_op *d = op;
    return tiles_along(d->n->C, d->tc);
}

/* FW x, W -> y; WG x, dy -> dW; IG W, dy -> dx (each one contiguous block of channels). */
static void dw_tile_at(const void *op, int t, struct tiled_tile *tile)
{
    const struct dw_op *d = op;
    const int c0 = t * d->tc, nc = min_int(d->tc, d->n->C - c0), n_o = (int)d->n->n_o;
    const struct tiled_copy w = tiled_block(d->w + c0 * DW_TAPS, nc * DW_TAPS);
    /* x and dy moved only in the steps that have them (FW has no dy: NULL, no offset to add) */
    tile->in[0] = d->step == PTL_STEP_IG ? w : tiled_block(d->x + c0 * n_o, nc * n_o);
    tile->in[1] = d->step == PTL_STEP_FW ? w : tiled_block(d->dy + c0 * n_o, nc * n_o);
    tile->out[0] = d->step == PTL_STEP_FW   ? tiled_block(d->y + c0 * n_o, nc * n_o)
                   : d->step == PTL_STEP_WG ? tiled_block(d->dw + c0 * DW_TAPS, nc * DW_TAPS)
                                           : tiled_block(d->dx + c0 * n_o, nc * n_o);
}

static void dw_compute(const void *op, int t, void *const in[TILED_MAX_IN], void *const out[TILED_MAX_OUT])
{
    const struct dw_op *d = op;
    const struct net *n = d->n;
    const int nc = min_int(d->tc, n->C - t * d->tc), n_o = (int)n->n_o, step = d->step;
    float *x = step == PTL_STEP_IG ? NULL : in[0], *w = step == PTL_STEP_FW ? in[1] : step == PTL_STEP_IG ? in[0] : NULL;
    float *dy = step == PTL_STEP_FW ? NULL : in[1];
    struct blob input = {.data = x, .diff = step == PTL_STEP_IG ? out[0] : NULL, .dim = nc * n_o, .W = n->Wo,
                         .H = n->Ho, .C = nc};
    struct blob coeff = {.data = w, .diff = step == PTL_STEP_WG ? out[0] : NULL, .dim = nc * DW_TAPS, .W = 3,
                         .H = 3, .C = nc};
    struct blob output = {.data = step == PTL_STEP_FW ? out[0] : NULL, .diff = dy, .dim = nc * n_o, .W = n->Wo,
                          .H = n->Ho, .C = nc};
    struct DepthWise_Conv_args args = {
        .input = &input, .coeff = &coeff, .output = &output,
#if DW_HAS_STRIDES /* stride 1, all the depthwise layer needs: none where the struct lacks them */
        .stride_h = 1, .stride_w = 1,
#endif
        .Lpad = 1, .Rpad = 1, .Upad = 1, .Dpad = 1,
        .skip_wg_grad = step != PTL_STEP_WG, .skip_in_grad = step != PTL_STEP_IG, .HWC = 0,
    };
    if (step == PTL_STEP_FW) {
        pulp_conv_dw_fp32_fw_cl(&args);
        relu_in_place(out[0], nc * n_o);
    } else if (step == PTL_STEP_WG) {
        pulp_conv_dw_fp32_bw_param_grads_cl(&args);
    } else {
        pulp_conv_dw_fp32_bw_input_grads_cl(&args);
    }
}

/* ---- the pointwise conv (layer_tiles.h), with the ReLU after FW --------------------------- */

static int pw_count(const void *op) { return pw_tile_count(op); }

static uint32_t pw_work(const void *op)
{
    const struct pw_layer *l = op;
    struct pw_shape largest;
    struct tiled_tile unused = {0};
    pw_tile(l, 0, &largest, &unused);
    return pw_transpose_count(&largest, l->s.step);
}

static void pw_relu_compute(const void *op, int t, void *const in[TILED_MAX_IN], void *const out[TILED_MAX_OUT])
{
    const struct pw_layer *l = op;
    pw_compute(op, t, in, out);
    if (l->s.step == PTL_STEP_FW) {
        struct pw_shape s;
        struct tiled_tile tile = {0};
        pw_tile(l, t, &s, &tile);
        relu_in_place(out[0], tile.out[0].row * tile.out[0].rows);
    }
}

/* ---- elementwise passes: the ReLU backward and SGD, tiles along the elements ---------- */

struct elementwise_op {
    const struct net *n;
    int sgd, length, tn;
    const float *a;     /* far: ReLU: the stored activation; SGD: the weights */
    float *out;         /* far: ReLU: the gradient, masked in place; SGD: the updated weights */
    const float *in;    /* far: ReLU: the gradient (== out); SGD: the weights' gradient */
};

static int elementwise_count(const void *op)
{
    const struct elementwise_op *e = op;
    return tiles_along(e->length, e->tn);
}

static void elementwise_tile_at(const void *op, int t, struct tiled_tile *tile)
{
    const struct elementwise_op *e = op;
    const int e0 = t * e->tn, count = min_int(e->tn, e->length - e0);
    tile->in[0] = tiled_block(e->a + e0, count);
    tile->in[1] = tiled_block(e->in + e0, count);
    tile->out[0] = tiled_block(e->out + e0, count);
}

static void elementwise_compute(const void *op, int t, void *const in[TILED_MAX_IN], void *const out[TILED_MAX_OUT])
{
    const struct elementwise_op *e = op;
    const int count = min_int(e->tn, e->length - t * e->tn);
    if (!e->sgd) {
        struct blob input = {.data = in[0], .diff = out[0], .dim = count, .W = count, .H = 1, .C = 1};
        struct blob output = {.data = NULL, .diff = in[1], .dim = count, .W = count, .H = 1, .C = 1};
        struct act_args relu = {.input = &input, .output = &output, .H = 1, .W = 1};
        pulp_relu_fp32_bw_cl(&relu);
        return;
    }
    memcpy(out[0], in[0], (size_t)count * sizeof(float));
    struct blob weights = {.data = out[0], .diff = in[1], .dim = count, .W = count, .H = 1, .C = 1};
    struct blob no_biases = {.data = NULL, .diff = NULL, .dim = 0, .W = 0, .H = 0, .C = 0};
    /* weight_decay_lambda (older versions of the struct lack it, ops_optim.c) is the initializer's 0. */
    struct optim_args sgd = {.weights = &weights, .biases = &no_biases,
                             .learning_rate = (float)e->n->lr_micro / 1000000.0f, .use_biases = 0};
    pi_cl_team_fork(e->n->cores, pulp_gradient_descent_fp32, &sgd);
}

/* ---- the average pool over the whole map: FW and BW, tiles along C -------------------- */

struct pool_op {
    const struct net *n;
    int fw, tc;
    const float *a, *dp; /* far */
    float *p, *da;       /* far */
};

static int pool_count(const void *op)
{
    const struct pool_op *p = op;
    return tiles_along(p->n->C, p->tc);
}

static void pool_tile_at(const void *op, int t, struct tiled_tile *tile)
{
    const struct pool_op *p = op;
    const int c0 = t * p->tc, nc = min_int(p->tc, p->n->C - c0), n_o = (int)p->n->n_o;
    if (p->fw) {
        tile->in[0] = tiled_block(p->a + c0 * n_o, nc * n_o);
        tile->out[0] = tiled_block(p->p + c0, nc);
    } else {
        tile->in[0] = tiled_block(p->dp + c0, nc);
        tile->out[0] = tiled_block(p->da + c0 * n_o, nc * n_o);
    }
}

static void pool_compute(const void *op, int t, void *const in[TILED_MAX_IN], void *const out[TILED_MAX_OUT])
{
    const struct pool_op *p = op;
    const struct net *n = p->n;
    const int nc = min_int(p->tc, n->C - t * p->tc);
    struct blob map = {.data = p->fw ? in[0] : NULL, .diff = p->fw ? NULL : out[0], .dim = nc * (int)n->n_o,
                       .W = n->Wo, .H = n->Ho, .C = nc};
    struct blob pooled = {.data = p->fw ? out[0] : NULL, .diff = p->fw ? NULL : in[0], .dim = nc, .W = 1, .H = 1,
                          .C = nc};
    struct pool_args args = {.input = &map, .output = &pooled, .Hker = n->Ho, .Wker = n->Wo, .Hstride = 1,
                             .Wstride = 1};
    pi_cl_team_fork(n->cores, p->fw ? pulp_avgpool_fp32_fw_cl : pulp_avgpool_fp32_bw_cl, &args);
}

/* ---- the loss: one tile, logits and target in, their gradient and the loss out ------- */

struct loss_op {
    const struct net *n;
    const float *z, *t; /* far */
    float *dz, *loss;   /* far */
};

static int loss_count(const void *op)
{
    (void)op;
    return 1;
}

static void loss_tile_at(const void *op, int t, struct tiled_tile *tile)
{
    const struct loss_op *l = op;
    (void)t;
    tile->in[0] = tiled_block(l->z, l->n->K);
    tile->in[1] = tiled_block(l->t, l->n->K);
    tile->out[0] = tiled_block(l->dz, l->n->K);
    tile->out[1] = tiled_block(l->loss, 1);
}

static void loss_compute(const void *op, int t, void *const in[TILED_MAX_IN], void *const out[TILED_MAX_OUT])
{
    const struct loss_op *l = op;
    (void)t;
    struct blob logits = {.data = in[0], .diff = out[0], .dim = l->n->K, .W = 1, .H = 1, .C = l->n->K};
    struct loss_args ce = {.output = &logits, .target = in[1], .wr_loss = out[1]};
    pulp_CrossEntropyLoss(&ce);
    pulp_CrossEntropyLoss_backward(&ce);
}

/* ---- the step ------------------------------------------------------------------------ */

/* The far tensors of one step. act: a0 (the conv's output), then per block
 * the depthwise's and the pointwise's, all after their ReLU. grad: the
 * gradient maps in the order the backward makes them, each after its ReLU
 * mask: the one entering the last pointwise, then per block from the last,
 * the one entering its depthwise and the one entering the layer before. */
struct step_tensors {
    const float *x, *t, *w;  /* this step's sample, label and weights */
    float *g, *w_out, *loss; /* this step's rows of the outputs */
    float *act[2 * BLOCKS + 1], *grad[2 * BLOCKS + 1], *p, *z, *dz, *dp;
};

static int pass_conv1(const struct net *n, const struct step_tensors *s, int step, const float *dy)
{
    const int *cfg = n->config[step == PTL_STEP_FW ? PASS_conv1_fw : PASS_conv1_wg];
    struct conv1_op op = {.n = n, .step = step, .kernel = cfg[0], .x = s->x, .w = s->w, .dy = dy,
                          .y = s->act[0], .dw = s->g};
    struct pass p = {.op = &op, .tile_at = conv1_tile_at, .compute = conv1_compute, .count = conv1_count,
                     .work = conv1_work, .work_buffer = &op.i2c, .tile = {&op.tco, NULL}, .length = {n->C, 0},
                     .fixed = {cfg[1], 0}};
    return run_pass(n, &p);
}

static int pass_dw(const struct net *n, const struct step_tensors *s, int b, int step, const float *dy, float *dx)
{
    const uint32_t o = block_offset(n, b);
    struct dw_op op = {.n = n, .step = step, .x = s->act[2 * b], .w = s->w + o, .dy = dy, .y = s->act[2 * b + 1],
                       .dw = s->g + o, .dx = dx};
    struct pass p = {.op = &op, .tile_at = dw_tile_at, .compute = dw_compute, .count = dw_count,
                     .tile = {&op.tc, NULL}, .length = {n->C, 0}};
    return run_pass(n, &p);
}

static int pass_pw(const struct net *n, const struct step_tensors *s, int b, int step, const float *dy, float *dx)
{
    const uint32_t o = block_offset(n, b) + n->n_dw;
    const int *cfg = n->config[PASS_pw1_fw + 3 * b + step];
    struct pw_layer op = {
        .s = {.Ci = n->C, .Co = n->C, .H = n->Ho, .W = n->Wo, .hwc = 0, .step = step},
        .tco = n->C, .tci = n->C, .th = n->Ho, .kernel = cfg[0],
        .x = s->act[2 * b + 1], .w = (float *)(s->w + o), .dy = (float *)dy, .y = s->act[2 * b + 2],
        .dw = s->g + o, .dx = dx, .transpose = NULL,
    };
    int *a = step == PTL_STEP_IG ? &op.tci : &op.tco, *bt = step == PTL_STEP_WG ? &op.tci : &op.th;
    struct pass p = {.op = &op, .tile_at = pw_tile_at, .compute = pw_relu_compute, .count = pw_count,
                     .work = pw_work, .work_buffer = (void **)&op.transpose, .tile = {a, bt},
                     .length = {n->C, step == PTL_STEP_WG ? n->C : n->Ho}, .fixed = {cfg[1], cfg[2]}};
    return run_pass(n, &p);
}

static int fc_count(const void *op) { return linear_tile_count(op); }

static int pass_fc(const struct net *n, const struct step_tensors *s, int step)
{
    const uint32_t o = fc_offset(n);
    const int *cfg = n->config[PASS_fc_fw + step];
    struct linear_layer op = {
        .in = n->C, .out = n->K, .bias = step != PTL_STEP_IG, .step = step, .tout = n->K, .tinp = n->C,
        .kernel = cfg[0], .x = s->p, .w = (float *)(s->w + o), .b = (float *)(s->w + o + n->K * n->C),
        .dy = s->dz, .y = s->z, .dw = s->g + o, .db = s->g + o + n->K * n->C, .dx = s->dp,
    };
    int *a = step == PTL_STEP_IG ? &op.tinp : &op.tout;
    struct pass p = {.op = &op, .tile_at = linear_tile_at, .compute = linear_compute, .count = fc_count,
                     .tile = {a, step == PTL_STEP_WG ? &op.tinp : NULL},
                     .length = {step == PTL_STEP_IG ? n->C : n->K, step == PTL_STEP_WG ? n->C : 0},
                     .fixed = {cfg[1], cfg[2]}};
    return run_pass(n, &p);
}

static int pass_elementwise(const struct net *n, int sgd, int length, const float *a, const float *in, float *out)
{
    struct elementwise_op op = {.n = n, .sgd = sgd, .length = length, .a = a, .in = in, .out = out};
    struct pass p = {.op = &op, .tile_at = elementwise_tile_at, .compute = elementwise_compute,
                     .count = elementwise_count, .tile = {&op.tn, NULL}, .length = {length, 0}};
    return run_pass(n, &p);
}

static int pass_pool(const struct net *n, const struct step_tensors *s, int fw)
{
    struct pool_op op = {.n = n, .fw = fw, .a = s->act[2 * BLOCKS], .dp = s->dp, .p = s->p, .da = s->grad[0]};
    struct pass p = {.op = &op, .tile_at = pool_tile_at, .compute = pool_compute, .count = pool_count,
                     .tile = {&op.tc, NULL}, .length = {n->C, 0}};
    return run_pass(n, &p);
}

static int pass_loss(const struct net *n, const struct step_tensors *s)
{
    struct loss_op op = {.n = n, .z = s->z, .t = s->t, .dz = s->dz, .loss = s->loss};
    struct pass p = {.op = &op, .tile_at = loss_tile_at, .compute = loss_compute, .count = loss_count};
    return run_pass(n, &p);
}

/* One training step; the first failure ends it. */
static int train_step(const struct net *n, const struct step_tensors *s)
{
    const int n_a = (int)n->n_a;
    int status = pass_conv1(n, s, PTL_STEP_FW, NULL);
    for (int b = 0; b < BLOCKS && !status; b++) {
        status = pass_dw(n, s, b, PTL_STEP_FW, NULL, NULL);
        status = status ? status : pass_pw(n, s, b, PTL_STEP_FW, NULL, NULL);
    }
    status = status ? status : pass_pool(n, s, 1);
    status = status ? status : pass_fc(n, s, PTL_STEP_FW);
    status = status ? status : pass_loss(n, s);
    status = status ? status : pass_fc(n, s, PTL_STEP_WG);
    status = status ? status : pass_fc(n, s, PTL_STEP_IG);
    status = status ? status : pass_pool(n, s, 0);
    status = status ? status : pass_elementwise(n, 0, n_a, s->act[2 * BLOCKS], s->grad[0], s->grad[0]);
    for (int b = BLOCKS - 1; b >= 0 && !status; b--) {
        float *in = s->grad[2 * (BLOCKS - 1 - b)], *mid = in + n_a, *next = mid + n_a;
        status = pass_pw(n, s, b, PTL_STEP_WG, in, NULL);
        status = status ? status : pass_pw(n, s, b, PTL_STEP_IG, in, mid);
        status = status ? status : pass_elementwise(n, 0, n_a, s->act[2 * b + 1], mid, mid);
        status = status ? status : pass_dw(n, s, b, PTL_STEP_WG, mid, NULL);
        status = status ? status : pass_dw(n, s, b, PTL_STEP_IG, mid, next);
        status = status ? status : pass_elementwise(n, 0, n_a, s->act[2 * b], next, next);
    }
    status = status ? status : pass_conv1(n, s, PTL_STEP_WG, s->grad[2 * BLOCKS]);
    return status ? status : pass_elementwise(n, 1, (int)n->P, s->w, s->g, s->w_out);
}

static int fp32_kernel_count(void)
{
    int count = 0;
#define PTL_KERNEL(table, index, name, origin) count += strcmp(#table, "fp32") == 0;
#include "ptl_kernels.def"
#undef PTL_KERNEL
    return count;
}

static int read_net(const struct ptl_case *c, uint32_t vi, struct net *n)
{
    *n = (struct net){
        .H = ptl_param(c, "H", vi), .W = ptl_param(c, "W", vi), .C = ptl_param(c, "C", vi),
        .Hk = ptl_param(c, "Hk", vi), .Wk = ptl_param(c, "Wk", vi), .sh = ptl_param(c, "sh", vi),
        .sw = ptl_param(c, "sw", vi), .U = ptl_param(c, "U", vi), .D = ptl_param(c, "D", vi),
        .L = ptl_param(c, "L", vi), .R = ptl_param(c, "R", vi), .K = ptl_param(c, "K", vi),
        .S = ptl_param(c, "S", vi), .N = ptl_param(c, "N", vi), .lr_micro = ptl_param(c, "lr_micro", vi),
        .near_bytes = ptl_param(c, "near_bytes", vi),
    };
    const int ok = n->H >= 1 && n->W >= 1 && n->C >= 1 && n->C <= 256 && n->Hk >= 1 && n->Wk >= 1 && n->sh >= 1 &&
                   n->sw >= 1 && n->U >= 0 && n->D >= 0 && n->L >= 0 && n->R >= 0 &&
                   n->H + n->U + n->D >= n->Hk && n->W + n->L + n->R >= n->Wk && n->H <= 256 && n->W <= 256 &&
                   n->K >= 2 && n->K <= 256 && n->S >= 1 && n->S <= 1000 && n->N >= 1 && n->N <= 1000 &&
                   n->lr_micro >= 0 && n->lr_micro <= 1000000 && n->near_bytes >= 1024;
    if (!ok) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "train_ds_cnn needs sizes and strides >= 1 (at most 256), pads >= 0, "
                                             "the padded input at least the kernel, 2 <= K <= 256, 1 <= S, N <= "
                                             "1000, 0 <= lr_micro <= 1000000, near_bytes >= 1024");
        return PTL_ERR_BAD_CASE;
    }
    n->Ho = (n->H + n->U + n->D - n->Hk) / n->sh + 1;
    n->Wo = (n->W + n->L + n->R - n->Wk) / n->sw + 1;
    n->n_x = (uint32_t)(n->H * n->W);
    n->n_o = (uint32_t)(n->Ho * n->Wo);
    n->n_a = (uint32_t)n->C * n->n_o;
    n->n_w1 = (uint32_t)(n->C * n->Hk * n->Wk);
    n->n_dw = (uint32_t)(n->C * DW_TAPS);
    n->n_pw = (uint32_t)(n->C * n->C);
    n->P = fc_offset(n) + (uint32_t)(n->K * n->C + n->K);
    return PTL_OK;
}

/* The config rows, checked: kernel indices of the FP32 table, tiles 0 (the
 * largest that fits) or 1 to the axis's length. */
static int read_config(const float *config, struct net *n, uint32_t vi)
{
    static const char *const axes[PASSES][2] = {
#define DS_CNN_PASS(layer, step, a, b) {#a, #b},
#include "ds_cnn_passes.def"
#undef DS_CNN_PASS
    };
    const int kernels = fp32_kernel_count();
    for (int i = 0; i < PASSES; i++) {
        for (int j = 0; j < 3; j++) {
            const float value = config[3 * i + j];
            const char *axis = j ? axes[i][j - 1] : "kernel";
            const int length = strcmp(axis, "Co") == 0 || strcmp(axis, "Ci") == 0 || strcmp(axis, "inp") == 0 ? n->C
                               : strcmp(axis, "H") == 0                                                 ? n->Ho
                               : strcmp(axis, "out") == 0                                               ? n->K
                               : strcmp(axis, "kernel") == 0 ? kernels - 1 : 0;
            n->config[i][j] = (int)value;
            if (value != (float)n->config[i][j] || value < 0 || n->config[i][j] > length) {
                ptl_emit_error(vi, PTL_ERR_BAD_CASE, "train_ds_cnn: a config row is a kernel index of the fp32 "
                                                     "table, then tiles of 0 (the largest that fits) up to the "
                                                     "axis's length (0 where the pass has no such axis)");
                return PTL_ERR_BAD_CASE;
            }
        }
    }
    return PTL_OK;
}

static int run_train_ds_cnn(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    struct net n;
    int status = read_net(c, vi, &n);
    if (status)
        return status;
    n.cores = v.cores;
    const uint32_t N = (uint32_t)n.N, P = n.P, n_a = n.n_a;
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    ptl_place_buffers(PTL_PLACE_FAR);
    /* step 0 updates row 0 of weights in place, from params (no other copy of them: L2 is tight) */
    float *weights = op_frame_output_led_by(&f, "params", P, "weights", N * P);
    float *grads = op_frame_output(&f, "grads", N * P);
    const float *xs = op_frame_input(&f, "x", (uint32_t)n.S * n.n_x);
    const float *ts = op_frame_input(&f, "t", (uint32_t)(n.S * n.K));
    const float *config = op_frame_input(&f, "config", 3 * PASSES);
    float *loss = op_frame_output(&f, "loss", N);
    /* the last step's: activations, gradient maps, then p, z, dz, dp */
    float *acts = op_frame_output(&f, "acts", (2 * BLOCKS + 1) * n_a);
    float *grad_maps = op_frame_output(&f, "grad_maps", (2 * BLOCKS + 1) * n_a);
    float *heads = op_frame_output(&f, "heads", 2 * (uint32_t)(n.C + n.K));
    ptl_place_buffers(PTL_PLACE_NEAR);
    n.arena = op_frame_scratch(&f, (uint32_t)n.near_bytes / sizeof(float));
    ptl_place_buffers(PTL_PLACE_ANY);
    if (f.status)
        return op_frame_finish(&f, 0);
    status = read_config(config, &n, vi);
    if (status) {
        op_frame_fail(&f, status, NULL);
        return op_frame_finish(&f, 0);
    }
    struct step_tensors s;
    for (int i = 0; i < 2 * BLOCKS + 1; i++) {
        s.act[i] = acts + (uint32_t)i * n_a;
        s.grad[i] = grad_maps + (uint32_t)i * n_a;
    }
    s.p = heads;
    s.z = s.p + n.C;
    s.dz = s.z + n.K;
    s.dp = s.dz + n.K;
    ptl_measure_begin(vi);
    for (int k = 0; k < n.N && !status; k++) {
        s.x = xs + (uint32_t)(k % n.S) * n.n_x;
        s.t = ts + (uint32_t)(k % n.S) * (uint32_t)n.K;
        s.w = weights + (uint32_t)(k ? k - 1 : 0) * P;
        s.g = grads + (uint32_t)k * P;
        s.w_out = weights + (uint32_t)k * P;
        s.loss = loss + k;
        status = train_step(&n, &s);
    }
    ptl_measure_end(vi);
    if (status) {
        op_frame_fail(&f, status, "train_ds_cnn: a pass's two sets of tile buffers do not fit near_bytes");
        return op_frame_finish(&f, 0);
    }
    return op_frame_finish(&f, 1);
}
#endif

const struct ptl_op PTL_OP_TABLE[] = {
#if PTL_OP_FP == 32
    {PTL_OP_NAME("train_ds_cnn"), "H W C Hk Wk sh sw U D L R K S N lr_micro near_bytes", "x t params config",
     "loss grads weights acts grad_maps heads", "none", run_train_ds_cnn},
#endif
    {0},
};
