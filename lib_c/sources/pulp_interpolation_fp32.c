/*
 * pulp_interpolation_fp32.c: FP32 nearest and bilinear resampling
 * (contract in pulp_interpolation_fp32.h).
 */
#include "pulp_interpolation_fp32.h"
#include "pulp_core_block.h"

/* The selected buffers: data and/or diff, of input and output alike. */
static int interp_buffers(const struct interpolation_args *a, const float *in[2], float *out[2])
{
    int n = 0;
    if (a->interpolate_data) {
        in[n] = a->input->data;
        out[n++] = a->output->data;
    }
    if (a->interpolate_gradient) {
        in[n] = a->input->diff;
        out[n++] = a->output->diff;
    }
    return n;
}

void pulp_nearest_neighbour_core_fp32(void *interpolation_args)
{
    const struct interpolation_args *a = interpolation_args;
    const int Hi = a->input->H, Wi = a->input->W, Ho = a->output->H, Wo = a->output->W;
    const float *in[2];
    float *out[2];
    const int buffers = interp_buffers(a, in, out);
    long first, last;
    pulp_core_block(a->input->C, &first, &last);
    for (int b = 0; b < buffers; b++)
        for (long c = first; c < last; c++)
            for (int oy = 0; oy < Ho; oy++) {
                const long sy0 = (long)oy * Hi / Ho;
                const long sy = sy0 < Hi - 1 ? sy0 : Hi - 1;
                for (int ox = 0; ox < Wo; ox++) {
                    const long sx0 = (long)ox * Wi / Wo;
                    const long sx = sx0 < Wi - 1 ? sx0 : Wi - 1;
                    out[b][(c * Ho + oy) * Wo + ox] = in[b][(c * Hi + sy) * Wi + sx];
                }
            }
}

/* Source coordinate, lower index, upper index and weight of output index o. */
static void interp_source(int o, int n_in, int n_out, int *i0, int *i1, float *l)
{
    float s = ((float)o + 0.5f) * ((float)n_in / (float)n_out) - 0.5f;
    if (s < 0.0f)
        s = 0.0f;
    int lo = (int)s;                /* s >= 0: truncation is floor */
    if (lo > n_in - 1)
        lo = n_in - 1;
    *i0 = lo;
    *i1 = lo + 1 < n_in ? lo + 1 : n_in - 1;
    *l = s - (float)lo;
}

void pulp_bilinear_core_fp32(void *interpolation_args)
{
    const struct interpolation_args *a = interpolation_args;
    const int Hi = a->input->H, Wi = a->input->W, Ho = a->output->H, Wo = a->output->W;
    const float *in[2];
    float *out[2];
    const int buffers = interp_buffers(a, in, out);
    long first, last;
    pulp_core_block(a->input->C, &first, &last);
    for (int b = 0; b < buffers; b++)
        for (long c = first; c < last; c++) {
            const float *v = in[b] + c * Hi * Wi;
            for (int oy = 0; oy < Ho; oy++) {
                int y0, y1;
                float ly;
                interp_source(oy, Hi, Ho, &y0, &y1, &ly);
                for (int ox = 0; ox < Wo; ox++) {
                    int x0, x1;
                    float lx;
                    interp_source(ox, Wi, Wo, &x0, &x1, &lx);
                    const float top = (1.0f - lx) * v[y0 * Wi + x0] + lx * v[y0 * Wi + x1];
                    const float bottom = (1.0f - lx) * v[y1 * Wi + x0] + lx * v[y1 * Wi + x1];
                    out[b][(c * Ho + oy) * Wo + ox] = (1.0f - ly) * top + ly * bottom;
                }
            }
        }
}

void pulp_nearest_neighbour_interpolation_fp32_cl(void *interpolation_args)
{
    pi_cl_team_fork(NUM_CORES, pulp_nearest_neighbour_core_fp32, interpolation_args);
}

void pulp_bilinear_interpolation_fp32_cl(void *interpolation_args)
{
    pi_cl_team_fork(NUM_CORES, pulp_bilinear_core_fp32, interpolation_args);
}
