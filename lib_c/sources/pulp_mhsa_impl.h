/*
 * pulp_mhsa_impl.h (internal): multi-head self-attention, written once for
 * both element types (contract in include/pulp_mhsa_fp32.h).
 *
 * Include it once per type after defining:
 *   MH_T            element type; MH_ARGS its struct Mhsa_args[_fp16]
 *   MH_MM_ARGS, MH_MM_MANAGER_ARGS, MH_MM_MANAGER   the matmul dispatcher
 *   MH_SM_ARGS, MH_SM_FW, MH_SM_BW                  the row softmax
 *   MH_TRANSP_ARGS, MH_TRANSPOSE                    the per-core transpose
 *   MH_TO_F(v), MH_FROM_F(f)   MH_T <-> float (the latter rounds)
 *   MH_SCALE_FW(hd), MH_SCALE_BW(hd)   the score scale s as a float
 * It defines static mhsa_fw() and mhsa_bw(), each taking the args struct.
 */
#include "pulp_core_block.h"
#include "pulp_mm_args.h"

#ifdef OPTIMIZE
#define MH_MATMUL_TYPE(opt) (opt)
#else
#define MH_MATMUL_TYPE(opt) ((void)(opt), 0)
#endif

/* C (N x M) = A (N x K) B (K x M, or M x K when trans_B), plus one bias per
 * row when bias_rows is set: one team, kernel `type` through the
 * dispatcher. */
static void mh_matmul(MH_T *A, MH_T *B, MH_T *C, int N, int K, int M, int trans_B, MH_T *bias_rows,
                      int step_type, int type)
{
    MH_MM_ARGS mm;
    PTL_MM_PLAIN_INIT(mm, A, B, C, N, K, M, trans_B, bias_rows);
    MH_MM_MANAGER_ARGS mgr = {.mm_args = &mm, .layer_type = LAYER_LINEAR, .step_type = step_type,
                              .matmul_type = MH_MATMUL_TYPE(type)};
    pi_cl_team_fork(NUM_CORES, MH_MM_MANAGER, &mgr);
}

/* out (M x N) = in (N x M) transposed. */
static void mh_transpose(MH_T *in, MH_T *out, int N, int M)
{
    MH_TRANSP_ARGS t = {.in_matrix = in, .out_matrix = out, .N = N, .M = M,
                        .dim = NULL, .transposed_axes = NULL, .n_dim = 2};
    pi_cl_team_fork(NUM_CORES, MH_TRANSPOSE, &t);
}

/* One elementwise job over n elements: x *= s (acc == NULL), or acc +=
 * (A B)[i] with A rows x K and B K x (n / rows), each product summed in
 * binary32 in k order and then added. */
struct mh_elementwise {
    MH_T *x;
    float s;
    MH_T *acc, *A, *B;
    int rows, K;
    long n;
};

static void mh_scale_core(void *job_ptr)
{
    const struct mh_elementwise *job = job_ptr;
    long first, last;
    pulp_core_block(job->n, &first, &last);
    for (long i = first; i < last; i++)
        job->x[i] = MH_FROM_F(MH_TO_F(job->x[i]) * job->s);
}

static void mh_scale(MH_T *x, long n, float s)
{
    struct mh_elementwise job = {.x = x, .s = s, .n = n};
    pi_cl_team_fork(NUM_CORES, mh_scale_core, &job);
}

/* acc[i][j] += (A B)[i][j] for columns j0..cols-1 of row i, one at a time. */
static inline void mh_add_columns(const struct mh_elementwise *job, long i, long j0, long cols)
{
    for (long j = j0; j < cols; j++) {
        float sum = 0.0f;
        for (int k = 0; k < job->K; k++)
            sum += MH_TO_F(job->A[i * job->K + k]) * MH_TO_F(job->B[k * cols + j]);
        job->acc[i * cols + j] = MH_FROM_F(MH_TO_F(job->acc[i * cols + j]) + sum);
    }
}

