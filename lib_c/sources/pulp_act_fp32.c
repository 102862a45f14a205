/*
 * pulp_act_fp32.c: FP32 ReLU, LeakyReLU and Sigmoid (tensors, split and
 * rounding in pulp_act_fp32.h; body in pulp_act_impl.h).
 */
#include "pulp_act_fp32.h"

#define ACT_T float
#define ACT_ARGS struct act_args
#define LEAKY_ARGS struct leakyrelu_args
#define ACT_TO_F(v) (v)
#define ACT_FROM_F(f) (f)
#define ACT_ZERO 0.0f
#define ACT_POSITIVE(x) ((x) > 0.0f)
#define ACT_SUB(a, b) ((a) - (b))
#define ACT_MUL(a, b) ((a) * (b))
#define ACT_CORE(act, step) act##_core_##step##_fp32
#define ACT_CL(act, step) pulp_##act##_fp32_##step##_cl
#include "pulp_act_impl.h"
