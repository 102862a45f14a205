/*
 * test_kernels.c: host specification tests for lib_c's fp16 helpers, matmul
 * kernels, mm managers and linear layers, run on the pthreads cluster shim.
 *
 * Every result is checked against an independent double-precision reference
 * written here from the math (not from the library's algorithms):
 *   - fp16 rounding: an exact value is represented as hi + lo (hi a double,
 *     lo its exact error) and rounded to the 16-bit grid by scaling and
 *     floor, with ties broken by the sign of lo, then by evenness;
 *   - matmul: naive double sums, tolerance gamma(K+1) * sum_k |a_ik b_kj|
 *     in the accumulation precision (+ K subnormal steps for fp16), where
 *     gamma(n) = n u / (1 - n u) is the classic bound for n roundings.
 * The checker itself is tested too: a result off by a few tolerances must be
 * reported, or the sweep proves nothing.
 *
 * Usage: test_kernels [--quick]   (--quick: smaller shape sweep, for slow
 * runs such as sequenced team orders or sanitizers). Exit status 0 = all passed.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Only the headers under test, so that other work in progress under lib_c/
 * cannot break this build. */
#include "pulp_fp16.h"
#include "pulp_linear_fp16.h"
#include "pulp_linear_fp32.h"
#include "pulp_matmul_fp16.h"
#include "pulp_matmul_fp32.h"

/* ---- bookkeeping ---------------------------------------------------------- */

static long n_checks, n_failures;

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        n_checks++;                                                                      \
        if (!(cond)) {                                                                   \
            n_failures++;                                                                \
            if (n_failures <= 40) {                                                      \
                printf("FAIL %s:%d: ", __FILE__, __LINE__);                              \
                printf(__VA_ARGS__);                                                     \
                printf("\n");                                                            \
            }                                                                            \
        }                                                                                \
    } while (0)

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng_u64(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static uint32_t rng_u32(void) { return (uint32_t)(rng_u64() >> 32); }
static double rng_unit(void) { return (double)(rng_u64() >> 11) * 0x1p-53 * 2.0 - 1.0; }

static void section(const char *name)
{
    static long last_checks, last_failures;
    if (name == NULL || last_checks != n_checks)
        printf("  ... %ld checks, %ld failures\n", n_checks - last_checks,
               n_failures - last_failures);
    last_checks = n_checks;
    last_failures = n_failures;
    if (name)
        printf("[%s]\n", name);
    fflush(stdout);
}

/* ---- reference fp16 format (from the format's definition) ---------------- */

#if defined(PTL_FP16_IEEE)
enum { F_MANT = 10, F_EMIN = -14, F_EMAX = 15, F_BIAS = 15 };
#else
enum { F_MANT = 7, F_EMIN = -126, F_EMAX = 127, F_BIAS = 127 };
#endif
#define F_EXP_MASK ((uint16_t)(((1u << (15 - F_MANT)) - 1u) << F_MANT))
#define F_MANT_MASK ((uint16_t)((1u << F_MANT) - 1u))

static int ref_isnan(uint16_t h) { return (h & F_EXP_MASK) == F_EXP_MASK && (h & F_MANT_MASK); }

/* Value of a 16-bit pattern (NaN -> NaN). */
static double ref_decode(uint16_t h)
{
    int sign = h >> 15;
    int e = (h & F_EXP_MASK) >> F_MANT;
    int m = h & F_MANT_MASK;
    double v;
    if (e == (F_EXP_MASK >> F_MANT))
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp((double)m, F_EMIN - F_MANT);
    else
        v = ldexp((double)(m | (1 << F_MANT)), e - F_BIAS - F_MANT);
    return sign ? -v : v;
}

/* Pattern of a value that is exactly representable (or +-Inf, +-0). */
static uint16_t ref_encode(double r)
{
    uint16_t sign = signbit(r) ? 0x8000u : 0u;
    double ar = fabs(r);
    if (isinf(ar))
        return sign | F_EXP_MASK;
    if (ar == 0.0)
        return sign;
    int e;
    frexp(ar, &e);
    int E = e - 1;
    if (E < F_EMIN)
        return sign | (uint16_t)(ar / ldexp(1.0, F_EMIN - F_MANT));
    return sign | (uint16_t)((E + F_BIAS) << F_MANT) |
           (uint16_t)(ar / ldexp(1.0, E - F_MANT) - (double)(1 << F_MANT));
}

/* RNE of the exact value hi + lo to the format, lo_sign = sign of lo (lo is
 * below half an ulp of hi). Returns the pattern; NaN in -> -1. */
static int ref_round(double hi, int lo_sign)
{
    if (isnan(hi))
        return -1;
    if (isinf(hi) || hi == 0.0)
        return ref_encode(hi);
    double ax = fabs(hi);
    int e;
    frexp(ax, &e);
    int E = e - 1 < F_EMIN ? F_EMIN : e - 1;
    double scale = ldexp(1.0, E - F_MANT);
    double t = ax / scale, fl = floor(t), frac = t - fl;
    int rel = hi > 0 ? lo_sign : -lo_sign; /* > 0: exact is farther from zero */
    int up = frac > 0.5 || (frac == 0.5 && (rel > 0 || (rel == 0 && fmod(fl, 2.0) != 0.0)));
    double r = (fl + up) * scale;
    if (r >= ldexp(1.0, F_EMAX + 1))
        r = INFINITY;
    return ref_encode(copysign(r, hi));
}

static int sgn(double x) { return (x > 0) - (x < 0); }

/* Exact sum as hi + lo (TwoSum in double). */
static int ref_add(double x, double y)
{
    double s = x + y, bb = s - x, err = (x - (s - bb)) + (y - bb);
    return ref_round(s, isfinite(s) ? sgn(err) : 0);
}
static int ref_mul(double x, double y) { return ref_round(x * y, 0); /* exact in double */ }
static int ref_fma(double x, double y, double z)
{
    if (isinf(x * y) || isnan(x * y))
        return ref_round(x * y + z, 0);
    return ref_add(x * y, z);
}
static int ref_div(double x, double y)
{
    double q = x / y;
    if (!isfinite(q) || q == 0.0)
        return ref_round(q, 0);
    double r = fma(-q, y, x); /* exact remainder of a normal double quotient */
    return ref_round(q, sgn(r) * sgn(y));
}

static int same_result(uint16_t got, int want)
{
    if (want < 0)
        return ref_isnan(got);
    return got == (uint16_t)want;
}

/* ---- fp16 helper tests ---------------------------------------------------- */

static uint16_t gen_finite16(void)
{
    for (;;) {
        uint16_t h = (uint16_t)rng_u32();
        if ((h & F_EXP_MASK) != F_EXP_MASK)
            return h;
    }
}

/* A finite value with exponent near `near` (within +-spread), random sign and
 * mantissa: makes sums and fmas whose exact result needs many bits. */
static uint16_t gen_near16(int near, int spread)
{
    int e = near + (int)(rng_u32() % (unsigned)(2 * spread + 1)) - spread;
    int emax_field = (F_EXP_MASK >> F_MANT) - 1;
    if (e < 0)
        e = 0;
    if (e > emax_field)
        e = emax_field;
    return (uint16_t)((rng_u32() & 0x8000u) | ((unsigned)e << F_MANT) | (rng_u32() & F_MANT_MASK));
}

static void test_fp16_conversions(void)
{
    section("fp16: all 65536 patterns decode exactly and round-trip through float");
    for (uint32_t b = 0; b < 65536; b++) {
        uint16_t h = (uint16_t)b;
        float f = fp16_to_f32(fp16_from_bits(h));
        double want = ref_decode(h);
        if (isnan(want)) {
            uint32_t fb;
            memcpy(&fb, &f, 4);
            CHECK(isnan(f) && (fb >> 31) == (uint32_t)(h >> 15),
                  "to_f32(0x%04x) should be a NaN of the same sign", b);
            uint16_t back = fp16_bits(fp16_from_f32(f));
            CHECK(ref_isnan(back) && (back & 0x8000u) == (h & 0x8000u) &&
                      (back & (1u << (F_MANT - 1))) &&
                      (back & (F_MANT_MASK >> 1)) == (h & (F_MANT_MASK >> 1)),
                  "NaN 0x%04x -> float -> 0x%04x should stay NaN, quiet, same sign/payload", b,
                  back);
        } else {
            CHECK((double)f == want && !signbit(f) == !signbit(want),
                  "to_f32(0x%04x) = %.9g, want %.9g", b, f, want);
            uint16_t back = fp16_bits(fp16_from_f32(f));
            CHECK(back == h, "round trip 0x%04x -> %.9g -> 0x%04x", b, f, back);
        }
    }

    section("fp16: float -> fp16 RNE at every tie, next to it, and on random floats");
    for (uint32_t b = 0; b < 0x7fffu; b++) {
        uint16_t h = (uint16_t)b;
        if (ref_isnan(h) || (h & F_EXP_MASK) == F_EXP_MASK)
            continue;
        double lo = ref_decode(h);
        double hi = (uint16_t)(b + 1) == F_EXP_MASK
                        ? ldexp(2.0 - ldexp(1.0, -F_MANT), F_EMAX) + ldexp(1.0, F_EMAX - F_MANT)
                        : ref_decode((uint16_t)(b + 1));
        double mid = (lo + hi) / 2; /* exact in double, and in float for our formats */
        float fm = (float)mid;
        float probes[5] = {fm, nextafterf(fm, 0.0f), nextafterf(fm, INFINITY),
                           (float)(lo + (hi - lo) * 0.25), (float)(lo + (hi - lo) * 0.75)};
        for (int p = 0; p < 5; p++)
            for (int s = 0; s < 2; s++) {
                float x = s ? -probes[p] : probes[p];
                uint16_t got = fp16_bits(fp16_from_f32(x));
                int want = ref_round((double)x, 0);
                CHECK(same_result(got, want), "from_f32(%.9g) = 0x%04x, want 0x%04x", x, got,
                      want);
            }
    }
    for (int n = 0; n < 4000000; n++) {
        uint32_t fb = rng_u32();
        float x;
        memcpy(&x, &fb, 4);
        uint16_t got = fp16_bits(fp16_from_f32(x));
        int want = ref_round((double)x, 0);
        CHECK(same_result(got, want), "from_f32(%.9g [0x%08x]) = 0x%04x, want 0x%04x", x, fb,
              got, want);
    }
    const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, 3.4028235e38f, -3.4028235e38f,
                              65504.0f, 65519.99f, 65520.0f, 1e-45f, -1e-45f, 1.17549435e-38f,
                              5.9604645e-8f, 2.9802322e-8f, 2.9802326e-8f, 8.9406967e-8f};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) {
        uint16_t got = fp16_bits(fp16_from_f32(specials[i]));
        int want = ref_round((double)specials[i], 0);
        CHECK(same_result(got, want), "from_f32(%.9g) = 0x%04x, want 0x%04x", specials[i], got,
              want);
    }
    CHECK(fp16_bits(fp16_zero()) == 0, "fp16_zero() should be +0");
}

