/*
 * pulp_linear_fp16.c: FP16 fully-connected layer (shapes in
 * pulp_linear_fp16.h; body in pulp_linear_impl.h).
 */
#include "pulp_linear_fp16.h"

#define LIN_T fp16
#define LIN_ARGS struct Linear_args_fp16
#define LIN_MM_ARGS struct matMul_args_fp16
#define LIN_MGR_ARGS struct mm_manager_args_fp16
#define LIN_MM_MANAGER mm_manager_fp16
#define LIN_NAME(step) pulp_linear_fp16_##step##_cl
#include "pulp_linear_impl.h"
