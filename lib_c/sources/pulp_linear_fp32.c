/*
 * pulp_linear_fp32.c: FP32 fully-connected layer (shapes in
 * pulp_linear_fp32.h; body in pulp_linear_impl.h).
 */
#include "pulp_linear_fp32.h"

#define LIN_T float
#define LIN_ARGS struct Linear_args
#define LIN_MM_ARGS struct matMul_args
#define LIN_MGR_ARGS struct mm_manager_args
#define LIN_MM_MANAGER mm_manager
#define LIN_NAME(step) pulp_linear_fp32_##step##_cl
#include "pulp_linear_impl.h"