static void check_binop(const char *op, uint16_t a, uint16_t b, uint16_t got, int want)
{
    CHECK(same_result(got, want), "%s(0x%04x [%.9g], 0x%04x [%.9g]) = 0x%04x, want 0x%04x", op,
          a, ref_decode(a), b, ref_decode(b), got, want);
}

static void test_fp16_arithmetic(void)
{
    section("fp16: add/sub/mul/div/fma vs correctly rounded reference");
    const int n = 1500000;
    for (int i = 0; i < n; i++) {
        /* Half the operands are any pattern (Inf, NaN, subnormals included),
         * half are near each other so that sums cancel or need many bits. */
        uint16_t a, b, c;
        if (i & 1) {
            a = (uint16_t)rng_u32();
            b = (uint16_t)rng_u32();
            c = (uint16_t)rng_u32();
        } else {
            a = gen_finite16();
            b = gen_near16((a & F_EXP_MASK) >> F_MANT, 2 * F_MANT + 6);
            c = gen_finite16();
        }
        fp16 fa = fp16_from_bits(a), fb = fp16_from_bits(b), fc = fp16_from_bits(c);
        double x = ref_decode(a), y = ref_decode(b), z = ref_decode(c);
        check_binop("add", a, b, fp16_bits(fp16_add(fa, fb)), ref_add(x, y));
        check_binop("sub", a, b, fp16_bits(fp16_sub(fa, fb)), ref_add(x, -y));
        check_binop("mul", a, c, fp16_bits(fp16_mul(fa, fc)), ref_mul(x, z));
        check_binop("div", a, c, fp16_bits(fp16_div(fa, fc)), ref_div(x, z));
        int wf = ref_fma(x, z, y);
        uint16_t gf = fp16_bits(fp16_fma(fa, fc, fb));
        CHECK(same_result(gf, wf), "fma(0x%04x, 0x%04x, 0x%04x) = 0x%04x, want 0x%04x", a, c, b,
              gf, wf);
    }

    section("fp16: fma whose addend sits 0..40 binades below/above the product");
    for (int i = 0; i < n; i++) {
        uint16_t a = gen_finite16(), b = gen_finite16();
        double p = ref_decode(a) * ref_decode(b);
        int pe = 0;
        if (p != 0.0)
            frexp(p, &pe);
        int field = pe - 1 + F_BIAS;
        uint16_t c = gen_near16(field - (int)(rng_u32() % 41) + (int)(rng_u32() % 3), 0);
        fp16 r = fp16_fma(fp16_from_bits(a), fp16_from_bits(b), fp16_from_bits(c));
        int want = ref_fma(ref_decode(a), ref_decode(b), ref_decode(c));
        CHECK(same_result(fp16_bits(r), want),
              "fma(0x%04x, 0x%04x, 0x%04x) = 0x%04x, want 0x%04x", a, b, c, fp16_bits(r), want);
    }

    section("fp16: v2f16 lanes are independent fp16_fma");
    for (int i = 0; i < 100000; i++) {
        fp16 a0 = fp16_from_bits(gen_finite16()), a1 = fp16_from_bits(gen_finite16());
        fp16 b0 = fp16_from_bits(gen_finite16()), b1 = fp16_from_bits(gen_finite16());
        fp16 c0 = fp16_from_bits(gen_finite16()), c1 = fp16_from_bits(gen_finite16());
        v2f16 r = v2f16_fma(v2f16_pack(a0, a1), v2f16_pack(b0, b1), v2f16_pack(c0, c1));
        CHECK(fp16_bits(v2f16_lo(r)) == fp16_bits(fp16_fma(a0, b0, c0)) &&
                  fp16_bits(v2f16_hi(r)) == fp16_bits(fp16_fma(a1, b1, c1)),
              "v2f16_fma lane mismatch");
        fp16 mem[2] = {a0, a1};
        v2f16 l = v2f16_load(mem);
        CHECK(fp16_bits(v2f16_lo(l)) == fp16_bits(a0) && fp16_bits(v2f16_hi(l)) == fp16_bits(a1),
              "v2f16_load lane order");
    }
}

