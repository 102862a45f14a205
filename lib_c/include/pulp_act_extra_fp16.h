/*
 * pulp_act_extra_fp16.h: FP16 GELU (tanh approximation) and SwiGLU: the
 * formulas of pulp_act_extra_fp32.h computed in binary32 on the fp16 values,
 * each result rounded once to fp16. Per-core bodies forked by the caller.
 */
#ifndef PULP_ACT_EXTRA_FP16_H
#define PULP_ACT_EXTRA_FP16_H

#include "pulp_train_defines.h"
#include "pulp_act_fp16.h"

struct swiglu_args_fp16 {
    fp16 *in1;
    fp16 *in2;
    fp16 *out;
    int dim;
};

void pulp_gelu_fp16_fw_cl(void *act_args_fp16);
void pulp_swiglu_fp16_cl(void *swiglu_args_fp16);

#endif /* PULP_ACT_EXTRA_FP16_H */
