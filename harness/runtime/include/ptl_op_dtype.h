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
 * matmul index selects from. The build also passes -DPTL_LIBRARY_KERNELS=<n>:
 * how many indices the library's mm_manager has in that table (the API's,
 * and lib_c's own ones it has; harness/build_units.py), so that an op can
 * ask for the first index out of its range.
 *
 * PTL_FROM_F32(x) and PTL_TO_F32(h) convert a scalar argument (a slope, a
 * learning rate) to and from PTL_T, rounding to nearest even. They use only
 * the size of the library's fp16, never its helpers: a library's fp16 may be
 * a compiler type (__bf16, _Float16) or a struct of its own, and the format
 * is the build's (-DPTL_FP16_IEEE or -DPTL_FP16_BF16).
 *
 * PTL_HAS_FIELD(Struct, field), in #if: whether the library's struct (the
 * dtype's name of it, Struct or Struct_fp16) has the field. An op that sets
 * a field some library lacks (the published FP16 depthwise has no strides)
 * asks this, leaves the field out, and reports the cases that need it as
 * PTL_ERR_UNSUPPORTED, naming the struct as PTL_S_NAME(Struct) spells it
 * for the dtype (a string). The build finds every field an op unit names
 * this way with a compile probe and defines PTL_HAS_FIELD_<Struct>_<field>=1
 * where it exists (harness/build_units.py, field_queries).
 *
 * PTL_HAS_FUNC(name), in #if: whether the library declares the dtype's
 * function (name or name_fp16), probed the same way, for functions one
 * library offers and another lacks (the published one has no mm_add_fp16):
 * the op reports PTL_ERR_UNSUPPORTED, and the unit's other ops still build.
 */
#ifndef PTL_OP_DTYPE_H
#define PTL_OP_DTYPE_H

#include "ptl_protocol.h"

#if !defined(PTL_OP_FP) || !defined(PTL_OP_TABLE) || !defined(PTL_LIBRARY_KERNELS)
#error "runner op units are compiled with -DPTL_OP_FP=32|16, -DPTL_OP_TABLE=<table name> and -DPTL_LIBRARY_KERNELS=<n>"
#endif

#define PTL_PASTE_(a, b) a##b
#define PTL_PASTE(a, b) PTL_PASTE_(a, b)
#define PTL_PASTE3(a, b, c) PTL_PASTE(PTL_PASTE(a, b), c)

#include <stdint.h>
#include <string.h>

#include "ptl_toolchain_types.h"

/* Bit patterns of the build's 16-bit format. */
static inline uint16_t ptl_half_bits_from_f32(float x)
{
#if defined(PTL_FP16_IEEE) && PTL_FLOAT16_ARITHMETIC
    _Float16 h = (_Float16)x;
    uint16_t b;
    memcpy(&b, &h, sizeof b);
    return b;
#elif defined(PTL_FP16_IEEE)
#error "an IEEE binary16 build needs a compiler with _Float16 (the harness picks clang for it)"
#else
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x0040u);  /* a NaN stays a quiet NaN */
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#endif
}

static inline float ptl_f32_from_half_bits(uint16_t b)
{
#if defined(PTL_FP16_IEEE)
    _Float16 h;
    memcpy(&h, &b, sizeof h);
    return (float)h;
#else
    uint32_t u = (uint32_t)b << 16;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}

#if PTL_OP_FP == 32
#define PTL_T float
#define PTL_FROM_F32(x) (x)
#define PTL_TO_F32(x) (x)
#define PTL_DTYPE PTL_DTYPE_F32
#define PTL_S(name) name
#define PTL_F(before, after) PTL_PASTE3(before, fp32, after)
#define PTL_OP_NAME(base) base "_fp32"
#define PTL_KERNEL_TABLE "fp32"
#elif PTL_OP_FP == 16
#define PTL_T fp16
#define PTL_FROM_F32(x)                                                                            \
    __extension__({                                                                                \
        _Static_assert(sizeof(fp16) == 2, "the library's fp16 must be a 16-bit type");            \
        uint16_t ptl_b_ = ptl_half_bits_from_f32(x);                                               \
        fp16 ptl_h_;                                                                               \
        memcpy(&ptl_h_, &ptl_b_, sizeof ptl_h_);                                                   \
        ptl_h_;                                                                                    \
    })
#define PTL_TO_F32(h)                                                                              \
    __extension__({                                                                                \
        fp16 ptl_h_ = (h);                                                                         \
        uint16_t ptl_b_;                                                                           \
        memcpy(&ptl_b_, &ptl_h_, sizeof ptl_b_);                                                   \
        ptl_f32_from_half_bits(ptl_b_);                                                            \
    })
#define PTL_DTYPE PTL_DTYPE_F16
#define PTL_S(name) PTL_PASTE(name, _fp16)
#define PTL_F(before, after) PTL_PASTE3(before, fp16, after)
#define PTL_OP_NAME(base) base "_fp16"
#define PTL_KERNEL_TABLE "fp16"
#else
#error "PTL_OP_FP must be 32 or 16"
#endif

#define PTL_STR_(x) #x
#define PTL_STR(x) PTL_STR_(x)
#define PTL_S_NAME(s) PTL_STR(PTL_S(s))
#define PTL_HAS_FIELD(s, f) PTL_PASTE3(PTL_HAS_FIELD_, PTL_S(s), PTL_PASTE(_, f))
#define PTL_HAS_FUNC(name) PTL_PASTE(PTL_HAS_FUNC_, PTL_S(name))

#endif /* PTL_OP_DTYPE_H */
