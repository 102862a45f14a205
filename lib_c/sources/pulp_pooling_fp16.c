/*
 * pulp_pooling_fp16.c: FP16 average and max pooling (shapes, tie rule and
 * rounding order in pulp_pooling_fp32.h and pulp_pooling_fp16.h; body in
 * pulp_pooling_impl.h). The caller forks the team. Sums accumulate in fp16.
 *
 * The reciprocal 1/(Hk*Wk) is rounded to fp16 from the binary32 quotient.
 * That quotient is correctly rounded and its conversion rounds again, but
 * this double rounding is harmless: it can only differ from one rounding if
 * the binary32 quotient lands exactly on a 16-bit midpoint m = M * 2^-f
 * (M odd, < 2^12) while 1/K != m. Then |1/K - m| = |2^f - K*M| / (K * 2^f)
 * >= 1/(K * 2^f), i.e. a relative distance >= 1/(K*M) > 2^-12/K, larger
 * than binary32's 2^-24 for every K = Hk*Wk <= 2048 (the header's limit), so
 * binary32 cannot round 1/K onto m.
 */
#include "pulp_pooling_fp16.h"

#define POOL_T fp16
#define POOL_ARGS struct pool_args_fp16
#define POOL_TO_F(v) fp16_to_f32(v)
#define POOL_FROM_F(f) fp16_from_f32(f)
#define POOL_ZERO fp16_zero()
#define POOL_ADD(a, b) fp16_add((a), (b))
#define POOL_MUL(a, b) fp16_mul((a), (b))
#define POOL_PICK(f, e) (e)
#define POOL_NAME(kind, step) pulp_##kind##pool_fp16_##step##_cl
#include "pulp_pooling_impl.h"

