/*
 * pulp_utils_moves_impl.h (internal): the tensor utilities that move or add
 * elements (transpose_matrix, transpose, copy, set_to_value, vect_sum,
 * CHW_to_HWC, HWC_to_CHW, pad_tensor),
 * written once for both element types (contracts in
 * include/pulp_train_utils_fp32.h and _fp16.h).
 *
 * Include it once per type after defining:
 *   UT_N(name)    the API's name for this type: name, or name_fp16
 *   UT_ADD(a, b)  the sum of two elements, rounded once
 *   UT_T          element type, UT_BLOB its struct blob[_fp16], UT_ZERO its zero
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

/* Layout conversion of one buffer through the scratch: copy, then scatter. */
struct layout_job {
    UT_T *data, *buffer;
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

static void layout_convert(const struct UT_N(layout_args) *a, int to_hwc)
{
    const UT_BLOB *t = a->tensor;
    UT_T *targets[2] = {a->transpose_data ? t->data : NULL, a->transpose_grad ? t->diff : NULL};
    for (int k = 0; k < 2; k++) {
        if (!targets[k])
            continue;
        struct layout_job job = {.data = targets[k], .buffer = a->transp_buffer, .C = t->C, .H = t->H, .W = t->W,
                                 .to_hwc = to_hwc};
        pi_cl_team_fork(NUM_CORES, layout_core, &job);
    }
}

void UT_N(CHW_to_HWC)(void *layout_args) { layout_convert(layout_args, 1); }
void UT_N(HWC_to_CHW)(void *layout_args) { layout_convert(layout_args, 0); }

void UT_N(pad_tensor)(void *pad_args)
{
    const struct UT_N(pad_args) *a = pad_args;
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
        a->dest[o] = inside ? a->source[s] : UT_ZERO;
    }
}