static void mh_matmul_add_core(void *job_ptr)
{
    const struct mh_elementwise *job = job_ptr;
    const long cols = job->n / job->rows;
    long first, last;
    pulp_core_block(job->rows, &first, &last);
    for (long i = first; i < last; i++)
        mh_add_columns(job, i, 0, cols);
}

/* The same with four columns of a row at a time: each A value is loaded (and
 * converted) once for four products, and the four sums stay in registers
 * (about 3 instructions per multiply-accumulate on rv32imf, against 7 one
 * column at a time: bench/mhsa_qemu.py's split); each sum is still taken from
 * 0.0f in k order and then added, so the result is the same. */
static void mh_matmul_add_by4_core(void *job_ptr)
{
    const struct mh_elementwise *job = job_ptr;
    const long cols = job->n / job->rows;
    const int K = job->K;
    long first, last;
    pulp_core_block(job->rows, &first, &last);
    for (long i = first; i < last; i++) {
        const MH_T *a = job->A + i * K;
        MH_T *acc = job->acc + i * cols;
        long j = 0;
        for (; j + 4 <= cols; j += 4) {
            const MH_T *b = job->B + j;
            float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
            for (int k = 0; k < K; k++, b += cols) {
                const float x = MH_TO_F(a[k]);
                s0 += x * MH_TO_F(b[0]);
                s1 += x * MH_TO_F(b[1]);
                s2 += x * MH_TO_F(b[2]);
                s3 += x * MH_TO_F(b[3]);
            }
            acc[j] = MH_FROM_F(MH_TO_F(acc[j]) + s0);
            acc[j + 1] = MH_FROM_F(MH_TO_F(acc[j + 1]) + s1);
            acc[j + 2] = MH_FROM_F(MH_TO_F(acc[j + 2]) + s2);
            acc[j + 3] = MH_FROM_F(MH_TO_F(acc[j + 3]) + s3);
        }
        mh_add_columns(job, i, j, cols);
    }
}

/* acc (N x M) += A (N x K) B (K x M). */
static void mh_matmul_add(MH_T *acc, MH_T *A, MH_T *B, int N, int K, int M)
{
    struct mh_elementwise job = {.acc = acc, .A = A, .B = B, .rows = N, .K = K, .n = (long)N * M};
    /* Fewer than 4 columns: the plain loop, without the blocked one's set-up. */
    pi_cl_team_fork(NUM_CORES, M < 4 ? mh_matmul_add_core : mh_matmul_add_by4_core, &job);
}

static void mh_softmax(const MH_ARGS *a, MH_T *in, MH_T *in_diff, MH_T *out, MH_T *out_diff, int L, int fw)
{
    MH_SM_ARGS sm = {.input_data = in, .input_diff = in_diff, .output_data = out, .output_diff = out_diff,
                     .H = L, .W = L, .L = L, .n_heads = a->n_heads, .global_max = a->global_max,
                     .partial_exp_sum = a->partial_exp_sum, .maxes = a->maxes, .sums = a->sums};
    if (fw)
        MH_SM_FW(&sm);
    else
        MH_SM_BW(&sm);
}