/* ---- matmul harness ------------------------------------------------------- */

typedef void (*kernel_fn)(void *);
struct named_kernel {
    const char *name;
    kernel_fn fn;
};

/* The API's index tables (TRAINLIB_API.md), spelled out independently. */
static const struct named_kernel fp32_kernels[24] = {
    {"mm", mm}, {"mm_M", mm_M}, {"mm_u2", mm_u2}, {"mm_unroll_1x2", mm_unroll_1x2},
    {"mm_unroll_1x4", mm_unroll_1x4}, {"mm_unroll_1x8", mm_unroll_1x8},
    {"mm_unroll_2x1", mm_unroll_2x1}, {"mm_unroll_4x1", mm_unroll_4x1},
    {"mm_unroll_8x1", mm_unroll_8x1}, {"mm_unroll_2x2", mm_unroll_2x2},
    {"mm_unroll_2x4", mm_unroll_2x4}, {"mm_unroll_4x2", mm_unroll_4x2},
    {"mm_unroll_4x4", mm_unroll_4x4}, {"mm_M_u2", mm_M_u2},
    {"mm_M_unroll_1x2", mm_M_unroll_1x2}, {"mm_M_unroll_1x4", mm_M_unroll_1x4},
    {"mm_M_unroll_1x8", mm_M_unroll_1x8}, {"mm_M_unroll_2x1", mm_M_unroll_2x1},
    {"mm_M_unroll_4x1", mm_M_unroll_4x1}, {"mm_M_unroll_8x1", mm_M_unroll_8x1},
    {"mm_M_unroll_2x2", mm_M_unroll_2x2}, {"mm_M_unroll_2x4", mm_M_unroll_2x4},
    {"mm_M_unroll_4x2", mm_M_unroll_4x2}, {"mm_M_unroll_4x4", mm_M_unroll_4x4},
};
static const struct named_kernel fp16_kernels[9] = {
    {"mm_fp16", mm_fp16}, {"mm_M_fp16", mm_M_fp16}, {"mm_fp16_SIMD_2x4", mm_fp16_SIMD_2x4},
    {"mm_fp16_SIMD_4x8", mm_fp16_SIMD_4x8}, {"mm_M_fp16_SIMD_2x4", mm_M_fp16_SIMD_2x4},
    {"mm_M_fp16_SIMD_4x8", mm_M_fp16_SIMD_4x8}, {"mm_fp16_unroll_2x1", mm_fp16_unroll_2x1},
    {"mm_fp16_unroll_4x1", mm_fp16_unroll_4x1}, {"mm_fp16_unroll_8x1", mm_fp16_unroll_8x1},
};

#define GUARD 8
static const uint32_t CANARY32 = 0x7fc0dead;
static const uint16_t CANARY16 = 0x7fd5;

static double gamma_n(int n, double u)
{
    double nu = n * u;
    return nu < 0.5 ? nu / (1 - nu) : 1e300;
}

/* Double reference of A * B (B K x M or M x K) plus sum |a b| per element. */
static void ref_matmul(const double *A, const double *B, int N, int M, int K, int trans_B,
                       double *C, double *absC)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            double s = 0, sa = 0;
            for (int k = 0; k < K; k++) {
                double b = trans_B ? B[j * K + k] : B[k * M + j];
                s += A[i * K + k] * b;
                sa += fabs(A[i * K + k] * b);
            }
            C[i * M + j] = s;
            absC[i * M + j] = sa;
        }
}

/* Elements of got (n values) outside want +- tol; the first is reported. */
static int count_bad(const double *got, const double *want, const double *absw, int n, int K,
                     double u, double abs_floor, const char *what)
{
    int bad = 0;
    for (int e = 0; e < n; e++) {
        double tol = gamma_n(K + 1, u) * absw[e] + abs_floor;
        double err = fabs(got[e] - want[e]);
        if (!(err <= tol)) {
            if (bad == 0 && n_failures < 40)
                printf("FAIL %s: element %d = %.9g, want %.9g (tol %.3g)\n", what, e, got[e],
                       want[e], tol);
            bad++;
        }
    }
    return bad;
}

struct sweep {
    const int *sizes;
    int n_sizes;
    int max_cores;
};

