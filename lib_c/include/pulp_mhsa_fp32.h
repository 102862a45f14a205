/*
 * pulp_mhsa_fp32.h: FP32 multi-head self-attention, forward and backward.
 * Each call forks NUM_CORES itself, once per phase (the matmuls go through
 * mm_manager with the args' opt_matmul_type_*; the row softmax is
 * pulp_softmax_fp32_{fw,bw}_cl).
 *
 * Sizes: L = input->H (sequence), E = input->W (embedding), F =
 * attention_map->W (all heads), n_heads heads of Hd = F / n_heads rows.
 * With torch's X (L x E), Y (L x E) and Linear weights W (out x in):
 *   input->data     I = X^T, E x L
 *   coeff_in_{q,k,v}->data  C = W^T, E x F; bias_in_{q,k,v}->data, F
 *   coeff_out->data Co = W_out, E x F (bias_out is not used)
 *   output->data    Y^T, E x L
 *   q, k, v, attention_map: F x L; head h owns rows [h*Hd, (h+1)*Hd)
 *   softmax_buffer->data: n_heads blocks of L x L, P_h as [query][key]
 *   head_buffer->data, ->diff: L x L each; grad: L x L; maxes, sums: L
 *   each; softmax_buffer->diff: n_heads blocks of L x L; temp_buffer: the
 *   API's max(E*F, F*L, L*L) elements (lib_c uses E*F and Hd*L of them).
 * FW (matmul type opt_matmul_type_fw):
 *   q = Cq^T I + bq (one bias per row), k and v alike;
 *   head h: S = (q_h^T k_h) * s, s = q_rsqrt(Hd), into head_buffer->data
 *   ([query][key]: the API's k_h^T q_h transposed, the same sums); P_h =
 *   softmax of S's rows; A_h = v_h P_h^T into attention_map;
 *   output = Co A.
 * BW (matmul type opt_matmul_type_wg), dO = output->diff, everything above
 * as FW left it:
 *   coeff_out->diff = dO A^T (E x F); attention_map->diff dA = Co^T dO;
 *   head h: v->diff_h = dA_h P_h; dP_h = dA_h^T v_h (softmax_buffer->diff);
 *   G = softmax BW of (P_h, dP_h), [query][key], in head_buffer->diff;
 *   grad = s G^T ([key][query]); k->diff_h = q_h grad^T;
 *   q->diff_h = k_h grad;
 *   coeff_in_{q,k,v}->diff = d{q,k,v} I^T (F x E, torch's layout);
 *   input->diff = Cq dq, then += Ck dk, then += Cv dv (each product summed
 *   on its own, then added). No bias gradients.
 */
#ifndef PULP_MHSA_FP32_H
#define PULP_MHSA_FP32_H

#include "pulp_train_defines.h"

struct Mhsa_args {
    struct blob *input;
    struct blob *input_bn;
    int n_heads;
    int opt_matmul_type_fw;
    int opt_matmul_type_wg;
    int opt_matmul_type_ig;
    struct blob *output;
    struct blob *coeff_in_q;
    struct blob *coeff_in_k;
    struct blob *coeff_in_v;
    struct blob *bias_in_q;
    struct blob *bias_in_k;
    struct blob *bias_in_v;
    struct blob *coeff_out;
    struct blob *bias_out;
    struct blob *q;
    struct blob *k;
    struct blob *v;
    struct blob *attention_map;
    float *temp_buffer;
    float *grad;
    struct blob *head_buffer;
    struct blob *softmax_buffer;
    float *global_max;
    float *partial_exp_sum;
    float *maxes;
    float *sums;
};

void pulp_mhsa_fp32_fw_cl(void *Mhsa_args);
void pulp_mhsa_fp32_bw_cl(void *Mhsa_args);

#endif /* PULP_MHSA_FP32_H */