static void mhsa_fw(const MH_ARGS *a)
{
    const int L = a->input->H, E = a->input->W, F = a->attention_map->W, Hd = F / a->n_heads;
    const int type = a->opt_matmul_type_fw;
    MH_T *I = a->input->data, *T = a->temp_buffer;
    const struct { MH_T *coeff, *bias, *out; } proj[3] = {
        {a->coeff_in_q->data, a->bias_in_q->data, a->q->data},
        {a->coeff_in_k->data, a->bias_in_k->data, a->k->data},
        {a->coeff_in_v->data, a->bias_in_v->data, a->v->data},
    };
    for (int p = 0; p < 3; p++) {              /* q = Cq^T I + bq (F x L), k, v */
        mh_transpose(proj[p].coeff, T, E, F);
        mh_matmul(T, I, proj[p].out, F, E, L, 0, proj[p].bias, STEP_FW, type);
    }
    const float s = MH_SCALE_FW(Hd);
    MH_T *S = a->head_buffer->data;
    for (int h = 0; h < a->n_heads; h++) {
        const long o = (long)h * Hd * L;
        MH_T *P = a->softmax_buffer->data + (long)h * L * L;
        mh_transpose(a->q->data + o, T, Hd, L);                       /* q_h^T, L x Hd */
        mh_matmul(T, a->k->data + o, S, L, Hd, L, 0, NULL, STEP_FW, type);   /* [query][key] */
        mh_scale(S, (long)L * L, s);
        mh_softmax(a, S, NULL, P, NULL, L, 1);
        mh_matmul(a->v->data + o, P, a->attention_map->data + o, Hd, L, L, 1, NULL, STEP_FW, type);
    }
    mh_matmul(a->coeff_out->data, a->attention_map->data, a->output->data, E, F, L, 0, NULL, STEP_FW, type);
}

static void mhsa_bw(const MH_ARGS *a)
{
    const int L = a->input->H, E = a->input->W, F = a->attention_map->W, Hd = F / a->n_heads;
    const int type = a->opt_matmul_type_wg;
    MH_T *I = a->input->data, *T = a->temp_buffer, *dO = a->output->diff, *dA = a->attention_map->diff;
    mh_matmul(dO, a->attention_map->data, a->coeff_out->diff, E, L, F, 1, NULL, STEP_WGT_GRAD, type);
    mh_transpose(a->coeff_out->data, T, E, F);                            /* Co^T, F x E */
    mh_matmul(T, dO, dA, F, E, L, 0, NULL, STEP_IN_GRAD, type);
    const float s = MH_SCALE_BW(Hd);
    MH_T *G = a->head_buffer->diff, *grad = a->grad;
    for (int h = 0; h < a->n_heads; h++) {
        const long o = (long)h * Hd * L;
        MH_T *P = a->softmax_buffer->data + (long)h * L * L, *dP = a->softmax_buffer->diff + (long)h * L * L;
        mh_matmul(dA + o, P, a->v->diff + o, Hd, L, L, 0, NULL, STEP_IN_GRAD, type);
        mh_transpose(dA + o, T, Hd, L);                                   /* dA_h^T, L x Hd */
        mh_matmul(T, a->v->data + o, dP, L, Hd, L, 0, NULL, STEP_IN_GRAD, type);
        mh_softmax(a, NULL, G, P, dP, L, 0);
        mh_transpose(G, grad, L, L);                                      /* [key][query] */
        mh_scale(grad, (long)L * L, s);
        mh_matmul(a->q->data + o, grad, a->k->diff + o, Hd, L, L, 1, NULL, STEP_IN_GRAD, type);
        mh_matmul(a->k->data + o, grad, a->q->diff + o, Hd, L, L, 0, NULL, STEP_IN_GRAD, type);
    }
    const struct { MH_T *coeff, *coeff_diff, *d; } proj[3] = {
        {a->coeff_in_q->data, a->coeff_in_q->diff, a->q->diff},
        {a->coeff_in_k->data, a->coeff_in_k->diff, a->k->diff},
        {a->coeff_in_v->data, a->coeff_in_v->diff, a->v->diff},
    };
    for (int p = 0; p < 3; p++)                /* dC = d I^T, F x E */
        mh_matmul(proj[p].d, I, proj[p].coeff_diff, F, L, E, 1, NULL, STEP_WGT_GRAD, type);
    mh_matmul(proj[0].coeff, proj[0].d, a->input->diff, E, F, L, 0, NULL, STEP_IN_GRAD, type);
    for (int p = 1; p < 3; p++)
        mh_matmul_add(a->input->diff, proj[p].coeff, proj[p].d, E, F, L);
}