static const int full_sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17};
static const int quick_sizes[] = {1, 3, 8, 17};

static void run_team(int cores, kernel_fn fn, void *args)
{
    ptl_num_cores = cores;
    pi_cl_team_fork(cores, fn, args);
}

/* ---- FP32 matmul ---------------------------------------------------------- */

/* Runs every FP32 kernel on one shape for 1..max_cores cores; checks values,
 * that the guard cells around C are untouched, and that the result does not
 * depend on the core count (slices never change an element's computation). */
static void check_fp32_shape(int N, int M, int K, int trans_B, int max_cores)
{
    const int nA = N * K, nB = K * M, nC = N * M;
    float *A = malloc(sizeof(float) * nA), *B = malloc(sizeof(float) * nB);
    float *Cbuf = malloc(sizeof(float) * (nC + 2 * GUARD)), *C = Cbuf + GUARD;
    float *C1 = malloc(sizeof(float) * nC);
    double *Ad = malloc(sizeof(double) * nA), *Bd = malloc(sizeof(double) * nB);
    double *R = malloc(sizeof(double) * nC), *Rabs = malloc(sizeof(double) * nC);
    double *G = malloc(sizeof(double) * nC);
    for (int e = 0; e < nA; e++)
        Ad[e] = A[e] = (float)rng_unit();
    for (int e = 0; e < nB; e++)
        Bd[e] = B[e] = (float)rng_unit();
    ref_matmul(Ad, Bd, N, M, K, trans_B, R, Rabs);

    for (int kidx = 0; kidx < 24; kidx++) {
        for (int cores = 1; cores <= max_cores; cores++) {
            for (int e = 0; e < nC + 2 * GUARD; e++)
                memcpy(&Cbuf[e], &CANARY32, 4);
            struct matMul_args args;
            memset(&args, 0, sizeof args);
            args.A = A, args.B = B, args.C = C, args.N = N, args.M = M, args.K = K;
            args.trans_B = trans_B;
            run_team(cores, fp32_kernels[kidx].fn, &args);
            char what[128];
            snprintf(what, sizeof what, "%s N=%d M=%d K=%d trans_B=%d cores=%d",
                     fp32_kernels[kidx].name, N, M, K, trans_B, cores);
            for (int e = 0; e < nC; e++)
                G[e] = C[e];
            int bad = count_bad(G, R, Rabs, nC, K, 0x1p-24, 1e-300, what);
            n_checks++;
            if (bad)
                n_failures++;
            int guards_ok = 1;
            for (int g = 0; g < GUARD; g++)
                guards_ok &= !memcmp(&Cbuf[g], &CANARY32, 4) &&
                             !memcmp(&C[nC + g], &CANARY32, 4);
            CHECK(guards_ok, "%s: wrote outside C", what);
            if (cores == 1)
                memcpy(C1, C, sizeof(float) * nC);
            else
                CHECK(!memcmp(C1, C, sizeof(float) * nC),
                      "%s: result differs from the 1-core result", what);
        }
    }
    free(A), free(B), free(Cbuf), free(C1), free(Ad), free(Bd), free(R), free(Rabs), free(G);
}

static void test_fp32_matmul(const struct sweep *sw)
{
    section("fp32 matmul: every kernel x trans_B x cores x shapes vs double reference");
    for (int t = 0; t < 2; t++)
        for (int a = 0; a < sw->n_sizes; a++)
            for (int b = 0; b < sw->n_sizes; b++)
                for (int c = 0; c < sw->n_sizes; c++)
                    check_fp32_shape(sw->sizes[a], sw->sizes[b], sw->sizes[c], t, sw->max_cores);
    for (int t = 0; t < 2; t++) {
        check_fp32_shape(64, 64, 64, t, sw->max_cores);
        check_fp32_shape(31, 37, 41, t, sw->max_cores);
        /* K = 35: past the unrolled tiles' PTL_MM_LONG_K, with 3 k left
         * after the passes of 4 (both straight rest passes run). */
        check_fp32_shape(13, 29, 35, t, sw->max_cores);
        /* The 16-k tiles (_k16) take their first pass apart: K = 32 is that
         * pass and one loop pass, K = 47 leaves 15 k after them (all four
         * straight rest passes run). */
        check_fp32_shape(11, 14, 32, t, sw->max_cores);
        check_fp32_shape(12, 9, 47, t, sw->max_cores);
    }
}

/* ---- FP16 matmul ---------------------------------------------------------- */

static const double U16 = 0x1p-11 * (F_MANT == 10 ? 1.0 : 8.0); /* 2^-(MANT+1) */

static fp16 random_fp16(double *value)
{
    fp16 h = fp16_from_f32((float)rng_unit());
    *value = fp16_to_f32(h);
    return h;
}

