/*
 * pulp_act_fp16.c: FP16 ReLU, LeakyReLU and Sigmoid (tensors, split and
 * rounding in pulp_act_fp32.h and pulp_act_fp16.h; body in pulp_act_impl.h).
 * Arithmetic through pulp_fp16.h, so it is correctly rounded in both formats
 * and on targets without a native fp16 type.
 */
#include "pulp_act_fp16.h"

/* x > 0, false for +-0 and NaN (every fp16 value is exact in binary32). A
 * function rather than a macro: clang then keeps LeakyReLU's loop as it was
 * laid out. */
static int act_positive(fp16 x)
{
    return fp16_to_f32(x) > 0.0f;
}

#define ACT_T fp16
#define ACT_ARGS struct act_args_fp16
#define LEAKY_ARGS struct leakyrelu_args_fp16
#define ACT_TO_F(v) fp16_to_f32(v)
#define ACT_FROM_F(f) fp16_from_f32(f)
#define ACT_ZERO fp16_zero()
#define ACT_POSITIVE(x) act_positive(x)
#define ACT_SUB(a, b) fp16_sub((a), (b))
#define ACT_MUL(a, b) fp16_mul((a), (b))
#define ACT_CORE(act, step) act##_core_##step##_fp16
#define ACT_CL(act, step) pulp_##act##_fp16_##step##_cl
#include "pulp_act_impl.h"
