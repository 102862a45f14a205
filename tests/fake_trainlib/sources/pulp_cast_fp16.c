/*
 * pulp_cast_fp16.c: the casts of the fake library.
 *
 * FP32 to fp16 splits its elements as the API documents for per-core
 * bodies: core id takes [id*b, (id+1)*b), b = ceil(n / cores). fp16 to FP32
 * splits them in pairs of elements instead (b = ceil(ceil(n / 2) / cores)
 * pairs per core), the way the published library's vect_sum_fp16 splits its
 * v2f16 lanes: forked on the whole team every element is written once and
 * the result is right, but a core run by itself writes another block than
 * the documented one, which the suite's `alone` cases report.
 *
 * Like several files of the published library (pulp_im2col_fp32.c,
 * pulp_matmul_fp16.c), the split is chosen in the preprocessor by
 * `#if NUM_CORES > 1`; a build for one core takes every element on every
 * core. The harness must compile this file as for the cluster (README,
 * "NUM_CORES"), or every core of a team would cast everything.
 */
#include "pulp_cast_fp16.h"

/* Elements [*first, *last) of this core when the work is split in blocks of
 * `unit` elements (1: the documented split; 2: pairs). */
static void share(int n, int unit, int *first, int *last)
{
#if NUM_CORES > 1
    const int units = (n + unit - 1) / unit, cores = NUM_CORES;
    const int block = (units + cores - 1) / cores * unit, start = pi_core_id() * block;
    *first = start < n ? start : n;
    *last = start + block < n ? start + block : n;
#else
    (void)unit;
    *first = 0;
    *last = n;
#endif
}

void cast_fp32_tensor_to_fp16(void *cast_32t16_args)
{
    const struct cast_32t16_args *a = cast_32t16_args;
    int first, last;
    share(a->size, 1, &first, &last);
    for (int i = first; i < last; i++)
        a->destination[i] = (fp16)a->source[i];
}

void cast_fp16_tensor_to_fp32(void *cast_16t32_args)
{
    const struct cast_16t32_args *a = cast_16t32_args;
    int first, last;
    share(a->size, 2, &first, &last);
    for (int i = first; i < last; i++)
        a->destination[i] = (float)a->source[i];
}