static void check_fp16_shape(int N, int M, int K, int trans_B, int max_cores)
{
    const int nA = N * K, nB = K * M, nC = N * M;
    fp16 *A = malloc(sizeof(fp16) * nA), *B = malloc(sizeof(fp16) * nB);
    fp16 *Cbuf = malloc(sizeof(fp16) * (nC + 2 * GUARD)), *C = Cbuf + GUARD;
    uint16_t *C1 = malloc(sizeof(uint16_t) * nC);
    double *Ad = malloc(sizeof(double) * nA), *Bd = malloc(sizeof(double) * nB);
    double *R = malloc(sizeof(double) * nC), *Rabs = malloc(sizeof(double) * nC);
    double *G = malloc(sizeof(double) * nC);
    for (int e = 0; e < nA; e++)
        A[e] = random_fp16(&Ad[e]);
    for (int e = 0; e < nB; e++)
        B[e] = random_fp16(&Bd[e]);
    ref_matmul(Ad, Bd, N, M, K, trans_B, R, Rabs);
    const double sub = ldexp(1.0, F_EMIN - F_MANT) * K; /* subnormal rounding steps */

    for (int kidx = 0; kidx < 9; kidx++) {
        for (int cores = 1; cores <= max_cores; cores++) {
            for (int e = 0; e < nC + 2 * GUARD; e++)
                Cbuf[e] = fp16_from_bits(CANARY16);
            struct matMul_args_fp16 args;
            memset(&args, 0, sizeof args);
            args.A = A, args.B = B, args.C = C, args.N = N, args.M = M, args.K = K;
            args.trans_B = trans_B;
            run_team(cores, fp16_kernels[kidx].fn, &args);
            char what[128];
            snprintf(what, sizeof what, "%s N=%d M=%d K=%d trans_B=%d cores=%d",
                     fp16_kernels[kidx].name, N, M, K, trans_B, cores);
            for (int e = 0; e < nC; e++)
                G[e] = fp16_to_f32(C[e]);
            int bad = count_bad(G, R, Rabs, nC, K, U16, sub, what);
            n_checks++;
            if (bad)
                n_failures++;
            int guards_ok = 1;
            for (int g = 0; g < GUARD; g++)
                guards_ok &= fp16_bits(Cbuf[g]) == CANARY16 && fp16_bits(C[nC + g]) == CANARY16;
            CHECK(guards_ok, "%s: wrote outside C", what);
            /* All fp16 kernels sum k = 0..K-1 in order with one rounding per
             * step, so they must agree bit for bit with each other. */
            if (kidx == 0 && cores == 1) {
                for (int e = 0; e < nC; e++)
                    C1[e] = fp16_bits(C[e]);
            } else {
                int same = 1;
                for (int e = 0; e < nC; e++)
                    same &= fp16_bits(C[e]) == C1[e];
                CHECK(same, "%s: differs from mm_fp16 on 1 core", what);
            }
        }
    }
    /* The in-order fp16 sum, computed here with the (separately verified)
     * fp16_fma, is what the kernels must produce exactly. */
    int exact = 1;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            fp16 acc = fp16_zero();
            for (int k = 0; k < K; k++)
                acc = fp16_fma(A[i * K + k], trans_B ? B[j * K + k] : B[k * M + j], acc);
            exact &= fp16_bits(acc) == C1[i * M + j];
        }
    CHECK(exact, "fp16 N=%d M=%d K=%d trans_B=%d: kernels differ from the in-order fp16_fma sum",
          N, M, K, trans_B);
    free(A), free(B), free(Cbuf), free(C1), free(Ad), free(Bd), free(R), free(Rabs), free(G);
}

static void test_fp16_matmul(const struct sweep *sw)
{
    section("fp16 matmul: 9 kernels x trans_B x cores x shapes vs double reference");
    for (int t = 0; t < 2; t++)
        for (int a = 0; a < sw->n_sizes; a++)
            for (int b = 0; b < sw->n_sizes; b++)
                for (int c = 0; c < sw->n_sizes; c++)
                    check_fp16_shape(sw->sizes[a], sw->sizes[b], sw->sizes[c], t, sw->max_cores);
    for (int t = 0; t < 2; t++) {
        check_fp16_shape(64, 64, 64, t, sw->max_cores);
        check_fp16_shape(31, 37, 41, t, sw->max_cores);
    }
}

/* ---- checker self-test ---------------------------------------------------- */

static void test_checker_can_fail(void)
{
    section("checker: an off-by-a-few-tolerances result is reported");
    double want[2] = {1.0, -2.0}, absw[2] = {3.0, 3.0};
    double tol = gamma_n(8 + 1, 0x1p-24) * 3.0;
    double got_ok[2] = {1.0 + tol * 0.5, -2.0};
    double got_bad[2] = {1.0, -2.0 + tol * 3.0};
    long saved = n_failures;
    CHECK(count_bad(got_ok, want, absw, 2, 8, 0x1p-24, 0, "self-test ok") == 0,
          "within tolerance must pass");
    n_failures += 1000; /* silence the expected report */
    int bad = count_bad(got_bad, want, absw, 2, 8, 0x1p-24, 0, "self-test bad");
    n_failures -= 1000;
    CHECK(bad == 1 && n_failures == saved, "3 tolerances off must fail (bad=%d)", bad);
    double got_nan[2] = {NAN, -2.0};
    n_failures += 1000;
    bad = count_bad(got_nan, want, absw, 2, 8, 0x1p-24, 0, "self-test nan");
    n_failures -= 1000;
    CHECK(bad == 1, "NaN must fail");
}

/* ---- mm_manager ----------------------------------------------------------- */

/* The index tables (harness/runtime/include/ptl_kernels.def: the API's and
 * lib_c's own after them), as the kernels they name: mm_manager's index i
 * must run exactly api_kernels_*[i]. */
#define PTL_KERNEL(table, index, name, origin) PTL_KERNEL_##table(name)
#define PTL_KERNEL_fp32(name) name,
#define PTL_KERNEL_fp16(name)
static void (*const api_kernels_fp32[])(void *) = {
#include "ptl_kernels.def"
};
#undef PTL_KERNEL_fp32
#undef PTL_KERNEL_fp16
#define PTL_KERNEL_fp32(name)
#define PTL_KERNEL_fp16(name) name,
static void (*const api_kernels_fp16[])(void *) = {
#include "ptl_kernels.def"
};
#undef PTL_KERNEL_fp32
#undef PTL_KERNEL_fp16
#undef PTL_KERNEL

