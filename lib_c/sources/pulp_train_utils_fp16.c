/*
 * pulp_train_utils_fp16.c: FP16 tensor utilities (pulp_train_utils_fp16.h,
 * bodies in pulp_utils_moves_impl.h and pulp_utils_arith_impl.h).
 */
#include "pulp_train_utils_fp16.h"

#define UT_N(name) name##_fp16
#define UT_FMT(before, after) before##fp16##after
#define UT_ADD(a, b) fp16_add((a), (b))
#define UT_FMA(a, b, c) fp16_fma((a), (b), (c))
#define UT_DIV(a, b) fp16_div((a), (b))
#define UT_TO_F(v) fp16_to_f32(v)
#define UT_FROM_F(f) fp16_from_f32(f)
#define UT_T fp16
#define UT_BLOB struct blob_fp16
#define UT_ZERO fp16_zero()
#include "pulp_utils_moves_impl.h"
#include "pulp_utils_arith_impl.h"
