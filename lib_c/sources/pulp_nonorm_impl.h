/*
 * pulp_nonorm_impl.h (internal): NoNorm's forward, written once for both
 * element types (contracts in include/pulp_norms_fp32.h and _fp16.h).
 *
 * Include it once per type after defining:
 *   NN_T            element type (float, fp16)
 *   NN_ARGS         its args struct (struct Nonorm_args[_fp16])
 *   NN_FMA(x, g, b) x * g + b of elements
 * It defines the static nonorm_fw(), which the .c file wraps in the API's
 * name.
 */
#include "pulp_core_block.h"

/* y[j] = x[j] * gamma[j] + beta[j], j < W: two per step, so that the
 * loads of one are not waited on by the other's arithmetic, and the pointer
 * adds are shared by two. */
static inline void nonorm_row(NN_T *y, const NN_T *x, const NN_T *gamma, const NN_T *beta, long W)
{
    const NN_T *const end2 = x + (W & ~1L);
    while (x != end2) {
        const NN_T x0 = x[0], x1 = x[1], g0 = gamma[0], g1 = gamma[1], b0 = beta[0], b1 = beta[1];
        y[0] = NN_FMA(x0, g0, b0);
        y[1] = NN_FMA(x1, g1, b1);
        x += 2, y += 2, gamma += 2, beta += 2;
    }
    if (W & 1)
        y[0] = NN_FMA(x[0], gamma[0], beta[0]);
}

static void nonorm_fw(const NN_ARGS *a)
{
    long first, last;
    pulp_core_block((long)a->input->H, &first, &last);   /* the caller's split is over the H rows */
    if (first >= last)
        return;
    /* Row by row: no remainder per element (tens of cycles on a PULP core),
     * and the pointers read once. */
    const long W = a->input->W;
    const NN_T *x = a->input->data + first * W;
    NN_T *y = a->output->data + first * W;
    for (long r = first; r < last; r++, x += W, y += W)
        nonorm_row(y, x, a->coeff->data, a->bias->data, W);
}
