/*
 * pulp_fp16.h: the 16-bit float type `fp16` of the library and the helpers
 * that every FP16 kernel does its arithmetic through.
 *
 * Format, chosen at build time:
 *   -DPTL_FP16_IEEE  IEEE binary16 (1-5-10, subnormals, Inf, NaN);
 *   -DPTL_FP16_BF16  bfloat16 (1-8-7, the upper half of a binary32); the
 *                    default when neither is defined.
 *
 * Representation:
 *   Native mode: the compiler has an arithmetic type for the format, so `fp16`
 *     is that type and each helper is one hardware operation:
 *       - clang/GCC with Zfh and -DPTL_FP16_IEEE: _Float16;
 *       - a PULP toolchain, told by the build with -DPTL_FP16_NATIVE:
 *         `float16` (IEEE) or `float16alt` (bfloat16) from pmsis.h.
 *   Software mode (everything else, e.g. a host or an rv32imaf core without
 *     Zfh): `fp16` is a struct holding the bit pattern. It is a struct on
 *     purpose: `a * b` on two fp16 values is then a compile error instead of a
 *     silent integer multiply of bit patterns.
 *
 * Rounding (software mode; native mode is whatever the FPU does, which is
 * round-to-nearest-even under the default rounding mode):
 *   - fp16_from_f32 rounds to nearest, ties to even. Overflow gives +-Inf
 *     (a value at or past MAX + ulp/2), IEEE binary16 subnormals are produced
 *     with correct rounding, and a NaN stays a NaN: it is made quiet and keeps
 *     its sign and the top bits of its payload.
 *   - fp16_to_f32 is exact (every fp16 value is a binary32 value). A NaN keeps
 *     its quiet/signalling bit and payload.
 *   - fp16_add/sub/mul/div/fma return the correctly rounded (RNE) result of
 *     the exact operation, as the hardware would; fma rounds once.
 *
 * Why software mode is correctly rounded although it computes in binary32:
 *   Rounding the exact result first to binary32 and then to 16 bits can be
 *   wrong (double rounding: the binary32 result may land exactly on a 16-bit
 *   midpoint that the exact value was not on). So the binary32 result s is
 *   rounded to ODD instead: s is kept when it is exact, and when it is not and
 *   its last mantissa bit is 0 it is moved one binary32 ulp towards the exact
 *   value. A round-to-odd result in a format with p bits, followed by
 *   round-to-nearest-even to q <= p - 2 bits, equals direct RNE to q bits
 *   (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums: proved
 *   algorithms using rounding to odd", IEEE TC 2008): the odd last bit is a
 *   sticky bit that can never look like an exact tie, and the >= 2 extra bits
 *   keep it below the 16-bit rounding position. Here p = 24 and q = 11 (IEEE)
 *   or 8 (bfloat16); the binary32 grid is also at least 2 bits finer than the
 *   16-bit grid in the 16-bit subnormal ranges (2^-149 vs 2^-24 and 2^-133).
 *   The exact error of s comes from:
 *     - sums: TwoSum (Knuth), exact whenever s does not overflow;
 *     - products: a product of two fp16 values has at most 22 significant bits,
 *       so it is exact in binary32, except for bfloat16 products that overflow
 *       or underflow binary32 (handled below);
 *     - quotients: the remainder fmaf(-q, y, x), exact for a normal quotient.
 *       (A quotient of two <= 11-bit significands is never within 2^-24 of a
 *       16-bit midpoint it is not equal to, so this correction should never
 *       change a result; it is kept so correctness does not rest on that.)
 *   fp16_mul needs no correction: its binary32 product is exact whenever the
 *   16-bit result is not zero or Inf, and a product too small for binary32 is
 *   also below half the smallest bfloat16 subnormal (2^-134), so both round
 *   to the same signed zero.
 *   bfloat16 has the exponent range of binary32, so an fma or div whose
 *   binary32 intermediate would overflow or underflow takes a rare slow path
 *   in binary64 (53 bits: products of two bfloat16 are exact there, sums are
 *   rounded to odd with TwoSum as above, and a quotient of 8-bit numbers is
 *   never within 2^-53 of an 8-bit midpoint it is not equal to).
 *   This needs IEEE binary32 semantics: never build with -ffast-math, and not
 *   with excess precision (FLT_EVAL_METHOD must be 0); both are checked below.
 *
 * v2f16 is a 2-lane vector of fp16 (lane 0 = lower address). SIMD kernels use
 * the v2f16_* helpers; lanes are rounded independently, like the hardware.
 */
