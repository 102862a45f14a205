/*
 * pulp_softmax_fp32.h: FP32 softmax over the rows of an H x W matrix,
 * forward and backward, the vector softmax, and the fast exponential the
 * row softmax uses.
 *
 * Row softmax (softmax_args; L, n_heads, global_max and partial_exp_sum are
 * not used; maxes and sums are caller scratch of H elements). Each call
 * forks NUM_CORES itself; core id takes rows [id*b, (id+1)*b), b = ceil(H /
 * NUM_CORES).
 *   FW: maxes[i] = max of row i (from -3.4028235e38); e = fastexp_gist(x - max)
 *       into output_data, sums[i] = sum of e in index order; y = e / sums[i].
 *       fastexp_gist is within 3% of exp (relative), so y is within about
 *       6% of the softmax.
 *   BW: sums[i] = sum_j dy * y; input_diff = (dy - sums[i]) * y, with y =
 *       output_data and dy = output_diff.
 * Vector softmax: pulp_vector_softmax_fp32(out, in, buffer_n_cores, size)
 *   forks NUM_CORES itself over blocks of ceil(size / NUM_CORES): per-core
 *   maxima, then the global one; out = expf(in - max) (fastexp_gist when
 *   FASTEXPF is defined); per-core partial sums in buffer_n_cores, added in
 *   core order; out /= the sum.
 * fastexp_gist(x): v = 12102203.17133801f * x + 1064986823.010288f (binary32);
 *   0 for v < 2^23, +inf for v > 0x7F800000, else the float whose bits are
 *   (uint32_t)v. Within 3% of exp(x) in between.
 */
#ifndef PULP_SOFTMAX_FP32_H
#define PULP_SOFTMAX_FP32_H

#include "pulp_train_defines.h"

struct softmax_args {
    float *input_data;
    float *input_diff;
    float *output_data;
    float *output_diff;
    int H;
    int W;
    int L;
    int n_heads;
    float *global_max;
    float *partial_exp_sum;
    float *maxes;
    float *sums;
};

/*
 * Softmax parts (FP32 per-core bodies: the caller forks them; core id takes
 * its block of rows, or of dim elements, as pulp_core_block splits them).
 *   pulp_row_max_fp32_cl(max_args): maxes[i] = max(maxes[i], row i of input).
 *   pulp_row_div_fp32_cl(row_div_args): row i of input /= sums[i], in place.
 *   pulp_div_fp32_cl(div_args): input[k] /= n.
 *   pulp_scalar_mul_fp32_cl(scalar_mul_args): input[k] *= scalar.
 *   pulp_sm_bw_op_1(sm_bw_op_1_args): S[i] = sum_j A[i][j] B[i][j], in index order.
 *   pulp_sm_bw_op_2(sm_bw_op_2_args): output[i][j] = (A[i][j] - S[i]) B[i][j].
 *   mm_bias_add_transposed(mm_bias_add_args): mat[i][j] += bias[j] (t 0) or
 *   bias[i] (t 1).
 */
struct max_args {
    float *input;
    int H;
    int W;
    float *maxes;
};

struct row_div_args {
    float *input;
    int H;
    int W;
    float *sums;
};

struct div_args {
    float *input;
    float n;
    int dim;
};

struct scalar_mul_args {
    float *input;
    float scalar;
    int dim;
};

struct sm_bw_op_1_args {
    float *A;
    float *B;
    float *S;
    int H;
    int W;
};

struct sm_bw_op_2_args {
    float *A;
    float *B;
    float *S;
    float *output;
    int H;
    int W;
};

struct mm_bias_add_args {
    float *mat;
    float *bias;
    int H;
    int W;
    int t;
};

float fastexp_gist(float x);

void pulp_row_max_fp32_cl(void *max_args);
void pulp_row_div_fp32_cl(void *row_div_args);
void pulp_div_fp32_cl(void *div_args);
void pulp_scalar_mul_fp32_cl(void *scalar_mul_args);
void pulp_sm_bw_op_1(void *sm_bw_op_1_args);
void pulp_sm_bw_op_2(void *sm_bw_op_2_args);
void mm_bias_add_transposed(void *mm_bias_add_args);

void pulp_softmax_fp32_fw_cl(void *softmax_args);
void pulp_softmax_fp32_bw_cl(void *softmax_args);
void pulp_vector_softmax_fp32(float *out, float *in, float *buffer_n_cores, unsigned int size);

#endif /* PULP_SOFTMAX_FP32_H */
