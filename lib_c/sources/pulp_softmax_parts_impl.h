/*
 * pulp_softmax_parts_impl.h (internal): the softmax's parts as per-core
 * bodies, written once for both element types (contracts in
 * include/pulp_softmax_fp32.h and _fp16.h). Each core takes its block of
 * rows, or of elements, from pulp_core_block.
 *
 * Include it once per type after defining:
 *   SP_T                   element type (float, fp16)
 *   SP_ARGS(name)          the args struct of a part: struct name, or
 *                          struct name_fp16
 *   SP_ROW_MAX ... SP_BIAS_ADD  the API's name of each part in this type
 *   SP_GT(a, b)            a > b of elements
 *   SP_SUB, SP_MUL, SP_DIV (a, b)  one rounding each
 *   SP_ADD(a, b)           likewise
 *   SP_FMA(a, b, c)        a * b + c
 *   SP_ZERO                +0
 */
#include "pulp_core_block.h"

void SP_ROW_MAX(void *max_args)
{
    const SP_ARGS(max_args) *a = max_args;
    long first, last;
    pulp_core_block(a->H, &first, &last);
    for (long i = first; i < last; i++) {
        const SP_T *row = a->input + i * a->W;
        SP_T m = a->maxes[i];
        for (int j = 0; j < a->W; j++)
            m = SP_GT(row[j], m) ? row[j] : m;
        a->maxes[i] = m;
    }
}

void SP_ROW_DIV(void *row_div_args)
{
    const SP_ARGS(row_div_args) *a = row_div_args;
    long first, last;
    pulp_core_block(a->H, &first, &last);
    for (long i = first; i < last; i++) {
        SP_T *row = a->input + i * a->W;
        for (int j = 0; j < a->W; j++)
            row[j] = SP_DIV(row[j], a->sums[i]);
    }
}

void SP_DIV_N(void *div_args)
{
    const SP_ARGS(div_args) *a = div_args;
    long first, last;
    pulp_core_block(a->dim, &first, &last);
    for (long k = first; k < last; k++)
        a->input[k] = SP_DIV(a->input[k], a->n);
}

void SP_SCALAR_MUL(void *scalar_mul_args)
{
    const SP_ARGS(scalar_mul_args) *a = scalar_mul_args;
    long first, last;
    pulp_core_block(a->dim, &first, &last);
    for (long k = first; k < last; k++)
        a->input[k] = SP_MUL(a->input[k], a->scalar);
}

void SP_BW_OP_1(void *sm_bw_op_1_args)
{
    const SP_ARGS(sm_bw_op_1_args) *a = sm_bw_op_1_args;
    long first, last;
    pulp_core_block(a->H, &first, &last);
    for (long i = first; i < last; i++) {
        SP_T s = SP_ZERO;
        for (int j = 0; j < a->W; j++)
            s = SP_FMA(a->A[i * a->W + j], a->B[i * a->W + j], s);
        a->S[i] = s;
    }
}

void SP_BW_OP_2(void *sm_bw_op_2_args)
{
    const SP_ARGS(sm_bw_op_2_args) *a = sm_bw_op_2_args;
    long first, last;
    pulp_core_block(a->H, &first, &last);
    for (long i = first; i < last; i++)
        for (int j = 0; j < a->W; j++) {
            const long k = i * a->W + j;
            a->output[k] = SP_MUL(SP_SUB(a->A[k], a->S[i]), a->B[k]);
        }
}

void SP_BIAS_ADD(void *mm_bias_add_args)
{
    const SP_ARGS(mm_bias_add_args) *a = mm_bias_add_args;
    long first, last;
    pulp_core_block(a->H, &first, &last);
    for (long i = first; i < last; i++)
        for (int j = 0; j < a->W; j++)
            a->mat[i * a->W + j] = SP_ADD(a->mat[i * a->W + j], a->t ? a->bias[i] : a->bias[j]);
}
