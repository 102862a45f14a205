/*
 * pulp_rnn_fp32.c: FP32 RNN layer (contract in pulp_rnn_fp32.h).
 */
#include "pulp_rnn_fp32.h"
#include "pulp_act_extra_fp32.h"
#include "pulp_core_block.h"

static void rnn_fw_core(void *args)
{
    const struct Rnn_args *a = args;
    const int K = a->input->W, M = a->output->W;
    const float *x = a->input->data, *s = a->state->data, *wx = a->coeff_x->data, *ws = a->coeff_s->data;
    long first, last;
    pulp_core_block(a->input->H, &first, &last);
    for (long t = first; t < last; t++)
        for (int m = 0; m < M; m++) {
            float z = 0.0f;
            for (int k = 0; k < K; k++)
                z += x[t * K + k] * wx[k * M + m];
            for (int j = 0; j < M; j++)
                z += s[t * M + j] * ws[j * M + m];
            a->temp_buffer[t * M + m] = z;
        }
    pi_cl_team_barrier();
    struct tanh_args tanh = {.input = a->temp_buffer, .dim = a->input->H * M, .output = a->output->data};
    tanh_prll(&tanh);
}

static void rnn_bw_core(void *args)
{
    const struct Rnn_args *a = args;
    const int N = a->input->H, K = a->input->W, M = a->output->W;
    const float *x = a->input->data, *s = a->state->data, *wx = a->coeff_x->data;
    const float *y = a->output->data, *dy = a->output->diff;
    float *g = a->grad_buffer;
    long first, last;
    pulp_core_block((long)N * M, &first, &last);
    for (long e = first; e < last; e++)
        g[e] = (1.0f - y[e] * y[e]) * dy[e];
    pi_cl_team_barrier();
    pulp_core_block(K, &first, &last);                  /* coeff_x->diff = X^T G, K x M */
    for (long k = first; k < last; k++)
        for (int m = 0; m < M; m++) {
            float sum = 0.0f;
            for (int t = 0; t < N; t++)
                sum += x[t * K + k] * g[t * M + m];
            a->coeff_x->diff[k * M + m] = sum;
        }
    pulp_core_block(M, &first, &last);                  /* coeff_s->diff = S^T G, M x M */
    for (long j = first; j < last; j++)
        for (int m = 0; m < M; m++) {
            float sum = 0.0f;
            for (int t = 0; t < N; t++)
                sum += s[t * M + j] * g[t * M + m];
            a->coeff_s->diff[j * M + m] = sum;
        }
    pulp_core_block(N, &first, &last);                  /* input->diff = G Wx^T, N x K */
    for (long t = first; t < last; t++)
        for (int k = 0; k < K; k++) {
            float sum = 0.0f;
            for (int m = 0; m < M; m++)
                sum += g[t * M + m] * wx[k * M + m];
            a->input->diff[t * K + k] = sum;
        }
}

void pulp_rnn_fp32_fw_cl(void *Rnn_args) { pi_cl_team_fork(NUM_CORES, rnn_fw_core, Rnn_args); }
void pulp_rnn_fp32_bw_cl(void *Rnn_args) { pi_cl_team_fork(NUM_CORES, rnn_bw_core, Rnn_args); }