static void test_managers(void)
{
    section("mm_manager / mm_manager_fp16: names, every index, bias both ways, bad index");
    const int api_count_fp32 = (int)(sizeof api_kernels_fp32 / sizeof api_kernels_fp32[0]);
    const int api_count_fp16 = (int)(sizeof api_kernels_fp16 / sizeof api_kernels_fp16[0]);
    CHECK(pulp_mm_kernel_count_fp32 == api_count_fp32, "fp32 kernel count %d, API %d",
          pulp_mm_kernel_count_fp32, api_count_fp32);
    CHECK(pulp_mm_kernel_count_fp16 == api_count_fp16, "fp16 kernel count %d, API %d",
          pulp_mm_kernel_count_fp16, api_count_fp16);

    const int shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {17, 9, 16}, {5, 17, 3}, {16, 16, 16}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int N = shapes[s][0], M = shapes[s][1], K = shapes[s][2];
        float *A = malloc(sizeof(float) * N * K), *B = malloc(sizeof(float) * K * M);
        float *C = malloc(sizeof(float) * N * M), *bias = malloc(sizeof(float) * (N > M ? N : M));
        fp16 *Ah = malloc(sizeof(fp16) * N * K), *Bh = malloc(sizeof(fp16) * K * M);
        fp16 *Ch = malloc(sizeof(fp16) * N * M), *biash = malloc(sizeof(fp16) * (N > M ? N : M));
        float *Ckeep = malloc(sizeof(float) * N * M);
        fp16 *Chkeep = malloc(sizeof(fp16) * N * M);
        double *Ad = malloc(sizeof(double) * N * K), *Bd = malloc(sizeof(double) * K * M);
        double *Ahd = malloc(sizeof(double) * N * K), *Bhd = malloc(sizeof(double) * K * M);
        double *R = malloc(sizeof(double) * N * M), *Rabs = malloc(sizeof(double) * N * M);
        double *G = malloc(sizeof(double) * N * M), *biasd = malloc(sizeof(double) * (N > M ? N : M));
        double *biashd = malloc(sizeof(double) * (N > M ? N : M));
        for (int e = 0; e < N * K; e++)
            Ad[e] = A[e] = (float)rng_unit(), Ah[e] = random_fp16(&Ahd[e]);
        for (int e = 0; e < K * M; e++)
            Bd[e] = B[e] = (float)rng_unit(), Bh[e] = random_fp16(&Bhd[e]);
        for (int e = 0; e < (N > M ? N : M); e++)
            biasd[e] = bias[e] = (float)rng_unit(), biash[e] = random_fp16(&biashd[e]);

        for (int trans_B = 0; trans_B < 2; trans_B++)
            for (int use_bias = 0; use_bias < 2; use_bias++)
                for (int bias_t = 0; bias_t < 1 + use_bias; bias_t++)
                    for (int cores = 1; cores <= 8; cores++) {
                        /* fp32 */
                        ref_matmul(Ad, Bd, N, M, K, trans_B, R, Rabs);
                        for (int i = 0; i < N; i++)
                            for (int j = 0; j < M; j++)
                                if (use_bias) {
                                    double b = bias_t ? biasd[i] : biasd[j]; /* API: 0 per column */
                                    R[i * M + j] += b;
                                    Rabs[i * M + j] += fabs(b);
                                }
                        for (int type = 0; type < 24; type++) {
                            struct matMul_args args;
                            memset(&args, 0, sizeof args);
                            args.A = A, args.B = B, args.C = C, args.N = N, args.M = M;
                            args.K = K, args.trans_B = trans_B, args.bias = bias;
                            args.bias_dim = bias_t ? N : M, args.USE_BIASES = use_bias;
                            args.bias_transposed = bias_t;
                            struct mm_manager_args mgr = {.mm_args = &args, .layer_type = LAYER_LINEAR,
                                                          .step_type = STEP_FW, .matmul_type = type};
                            for (int e = 0; e < N * M; e++)
                                C[e] = NAN;
                            run_team(cores, mm_manager, &mgr);
                            for (int e = 0; e < N * M; e++)
                                G[e] = C[e];
                            char what[160];
                            snprintf(what, sizeof what,
                                     "mm_manager type=%d N=%d M=%d K=%d tB=%d bias=%d bt=%d cores=%d",
                                     type, N, M, K, trans_B, use_bias, bias_t, cores);
                            CHECK(count_bad(G, R, Rabs, N * M, K + 1, 0x1p-24, 1e-300, what) == 0,
                                  "%s", what);
                            if (!use_bias && type < api_count_fp32) { /* the index's kernel */
                                memcpy(Ckeep, C, sizeof(float) * N * M);
                                for (int e = 0; e < N * M; e++)
                                    C[e] = NAN;
                                run_team(cores, api_kernels_fp32[type], &args);
                                CHECK(memcmp(C, Ckeep, sizeof(float) * N * M) == 0,
                                      "%s: differs from the API's kernel at this index", what);
                            }
                        }
                        /* fp16 */
                        ref_matmul(Ahd, Bhd, N, M, K, trans_B, R, Rabs);
                        for (int i = 0; i < N; i++)
                            for (int j = 0; j < M; j++)
                                if (use_bias) {
                                    double b = bias_t ? biashd[i] : biashd[j];
                                    R[i * M + j] += b;
                                    Rabs[i * M + j] += fabs(b);
                                }
                        for (int type = 0; type < 9; type++) {
                            struct matMul_args_fp16 args;
                            memset(&args, 0, sizeof args);
                            args.A = Ah, args.B = Bh, args.C = Ch, args.N = N, args.M = M;
                            args.K = K, args.trans_B = trans_B, args.bias = biash;
                            args.bias_dim = bias_t ? N : M, args.USE_BIASES = use_bias;
                            args.bias_transposed = bias_t;
                            struct mm_manager_args_fp16 mgr = {.mm_args = &args, .layer_type = LAYER_LINEAR,
                                                               .step_type = STEP_FW, .matmul_type = type};
                            for (int e = 0; e < N * M; e++)
                                Ch[e] = fp16_from_bits(CANARY16);
                            run_team(cores, mm_manager_fp16, &mgr);
                            for (int e = 0; e < N * M; e++)
                                G[e] = fp16_to_f32(Ch[e]);
                            char what[160];
                            snprintf(what, sizeof what,
                                     "mm_manager_fp16 type=%d N=%d M=%d K=%d tB=%d bias=%d bt=%d cores=%d",
                                     type, N, M, K, trans_B, use_bias, bias_t, cores);
                            CHECK(count_bad(G, R, Rabs, N * M, K + 1, U16,
                                            ldexp(1.0, F_EMIN - F_MANT) * (K + 1), what) == 0,
                                  "%s", what);
                            if (!use_bias && type < api_count_fp16) { /* the index's kernel */
                                memcpy(Chkeep, Ch, sizeof(fp16) * N * M);
                                for (int e = 0; e < N * M; e++)
                                    Ch[e] = fp16_from_bits(CANARY16);
                                run_team(cores, api_kernels_fp16[type], &args);
                                CHECK(memcmp(Ch, Chkeep, sizeof(fp16) * N * M) == 0,
                                      "%s: differs from the API's kernel at this index", what);
                            }
                        }
                    }

        /* An unknown index must be visible: message from core 0, C all NaN. */
        for (int cores = 1; s == 1 && cores <= 8; cores += 7) {
            const int bad_types[2] = {pulp_mm_kernel_count_fp32, -1};
            for (int t = 0; t < 2; t++) {
                struct matMul_args args;
                memset(&args, 0, sizeof args);
                args.A = A, args.B = B, args.C = C, args.N = N, args.M = M, args.K = K;
                struct mm_manager_args mgr = {.mm_args = &args, .layer_type = LAYER_LINEAR,
                                              .step_type = STEP_FW, .matmul_type = bad_types[t]};
                for (int e = 0; e < N * M; e++)
                    C[e] = 0.0f;
                printf("  (expected error message follows)\n  ");
                run_team(cores, mm_manager, &mgr);
                int all_nan = 1;
                for (int e = 0; e < N * M; e++)
                    all_nan &= isnan(C[e]) != 0;
                CHECK(all_nan, "mm_manager with type %d must fill C with NaN", bad_types[t]);

                struct matMul_args_fp16 hargs;
                memset(&hargs, 0, sizeof hargs);
                hargs.A = Ah, hargs.B = Bh, hargs.C = Ch, hargs.N = N, hargs.M = M, hargs.K = K;
                struct mm_manager_args_fp16 hmgr = {.mm_args = &hargs, .layer_type = LAYER_LINEAR,
                                                    .step_type = STEP_FW,
                                                    .matmul_type = t ? -1 : pulp_mm_kernel_count_fp16};
                for (int e = 0; e < N * M; e++)
                    Ch[e] = fp16_zero();
                printf("  (expected error message follows)\n  ");
                run_team(cores, mm_manager_fp16, &hmgr);
                all_nan = 1;
                for (int e = 0; e < N * M; e++)
                    all_nan &= ref_isnan(fp16_bits(Ch[e]));
                CHECK(all_nan, "mm_manager_fp16 with a bad type must fill C with NaN");
            }
        }
        free(A), free(B), free(C), free(bias), free(Ah), free(Bh), free(Ch), free(biash), free(Ckeep), free(Chkeep);
        free(Ad), free(Bd), free(Ahd), free(Bhd), free(R), free(Rabs), free(G), free(biasd);
        free(biashd);
    }
}

