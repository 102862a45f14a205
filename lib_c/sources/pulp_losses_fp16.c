/*
 * pulp_losses_fp16.c: FP16 losses (definitions in pulp_losses_fp32.h, the
 * FP16 arithmetic in pulp_losses_fp16.h; body in pulp_losses_impl.h).
 * Single core.
 *
 * 1/N and 2/N: the binary32 quotient rounded to fp16. That double rounding
 * equals one rounding of the exact quotient q = k/N (k = 1, 2) for
 * N <= 2048: it could differ only if the binary32 quotient fell exactly on an
 * fp16 midpoint m = M * 2^-f (M odd, M < 2^12) with q != m; then
 * |q - m| = |k 2^f - N M| / (N 2^f) >= 1/(N 2^f), a relative distance
 * >= 1/(N M) > 2^-12 / N, more than binary32's 2^-24 for every N <= 2048.
 */
#include "pulp_losses_fp16.h"

static fp16 fp16_abs(fp16 x)
{
    return fp16_from_bits((uint16_t)(fp16_bits(x) & 0x7fffu));
}

static int fp16_less(fp16 a, fp16 b)
{
    return fp16_to_f32(a) < fp16_to_f32(b); /* exact conversions, exact order */
}

#define LOSS_T fp16
#define LOSS_ARGS struct loss_args_fp16
#define BERHU_ARGS struct berHu_loss_args_fp16
#define LOSS_TO_F(v) fp16_to_f32(v)
#define LOSS_FROM_F(f) fp16_from_f32(f)
#define LOSS_ZERO fp16_zero()
#define LOSS_ADD(a, b) fp16_add((a), (b))
#define LOSS_SUB(a, b) fp16_sub((a), (b))
#define LOSS_MUL(a, b) fp16_mul((a), (b))
#define LOSS_DIV(a, b) fp16_div((a), (b))
#define LOSS_ABS(x) fp16_abs(x)
#define LOSS_NEG(x) fp16_from_bits((uint16_t)(fp16_bits(x) ^ 0x8000u))
#define LOSS_LESS(a, b) fp16_less((a), (b))
/* Both true for a NaN: a NaN c or o - t gets a zero gradient. */
#define LOSS_NOT_POSITIVE(x) (!fp16_less(fp16_zero(), (x)))
#define LOSS_FLAT(x) LOSS_NOT_POSITIVE(fp16_abs(x))
#define LOSS_HOIST_NEG 1
#define LOSS_NAME(loss) pulp_##loss##_fp16
#include "pulp_losses_impl.h"
