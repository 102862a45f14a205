/*
 * bf16_conversion.c: the binary32 -> bfloat16 conversion that clang emits as
 * a call (__truncsfbf2) when it computes in __bf16. GCC 12's libgcc, which
 * the targets link, does not have it; a runtime library that does keeps
 * working, since an object's definition wins over an archive's.
 *
 * Round to nearest, ties to even; a carry out of the mantissa bumps the
 * exponent, which is also how values past the largest bfloat16 become Inf.
 * A NaN stays a NaN: it is made quiet and keeps its sign and top payload bits.
 *
 * Only where the compiler computes in __bf16 (PTL_FLOAT16ALT_ARITHMETIC, from
 * the harness's compile probe): elsewhere the ABI of the type is unknown.
 */
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
#endif
