/*
 * pulp_softmax_fp32.c: FP32 softmax (contract in pulp_softmax_fp32.h; the
 * row softmax's body in pulp_softmax_impl.h).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pulp_softmax_fp32.h"
#include "pulp_core_block.h"

float fastexp_gist(float x)
{
    const float v = 12102203.17133801f * x + 1064986823.010288f;
    if (v < 8388608.0f)             /* 2^23: below the smallest normal's pattern */
        return 0.0f;
    if (v > 2139095040.0f)          /* 0x7F800000: the pattern of +inf */
        return INFINITY;
    const uint32_t bits = (uint32_t)v;
    float out;
    memcpy(&out, &bits, sizeof out);
    return out;
}

#define SM_T float
#define SM_ARGS struct softmax_args
#define SM_LOWEST (-3.4028235e38f)
#define SM_TO_F(v) (v)
#define SM_FROM_F(f) (f)
#define SM_EXP(x) fastexp_gist(x)
#include "pulp_softmax_impl.h"

void pulp_softmax_fp32_fw_cl(void *softmax_args) { sm_fw(softmax_args); }
void pulp_softmax_fp32_bw_cl(void *softmax_args) { sm_bw(softmax_args); }

#ifdef FASTEXPF
#define VECTOR_EXP(x) fastexp_gist(x)
#else
#define VECTOR_EXP(x) expf(x)
#endif

struct vector_softmax_job {
    float *out, *in, *buffer;
    int size;
};

static void vector_softmax_core(void *job_ptr)
{
    const struct vector_softmax_job *job = job_ptr;
    const int cores = NUM_CORES, id = pi_core_id();
    long first, last;
    pulp_core_block(job->size, &first, &last);
    float m = -3.4028235e38f;
    for (long i = first; i < last; i++)
        m = job->in[i] > m ? job->in[i] : m;
    job->buffer[id] = m;
    pi_cl_team_barrier();
    m = job->buffer[0];
    for (int c = 1; c < cores; c++)
        m = job->buffer[c] > m ? job->buffer[c] : m;
    pi_cl_team_barrier();           /* every core has read the maxima before they are overwritten */
    float partial = 0.0f;
    for (int i = first; i < last; i++) {
        job->out[i] = VECTOR_EXP(job->in[i] - m);
        partial += job->out[i];
    }
    job->buffer[id] = partial;
    pi_cl_team_barrier();
    float sum = 0.0f;
    for (int c = 0; c < cores; c++)
        sum += job->buffer[c];
    for (int i = first; i < last; i++)
        job->out[i] = job->out[i] / sum;
}

void pulp_vector_softmax_fp32(float *out, float *in, float *buffer_n_cores, unsigned int size)
{
    struct vector_softmax_job job = {.out = out, .in = in, .buffer = buffer_n_cores, .size = (int)size};
    pi_cl_team_fork(NUM_CORES, vector_softmax_core, &job);
}
