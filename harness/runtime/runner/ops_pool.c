/*
 * Operations of the pooling family: average and max pooling, FW and BW.
 * Pooling is forked by the caller (the API says so), so the runner forks
 * each primitive on the variant's team.
 *
 * params: C, H, W, Hker, Wker, Hstride, Wstride, step (0 FW, 1 BW).
 * tensors: x [C x H x W], dy [C x Ho x Wo] (CHW).
 * out: FW y [C x Ho x Wo]; BW dx [C x H x W].
 * Only the buffers the step reads are copied (the footprint in
 * suite/catalogue/pool.py counts the same ones): FW x; average BW dy; max BW
 * x and dy. output->data is not given to BW: it is not needed.
 *
 * The FP32 and FP16 versions differ only in types and names, so both are
 * stamped out from one body by POOL_OPS(...).
 */
#include <stdlib.h>

#include "pmsis.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

enum { POOL_STEP_FW = 0, POOL_STEP_BW = 1 };
enum { POOL_AVG = 0, POOL_MAX = 1 };

struct pool_shape {
    int C, H, W, Hk, Wk, Hs, Ws, Ho, Wo, step;
};

/* Reads and checks the params; PTL_OK or an ERROR record and PTL_ERR_BAD_CASE. */
static int pool_read_shape(const struct ptl_case *c, uint32_t vi, struct pool_shape *s)
{
    int status = ptl_expect_params(c, 8, vi);
    if (status)
        return status;
    s->C = c->params[0];
    s->H = c->params[1];
    s->W = c->params[2];
    s->Hk = c->params[3];
    s->Wk = c->params[4];
    s->Hs = c->params[5];
    s->Ws = c->params[6];
    s->step = c->params[7];
    if (s->C < 1 || s->Hk < 1 || s->Wk < 1 || s->Hk > s->H || s->Wk > s->W || s->Hs < 1 ||
        s->Ws < 1 || (s->step != POOL_STEP_FW && s->step != POOL_STEP_BW)) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE,
                       "pool params need C >= 1, 1 <= Hker <= H, 1 <= Wker <= W, strides >= 1, step 0 or 1");
        return PTL_ERR_BAD_CASE;
    }
    s->Ho = (s->H - s->Hk) / s->Hs + 1;
    s->Wo = (s->W - s->Wk) / s->Ws + 1;
    return PTL_OK;
}

#define POOL_OPS(SUFFIX, T, DTYPE, BLOB, ARGS, AVG_FW, AVG_BW, MAX_FW, MAX_BW)                     \
    static int run_pool_##SUFFIX(const struct ptl_case *c, struct ptl_variant v, uint32_t vi,      \
                                 int kind)                                                         \
    {                                                                                              \
        struct pool_shape s;                                                                       \
        int status = pool_read_shape(c, vi, &s);                                                   \
        if (status)                                                                                \
            return status;                                                                         \
        const uint32_t n_in = (uint32_t)(s.C * s.H * s.W), n_out = (uint32_t)(s.C * s.Ho * s.Wo);  \
        const int fw = s.step == POOL_STEP_FW;                                                     \
        const int needs_x = fw || kind == POOL_MAX, needs_dy = !fw;                                \
        T *x = needs_x ? ptl_input_copy(c, 0, DTYPE, n_in, vi) : NULL;                             \
        T *dy = needs_dy ? ptl_input_copy(c, 1, DTYPE, n_out, vi) : NULL;                          \
        T *out = ptl_output_alloc(DTYPE, fw ? n_out : n_in);                                       \
        if ((needs_x && !x) || (needs_dy && !dy) || !out) {                                        \
            free(x);                                                                               \
            free(dy);                                                                              \
            return PTL_ERR_BAD_CASE;                                                               \
        }                                                                                          \
        struct BLOB input = {x, fw ? NULL : out, (int)n_in, s.W, s.H, s.C};                        \
        struct BLOB output = {fw ? out : NULL, dy, (int)n_out, s.Wo, s.Ho, s.C};                   \
        struct ARGS args = {&input, &output, s.Hk, s.Wk, s.Hs, s.Ws};                              \
        void (*primitive)(void *) = kind == POOL_AVG ? (fw ? AVG_FW : AVG_BW)                      \
                                                     : (fw ? MAX_FW : MAX_BW);                     \
        ptl_measure_begin(vi);                                                                     \
        pi_cl_team_fork(v.cores, primitive, &args);                                                \
        ptl_measure_end(vi);                                                                       \
        free(x);                                                                                   \
        free(dy);                                                                                  \
        return ptl_output_emit(vi, 0, DTYPE, out, fw ? n_out : n_in);                              \
    }                                                                                              \
                                                                                                   \
    static int run_avgpool_##SUFFIX(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)   \
    {                                                                                              \
        return run_pool_##SUFFIX(c, v, vi, POOL_AVG);                                              \
    }                                                                                              \
                                                                                                   \
    static int run_maxpool_##SUFFIX(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)   \
    {                                                                                              \
        return run_pool_##SUFFIX(c, v, vi, POOL_MAX);                                              \
    }

POOL_OPS(fp32, float, PTL_DTYPE_F32, blob, pool_args, pulp_avgpool_fp32_fw_cl,
         pulp_avgpool_fp32_bw_cl, pulp_maxpool_fp32_fw_cl, pulp_maxpool_fp32_bw_cl)
POOL_OPS(fp16, fp16, PTL_DTYPE_F16, blob_fp16, pool_args_fp16, pulp_avgpool_fp16_fw_cl,
         pulp_avgpool_fp16_bw_cl, pulp_maxpool_fp16_fw_cl, pulp_maxpool_fp16_bw_cl)

const struct ptl_op ptl_ops_pool[] = {
    {"avgpool_fp32", run_avgpool_fp32},
    {"maxpool_fp32", run_maxpool_fp32},
    {"avgpool_fp16", run_avgpool_fp16},
    {"maxpool_fp16", run_maxpool_fp16},
    {0, 0},
};