#ifndef PULP_FP16_H
#define PULP_FP16_H

#include <stdint.h>
#include <string.h>
#include <math.h>

#if defined(PTL_FP16_IEEE) && defined(PTL_FP16_BF16)
#error "pulp_fp16.h: define only one of PTL_FP16_IEEE and PTL_FP16_BF16"
#endif
#if !defined(PTL_FP16_IEEE) && !defined(PTL_FP16_BF16)
#define PTL_FP16_BF16 1
#endif

/* PTL_FP16_INLINE: helpers that are a few instructions everywhere.
 * PTL_FP16_OP: software-mode arithmetic (tens of instructions each); left to
 * the compiler so that a kernel with many MACs does not grow by the body of
 * fp16_fma per MAC. */
#define PTL_FP16_OP static inline
#if defined(__GNUC__)
#define PTL_FP16_INLINE static inline __attribute__((always_inline))
#define PTL_FP16_SLOW static __attribute__((noinline, cold, unused))
#else
#define PTL_FP16_INLINE static inline
#define PTL_FP16_SLOW static inline
#endif

/* Format parameters (stored mantissa bits, exponent range, special patterns). */
#if defined(PTL_FP16_IEEE)
#define PTL_FP16_MANT 10
#define PTL_FP16_EMIN (-14)
#define PTL_FP16_EMAX 15
#define PTL_FP16_BIAS 15
#define PTL_FP16_INF_BITS 0x7c00u
#define PTL_FP16_FORMAT_NAME "ieee-binary16"
#else
#define PTL_FP16_MANT 7
#define PTL_FP16_EMIN (-126)
#define PTL_FP16_EMAX 127
#define PTL_FP16_BIAS 127
#define PTL_FP16_INF_BITS 0x7f80u
#define PTL_FP16_FORMAT_NAME "bfloat16"
#endif
#define PTL_FP16_QNAN_BIT (1u << (PTL_FP16_MANT - 1))

#if defined(PTL_FP16_NATIVE)
#define PTL_FP16_IS_NATIVE 1
#include "pmsis.h"
#if defined(PTL_FP16_IEEE)
typedef float16 fp16;
#else
typedef float16alt fp16;
#endif
#elif defined(PTL_FP16_IEEE) && defined(__FLT16_MANT_DIG__) && defined(__riscv_zfh)
#define PTL_FP16_IS_NATIVE 1
typedef _Float16 fp16;
#else
#define PTL_FP16_IS_NATIVE 0
typedef struct { uint16_t bits; } fp16;
#endif

/* ---- bit access (both modes) --------------------------------------------- */

PTL_FP16_INLINE uint16_t fp16_bits(fp16 h)
{
    uint16_t b;
    memcpy(&b, &h, sizeof b);
    return b;
}

PTL_FP16_INLINE fp16 fp16_from_bits(uint16_t b)
{
    fp16 h;
    memcpy(&h, &b, sizeof b);
    return h;
}

/* lib_c's lane pair keeps the API name v2f16 but is its own type: the
 * toolchain's v2f16 (a PULP built-in; pmsis.h on other targets) is a vector
 * of float16 (IEEE), while lib_c's lanes are fp16 in either format, and a
 * struct in software mode. pmsis.h comes first so that its v2f16 keeps its
 * name. */
