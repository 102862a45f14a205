/*
 * pulp_pooling_fp32.c: FP32 average and max pooling (shapes, tie rule and
 * rounding order in pulp_pooling_fp32.h; body in pulp_pooling_impl.h). The
 * caller forks the team.
 */
#include "pulp_pooling_fp32.h"

#define POOL_T float
#define POOL_ARGS struct pool_args
#define POOL_TO_F(v) (v)
#define POOL_FROM_F(f) (f)
#define POOL_ZERO 0.0f
#define POOL_ADD(a, b) ((a) + (b))
#define POOL_MUL(a, b) ((a) * (b))
#define POOL_PICK(f, e) (f)
#define POOL_NAME(kind, step) pulp_##kind##pool_fp32_##step##_cl
#include "pulp_pooling_impl.h"

