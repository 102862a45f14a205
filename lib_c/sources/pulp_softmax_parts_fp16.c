/*
 * pulp_softmax_parts_fp16.c: the FP16 softmax parts (contract in
 * pulp_softmax_fp16.h; bodies in pulp_softmax_parts_impl.h), each operation
 * rounded once to fp16 as the helpers of pulp_fp16.h do it.
 */
#include "pulp_softmax_fp16.h"

#define SP_T fp16
#define SP_ARGS(name) struct name##_fp16
#define SP_ROW_MAX pulp_row_max_fp16_cl
#define SP_ROW_DIV pulp_row_div_fp16_cl
#define SP_DIV_N pulp_div_fp16_cl
#define SP_SCALAR_MUL pulp_scalar_mul_fp16_cl
#define SP_BW_OP_1 pulp_sm_bw_op_1_fp16
#define SP_BW_OP_2 pulp_sm_bw_op_2_fp16
#define SP_BIAS_ADD mm_bias_add_transposed_fp16
#define SP_GT(a, b) (fp16_to_f32(a) > fp16_to_f32(b))
#define SP_ADD(a, b) fp16_add((a), (b))
#define SP_SUB(a, b) fp16_sub((a), (b))
#define SP_MUL(a, b) fp16_mul((a), (b))
#define SP_DIV(a, b) fp16_div((a), (b))
#define SP_FMA(a, b, c) fp16_fma((a), (b), (c))
#define SP_ZERO fp16_zero()
#include "pulp_softmax_parts_impl.h"
