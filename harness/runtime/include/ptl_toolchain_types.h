/*
 * ptl_toolchain_types.h: the PULP toolchain's built-in types, on compilers
 * that are not the PULP toolchain.
 *
 * With the PULP toolchain `float16` (IEEE binary16), `float16alt` (bfloat16),
 * `v2f16` and `v2s` are compiler built-ins, and a published library's headers
 * use them before anything includes pmsis.h. The harness therefore
 * force-includes this header (-include) in every translation unit of the
 * library under test and of the runner's op units; pmsis.h includes it too.
 *
 * No silent integer math. A 16-bit format is an arithmetic type only where
 * the compiler has one:
 *   - float16 is _Float16 where the compiler provides it (host x86-64 GCC 12,
 *     clang for RISC-V with Zfh); GCC 12 for RISC-V has none;
 *   - float16alt is __bf16 only where the compiler says it computes in it
 *     (__BFLT16_MANT_DIG__: GCC 13+ on x86-64, GCC 14+ on RISC-V); GCC 12
 *     and clang 14 do not.
 * Elsewhere the type is a struct whose tag says "storage_only": it has the
 * size and alignment of the format, so it can be stored, copied and passed,
 * but `a * b` on it is a compile error (whose text names the tag) instead of
 * integer arithmetic on bit patterns. The harness recognises that tag in a
 * build failure and explains it (harness/build_units.py, first_error).
 *
 * v2f16 is the 2-lane vector of float16 (a storage-only pair where float16 is
 * storage-only); v2s the 2-lane vector of short, the mask type of
 * __builtin_shuffle on v2f16.
 *
 * __builtin_shuffle: GCC's generic vector permutation. Clang has only
 * __builtin_shufflevector, whose indices must be constants, so on clang the
 * macro below implements GCC's semantics for any lane count N (a power of
 * two, as vector sizes are):
 *     __builtin_shuffle(a, mask)     r[i] = a[mask[i] mod N]
 *     __builtin_shuffle(a, b, mask)  r[i] = k < N ? a[k] : b[k - N], k = mask[i] mod 2N
 * with "mod" taken on the bits (mask & (N-1)), as GCC does, so a negative
 * mask element selects the same lane as in GCC. The result has the type of a;
 * a, b and mask are evaluated once each.
 */
#ifndef PTL_TOOLCHAIN_TYPES_H
#define PTL_TOOLCHAIN_TYPES_H

#if defined(__FLT16_MANT_DIG__)
#define PTL_FLOAT16_ARITHMETIC 1
typedef _Float16 float16;
#else
#define PTL_FLOAT16_ARITHMETIC 0
typedef struct float16_storage_only_no_arithmetic_in_this_toolchain {
    unsigned short bits;
} float16;
#endif

#if defined(__BFLT16_MANT_DIG__)
#define PTL_FLOAT16ALT_ARITHMETIC 1
typedef __bf16 float16alt;
#else
#define PTL_FLOAT16ALT_ARITHMETIC 0
typedef struct float16alt_storage_only_no_arithmetic_in_this_toolchain {
    unsigned short bits;
} float16alt;
#endif

#if PTL_FLOAT16_ARITHMETIC
typedef float16 v2f16 __attribute__((vector_size(4)));
#else
typedef struct v2f16_storage_only_no_arithmetic_in_this_toolchain {
    float16 lane[2];
} v2f16;
#endif
typedef short v2s __attribute__((vector_size(4)));

#if defined(__clang__) && defined(__has_builtin)
#if !__has_builtin(__builtin_shuffle)

#define PTL_SHUFFLE_ARITY_(_1, _2, _3, name, ...) name
#define __builtin_shuffle(...) \
    PTL_SHUFFLE_ARITY_(__VA_ARGS__, PTL_SHUFFLE3_, PTL_SHUFFLE2_, PTL_SHUFFLE_NEEDS_2_OR_3_ARGS_)(__VA_ARGS__)

/* Lane count of a vector expression. */
#define PTL_LANES_(v) (sizeof(v) / sizeof((v)[0]))

/* The comma drops qualifiers: the result is a modifiable vector of a's type. */
#define PTL_SHUFFLE2_(a, mask)                                                                     \
    __extension__({                                                                                \
        __typeof__((void)0, (a)) ptl_shf_a_ = (a), ptl_shf_r_;                                     \
        __typeof__((void)0, (mask)) ptl_shf_m_ = (mask);                                           \
        _Static_assert(PTL_LANES_(ptl_shf_a_) == PTL_LANES_(ptl_shf_m_),                           \
                       "__builtin_shuffle: the mask needs as many lanes as the vector");           \
        for (unsigned long ptl_shf_i_ = 0; ptl_shf_i_ < PTL_LANES_(ptl_shf_a_); ptl_shf_i_++)      \
            ptl_shf_r_[ptl_shf_i_] =                                                               \
                ptl_shf_a_[(unsigned long)ptl_shf_m_[ptl_shf_i_] & (PTL_LANES_(ptl_shf_a_) - 1)];  \
        ptl_shf_r_;                                                                                \
    })

#define PTL_SHUFFLE3_(a, b, mask)                                                                  \
    __extension__({                                                                                \
        __typeof__((void)0, (a)) ptl_shf_a_ = (a), ptl_shf_b_ = (b), ptl_shf_r_;                   \
        __typeof__((void)0, (mask)) ptl_shf_m_ = (mask);                                           \
        _Static_assert(PTL_LANES_(ptl_shf_a_) == PTL_LANES_(ptl_shf_m_),                           \
                       "__builtin_shuffle: the mask needs as many lanes as the vectors");          \
        for (unsigned long ptl_shf_i_ = 0; ptl_shf_i_ < PTL_LANES_(ptl_shf_a_); ptl_shf_i_++) {    \
            unsigned long ptl_shf_k_ =                                                             \
                (unsigned long)ptl_shf_m_[ptl_shf_i_] & (2 * PTL_LANES_(ptl_shf_a_) - 1);          \
            ptl_shf_r_[ptl_shf_i_] = ptl_shf_k_ < PTL_LANES_(ptl_shf_a_)                           \
                                         ? ptl_shf_a_[ptl_shf_k_]                                  \
                                         : ptl_shf_b_[ptl_shf_k_ - PTL_LANES_(ptl_shf_a_)];        \
        }                                                                                          \
        ptl_shf_r_;                                                                                \
    })

#endif /* no __builtin_shuffle */
#endif /* clang */

#endif /* PTL_TOOLCHAIN_TYPES_H */