/* ---- linear layers -------------------------------------------------------- */

#ifdef OPTIMIZE
#define LINEAR_TYPES_FP32 24
#define LINEAR_TYPES_FP16 9
#else
/* Without OPTIMIZE the layer must ignore opt_matmul_type_*: pass a bad one. */
#define LINEAR_TYPES_FP32 1
#define LINEAR_TYPES_FP16 1
#endif

static int linear_type(int t)
{
#ifdef OPTIMIZE
    return t;
#else
    return 99 + t;
#endif
}

static void test_linear_fp32(int in, int out, int use_bias, int cores, int type)
{
    float *x = malloc(sizeof(float) * in), *dx = malloc(sizeof(float) * in);
    float *W = malloc(sizeof(float) * in * out), *dW = malloc(sizeof(float) * in * out);
    float *y = malloc(sizeof(float) * out), *dy = malloc(sizeof(float) * out);
    float *b = malloc(sizeof(float) * out), *db = malloc(sizeof(float) * out);
    for (int i = 0; i < in; i++)
        x[i] = (float)rng_unit(), dx[i] = NAN;
    for (int e = 0; e < in * out; e++)
        W[e] = (float)rng_unit(), dW[e] = NAN;
    for (int o = 0; o < out; o++)
        b[o] = (float)rng_unit(), dy[o] = (float)rng_unit(), y[o] = NAN, db[o] = NAN;
    struct blob input = {.data = x, .diff = dx, .dim = in, .W = in, .H = 1, .C = 1};
    struct blob coeff = {.data = W, .diff = dW, .dim = in * out, .W = in, .H = out, .C = 1};
    struct blob bias = {.data = b, .diff = db, .dim = out, .W = 1, .H = 1, .C = out};
    struct blob output = {.data = y, .diff = dy, .dim = out, .W = out, .H = 1, .C = 1};
    struct Linear_args la = {.input = &input, .coeff = &coeff, .bias = &bias, .output = &output,
                             .skip_wg_grad = 0, .skip_in_grad = 0,
                             .opt_matmul_type_fw = linear_type(type),
                             .opt_matmul_type_wg = linear_type(type),
                             .opt_matmul_type_ig = linear_type(type), .use_biases = use_bias};
    char what[128];
    snprintf(what, sizeof what, "linear_fp32 in=%d out=%d bias=%d cores=%d type=%d", in, out,
             use_bias, cores, type);
    ptl_num_cores = cores;

    pulp_linear_fp32_fw_cl(&la);
    for (int o = 0; o < out; o++) {
        double s = use_bias ? b[o] : 0.0, sa = use_bias ? fabs(b[o]) : 0.0;
        for (int i = 0; i < in; i++)
            s += (double)W[o * in + i] * x[i], sa += fabs((double)W[o * in + i] * x[i]);
        CHECK(fabs(y[o] - s) <= gamma_n(in + 2, 0x1p-24) * sa, "%s: fw y[%d] = %.9g, want %.9g",
              what, o, y[o], s);
    }
    pulp_linear_fp32_bw_cl(&la);
    for (int o = 0; o < out; o++)
        for (int i = 0; i < in; i++)
            CHECK(dW[o * in + i] == (float)((double)dy[o] * x[i]), "%s: dW[%d][%d]", what, o, i);
    for (int o = 0; o < out; o++)
        CHECK(use_bias ? db[o] == dy[o] : isnan(db[o]), "%s: db[%d] = %g", what, o, db[o]);
    for (int i = 0; i < in; i++) {
        double s = 0, sa = 0;
        for (int o = 0; o < out; o++)
            s += (double)W[o * in + i] * dy[o], sa += fabs((double)W[o * in + i] * dy[o]);
        CHECK(fabs(dx[i] - s) <= gamma_n(out + 1, 0x1p-24) * sa, "%s: ig dx[%d] = %.9g, want %.9g",
              what, i, dx[i], s);
    }
    /* Skipped steps must leave their outputs alone. */
    for (int e = 0; e < in * out; e++)
        dW[e] = NAN;
    for (int i = 0; i < in; i++)
        dx[i] = NAN;
    la.skip_wg_grad = 1;
    pulp_linear_fp32_bw_cl(&la);
    CHECK(isnan(dW[0]) && !isnan(dx[in - 1]), "%s: skip_wg_grad", what);
    la.skip_wg_grad = 0, la.skip_in_grad = 1;
    for (int i = 0; i < in; i++)
        dx[i] = NAN;
    pulp_linear_fp32_bw_cl(&la);
    CHECK(!isnan(dW[in * out - 1]) && isnan(dx[0]), "%s: skip_in_grad", what);
    free(x), free(dx), free(W), free(dW), free(y), free(dy), free(b), free(db);
}