#include "pmsis.h"
#define v2f16 ptl_fp16_pair

#if PTL_FP16_IS_NATIVE
/* ======================= native mode ====================================== */

PTL_FP16_INLINE fp16 fp16_from_f32(float f) { return (fp16)f; }
PTL_FP16_INLINE float fp16_to_f32(fp16 h) { return (float)h; }
PTL_FP16_INLINE fp16 fp16_zero(void) { return (fp16)0.0f; }
PTL_FP16_INLINE fp16 fp16_add(fp16 a, fp16 b) { return a + b; }
PTL_FP16_INLINE fp16 fp16_sub(fp16 a, fp16 b) { return a - b; }
PTL_FP16_INLINE fp16 fp16_mul(fp16 a, fp16 b) { return a * b; }
PTL_FP16_INLINE fp16 fp16_div(fp16 a, fp16 b) { return a / b; }

/* a * b + c with one rounding. */
PTL_FP16_INLINE fp16 fp16_fma(fp16 a, fp16 b, fp16 c)
{
#if defined(__riscv_zfh) && defined(PTL_FP16_IEEE) && !defined(PTL_FP16_NATIVE)
    /* The asm guarantees fmadd.h; __builtin_fmaf16 becomes a libm call in
     * clang 14 and a*b+c is only fused when contraction is on. */
    fp16 r;
    __asm__("fmadd.h %0, %1, %2, %3" : "=f"(r) : "f"(a), "f"(b), "f"(c));
    return r;
#else
    /* PULP toolchain: GCC contracts this to fmadd.h / fmadd.ah under its
     * default -ffp-contract=fast (GNU C modes). */
    return a * b + c;
#endif
}

typedef fp16 v2f16 __attribute__((vector_size(2 * sizeof(fp16))));

PTL_FP16_INLINE v2f16 v2f16_pack(fp16 lo, fp16 hi) { v2f16 v = {lo, hi}; return v; }
PTL_FP16_INLINE v2f16 v2f16_splat(fp16 x) { v2f16 v = {x, x}; return v; }
PTL_FP16_INLINE fp16 v2f16_lo(v2f16 v) { return v[0]; }
PTL_FP16_INLINE fp16 v2f16_hi(v2f16 v) { return v[1]; }
/* Lane-wise a * b + c with one rounding per lane. */
PTL_FP16_INLINE v2f16 v2f16_fma(v2f16 a, v2f16 b, v2f16 c)
{
#if defined(PTL_FP16_NATIVE)
    return a * b + c; /* vfmac on the PULP SIMD FPU */
#else
    v2f16 r = {fp16_fma(a[0], b[0], c[0]), fp16_fma(a[1], b[1], c[1])};
    return r;
#endif
}

#else
/* ======================= software mode ==================================== */

#if defined(__FAST_MATH__)
#error "pulp_fp16.h: software fp16 needs exact IEEE binary32 arithmetic; do not build with -ffast-math"
#endif
#if defined(__FLT_EVAL_METHOD__) && (__FLT_EVAL_METHOD__ == 1 || __FLT_EVAL_METHOD__ == 2)
#error "pulp_fp16.h: software fp16 needs float evaluated in binary32 (FLT_EVAL_METHOD 0); use SSE math (-mfpmath=sse) on x86"
#endif

PTL_FP16_INLINE uint32_t ptl_fp16_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

PTL_FP16_INLINE float ptl_fp16_f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

#if defined(PTL_FP16_IEEE)

