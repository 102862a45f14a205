/*
 * pulp_softmax_fp16.c: FP16 row softmax (contract in pulp_softmax_fp16.h;
 * body in pulp_softmax_impl.h).
 */
#include "pulp_softmax_fp16.h"
#include "pulp_softmax_fp32.h"

float fastexp_gist_fp16(float x)
{
    return fastexp_gist(x);
}

#define SM_T fp16
#define SM_ARGS struct softmax_args_fp16
#define SM_LOWEST fp16_from_f32(-65504.0f)
#define SM_TO_F(v) fp16_to_f32(v)
#define SM_FROM_F(f) fp16_from_f32(f)
#define SM_EXP(x) fastexp_gist_fp16(x)
#include "pulp_softmax_impl.h"

void pulp_softmax_fp16_fw_cl(void *softmax_args_fp16) { sm_fw(softmax_args_fp16); }
void pulp_softmax_fp16_bw_cl(void *softmax_args_fp16) { sm_bw(softmax_args_fp16); }
