/*
 * pulp_residual_fp32.c: FP32 residual connection (contract in
 * pulp_residual_fp32.h, body in pulp_residual_impl.h).
 */
#include "pulp_residual_fp32.h"

#define RES_T float
#define RES_BLOB struct blob
#define RES_ARGS struct SkipConn_args
#define RES_ADD(a, b) ((a) + (b))
#define RES_NAME "fp32"
#include "pulp_residual_impl.h"

void pulp_residualconn_fp32_fw(void *SkipConn_args) { res_fw(SkipConn_args); }
void pulp_sumnode_fp32_bw(void *SkipConn_args) { res_sumnode_bw(SkipConn_args); }
void pulp_residualconn_fp32_bw(void *SkipConn_args) { res_bw(SkipConn_args); }
