/*
 * pulp_norms_fp16.c: FP16 NoNorm forward (pulp_norms_fp16.h; body in
 * pulp_nonorm_impl.h).
 */
#include "pulp_norms_fp16.h"

#define NN_T fp16
#define NN_ARGS struct Nonorm_args_fp16
#define NN_FMA(x, g, b) fp16_fma((x), (g), (b))
#include "pulp_nonorm_impl.h"

void pulp_nonorm_fp16_fw_cl(void *Nonorm_args_fp16)
{
    nonorm_fw(Nonorm_args_fp16);
}
