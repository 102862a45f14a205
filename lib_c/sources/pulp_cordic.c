/*
 * pulp_cordic.c: CORDIC cosine and sine (pulp_cordic.h).
 */
#include <math.h>

#include "pulp_cordic.h"

#define CORDIC_PI 3.14159265358979f
#define CORDIC_MAX_ROTATIONS 14

/* atan(2^-i), i = 0 .. 13 */
static const float cordic_angles[CORDIC_MAX_ROTATIONS] = {
    0.78539816339745f, 0.46364760900081f, 0.24497866312686f, 0.12435499454676f,
    0.06241880999596f, 0.03123983343027f, 0.01562372862048f, 0.00781234106010f,
    0.00390623013197f, 0.00195312251648f, 0.00097656218956f, 0.00048828121119f,
    0.00024414062015f, 0.00012207031189f,
};

static void cordic(float angle, int rotations, float gain, float *c_out, float *s_out)
{
    float z = angle - 2.0f * CORDIC_PI * floorf((angle + CORDIC_PI) / (2.0f * CORDIC_PI));
    float sign = 1.0f;
    if (z > CORDIC_PI / 2) {
        z -= CORDIC_PI;
        sign = -1.0f;
    } else if (z < -CORDIC_PI / 2) {
        z += CORDIC_PI;
        sign = -1.0f;
    }
    float x = gain, y = 0.0f, scale = 1.0f;
    for (int i = 0; i < rotations; i++) {
        const float d = z >= 0.0f ? 1.0f : -1.0f;
        const float nx = x - d * y * scale;
        y = y + d * x * scale;
        x = nx;
        z -= d * cordic_angles[i];
        scale *= 0.5f;
    }
    *c_out = sign * x;
    *s_out = sign * y;
}

void cordic_cos_sin_fp32(float angle, float *cos, float *sin)
{
    cordic(angle, 12, 0.607252959138945f, cos, sin);
}

void cordic_cos_sin_fp16(fp16 angle, fp16 *cos, fp16 *sin)
{
    float c, s;
    cordic(fp16_to_f32(angle), 14, 0.6072529365170104f, &c, &s);
    *cos = fp16_from_f32(c);
    *sin = fp16_from_f32(s);
}
