/*
 * pulp_act_extra_impl.h (internal): the scalar formulas shared by pulp_act_extra_fp32.c and pulp_act_extra_fp16.c.
 */
#ifndef PULP_ACT_EXTRA_IMPL_H
#define PULP_ACT_EXTRA_IMPL_H

/* The tanh-approximated GELU of pulp_act_extra_fp32.h, in binary32. */
float act_extra_gelu(float x);
/* a * sigmoid(a) * b in binary32. */
float act_extra_swiglu(float a, float b);

#endif /* PULP_ACT_EXTRA_IMPL_H */
