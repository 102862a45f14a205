/*
 * pulp_residual_impl.h (internal): the residual connection's three calls,
 * written once for both element types (contract in
 * include/pulp_residual_fp32.h).
 *
 * Include it once per type after defining:
 *   RES_T        element type
 *   RES_BLOB     struct blob[_fp16]
 *   RES_ARGS     struct SkipConn_args[_fp16]
 *   RES_ADD(a,b) the sum of two elements, rounded once
 *   RES_NAME     "fp32" or "fp16", for the size-mismatch message
 * It defines static res_fw(), res_sumnode_bw() and res_bw().
 */
#include "pulp_core_block.h"
#include <stdio.h>

/* This core's block [*first, *last) of n elements, blocks of ceil(n / NUM_CORES). */
static int res_sizes_differ(const char *call, const RES_BLOB *a, const char *a_name, const RES_BLOB *b,
                            const char *b_name)
{
    if (a->dim == b->dim)
        return 0;
    printf("%s_%s: %s->dim %d != %s->dim %d; nothing written\n", call, RES_NAME, a_name, a->dim, b_name,
           b->dim);
    return 1;
}

static void res_fw_core(void *args)
{
    const RES_ARGS *a = args;
    long first, last;
    pulp_core_block(a->output->dim, &first, &last);
    const RES_T *s = a->skip->data, *l = a->lout->data;
    RES_T *y = a->output->data;
    for (int i = first; i < last; i++)
        y[i] = RES_ADD(s[i], l[i]);
}

static void res_sumnode_core(void *args)
{
    const RES_ARGS *a = args;
    long first, last;
    pulp_core_block(a->output->dim, &first, &last);
    const RES_T *dy = a->output->diff;
    RES_T *ds = a->skip->diff;
    for (int i = first; i < last; i++)
        ds[i] = RES_ADD(ds[i], dy[i]);
}

static void res_bw_core(void *args)
{
    const RES_ARGS *a = args;
    long first, last;
    pulp_core_block(a->output->dim, &first, &last);
    const RES_T *dy = a->output->diff;
    RES_T *dl = a->lout->diff;
    for (int i = first; i < last; i++)
        dl[i] = dy[i];
}

static void res_fw(RES_ARGS *a)
{
    if (res_sizes_differ("pulp_residualconn", a->skip, "skip", a->lout, "lout") ||
        res_sizes_differ("pulp_residualconn", a->skip, "skip", a->output, "output"))
        return;
    pi_cl_team_fork(NUM_CORES, res_fw_core, a);
}

static void res_sumnode_bw(RES_ARGS *a)
{
    if (a->skip_in_grad || res_sizes_differ("pulp_sumnode", a->skip, "skip", a->output, "output"))
        return;
    pi_cl_team_fork(NUM_CORES, res_sumnode_core, a);
}

static void res_bw(RES_ARGS *a)
{
    if (res_sizes_differ("pulp_residualconn", a->lout, "lout", a->output, "output"))
        return;
    pi_cl_team_fork(NUM_CORES, res_bw_core, a);
}
