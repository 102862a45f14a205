/*
 * pulp_interpolation_fp32.h: FP32 resampling of a CHW tensor to another
 * height and width (same C), nearest neighbour or bilinear.
 *
 * pulp_{nearest_neighbour,bilinear}_interpolation_fp32_cl fork NUM_CORES
 * themselves; their bodies pulp_{...}_core_fp32 are per-core over the
 * channels (pulp_core_block on C). Flags: interpolate_data resamples
 * input->data into output->data, interpolate_gradient input->diff into
 * output->diff (the same forward map, not its adjoint).
 *   Nearest: source row = min(floor(oy * H_in / H_out), H_in - 1) (integer
 *     arithmetic), columns alike.
 *   Bilinear (torch's align_corners=False): sy = (oy + 0.5) * (H_in / H_out)
 *     - 0.5 in binary32, clamped at 0; y0 = floor(sy), y1 = min(y0 + 1,
 *     H_in - 1), ly = sy - y0; columns alike; out = (1 - ly)((1 - lx) v00 +
 *     lx v01) + ly((1 - lx) v10 + lx v11).
 */
#ifndef PULP_INTERPOLATION_FP32_H
#define PULP_INTERPOLATION_FP32_H

#include "pulp_train_defines.h"

struct interpolation_args {
    struct blob *input;
    struct blob *output;
    int interpolate_data;
    int interpolate_gradient;
};

void pulp_nearest_neighbour_interpolation_fp32_cl(void *interpolation_args);
void pulp_bilinear_interpolation_fp32_cl(void *interpolation_args);
void pulp_nearest_neighbour_core_fp32(void *interpolation_args);
void pulp_bilinear_core_fp32(void *interpolation_args);

#endif /* PULP_INTERPOLATION_FP32_H */
