/*
 * Operations of the linear-algebra family: the raw matmul kernels (through
 * mm_manager, forked by the caller as the API says) and the linear layer.
 *
 * The FP32 and FP16 versions differ only in types and names, so both are
 * stamped out from one body by LINALG_OPS(...).
 */
#include <stdlib.h>

#include "pmsis.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

_Static_assert(sizeof(fp16) == 2, "fp16 must be a 16-bit type");

enum { LINEAR_STEP_FW = 0, LINEAR_STEP_WG = 1, LINEAR_STEP_IG = 2 };

#define LINALG_OPS(SUFFIX, T, DTYPE, MM_ARGS, MGR_ARGS, MANAGER, BLOB, LIN_ARGS, LIN_FW,           \
                   LIN_WG, LIN_IG)                                                                 \
    /* params: N, M, K, trans_B. tensors: A [N x K], B [K x M] or [M x K]. out: C. */              \
    static int run_matmul_##SUFFIX(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)    \
    {                                                                                              \
        int status = ptl_expect_params(c, 4, vi);                                                  \
        if (status)                                                                                \
            return status;                                                                         \
        int N = c->params[0], M = c->params[1], K = c->params[2];                                  \
        T *A = ptl_input_copy(c, 0, DTYPE, (uint32_t)(N * K), vi);                                 \
        T *B = ptl_input_copy(c, 1, DTYPE, (uint32_t)(K * M), vi);                                 \
        T *C = ptl_output_alloc(DTYPE, (uint32_t)(N * M));                                         \
        if (!A || !B || !C) {                                                                      \
            free(A);                                                                               \
            free(B);                                                                               \
            return PTL_ERR_BAD_CASE;                                                               \
        }                                                                                          \
        struct MM_ARGS mm = {0};                                                                   \
        mm.A = A;                                                                                  \
        mm.B = B;                                                                                  \
        mm.C = C;                                                                                  \
        mm.N = N;                                                                                  \
        mm.M = M;                                                                                  \
        mm.K = K;                                                                                  \
        mm.trans_B = c->params[3];                                                                 \
        struct MGR_ARGS manager = {&mm, LAYER_LINEAR, STEP_FW, v.kernel};                          \
        ptl_measure_begin(vi);                                                                     \
        pi_cl_team_fork(v.cores, MANAGER, &manager);                                               \
        ptl_measure_end(vi);                                                                       \
        free(A);                                                                                   \
        free(B);                                                                                   \
        return ptl_output_emit(vi, 0, DTYPE, C, (uint32_t)(N * M));                                \
    }                                                                                              \
                                                                                                   \
    /* params: in, out, use_bias, step. tensors: input [in], W [out x in], bias [out],             \
     * dOut [out]. out: FW y [out]; WG dW [out x in] (+ db [out]); IG dIn [in]. */                 \
    static int run_linear_##SUFFIX(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)    \
    {                                                                                              \
        int status = ptl_expect_params(c, 4, vi);                                                  \
        if (status)                                                                                \
            return status;                                                                         \
        uint32_t in = (uint32_t)c->params[0], out = (uint32_t)c->params[1];                        \
        int use_bias = c->params[2], step = c->params[3];                                          \
        T *x = ptl_input_copy(c, 0, DTYPE, in, vi);                                                \
        T *w = ptl_input_copy(c, 1, DTYPE, out * in, vi);                                          \
        T *b = ptl_input_copy(c, 2, DTYPE, out, vi);                                               \
        T *dy = ptl_input_copy(c, 3, DTYPE, out, vi);                                              \
        T *y = NULL, *dx = NULL, *dw = NULL, *db = NULL;                                           \
        if (step == LINEAR_STEP_FW)                                                                \
            y = ptl_output_alloc(DTYPE, out);                                                      \
        if (step == LINEAR_STEP_WG) {                                                              \
            dw = ptl_output_alloc(DTYPE, out * in);                                                \
            if (use_bias)                                                                          \
                db = ptl_output_alloc(DTYPE, out);                                                 \
        }                                                                                          \
        if (step == LINEAR_STEP_IG)                                                                \
            dx = ptl_output_alloc(DTYPE, in);                                                      \
        int ready = x && w && b && dy && (y || dw || dx) && (step != LINEAR_STEP_WG || !use_bias || db); \
        if (!ready || step < 0 || step > 2) {                                                      \
            free(x);                                                                               \
            free(w);                                                                               \
            free(b);                                                                               \
            free(dy);                                                                              \
            if (ready)                                                                             \
                ptl_emit_error(vi, PTL_ERR_BAD_CASE, "linear step must be 0, 1 or 2");             \
            return PTL_ERR_BAD_CASE;                                                               \
        }                                                                                          \
        struct BLOB input = {x, dx, (int)in, 1, 1, (int)in};                                       \
        struct BLOB coeff = {w, dw, (int)(out * in), (int)in, (int)out, 1};                        \
        struct BLOB bias = {b, db, (int)out, 1, 1, (int)out};                                      \
        struct BLOB output = {y, dy, (int)out, 1, 1, (int)out};                                    \
        struct LIN_ARGS args = {&input, &coeff, &bias, &output};                                   \
        args.skip_wg_grad = step != LINEAR_STEP_WG;                                                \
        args.skip_in_grad = step != LINEAR_STEP_IG;                                                \
        args.opt_matmul_type_fw = args.opt_matmul_type_wg = args.opt_matmul_type_ig = v.kernel;    \
        args.use_biases = use_bias;                                                                \
        ptl_measure_begin(vi);                                                                     \
        if (step == LINEAR_STEP_FW)                                                                \
            LIN_FW(&args);                                                                         \
        else if (step == LINEAR_STEP_WG)                                                           \
            LIN_WG(&args);                                                                         \
        else                                                                                       \
            LIN_IG(&args);                                                                         \
        ptl_measure_end(vi);                                                                       \
        free(x);                                                                                   \
        free(w);                                                                                   \
        free(b);                                                                                   \
        free(dy);                                                                                  \
        if (step == LINEAR_STEP_FW)                                                                \
            return ptl_output_emit(vi, 0, DTYPE, y, out);                                          \
        if (step == LINEAR_STEP_IG)                                                                \
            return ptl_output_emit(vi, 0, DTYPE, dx, in);                                          \
        status = ptl_output_emit(vi, 0, DTYPE, dw, out * in);                                      \
        if (!use_bias)                                                                             \
            return status;                                                                         \
        int bias_status = ptl_output_emit(vi, 1, DTYPE, db, out);                                  \
        return status ? status : bias_status;                                                      \
    }

LINALG_OPS(fp32, float, PTL_DTYPE_F32, matMul_args, mm_manager_args, mm_manager, blob,
           Linear_args, pulp_linear_fp32_fw_cl, pulp_linear_fp32_bw_param_grads_cl,
           pulp_linear_fp32_bw_input_grads_cl)
LINALG_OPS(fp16, fp16, PTL_DTYPE_F16, matMul_args_fp16, mm_manager_args_fp16, mm_manager_fp16,
           blob_fp16, Linear_args_fp16, pulp_linear_fp16_fw_cl, pulp_linear_fp16_bw_param_grads_cl,
           pulp_linear_fp16_bw_input_grads_cl)

const struct ptl_op ptl_ops_linalg[] = {
    {"matmul_fp32", run_matmul_fp32},
    {"matmul_fp16", run_matmul_fp16},
    {"linear_fp32", run_linear_fp32},
    {"linear_fp16", run_linear_fp16},
    {0, 0},
};
