/* pulp_dropout_fp16.c: FP16 dropout (pulp_dropout_fp16.h; body in pulp_dropout_impl.h). */
#include "pulp_dropout_fp16.h"

#define DROP_ARGS struct dropout_args_fp16
#define DROP_TO_F(v) fp16_to_f32(v)
#define DROP_FROM_F(f) fp16_from_f32(f)
#include "pulp_dropout_impl.h"

void pulp_dropout_fp16_cl(void *dropout_args_fp16) { drop_core(dropout_args_fp16); }
