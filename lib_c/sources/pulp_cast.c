/*
 * pulp_cast.c: FP32 <-> FP16 casts (pulp_cast.h).
 */
#include "pulp_cast.h"
#include "pulp_core_block.h"

void cast_fp16_tensor_to_fp32(void *cast_16t32_args)
{
    const struct cast_16t32_args *a = cast_16t32_args;
    long first, last;
    pulp_core_block(a->size, &first, &last);
    for (int i = first; i < last; i++)
        a->destination[i] = fp16_to_f32(a->source[i]);
}

void cast_fp32_tensor_to_fp16(void *cast_32t16_args)
{
    const struct cast_32t16_args *a = cast_32t16_args;
    long first, last;
    pulp_core_block(a->size, &first, &last);
    for (int i = first; i < last; i++)
        a->destination[i] = fp16_from_f32(a->source[i]);
}