PTL_FP16_INLINE uint16_t ptl_fp16_bits_from_f32(float f)
{
    uint32_t x = ptl_fp16_f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x38800000u) {              /* |f| >= 2^-14: normal, Inf or NaN */
        if (ax >= 0x477ff000u) {          /* |f| >= 65520 = MAX + ulp/2 */
            if (ax > 0x7f800000u)
                return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
            return (uint16_t)(sign | 0x7c00u);
        }
        uint32_t r = ax - 0x38000000u;    /* rebias 127 -> 15 */
        r += 0xfffu + ((r >> 13) & 1u);   /* RNE on the 13 dropped bits */
        return (uint16_t)(sign | (r >> 13));
    }
    if (ax <= 0x33000000u)                /* |f| <= 2^-25: rounds to zero */
        return (uint16_t)sign;
    /* Subnormal result: count in units of 2^-24. */
    uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    unsigned shift = 126u - (ax >> 23);   /* 14..24 */
    uint32_t q = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u)))
        q++;
    return (uint16_t)(sign | q);
}

PTL_FP16_INLINE float ptl_fp16_f32_from_fp16_bits(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t em = h & 0x7fffu;
    if (em >= 0x7c00u)
        return ptl_fp16_f32_from_bits(sign | 0x7f800000u | ((em & 0x3ffu) << 13));
    if (em >= 0x0400u)
        return ptl_fp16_f32_from_bits(sign | ((em << 13) + 0x38000000u));
    float mag = (float)em * 0x1p-24f;     /* subnormal or zero, exact */
    return ptl_fp16_f32_from_bits(sign | ptl_fp16_f32_bits(mag));
}

#else /* bfloat16 */

PTL_FP16_INLINE uint16_t ptl_fp16_bits_from_f32(float f)
{
    uint32_t x = ptl_fp16_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x0040u);
    /* RNE on the low 16 bits; a carry out of the mantissa bumps the exponent,
     * which is also how values past MAX + ulp/2 become Inf. */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

PTL_FP16_INLINE float ptl_fp16_f32_from_fp16_bits(uint16_t h)
{
    return ptl_fp16_f32_from_bits((uint32_t)h << 16);
}

#endif

PTL_FP16_INLINE fp16 fp16_from_f32(float f) { return fp16_from_bits(ptl_fp16_bits_from_f32(f)); }
PTL_FP16_INLINE float fp16_to_f32(fp16 h) { return ptl_fp16_f32_from_fp16_bits(fp16_bits(h)); }
PTL_FP16_INLINE fp16 fp16_zero(void) { return fp16_from_bits(0); }

/* Round-to-odd of the exact value s + err, where s = RN32(exact) and err is
 * the exact error. A zero s with a nonzero err cannot come from a sum or a
 * normal quotient; it is still mapped to the smallest subnormal of err's sign
 * so that the sticky information survives. */
PTL_FP16_INLINE float ptl_fp16_f32_round_odd(float s, float err)
{
    uint32_t sb = ptl_fp16_f32_bits(s);
    if (err != 0.0f && (sb & 1u) == 0u && (sb & 0x7f800000u) != 0x7f800000u) {
        uint32_t eb = ptl_fp16_f32_bits(err);
        if ((sb & 0x7fffffffu) == 0u)
            sb = (eb & 0x80000000u) | 1u;
        else if ((sb ^ eb) & 0x80000000u)
            sb -= 1u;                     /* exact is nearer zero */
        else
            sb += 1u;                     /* exact is farther from zero */
    }
    return ptl_fp16_f32_from_bits(sb);
}

/* RNE to fp16 of x + y (binary32 operands, exact sum). */
PTL_FP16_INLINE fp16 ptl_fp16_round_sum(float x, float y)
{
    float s = x + y;
    float bb = s - x;
    float err = (x - (s - bb)) + (y - bb);
    return fp16_from_f32(ptl_fp16_f32_round_odd(s, err));
}

/* Rounds (-1)^sign * mant * 2^exp (mant != 0) to fp16 with RNE. Any sticky
 * information must already be in mant's last bit (round-to-odd), with at
 * least two bits below the fp16 rounding position. */
