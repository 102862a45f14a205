/*
 * pulp_conv_pw_impl.h (internal): the pointwise convolution steps, written
 * once for both element types (contract in include/pulp_conv_pw_fp32.h).
 *
 * Include it once per type after defining:
 *   CONV_T                       element type
 *   PW_ARGS                      struct PointWise_Conv_args[_fp16]
 *   CONV_MM_ARGS, CONV_MGR_ARGS  struct matMul_args[_fp16], struct mm_manager_args[_fp16]
 *   CONV_MM_MANAGER              mm_manager[_fp16]
 * It defines static pw_fw(), pw_wg(), pw_ig() and pw_bw(), each taking the
 * args struct; the .c file wraps them in the public names.
 *
 * A 1x1 convolution is a plain matmul over the pixel axis, so each step is
 * one mm_manager call; the only extra work is a transpose where an operand
 * is stored the other way round from what the product needs. The weights
 * (and their gradient) are Co x Ci in CHW and Ci x Co in HWC, as the
 * published API has them.
 */
#include "pulp_conv_ranges.h"
#include "pulp_mm_args.h"

#ifdef OPTIMIZE
#define PW_MATMUL_TYPE(opt) (opt)
#else
#define PW_MATMUL_TYPE(opt) ((void)(opt), 0)
#endif

/* Work of one team: optionally transpose src (rows x cols) into dst
 * (cols x rows), then the product. */
struct pw_job {
    CONV_MM_ARGS mm;
    CONV_MGR_ARGS mgr;
    const CONV_T *src;
    CONV_T *dst;
    int rows;
    int cols;
};

static void pw_team(void *job_ptr)
{
    struct pw_job *job = job_ptr;
    if (job->dst) {
        /* Each core writes whole rows of dst: its slice of src's columns. */
        int first, last;
        conv_core_slice(job->cols, &first, &last);
        for (int j = first; j < last; j++)
            for (int i = 0; i < job->rows; i++)
                job->dst[j * job->rows + i] = job->src[i * job->cols + j];
        pi_cl_team_barrier();
    }
    CONV_MM_MANAGER(&job->mgr);
}

/* C[N x M] = A[N x K] . B (K x M, or M x K when trans_B) in a forked team,
 * after transposing src (rows x cols) into dst when dst is set. */
static void pw_run(CONV_T *A, CONV_T *B, CONV_T *C, int N, int K, int M, int trans_B, int HWC,
                   int step, int matmul_type, const CONV_T *src, CONV_T *dst, int rows, int cols)
{
    struct pw_job job; /* every field set: no memset (pulp_mm_args.h) */
    PTL_MM_PLAIN_INIT(job.mm, A, B, C, N, K, M, trans_B, NULL);
    job.mm.HWC = HWC;
    PTL_MGR_INIT(job.mgr, &job.mm, LAYER_PW_CONV, step, matmul_type);
    job.src = src;
    job.dst = dst;
    job.rows = rows;
    job.cols = cols;
    pi_cl_team_fork(NUM_CORES, pw_team, &job);
}

static void pw_fw(const PW_ARGS *a)
{
    const int Ci = a->input->C, Co = a->output->C, P = a->input->H * a->input->W;
    const int type = PW_MATMUL_TYPE(a->opt_matmul_type_fw);
    if (a->HWC) /* out[P x Co] = in[P x Ci] . W[Ci x Co] */
        pw_run(a->input->data, a->coeff->data, a->output->data, P, Ci, Co, 0, 1, STEP_FW, type,
               NULL, NULL, 0, 0);
    else        /* out[Co x P] = W[Co x Ci] . in[Ci x P] */
        pw_run(a->coeff->data, a->input->data, a->output->data, Co, Ci, P, 0, 0, STEP_FW, type,
               NULL, NULL, 0, 0);
}

static void pw_wg(const PW_ARGS *a)
{
    const int Ci = a->input->C, Co = a->output->C, P = a->input->H * a->input->W;
    const int type = PW_MATMUL_TYPE(a->opt_matmul_type_wg);
    if (a->HWC) /* dW[Ci x Co] = T(in)[Ci x P] . dOut[P x Co] */
        pw_run(a->transpose_buffer, a->output->diff, a->coeff->diff, Ci, P, Co, 0, 1, STEP_WGT_GRAD,
               type, a->input->data, a->transpose_buffer, P, Ci);
    else        /* dW[Co x Ci] = dOut[Co x P] . in^T, in stored Ci x P */
        pw_run(a->output->diff, a->input->data, a->coeff->diff, Co, P, Ci, 1, 0, STEP_WGT_GRAD,
               type, NULL, NULL, 0, 0);
}

static void pw_ig(const PW_ARGS *a)
{
    const int Ci = a->input->C, Co = a->output->C, P = a->input->H * a->input->W;
    const int type = PW_MATMUL_TYPE(a->opt_matmul_type_ig);
    if (a->HWC) /* dIn[P x Ci] = dOut[P x Co] . T(W)[Co x Ci], W stored Ci x Co */
        pw_run(a->output->diff, a->transpose_buffer, a->input->diff, P, Co, Ci, 0, 1, STEP_IN_GRAD,
               type, a->coeff->data, a->transpose_buffer, Ci, Co);
    else        /* dIn[Ci x P] = T(W)[Ci x Co] . dOut[Co x P], W stored Co x Ci */
        pw_run(a->transpose_buffer, a->output->diff, a->input->diff, Ci, Co, P, 0, 0, STEP_IN_GRAD,
               type, a->coeff->data, a->transpose_buffer, Co, Ci);
}

static void pw_bw(const PW_ARGS *a)
{
    if (!a->skip_wg_grad)
        pw_wg(a);
    if (!a->skip_in_grad)
        pw_ig(a);
}
