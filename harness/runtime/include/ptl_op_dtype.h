/*
 * ptl_op_dtype.h: the dtype of a runner op unit.
 *
 * A runner op source (runner/ops_<family>.c) is written once, as plain C
 * functions, and compiled once per dtype: the build passes -DPTL_OP_FP=32 or
 * -DPTL_OP_FP=16, and -DPTL_OP_TABLE=<name of the unit's op table>. These
 * macros spell the API's names for that dtype, so a body reads like the FP32
 * call it makes:
 *
 *     struct PTL_S(Linear_args) args = {.input = &input, ...};  Linear_args / Linear_args_fp16
 *     PTL_F(pulp_linear_, _fw_cl)(&args);                       pulp_linear_fp32_fw_cl / ..._fp16_...
 *     struct PTL_S(blob) x = {.data = ..., ...};                 blob / blob_fp16
 *     PTL_S(mm_manager)                                          mm_manager / mm_manager_fp16
 *
 * PTL_T is the element type, PTL_DTYPE its wire dtype, PTL_OP_NAME("linear")
 * the op's name ("linear_fp32") and PTL_KERNEL_TABLE the kernel table its
 * matmul index selects from.
 */
#ifndef PTL_OP_DTYPE_H
#define PTL_OP_DTYPE_H

#include "ptl_protocol.h"

#if !defined(PTL_OP_FP) || !defined(PTL_OP_TABLE)
#error "runner op units are compiled with -DPTL_OP_FP=32|16 and -DPTL_OP_TABLE=<table name>"
#endif

#define PTL_PASTE_(a, b) a##b
#define PTL_PASTE(a, b) PTL_PASTE_(a, b)
#define PTL_PASTE3(a, b, c) PTL_PASTE(PTL_PASTE(a, b), c)

#if PTL_OP_FP == 32
#define PTL_T float
#define PTL_DTYPE PTL_DTYPE_F32
#define PTL_S(name) name
#define PTL_F(before, after) PTL_PASTE3(before, fp32, after)
#define PTL_OP_NAME(base) base "_fp32"
#define PTL_KERNEL_TABLE "fp32"
#elif PTL_OP_FP == 16
#define PTL_T fp16
#define PTL_DTYPE PTL_DTYPE_F16
#define PTL_S(name) PTL_PASTE(name, _fp16)
#define PTL_F(before, after) PTL_PASTE3(before, fp16, after)
#define PTL_OP_NAME(base) base "_fp16"
#define PTL_KERNEL_TABLE "fp16"
#else
#error "PTL_OP_FP must be 32 or 16"
#endif

#endif /* PTL_OP_DTYPE_H */
