/*
 * pulp_softmax_parts_fp32.c: the FP32 softmax parts (contract in
 * pulp_softmax_fp32.h; bodies in pulp_softmax_parts_impl.h).
 */
#include "pulp_softmax_fp32.h"

#define SP_T float
#define SP_ARGS(name) struct name
#define SP_ROW_MAX pulp_row_max_fp32_cl
#define SP_ROW_DIV pulp_row_div_fp32_cl
#define SP_DIV_N pulp_div_fp32_cl
#define SP_SCALAR_MUL pulp_scalar_mul_fp32_cl
#define SP_BW_OP_1 pulp_sm_bw_op_1
#define SP_BW_OP_2 pulp_sm_bw_op_2
#define SP_BIAS_ADD mm_bias_add_transposed
#define SP_GT(a, b) ((a) > (b))
#define SP_ADD(a, b) ((a) + (b))
#define SP_SUB(a, b) ((a) - (b))
#define SP_MUL(a, b) ((a) * (b))
#define SP_DIV(a, b) ((a) / (b))
#define SP_FMA(a, b, c) ((a) * (b) + (c))
#define SP_ZERO 0.0f
#include "pulp_softmax_parts_impl.h"
