/*
 * pulp_train_utils_fp16.c: FP16 tensor utilities (pulp_train_utils_fp16.h,
 * bodies in pulp_utils_moves_impl.h).
 */
#include "pulp_train_utils_fp16.h"

#define UT_N(name) name##_fp16
#define UT_ADD(a, b) fp16_add((a), (b))
#define UT_T fp16
#define UT_BLOB struct blob_fp16
#define UT_ZERO fp16_zero()
#include "pulp_utils_moves_impl.h"