PTL_FP16_INLINE uint16_t ptl_fp16_round_scaled(uint16_t sign, uint64_t mant, int exp)
{
    int lead = 63;
    while (!((mant >> lead) & 1u))
        lead--;
    int e_top = exp + lead;
    if (e_top > PTL_FP16_EMAX)
        return (uint16_t)(sign | PTL_FP16_INF_BITS);
    int lsb = (e_top >= PTL_FP16_EMIN ? e_top : PTL_FP16_EMIN) - PTL_FP16_MANT;
    int drop = lsb - exp;
    uint64_t q, rem, half;
    if (drop <= 0) {
        q = mant << -drop;
        rem = 0;
        half = 1;
    } else if (drop > 64) {
        return sign;
    } else if (drop == 64) {
        q = 0;
        rem = mant;
        half = (uint64_t)1 << 63;
    } else {
        q = mant >> drop;
        rem = mant & (((uint64_t)1 << drop) - 1u);
        half = (uint64_t)1 << (drop - 1);
    }
    if (rem > half || (rem == half && (q & 1u)))
        q++;
    uint32_t bits;
    if (e_top >= PTL_FP16_EMIN) /* q holds the implicit bit, which bumps the exponent field */
        bits = ((uint32_t)(e_top + PTL_FP16_BIAS - 1) << PTL_FP16_MANT) + (uint32_t)q;
    else
        bits = (uint32_t)q;
    if (bits > PTL_FP16_INF_BITS)
        bits = PTL_FP16_INF_BITS;
    return (uint16_t)(sign | bits);
}

/* RNE of a binary64 value to fp16 (used by the binary64 slow paths). */
PTL_FP16_INLINE uint16_t ptl_fp16_bits_from_f64(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    uint16_t sign = (uint16_t)((u >> 48) & 0x8000u);
    unsigned e = (unsigned)(u >> 52) & 0x7ffu;
    uint64_t m = u & (((uint64_t)1 << 52) - 1u);
    if (e == 0x7ffu) {
        if (m == 0)
            return (uint16_t)(sign | PTL_FP16_INF_BITS);
        return (uint16_t)(sign | PTL_FP16_INF_BITS | PTL_FP16_QNAN_BIT |
                          (uint16_t)((m >> (52 - PTL_FP16_MANT)) & ((1u << PTL_FP16_MANT) - 1u)));
    }
    if (e == 0) {
        if (m == 0)
            return sign;
        return ptl_fp16_round_scaled(sign, m, -1074);
    }
    return ptl_fp16_round_scaled(sign, m | ((uint64_t)1 << 52), (int)e - 1075);
}

PTL_FP16_INLINE double ptl_fp16_f64_round_odd(double s, double err)
{
    uint64_t sb, eb;
    memcpy(&sb, &s, sizeof sb);
    memcpy(&eb, &err, sizeof eb);
    const uint64_t sign = (uint64_t)1 << 63, expo = (uint64_t)0x7ff << 52;
    if (err != 0.0 && (sb & 1u) == 0u && (sb & expo) != expo) {
        if ((sb & ~sign) == 0u)
            sb = (eb & sign) | 1u;
        else if ((sb ^ eb) & sign)
            sb -= 1u;
        else
            sb += 1u;
    }
    memcpy(&s, &sb, sizeof s);
    return s;
}

/* bfloat16 fma whose binary32 product over/underflows: all in binary64. */
PTL_FP16_SLOW fp16 ptl_fp16_fma_wide(float x, float y, float z)
{
    double p = (double)x * (double)y; /* exact: <= 16 bits, exponent >= -266 */
    double zd = (double)z;
    double s = p + zd;
    double bb = s - p;
    double err = (p - (s - bb)) + (zd - bb);
    return fp16_from_bits(ptl_fp16_bits_from_f64(ptl_fp16_f64_round_odd(s, err)));
}

/* bfloat16 division whose binary32 quotient or remainder leaves the normal
 * range: one binary64 division, then one rounding (see the header comment). */
PTL_FP16_SLOW fp16 ptl_fp16_div_wide(float x, float y)
{
    return fp16_from_bits(ptl_fp16_bits_from_f64((double)x / (double)y));
}

