/* pulp_rnn_fp32.h: FP32 RNN. Its source does not compile (fact 4). No
 * include guard, as some headers of published versions have none: included
 * twice (through an unguarded umbrella), it redefines struct Rnn_args. */

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
