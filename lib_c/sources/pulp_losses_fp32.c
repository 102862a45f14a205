/*
 * pulp_losses_fp32.c: FP32 losses (definitions in pulp_losses_fp32.h; body
 * in pulp_losses_impl.h). Single core: no fork, no barrier.
 */
#include <math.h>

#include "pulp_losses_fp32.h"

#define LOSS_T float
#define LOSS_ARGS struct loss_args
#define BERHU_ARGS struct berHu_loss_args
#define LOSS_TO_F(v) (v)
#define LOSS_FROM_F(f) (f)
#define LOSS_ZERO 0.0f
#define LOSS_ADD(a, b) ((a) + (b))
#define LOSS_SUB(a, b) ((a) - (b))
#define LOSS_MUL(a, b) ((a) * (b))
#define LOSS_DIV(a, b) ((a) / (b))
#define LOSS_ABS(x) fabsf(x)
#define LOSS_NEG(x) (-(x))
#define LOSS_LESS(a, b) ((a) < (b))
/* Both false for a NaN: a NaN c or o - t reaches the division and propagates. */
#define LOSS_NOT_POSITIVE(x) ((x) <= 0.0f)
#define LOSS_FLAT(x) ((x) == 0.0f)
#define LOSS_HOIST_NEG 0
#define LOSS_NAME(loss) pulp_##loss
#include "pulp_losses_impl.h"