PTL_FP16_OP fp16 fp16_add(fp16 a, fp16 b)
{
    return ptl_fp16_round_sum(fp16_to_f32(a), fp16_to_f32(b));
}

PTL_FP16_OP fp16 fp16_sub(fp16 a, fp16 b)
{
    return ptl_fp16_round_sum(fp16_to_f32(a), -fp16_to_f32(b));
}

PTL_FP16_OP fp16 fp16_mul(fp16 a, fp16 b)
{
    return fp16_from_f32(fp16_to_f32(a) * fp16_to_f32(b));
}

/* a * b + c with one rounding. */
PTL_FP16_OP fp16 fp16_fma(fp16 a, fp16 b, fp16 c)
{
    float x = fp16_to_f32(a), y = fp16_to_f32(b), z = fp16_to_f32(c);
    float p = x * y;
#if defined(PTL_FP16_BF16)
    /* p is exact when 2^-120 <= |p| <= 2^120, or when a factor is zero. */
    float ap = fabsf(p);
    if (ap < 0x1p-120f ? (x != 0.0f && y != 0.0f) : !(ap <= 0x1p120f))
        return ptl_fp16_fma_wide(x, y, z);
#endif
    return ptl_fp16_round_sum(p, z);
}

PTL_FP16_OP fp16 fp16_div(fp16 a, fp16 b)
{
    float x = fp16_to_f32(a), y = fp16_to_f32(b);
    float q = x / y;
#if defined(PTL_FP16_BF16)
    /* The remainder below is exact only if q is normal and |x| is far enough
     * above the binary32 subnormal range. */
    float aq = fabsf(q);
    if (x != 0.0f && !(fabsf(x) >= 0x1p-100f && aq >= 0x1p-120f && aq <= 0x1p120f))
        return ptl_fp16_div_wide(x, y);
#endif
    uint32_t qb = ptl_fp16_f32_bits(q);
    if ((qb & 1u) == 0u && (qb & 0x7fffffffu) != 0u && (qb & 0x7f800000u) != 0x7f800000u) {
        float r = fmaf(-q, y, x); /* exact: x - q*y */
        if (r != 0.0f) {
            /* x/y - q = r/y: away from zero when sign(r/y) == sign(q). */
            uint32_t dir = (ptl_fp16_f32_bits(r) ^ ptl_fp16_f32_bits(y) ^ qb) & 0x80000000u;
            qb += dir ? (uint32_t)-1 : 1u;
        }
    }
    return fp16_from_f32(ptl_fp16_f32_from_bits(qb));
}

typedef struct { fp16 lo, hi; } v2f16;

PTL_FP16_INLINE v2f16 v2f16_pack(fp16 lo, fp16 hi) { v2f16 v; v.lo = lo; v.hi = hi; return v; }
PTL_FP16_INLINE v2f16 v2f16_splat(fp16 x) { return v2f16_pack(x, x); }
PTL_FP16_INLINE fp16 v2f16_lo(v2f16 v) { return v.lo; }
PTL_FP16_INLINE fp16 v2f16_hi(v2f16 v) { return v.hi; }
/* Lane-wise a * b + c with one rounding per lane. */
PTL_FP16_OP v2f16 v2f16_fma(v2f16 a, v2f16 b, v2f16 c)
{
    return v2f16_pack(fp16_fma(a.lo, b.lo, c.lo), fp16_fma(a.hi, b.hi, c.hi));
}

#endif /* software mode */

/* Two consecutive fp16 from memory that may be only 2-byte aligned. */
PTL_FP16_INLINE v2f16 v2f16_load(const fp16 *p) { return v2f16_pack(p[0], p[1]); }
PTL_FP16_INLINE v2f16 v2f16_zero(void) { return v2f16_splat(fp16_zero()); }

#endif /* PULP_FP16_H */
