/*
 * pulp_utils_arith_impl.h (internal): the tensor utilities that compute
 * (array_broadcast_sum, mm_broadcast, mm_add, reduce_mean, mean_std,
 * q_rsqrt), written once for both element types (contracts in
 * include/pulp_train_utils_fp32.h and _fp16.h). Include it after
 * pulp_utils_moves_impl.h (its helpers and hooks), having also defined:
 *   UT_FMT(before, after)  the API's name with the format tag: before fp32
 *                          after, or before fp16 after
 *   UT_FMA(a, b, c)        a * b + c of elements
 *   UT_DIV(a, b)           a / b of elements, rounded once
 *   UT_TO_F(v), UT_FROM_F(f)  element -> float (exact), float -> element
 *                          (rounded once)
 * Element-wise sums, matmuls and means run in the element type; mean_std
 * and q_rsqrt compute in binary32 and round each result once.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

/* The flat index in an operand of `dims` (right-aligned against the output's
 * `len` dims, size-1 dims broadcast) of the output coordinates. */
static long utils_broadcast_index(const int *coords, int len, const int *dims, int dims_len)
{
    long index = 0;
    for (int k = 0; k < dims_len; k++) {
        const int c = coords[len - dims_len + k];
        index = index * dims[k] + (dims[k] == 1 ? 0 : c);
    }
    return index;
}

/* The broadcast shape of two right-aligned shapes into out (returns its length). */
static int utils_broadcast_shape(const int *d1, int len1, const int *d2, int len2, int *out)
{
    const int len = len1 > len2 ? len1 : len2;
    for (int k = 0; k < len; k++) {
        const int a = k - (len - len1) >= 0 ? d1[k - (len - len1)] : 1;
        const int b = k - (len - len2) >= 0 ? d2[k - (len - len2)] : 1;
        out[k] = a > b ? a : b;
    }
    return len;
}

void UT_FMT(array_broadcast_sum_, )(void *array_broadcast_sum_args)
{
    const struct UT_FMT(array_broadcast_sum_, _args) *a = array_broadcast_sum_args;
    int dims[UTILS_MAX_DIMS], coords[UTILS_MAX_DIMS];
    const int len = utils_broadcast_shape(a->op_1_dims, a->op_1_dims_len, a->op_2_dims, a->op_2_dims_len, dims);
    long first, last;
    pulp_core_block(utils_count(dims, len), &first, &last);
    for (long o = first; o < last; o++) {
        utils_unravel(o, dims, len, coords);
        a->dest[o] = UT_ADD(a->op_1[utils_broadcast_index(coords, len, a->op_1_dims, a->op_1_dims_len)],
                            a->op_2[utils_broadcast_index(coords, len, a->op_2_dims, a->op_2_dims_len)]);
    }
}

static void mm_broadcast_core(void *args)
{
    const struct UT_FMT(broadcastMatMul_args_, ) *a = args;
    const int la = a->A_dims_len, lb = a->B_dims_len;
    const int N = a->A_dims[la - 2], K = a->A_dims[la - 1], M = a->B_dims[lb - 1];
    int batch[UTILS_MAX_DIMS], coords[UTILS_MAX_DIMS];
    const int nb = utils_broadcast_shape(a->A_dims, la - 2, a->B_dims, lb - 2, batch);
    long first, last;
    pulp_core_block(utils_count(batch, nb) * N * M, &first, &last);
    for (long o = first; o < last; o++) {
        const long b = o / ((long)N * M), i = o / M % N, j = o % M;
        utils_unravel(b, batch, nb, coords);
        const UT_T *A = a->A + utils_broadcast_index(coords, nb, a->A_dims, la - 2) * N * K;
        const UT_T *B = a->B + utils_broadcast_index(coords, nb, a->B_dims, lb - 2) * K * M;
        UT_T sum = UT_ZERO;
        for (int k = 0; k < K; k++)
            sum = UT_FMA(A[i * K + k], B[(long)k * M + j], sum);
        a->C[o] = sum;
    }
}

void UT_FMT(mm_broadcast_, )(void *broadcastMatMul_args)
{
    pi_cl_team_fork(NUM_CORES, mm_broadcast_core, broadcastMatMul_args);
}

void UT_N(mm_add)(void *matMul_args)
{
    const struct UT_N(matMul_args) *a = matMul_args;
    long first, last;
    pulp_core_block(a->N, &first, &last);
    for (long i = first; i < last; i++)
        for (int j = 0; j < a->M; j++) {
            UT_T c = a->C[i * a->M + j];
            for (int k = 0; k < a->K; k++)
                c = UT_FMA(a->A[i * a->K + k], a->trans_B ? a->B[(long)j * a->K + k] : a->B[(long)k * a->M + j], c);
            a->C[i * a->M + j] = c;
        }
}

void UT_FMT(reduce_mean_, )(void *reduce_mean_args)
{
    const struct UT_FMT(reduce_mean_args_, ) *a = reduce_mean_args;
    const int axis = a->reduce_axis, n = a->dims[axis];
    long outer = 1, inner = 1;
    for (int k = 0; k < axis; k++)
        outer *= a->dims[k];
    for (int k = axis + 1; k < a->dims_len; k++)
        inner *= a->dims[k];
    long first, last;
    pulp_core_block(outer * inner, &first, &last);
    for (long o = first; o < last; o++) {
        const long before = o / inner, after = o % inner;
        UT_T sum = UT_ZERO;
        for (int k = 0; k < n; k++)
            sum = UT_ADD(sum, a->input[(before * n + k) * inner + after]);
        a->output[o] = UT_ADD(a->output[o], UT_DIV(sum, UT_FROM_F((float)n)));
    }
}

void UT_FMT(pulp_mean_std_, _cl)(void *mean_std_args)
{
    const struct UT_N(mean_std_args) *a = mean_std_args;
    const float epsilon = UT_TO_F(a->epsilon);
    float sum = 0.0f, sum_sq = 0.0f;
    for (int i = 0; i < a->dim; i++) {
        const float x = UT_TO_F(a->input[i]);
        sum += x;
        sum_sq += x * x;
    }
    const float mean = sum / (float)a->dim;
    float var = sum_sq / (float)a->dim - mean * mean + epsilon;
    if (var < 0.0f)
        var = epsilon;
    *a->mean = UT_FROM_F(mean);
    *a->var = UT_FROM_F(var);
    *a->std = UT_FROM_F(sqrtf(var));
}

UT_T UT_N(q_rsqrt)(UT_T element)
{
    const float x = UT_TO_F(element);
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    bits = 0x5f3759dfu - (bits >> 1);
    float y;
    memcpy(&y, &bits, sizeof y);
    return UT_FROM_F(y * (1.5f - 0.5f * x * y * y));
}
