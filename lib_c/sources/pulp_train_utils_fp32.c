/*
 * pulp_train_utils_fp32.c: FP32 tensor utilities (pulp_train_utils_fp32.h).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pulp_train_utils_fp32.h"
#include "pulp_core_block.h"

#define UT_N(name) name
#define UT_ADD(a, b) ((a) + (b))
#define UT_T float
#define UT_BLOB struct blob
#define UT_ZERO 0.0f
#include "pulp_utils_moves_impl.h"

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

void array_broadcast_sum_fp32(void *array_broadcast_sum_fp32_args)
{
    const struct array_broadcast_sum_fp32_args *a = array_broadcast_sum_fp32_args;
    int dims[UTILS_MAX_DIMS], coords[UTILS_MAX_DIMS];
    const int len = utils_broadcast_shape(a->op_1_dims, a->op_1_dims_len, a->op_2_dims, a->op_2_dims_len, dims);
    long first, last;
    pulp_core_block(utils_count(dims, len), &first, &last);
    for (long o = first; o < last; o++) {
        utils_unravel(o, dims, len, coords);
        a->dest[o] = a->op_1[utils_broadcast_index(coords, len, a->op_1_dims, a->op_1_dims_len)] +
                     a->op_2[utils_broadcast_index(coords, len, a->op_2_dims, a->op_2_dims_len)];
    }
}

static void mm_broadcast_core(void *args)
{
    const struct broadcastMatMul_args_fp32 *a = args;
    const int la = a->A_dims_len, lb = a->B_dims_len;
    const int N = a->A_dims[la - 2], K = a->A_dims[la - 1], M = a->B_dims[lb - 1];
    int batch[UTILS_MAX_DIMS], coords[UTILS_MAX_DIMS];
    const int nb = utils_broadcast_shape(a->A_dims, la - 2, a->B_dims, lb - 2, batch);
    long first, last;
    pulp_core_block(utils_count(batch, nb) * N * M, &first, &last);
    for (long o = first; o < last; o++) {
        const long b = o / ((long)N * M), i = o / M % N, j = o % M;
        utils_unravel(b, batch, nb, coords);
        const float *A = a->A + utils_broadcast_index(coords, nb, a->A_dims, la - 2) * N * K;
        const float *B = a->B + utils_broadcast_index(coords, nb, a->B_dims, lb - 2) * K * M;
        float sum = 0.0f;
        for (int k = 0; k < K; k++)
            sum += A[i * K + k] * B[(long)k * M + j];
        a->C[o] = sum;
    }
}

void mm_broadcast_fp32(void *broadcastMatMul_args_fp32)
{
    pi_cl_team_fork(NUM_CORES, mm_broadcast_core, broadcastMatMul_args_fp32);
}

void mm_add(void *matMul_args)
{
    const struct matMul_args *a = matMul_args;
    long first, last;
    pulp_core_block(a->N, &first, &last);
    for (long i = first; i < last; i++)
        for (int j = 0; j < a->M; j++) {
            float c = a->C[i * a->M + j];
            for (int k = 0; k < a->K; k++)
                c += a->A[i * a->K + k] * (a->trans_B ? a->B[(long)j * a->K + k] : a->B[(long)k * a->M + j]);
            a->C[i * a->M + j] = c;
        }
}

void reduce_mean_fp32(void *reduce_mean_args_fp32)
{
    const struct reduce_mean_args_fp32 *a = reduce_mean_args_fp32;
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
        float sum = 0.0f;
        for (int k = 0; k < n; k++)
            sum += a->input[(before * n + k) * inner + after];
        a->output[o] += sum / (float)n;
    }
}

void pulp_mean_std_fp32_cl(void *mean_std_args)
{
    const struct mean_std_args *a = mean_std_args;
    float sum = 0.0f, sum_sq = 0.0f;
    for (int i = 0; i < a->dim; i++) {
        sum += a->input[i];
        sum_sq += a->input[i] * a->input[i];
    }
    const float mean = sum / (float)a->dim;
    float var = sum_sq / (float)a->dim - mean * mean + a->epsilon;
    if (var < 0.0f)
        var = a->epsilon;
    *a->mean = mean;
    *a->var = var;
    *a->std = sqrtf(var);
}

float q_rsqrt(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    bits = 0x5f3759dfu - (bits >> 1);
    float y;
    memcpy(&y, &bits, sizeof y);
    return y * (1.5f - 0.5f * x * y * y);
}
