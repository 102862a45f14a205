/*
 * pulp_rnn_fp32.h: one FP32 RNN layer over N steps, forward and backward.
 * Each call forks NUM_CORES itself.
 *
 * N = input->H steps of K = input->W inputs, M = output->W hidden units.
 * There is no recurrence inside a call: row t of state->data (N x M) is the
 * state that step t sees; a caller that runs a sequence feeds each output
 * row back as the next state row.
 *   FW: temp = X Wx + S Ws (temp_buffer, N x M; Wx = coeff_x->data, K x M;
 *       Ws = coeff_s->data, M x M; no bias; each element's sum over k, then
 *       over j, in index order); output->data = tanh_prll(temp).
 *   BW: G = (1 - Y^2) dY into grad_buffer (Y = output->data, dY =
 *       output->diff); coeff_x->diff = X^T G; coeff_s->diff = S^T G;
 *       input->diff = G Wx^T (sums over t or m in index order). state->diff
 *       is not computed.
 * Rows of each product are split over the cores (pulp_core_block).
 */
#ifndef PULP_RNN_FP32_H
#define PULP_RNN_FP32_H

#include "pulp_train_defines.h"

struct Rnn_args {
    struct blob *input;
    struct blob *state;
    struct blob *output;
    struct blob *coeff_x;
    struct blob *coeff_s;
    float *temp_buffer;
    float *grad_buffer;
};

void pulp_rnn_fp32_fw_cl(void *Rnn_args);
void pulp_rnn_fp32_bw_cl(void *Rnn_args);

#endif /* PULP_RNN_FP32_H */
