/*
 * pulp_cordic.h: cosine and sine by CORDIC, single core.
 *
 * cordic_cos_sin_fp32(angle, &cos, &sin): the angle is reduced to [-pi, pi]
 * and folded to [-pi/2, pi/2] (the cosine negated), then 12 rotations by
 * atan(2^-i) from the vector (0.607252959138945, 0). Within 5e-4 of cos and
 * sin (the residual angle after 12 rotations is below atan(2^-11)).
 * cordic_cos_sin_fp16: the same with 14 rotations and the gain
 * 0.6072529365170104, in binary32 on the fp16 angle, each result rounded
 * once to fp16.
 */
#ifndef PULP_CORDIC_H
#define PULP_CORDIC_H

#include "pulp_train_defines.h"

void cordic_cos_sin_fp32(float angle, float *cos, float *sin);
void cordic_cos_sin_fp16(fp16 angle, fp16 *cos, fp16 *sin);

#endif /* PULP_CORDIC_H */
