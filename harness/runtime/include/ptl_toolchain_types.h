/*
 * ptl_toolchain_types.h: the PULP toolchain's built-in scalar types, on
 * compilers that are not the PULP toolchain.
 *
 * With the PULP toolchain `float16` (IEEE binary16), `float16alt` (bfloat16)
 * and `v2s` are compiler built-ins, and a published library's headers use
 * them before anything includes pmsis.h. The harness therefore
 * force-includes this header (-include) in every translation unit of the
 * library under test and of the runner's op units; pmsis.h includes it too.
 *
 * It declares nothing a library declares itself: in particular no `v2f16`.
 * A library's defines header makes its own lane pair from its own `fp16`
 * (`typedef fp16 v2f16 __attribute__((vector_size(4)))`), which needs fp16 to
 * be a scalar arithmetic type.
 *
 * No silent integer math. A 16-bit format is an arithmetic type only where
 * the compiler has one. The harness finds that out with compile probes
 * (harness/compilers.py) and passes the answer in:
 *   -DPTL_FLOAT16_ARITHMETIC=0|1     float16 is _Float16
 *   -DPTL_FLOAT16ALT_ARITHMETIC=0|1  float16alt is __bf16
 * (clang 19 computes in __bf16 but defines no __BFLT16_MANT_DIG__, so no
 * macro test can tell.) Without the defines, the compiler's own macros decide.
 * Elsewhere the type is a struct whose tag says "storage_only": it has the
 * size and alignment of the format, so it can be stored, copied and passed,
 * but `a * b` on it is a compile error (whose text names the tag) instead of
 * integer arithmetic on bit patterns. The harness recognises that tag in a
 * build failure and explains it (harness/build_units.py, first_error).
 *
 * v2s is the 2-lane vector of short, the mask type of __builtin_shuffle.
 *
 * __builtin_shuffle is GCC's generic vector permutation. Clang has only
 * __builtin_shufflevector, whose indices must be constants. On clang the name
 * is mapped, as an object-like macro, to overloaded functions, so a mask
 * written inline as a compound literal, `(v2s){0, 0}`, keeps its commas (a
 * function-like macro would split its arguments there). GCC's semantics, for
 * an N-lane vector:
 *     __builtin_shuffle(a, mask)     r[i] = a[mask[i] mod N]
 *     __builtin_shuffle(a, b, mask)  r[i] = k < N ? a[k] : b[k - N], k = mask[i] mod 2N
 * with "mod" taken on the bits, as GCC does; N is the lane count (2 for the
 * 16-bit pairs these libraries shuffle; 2- and 4-lane vectors of char, short,
 * int and float are covered too). Another vector type is a compile error that
 * names ptl_builtin_shuffle.
 */
#ifndef PTL_TOOLCHAIN_TYPES_H
#define PTL_TOOLCHAIN_TYPES_H

#ifndef PTL_FLOAT16_ARITHMETIC
#if defined(__FLT16_MANT_DIG__)
#define PTL_FLOAT16_ARITHMETIC 1
#else
#define PTL_FLOAT16_ARITHMETIC 0
#endif
#endif

#ifndef PTL_FLOAT16ALT_ARITHMETIC
#if defined(__BFLT16_MANT_DIG__)
#define PTL_FLOAT16ALT_ARITHMETIC 1
#else
#define PTL_FLOAT16ALT_ARITHMETIC 0
#endif
#endif

#if PTL_FLOAT16_ARITHMETIC
typedef _Float16 float16;
#else
typedef struct float16_storage_only_no_arithmetic_in_this_toolchain {
    unsigned short bits;
} float16;
#endif

#if PTL_FLOAT16ALT_ARITHMETIC
typedef __bf16 float16alt;
#else
typedef struct float16alt_storage_only_no_arithmetic_in_this_toolchain {
    unsigned short bits;
} float16alt;
#endif

typedef short v2s __attribute__((vector_size(4)));

#if defined(__clang__) && defined(__has_builtin)
#if !__has_builtin(__builtin_shuffle)

/* Overloads for vector type V of N lanes with mask type M (GCC requires a
 * mask of integers as wide as V's elements, as many as its lanes). */
#define PTL_SHUFFLE_OVERLOADS_(V, M, N)                                                            \
    static inline __attribute__((overloadable, always_inline, unused)) V                         \
    ptl_builtin_shuffle(V a, M mask)                                                               \
    {                                                                                              \
        V r;                                                                                       \
        for (int i = 0; i < (N); i++)                                                              \
            r[i] = a[mask[i] & ((N) - 1)];                                                         \
        return r;                                                                                  \
    }                                                                                              \
    static inline __attribute__((overloadable, always_inline, unused)) V                         \
    ptl_builtin_shuffle(V a, V b, M mask)                                                          \
    {                                                                                              \
        V r;                                                                                       \
        for (int i = 0; i < (N); i++) {                                                            \
            int k = mask[i] & (2 * (N) - 1);                                                       \
            r[i] = k < (N) ? a[k] : b[k - (N)];                                                    \
        }                                                                                          \
        return r;                                                                                  \
    }

typedef signed char ptl_v4_char __attribute__((vector_size(4)));
typedef short ptl_v4_short __attribute__((vector_size(8)));
typedef int ptl_v2_int __attribute__((vector_size(8)));
typedef int ptl_v4_int __attribute__((vector_size(16)));
typedef float ptl_v2_float __attribute__((vector_size(8)));
typedef float ptl_v4_float __attribute__((vector_size(16)));
PTL_SHUFFLE_OVERLOADS_(v2s, v2s, 2)
PTL_SHUFFLE_OVERLOADS_(ptl_v4_char, ptl_v4_char, 4)
PTL_SHUFFLE_OVERLOADS_(ptl_v4_short, ptl_v4_short, 4)
PTL_SHUFFLE_OVERLOADS_(ptl_v2_int, ptl_v2_int, 2)
PTL_SHUFFLE_OVERLOADS_(ptl_v4_int, ptl_v4_int, 4)
PTL_SHUFFLE_OVERLOADS_(ptl_v2_float, ptl_v2_int, 2)
PTL_SHUFFLE_OVERLOADS_(ptl_v4_float, ptl_v4_int, 4)
#if PTL_FLOAT16_ARITHMETIC
typedef _Float16 ptl_v2_float16 __attribute__((vector_size(4)));
PTL_SHUFFLE_OVERLOADS_(ptl_v2_float16, v2s, 2)
#endif
#if PTL_FLOAT16ALT_ARITHMETIC
typedef __bf16 ptl_v2_float16alt __attribute__((vector_size(4)));
PTL_SHUFFLE_OVERLOADS_(ptl_v2_float16alt, v2s, 2)
#endif

#define __builtin_shuffle ptl_builtin_shuffle

#endif /* no __builtin_shuffle */
#endif /* clang */

#endif /* PTL_TOOLCHAIN_TYPES_H */