static void test_linear_fp16(int in, int out, int use_bias, int cores, int type)
{
    fp16 *x = malloc(sizeof(fp16) * in), *dx = malloc(sizeof(fp16) * in);
    fp16 *W = malloc(sizeof(fp16) * in * out), *dW = malloc(sizeof(fp16) * in * out);
    fp16 *y = malloc(sizeof(fp16) * out), *dy = malloc(sizeof(fp16) * out);
    fp16 *b = malloc(sizeof(fp16) * out), *db = malloc(sizeof(fp16) * out);
    double *xd = malloc(sizeof(double) * in), *Wd = malloc(sizeof(double) * in * out);
    double *dyd = malloc(sizeof(double) * out), *bd = malloc(sizeof(double) * out);
    const fp16 canary = fp16_from_bits(CANARY16);
    for (int i = 0; i < in; i++)
        x[i] = random_fp16(&xd[i]), dx[i] = canary;
    for (int e = 0; e < in * out; e++)
        W[e] = random_fp16(&Wd[e]), dW[e] = canary;
    for (int o = 0; o < out; o++)
        b[o] = random_fp16(&bd[o]), dy[o] = random_fp16(&dyd[o]), y[o] = canary, db[o] = canary;
    struct blob_fp16 input = {.data = x, .diff = dx, .dim = in, .W = in, .H = 1, .C = 1};
    struct blob_fp16 coeff = {.data = W, .diff = dW, .dim = in * out, .W = in, .H = out, .C = 1};
    struct blob_fp16 bias = {.data = b, .diff = db, .dim = out, .W = 1, .H = 1, .C = out};
    struct blob_fp16 output = {.data = y, .diff = dy, .dim = out, .W = out, .H = 1, .C = 1};
    struct Linear_args_fp16 la = {.input = &input, .coeff = &coeff, .bias = &bias,
                                  .output = &output, .skip_wg_grad = 0, .skip_in_grad = 0,
                                  .opt_matmul_type_fw = linear_type(type),
                                  .opt_matmul_type_wg = linear_type(type),
                                  .opt_matmul_type_ig = linear_type(type), .use_biases = use_bias};
    char what[128];
    snprintf(what, sizeof what, "linear_fp16 in=%d out=%d bias=%d cores=%d type=%d", in, out,
             use_bias, cores, type);
    ptl_num_cores = cores;
    const double sub = ldexp(1.0, F_EMIN - F_MANT);

    pulp_linear_fp16_fw_cl(&la);
    for (int o = 0; o < out; o++) {
        double s = use_bias ? bd[o] : 0.0, sa = use_bias ? fabs(bd[o]) : 0.0;
        for (int i = 0; i < in; i++)
            s += Wd[o * in + i] * xd[i], sa += fabs(Wd[o * in + i] * xd[i]);
        double got = fp16_to_f32(y[o]);
        CHECK(fabs(got - s) <= gamma_n(in + 2, U16) * sa + sub * (in + 2),
              "%s: fw y[%d] = %.9g, want %.9g", what, o, got, s);
    }
    pulp_linear_fp16_bw_cl(&la);
    for (int o = 0; o < out; o++)
        for (int i = 0; i < in; i++)
            CHECK(fp16_to_f32(dW[o * in + i]) == fp16_to_f32(fp16_mul(dy[o], x[i])),
                  "%s: dW[%d][%d] must be the rounded product", what, o, i);
    for (int o = 0; o < out; o++)
        CHECK(fp16_bits(db[o]) == (use_bias ? fp16_bits(dy[o]) : CANARY16), "%s: db[%d]", what,
              o);
    for (int i = 0; i < in; i++) {
        double s = 0, sa = 0;
        for (int o = 0; o < out; o++)
            s += Wd[o * in + i] * dyd[o], sa += fabs(Wd[o * in + i] * dyd[o]);
        double got = fp16_to_f32(dx[i]);
        CHECK(fabs(got - s) <= gamma_n(out + 1, U16) * sa + sub * (out + 1),
              "%s: ig dx[%d] = %.9g, want %.9g", what, i, got, s);
    }
    for (int e = 0; e < in * out; e++)
        dW[e] = canary;
    for (int i = 0; i < in; i++)
        dx[i] = canary;
    la.skip_wg_grad = 1;
    pulp_linear_fp16_bw_cl(&la);
    CHECK(fp16_bits(dW[0]) == CANARY16 && fp16_bits(dx[in - 1]) != CANARY16, "%s: skip_wg_grad",
          what);
    la.skip_wg_grad = 0, la.skip_in_grad = 1;
    for (int i = 0; i < in; i++)
        dx[i] = canary;
    pulp_linear_fp16_bw_cl(&la);
    CHECK(fp16_bits(dW[in * out - 1]) != CANARY16 && fp16_bits(dx[0]) == CANARY16,
          "%s: skip_in_grad", what);
    free(x), free(dx), free(W), free(dW), free(y), free(dy), free(b), free(db);
    free(xd), free(Wd), free(dyd), free(bd);
}

static void test_linear(int quick)
{
    section("linear fp32/fp16: fw, wg, ig, bw with skips, with and without bias");
    const int shapes[][2] = {{1, 1}, {3, 5}, {8, 16}, {17, 9}, {64, 32}, {2, 13}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int use_bias = 0; use_bias < 2; use_bias++)
            for (int cores = 1; cores <= 8; cores += quick ? 3 : 1) {
                for (int t = 0; t < LINEAR_TYPES_FP32; t++)
                    test_linear_fp32(shapes[s][0], shapes[s][1], use_bias, cores, t);
                for (int t = 0; t < LINEAR_TYPES_FP16; t++)
                    test_linear_fp16(shapes[s][0], shapes[s][1], use_bias, cores, t);
            }
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    struct sweep sw = {quick ? quick_sizes : full_sizes,
                       quick ? (int)(sizeof quick_sizes / sizeof quick_sizes[0])
                             : (int)(sizeof full_sizes / sizeof full_sizes[0]),
                       8};
    printf("lib_c kernel tests: fp16 = %s (%s mode), %s, %s sweep\n", PTL_FP16_FORMAT_NAME,
           PTL_FP16_IS_NATIVE ? "native" : "software",
#ifdef OPTIMIZE
           "OPTIMIZE",
#else
           "no OPTIMIZE",
#endif
           quick ? "quick" : "full");
    test_checker_can_fail();
    test_fp16_conversions();
    test_fp16_arithmetic();
    test_managers();
    test_linear(quick);
    test_fp32_matmul(&sw);
    test_fp16_matmul(&sw);
    section(NULL);
    printf("%s: %ld checks, %ld failures\n", n_failures ? "FAILED" : "PASSED", n_checks,
           n_failures);
    return n_failures ? 1 : 0;
}
