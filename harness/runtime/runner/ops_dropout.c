/*
 * Runner ops of dropout and of the library's random numbers.
 *
 * dropout: a per-core body the caller forks, so the runner forks it on the
 * variant's team. Params: n, p_milli (probability = (float)p_milli / 1000.0f
 * in binary32, rounded to fp16 for the FP16 twin, whose field is an fp16; 0..999), use_mask (0: the seeded generator; 1: x *= mask),
 * seed. Tensors: x, mask [n] in; y [n] out (x after the in-place call).
 * random_float (FP32): r[i] = pulp_generate_float_seed(seed + i), i < n,
 * called on one core (the API's random numbers are single core).
 * random_bernoulli (FP32): b[i] = pulp_random_bernoulli's int output for
 * seed + i and probability p_milli / 1000 (binary32), carried as a float
 * (0 or 1; -1 where the call wrote nothing), one core.
 * random_stream (FP32): n draws of one generator, as the public API gives
 * them (issue 25: streams, not first draws): seedRand(seed), its index then
 * set to `index` (16 as seeded; 17 makes the first genRandLong reseed with
 * 4357; below 16, a state a caller set, read from mt[index] on without a
 * twist), then genRandLong n times, each 32-bit draw carried exactly as its
 * two 16-bit halves hi[i], lo[i]; and a second generator seeded alike gives
 * f[i] = genRandFloat, n times.
 * random_double (FP32): n genRand draws of a freshly seeded generator, each
 * double carried as hi[i] = (float)d and lo[i] = (float)(d - hi[i]).
 */
#include <string.h>

#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

static int run_dropout(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    const int n = ptl_param(c, "n", vi), p_milli = ptl_param(c, "p_milli", vi);
    const int use_mask = ptl_param(c, "use_mask", vi), seed = ptl_param(c, "seed", vi);
    if (n < 1 || p_milli < 0 || p_milli > 999 || (use_mask != 0 && use_mask != 1) || seed < 0) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "dropout params need n >= 1, 0 <= p_milli <= 999, use_mask 0 or 1, "
                                             "seed >= 0");
        return PTL_ERR_BAD_CASE;
    }
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    PTL_T *x = op_frame_input(&f, "x", (uint32_t)n);
    PTL_T *mask = use_mask ? op_frame_input(&f, "mask", (uint32_t)n) : NULL;
    PTL_T *y = op_frame_output(&f, "y", (uint32_t)n);
    if (f.status)
        return op_frame_finish(&f, 0);
    memcpy(y, x, (size_t)n * sizeof(PTL_T));     /* dropout works in place */
#if PTL_OP_FP == 32
    struct dropout_args_fp32 args = {.probability = (float)p_milli / 1000.0f, .input = y, .use_mask = use_mask,
                                     .mask = mask, .size = n, .seed = seed};
#else
    struct dropout_args_fp16 args = {.probability = PTL_FROM_F32((float)p_milli / 1000.0f), .input = y, .use_mask = use_mask,
                                     .mask = mask, .size = n, .seed = seed};
#endif
    return op_frame_fork(&f, v, PTL_F(pulp_dropout_, _cl), &args);
}

#if PTL_OP_FP == 32
static int run_random_float(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v;
    const int n = ptl_param(c, "n", vi), seed = ptl_param(c, "seed", vi);
    if (n < 1 || seed < 0) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "random_float needs n >= 1 and seed >= 0");
        return PTL_ERR_BAD_CASE;
    }
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    float *r = op_frame_output(&f, "r", (uint32_t)n);
    if (f.status)
        return op_frame_finish(&f, 0);
    ptl_measure_begin(vi);
    for (int i = 0; i < n; i++)
        r[i] = pulp_generate_float_seed(seed + i);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

static int run_random_bernoulli(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v;
    const int n = ptl_param(c, "n", vi), seed = ptl_param(c, "seed", vi), p_milli = ptl_param(c, "p_milli", vi);
    if (n < 1 || seed < 0 || p_milli < 0 || p_milli > 1000) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "random_bernoulli needs n >= 1, seed >= 0 and 0 <= p_milli <= 1000");
        return PTL_ERR_BAD_CASE;
    }
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    float *b = op_frame_output(&f, "b", (uint32_t)n);
    if (f.status)
        return op_frame_finish(&f, 0);
    int draw = -1;
    struct integer_random_args args = {.seed = seed, .probability = (float)p_milli / 1000.0f, .output = &draw};
    ptl_measure_begin(vi);
    for (int i = 0; i < n; i++) {
        args.seed = seed + i;
        draw = -1;          /* a call that writes nothing shows as -1 */
        pulp_random_bernoulli(&args);
        b[i] = (float)draw;
    }
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

static int run_random_stream(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v;
    const int n = ptl_param(c, "n", vi), seed = ptl_param(c, "seed", vi), index = ptl_param(c, "index", vi);
    if (n < 1 || seed < 0 || index < 0 || index > STATE_VECTOR_LENGTH + 1) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "random_stream needs n >= 1, seed >= 0 and index 0 to 17");
        return PTL_ERR_BAD_CASE;
    }
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    float *hi = op_frame_output(&f, "hi", (uint32_t)n);
    float *lo = op_frame_output(&f, "lo", (uint32_t)n);
    float *r = op_frame_output(&f, "f", (uint32_t)n);
    if (f.status)
        return op_frame_finish(&f, 0);
    MTRand longs = seedRand((uint32_t)seed), floats = seedRand((uint32_t)seed);
    longs.index = floats.index = index;
    ptl_measure_begin(vi);
    for (int i = 0; i < n; i++) {
        const uint32_t y = genRandLong(&longs);
        hi[i] = (float)(y >> 16);
        lo[i] = (float)(y & 0xffffu);
    }
    for (int i = 0; i < n; i++)
        r[i] = genRandFloat(&floats);
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}

static int run_random_double(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    (void)v;
    const int n = ptl_param(c, "n", vi), seed = ptl_param(c, "seed", vi);
    if (n < 1 || seed < 0) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "random_double needs n >= 1 and seed >= 0");
        return PTL_ERR_BAD_CASE;
    }
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    float *hi = op_frame_output(&f, "hi", (uint32_t)n);
    float *lo = op_frame_output(&f, "lo", (uint32_t)n);
    if (f.status)
        return op_frame_finish(&f, 0);
    MTRand doubles = seedRand((uint32_t)seed);
    ptl_measure_begin(vi);
    for (int i = 0; i < n; i++) {
        const double d = genRand(&doubles);
        hi[i] = (float)d;
        lo[i] = (float)(d - (double)hi[i]);
    }
    ptl_measure_end(vi);
    return op_frame_finish(&f, 1);
}
#endif

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("dropout"), "n p_milli use_mask seed alone", "x mask", "y", "none", run_dropout},
#if PTL_OP_FP == 32
    {PTL_OP_NAME("random_float"), "n seed", "", "r", "none", run_random_float},
    {PTL_OP_NAME("random_bernoulli"), "n seed p_milli", "", "b", "none", run_random_bernoulli},
    {PTL_OP_NAME("random_stream"), "n seed index", "", "hi lo f", "none", run_random_stream},
    {PTL_OP_NAME("random_double"), "n seed", "", "hi lo", "none", run_random_double},
#endif
    {0},
};
