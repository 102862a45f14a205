/*
 * pulp_train_utils_fp32.c: FP32 tensor utilities (pulp_train_utils_fp32.h,
 * bodies in pulp_utils_moves_impl.h and pulp_utils_arith_impl.h).
 */
#include "pulp_train_utils_fp32.h"

#define UT_N(name) name
#define UT_FMT(before, after) before##fp32##after
#define UT_ADD(a, b) ((a) + (b))
#define UT_FMA(a, b, c) ((a) * (b) + (c))
#define UT_DIV(a, b) ((a) / (b))
#define UT_TO_F(v) (v)
#define UT_FROM_F(f) (f)
#define UT_T float
#define UT_BLOB struct blob
#define UT_ZERO 0.0f
#include "pulp_utils_moves_impl.h"
#include "pulp_utils_arith_impl.h"
