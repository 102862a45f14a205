/*
 * pulp_softmax_parts_fp32.c: the softmax's parts as per-core bodies
 * (contract in pulp_softmax_fp32.h). Each core takes its block of rows, or
 * of elements, from pulp_core_block.
 */
#include "pulp_softmax_fp32.h"
#include "pulp_core_block.h"

void pulp_row_max_fp32_cl(void *max_args)
{
    const struct max_args *a = max_args;
    long first, last;
    pulp_core_block(a->H, &first, &last);
    for (long i = first; i < last; i++) {
        const float *row = a->input + i * a->W;
        float m = a->maxes[i];
        for (int j = 0; j < a->W; j++)
            m = row[j] > m ? row[j] : m;
        a->maxes[i] = m;
    }
}

void pulp_row_div_fp32_cl(void *row_div_args)
{
    const struct row_div_args *a = row_div_args;
    long first, last;
    pulp_core_block(a->H, &first, &last);
    for (long i = first; i < last; i++) {
        float *row = a->input + i * a->W;
        for (int j = 0; j < a->W; j++)
            row[j] = row[j] / a->sums[i];
    }
}

void pulp_div_fp32_cl(void *div_args)
{
    const struct div_args *a = div_args;
    long first, last;
    pulp_core_block(a->dim, &first, &last);
    for (long k = first; k < last; k++)
        a->input[k] = a->input[k] / a->n;
}

void pulp_scalar_mul_fp32_cl(void *scalar_mul_args)
{
    const struct scalar_mul_args *a = scalar_mul_args;
    long first, last;
    pulp_core_block(a->dim, &first, &last);
    for (long k = first; k < last; k++)
        a->input[k] = a->input[k] * a->scalar;
}

void pulp_sm_bw_op_1(void *sm_bw_op_1_args)
{
    const struct sm_bw_op_1_args *a = sm_bw_op_1_args;
    long first, last;
    pulp_core_block(a->H, &first, &last);
    for (long i = first; i < last; i++) {
        float s = 0.0f;
        for (int j = 0; j < a->W; j++)
            s += a->A[i * a->W + j] * a->B[i * a->W + j];
        a->S[i] = s;
    }
}

void pulp_sm_bw_op_2(void *sm_bw_op_2_args)
{
    const struct sm_bw_op_2_args *a = sm_bw_op_2_args;
    long first, last;
    pulp_core_block(a->H, &first, &last);
    for (long i = first; i < last; i++)
        for (int j = 0; j < a->W; j++) {
            const long k = i * a->W + j;
            a->output[k] = (a->A[k] - a->S[i]) * a->B[k];
        }
}

void mm_bias_add_transposed(void *mm_bias_add_args)
{
    const struct mm_bias_add_args *a = mm_bias_add_args;
    long first, last;
    pulp_core_block(a->H, &first, &last);
    for (long i = first; i < last; i++)
        for (int j = 0; j < a->W; j++)
            a->mat[i * a->W + j] += a->t ? a->bias[i] : a->bias[j];
}
