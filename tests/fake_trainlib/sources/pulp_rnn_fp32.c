/*
 * pulp_rnn_fp32.c: fact 4, a library source that does not compile. It calls
 * a function no header declares; the harness compiles library code with
 * -Werror=implicit-function-declaration, so this file fails, and only it.
 */
#include "pulp_rnn_fp32.h"

void pulp_rnn_fp32_fw_cl(void *Rnn_args)
{
    struct Rnn_args *r = Rnn_args;
    rnn_fp32_undeclared_step(r->input->data, r->state->data, r->output->data);
}

void pulp_rnn_fp32_bw_cl(void *Rnn_args)
{
    (void)Rnn_args;
}
