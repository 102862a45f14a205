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

/* Layout conversion of one buffer through the scratch: copy, then scatter. */
struct layout_job {
    float *data, *buffer;
    int C, H, W, to_hwc;
};

static void layout_core(void *job_ptr)
{
    const struct layout_job *job = job_ptr;
    const long n = (long)job->C * job->H * job->W, hw = (long)job->H * job->W;
    long first, last;
    pulp_core_block(n, &first, &last);
    for (long i = first; i < last; i++)
        job->buffer[i] = job->data[i];
    pi_cl_team_barrier();
    for (long o = first; o < last; o++) {
        if (job->to_hwc) {          /* o = p*C + c reads CHW c*HW + p */
            const long p = o / job->C, c = o % job->C;
            job->data[o] = job->buffer[c * hw + p];
        } else {                    /* o = c*HW + p reads HWC p*C + c */
            const long c = o / hw, p = o % hw;
            job->data[o] = job->buffer[p * job->C + c];
        }
    }
}

static void layout_convert(const struct layout_args *a, int to_hwc)
{
    const struct blob *t = a->tensor;
    float *targets[2] = {a->transpose_data ? t->data : NULL, a->transpose_grad ? t->diff : NULL};
    for (int k = 0; k < 2; k++) {
        if (!targets[k])
            continue;
        struct layout_job job = {.data = targets[k], .buffer = a->transp_buffer, .C = t->C, .H = t->H, .W = t->W,
                                 .to_hwc = to_hwc};
        pi_cl_team_fork(NUM_CORES, layout_core, &job);
    }
}

void CHW_to_HWC(void *layout_args) { layout_convert(layout_args, 1); }
void HWC_to_CHW(void *layout_args) { layout_convert(layout_args, 0); }

void pad_tensor(void *pad_args)
{
    const struct pad_args *a = pad_args;
    const int Hp = a->H + a->T_UPAD + a->T_DPAD, Wp = a->W + a->T_LPAD + a->T_RPAD;
    long first, last;
    pulp_core_block((long)a->C * Hp * Wp, &first, &last);
    for (long o = first; o < last; o++) {
        int c, h, w;
        if (a->HWC_lay) {
            c = (int)(o % a->C);
            w = (int)(o / a->C % Wp);
            h = (int)(o / a->C / Wp);
        } else {
            w = (int)(o % Wp);
            h = (int)(o / Wp % Hp);
            c = (int)(o / Wp / Hp);
        }
        const int sh = h - a->T_UPAD, sw = w - a->T_LPAD;
        const int inside = sh >= 0 && sh < a->H && sw >= 0 && sw < a->W;
        const long s = a->HWC_lay ? ((long)sh * a->W + sw) * a->C + c : ((long)c * a->H + sh) * a->W + sw;
        a->dest[o] = inside ? a->source[s] : 0.0f;
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
