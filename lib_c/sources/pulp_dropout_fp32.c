/* pulp_dropout_fp32.c: FP32 dropout (pulp_dropout_fp32.h; body in pulp_dropout_impl.h). */
#include "pulp_dropout_fp32.h"

#define DROP_ARGS struct dropout_args_fp32
#define DROP_TO_F(v) (v)
#define DROP_FROM_F(f) (f)
#include "pulp_dropout_impl.h"

void pulp_dropout_fp32_cl(void *dropout_args_fp32) { drop_core(dropout_args_fp32); }
