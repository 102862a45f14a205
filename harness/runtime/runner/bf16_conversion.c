/*
 * bf16_conversion.c: the conversions to bfloat16 that clang emits as calls
 * when it computes in __bf16: __truncsfbf2 (from binary32) and __truncdfbf2
 * (from binary64). GCC 12's libgcc, which the targets link, has neither; a
 * runtime library that does keeps working, since an object's definition wins
 * over an archive's.
 *
 * Round to nearest, ties to even; a carry out of the mantissa bumps the
 * exponent, which is also how values past the largest bfloat16 become Inf.
 * A NaN stays a NaN: it is made quiet and keeps its sign and top payload bits.
 *
 * Only where the compiler computes in __bf16 (PTL_FLOAT16ALT_ARITHMETIC, from
 * the harness's compile probe): elsewhere the ABI of the type is unknown.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ptl_toolchain_types.h"

#if PTL_FLOAT16ALT_ARITHMETIC
__bf16 __truncsfbf2(float f);

__bf16 __truncsfbf2(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t bits;
    if ((x & 0x7fffffffu) > 0x7f800000u)
        bits = (uint16_t)((x >> 16) | 0x0040u);
    else
        bits = (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
    __bf16 h;
    memcpy(&h, &bits, sizeof h);
    return h;
}

__bf16 __truncdfbf2(double d);

/* binary64 -> binary32 rounded to odd, then -> bfloat16 to nearest even:
 * equal to one rounding of d, since binary32 keeps more than 2 bits beyond
 * bfloat16's precision, also across bfloat16's subnormal range (Boldo and
 * Melquiond, IEEE TC 2008). */
__bf16 __truncdfbf2(double d)
{
    float f = (float)d;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((double)f != d && d == d && (u & 0x7f800000u) != 0x7f800000u && (u & 1u) == 0u) {
        /* inexact with an even last bit: one ulp towards d (sign-magnitude) */
        if ((u & 0x7fffffffu) == 0u)
            u = (d < 0.0 ? 0x80000000u : 0u) | 1u;
        else
            u += fabs((double)f) < fabs(d) ? 1u : (uint32_t)-1;
        memcpy(&f, &u, sizeof f);
    }
    return __truncsfbf2(f);
}
#endif
