/*
 * pulp_act_extra_fp32.c: FP32 GELU, tanh and SwiGLU (pulp_act_extra_fp32.h).
 * The scalar formulas are shared with the FP16 versions (pulp_act_extra_fp16.c)
 * through act_extra_gelu() and act_extra_swiglu().
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pulp_act_extra_fp32.h"
#include "pulp_act_extra_impl.h"
#include "pulp_core_block.h"
#include "pulp_softmax_fp32.h" /* fastexp_gist, with FASTEXPF */

float act_extra_gelu(float x)
{
    const float u = 0.7978f * (x + 0.044715f * x * x * x);
    const float u2 = u * u, u4 = u2 * u2, u6 = u4 * u2;
    float t = u * (135135.0f + 17325.0f * u2 + 378.0f * u4 + u6) / (135135.0f + 62370.0f * u2 + 3150.0f * u4 + 28.0f * u6);
    t = t > 1.0f ? 1.0f : t < -1.0f ? -1.0f : t;
    return 0.5f * x * t + 0.5f * x;
}

float act_extra_swiglu(float a, float b)
{
#ifdef FASTEXPF
    const float sig = 1.0f / (1.0f + fastexp_gist(-a));
#else
    const float sig = 1.0f / (1.0f + expf(-a));
#endif
    return a * sig * b;
}

/* The fast 2^p of tanh_prll. Beyond the documented formula, p is clipped at
 * 128 as well: above, the bit pattern passes 0x7F800000 and reaches the sign
 * bit (p = 144, x = -50, gave tanh = +1); at 128 it is about the largest
 * float, so y = -1 as it should. */
static float tanh_p2(float p)
{
    const float clipped = p < -126.0f ? -126.0f : p > 128.0f ? 128.0f : p;
    const float z = clipped - truncf(clipped) + (clipped < 0.0f ? 1.0f : 0.0f);
    const uint32_t bits = (uint32_t)(8388608.0f * (clipped + 121.2740575f + 27.7280233f / (4.84252568f - z) -
                                                   1.49012907f * z));
    float out;
    memcpy(&out, &bits, sizeof out);
    return out;
}

void pulp_gelu_tanh_approx_fp32_fw_cl(void *act_args)
{
    const struct act_args *a = act_args;
    long first, last;
    pulp_core_block(a->input->dim, &first, &last);
    for (int i = first; i < last; i++)
        a->output->data[i] = act_extra_gelu(a->input->data[i]);
}

void tanh_prll(void *tanh_args)
{
    const struct tanh_args *a = tanh_args;
    long first, last;
    pulp_core_block(a->dim, &first, &last);
    for (int i = first; i < last; i++)
        a->output[i] = 2.0f / (1.0f + tanh_p2(1.442695040f * (-2.0f * a->input[i]))) - 1.0f;
}

void pulp_swiglu_fp32_cl(void *swiglu_args)
{
    const struct swiglu_args *a = swiglu_args;
    long first, last;
    pulp_core_block(a->dim, &first, &last);
    for (int i = first; i < last; i++)
        a->out[i] = act_extra_swiglu(a->in1[i], a->in2[i]);
}
