/*
 * pulp_utils_moves_impl.h (internal): the tensor utilities that move or add
 * elements (transpose_matrix, transpose, copy, set_to_value, vect_sum),
 * written once for both element types (contracts in
 * include/pulp_train_utils_fp32.h and _fp16.h).
 *
 * Include it once per type after defining:
 *   UT_N(name)    the API's name for this type: name, or name_fp16
 *   UT_ADD(a, b)  the sum of two elements, rounded once
 */
#include "pulp_core_block.h"

#define UTILS_MAX_DIMS 8

/* The element count of a row-major array of `dims`. */
static long utils_count(const int *dims, int len)
{
    long n = 1;
    for (int i = 0; i < len; i++)
        n *= dims[i];
    return n;
}

/* The coordinates of flat index `flat` in a row-major array of `dims`. */
static void utils_unravel(long flat, const int *dims, int len, int *coords)
{
    for (int i = len - 1; i >= 0; i--) {
        coords[i] = (int)(flat % dims[i]);
        flat /= dims[i];
    }
}

void UT_N(transpose_matrix)(void *transp_args)
{
    const struct UT_N(transp_args) *a = transp_args;
    long first, last;
    pulp_core_block((long)a->N * a->M, &first, &last);
    for (long o = first; o < last; o++) {      /* out is M x N: o = j*N + i */
        const long j = o / a->N, i = o % a->N;
        a->out_matrix[o] = a->in_matrix[i * a->M + j];
    }
}

void UT_N(transpose)(void *transp_args)
{
    const struct UT_N(transp_args) *a = transp_args;
    int out_dims[UTILS_MAX_DIMS], coords[UTILS_MAX_DIMS], in_coords[UTILS_MAX_DIMS];
    for (int k = 0; k < a->n_dim; k++)
        out_dims[k] = a->dim[a->transposed_axes[k]];
    long first, last;
    pulp_core_block(utils_count(a->dim, a->n_dim), &first, &last);
    for (long o = first; o < last; o++) {
        utils_unravel(o, out_dims, a->n_dim, coords);
        for (int k = 0; k < a->n_dim; k++)
            in_coords[a->transposed_axes[k]] = coords[k];
        long in = 0;
        for (int k = 0; k < a->n_dim; k++)
            in = in * a->dim[k] + in_coords[k];
        a->out_matrix[o] = a->in_matrix[in];
    }
}

void UT_N(copy)(void *copy_args)
{
    const struct UT_N(copy_args) *a = copy_args;
    long first, last;
    pulp_core_block(a->size, &first, &last);
    for (long i = first; i < last; i++)
        a->to[i] = a->from[i];
}

void UT_N(set_to_value)(void *set_to_value_args)
{
    const struct UT_N(set_to_value_args) *a = set_to_value_args;
    long first, last;
    pulp_core_block(a->size, &first, &last);
    for (long i = first; i < last; i++)
        a->to[i] = a->value;
}

void UT_N(vect_sum)(void *vect_sum_args)
{
    const struct UT_N(vect_sum_args) *a = vect_sum_args;
    long first, last;
    pulp_core_block(a->size, &first, &last);
    for (long i = first; i < last; i++)
        a->dest[i] = UT_ADD(a->op_1[i], a->op_2[i]);
}
