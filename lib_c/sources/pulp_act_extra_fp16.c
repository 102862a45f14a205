/*
 * pulp_act_extra_fp16.c: FP16 GELU and SwiGLU (pulp_act_extra_fp16.h), in
 * binary32 with one rounding to fp16 per result.
 */
#include "pulp_act_extra_fp16.h"
#include "pulp_act_extra_impl.h"
#include "pulp_core_block.h"

void pulp_gelu_fp16_fw_cl(void *act_args_fp16)
{
    const struct act_args_fp16 *a = act_args_fp16;
    long first, last;
    pulp_core_block(a->input->dim, &first, &last);
    for (int i = first; i < last; i++)
        a->output->data[i] = fp16_from_f32(act_extra_gelu(fp16_to_f32(a->input->data[i])));
}

void pulp_swiglu_fp16_cl(void *swiglu_args_fp16)
{
    const struct swiglu_args_fp16 *a = swiglu_args_fp16;
    long first, last;
    pulp_core_block(a->dim, &first, &last);
    for (int i = first; i < last; i++)
        a->out[i] = fp16_from_f32(act_extra_swiglu(fp16_to_f32(a->in1[i]), fp16_to_f32(a->in2[i])));
}
