/*
 * pulp_act_extra_fp32.h: FP32 GELU (tanh approximation), tanh and SwiGLU,
 * forward. Each is a per-core body FORKED BY THE CALLER
 * (pi_cl_team_fork(NUM_CORES, f, &args)); core id takes [id*b, (id+1)*b)
 * clipped to n, b = ceil(n / NUM_CORES).
 *
 * GELU (act_args, n = input->dim, x = input->data, y = output->data):
 *   u = 0.7978 (x + 0.044715 x^3);
 *   t = u (135135 + 17325 u^2 + 378 u^4 + u^6) / (135135 + 62370 u^2 + 3150 u^4 + 28 u^6),
 *   clamped to [-1, 1];  y = 0.5 x t + 0.5 x.  Within 2e-4 of the tanh GELU.
 * tanh (tanh_args, n = dim): y = 2 / (1 + fe(-2x)) - 1 with the fast
 *   exponential fe(p) = p2(1.442695040 p), p2(p): p clipped at -126,
 *   z = p - trunc(p) + (p < 0), the float whose bits are
 *   (uint32_t)(2^23 (p + 121.2740575 + 27.7280233 / (4.84252568 - z) - 1.49012907 z)).
 *   Within 3e-5 of tanh. lib_c also clips p at 128: the documented p2
 *   overflows into the sign bit for x < -44 (tanh(-50) gave +1).
 * SwiGLU (swiglu_args, n = dim): out = in1 * sigmoid(in1) * in2, sigmoid(x)
 *   = 1 / (1 + expf(-x)) (fastexp_gist when FASTEXPF is defined).
 */
#ifndef PULP_ACT_EXTRA_FP32_H
#define PULP_ACT_EXTRA_FP32_H

#include "pulp_train_defines.h"
#include "pulp_act_fp32.h"

struct tanh_args {
    float *input;
    int dim;
    float *output;
};

struct swiglu_args {
    float *in1;
    float *in2;
    float *out;
    int dim;
};

void pulp_gelu_tanh_approx_fp32_fw_cl(void *act_args);
void tanh_prll(void *tanh_args);
void pulp_swiglu_fp32_cl(void *swiglu_args);

#endif /* PULP_ACT_EXTRA_FP32_H */
