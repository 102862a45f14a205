/*
 * pulp_residual_fp16.c: FP16 residual connection (contract in
 * pulp_residual_fp16.h, body in pulp_residual_impl.h).
 */
#include "pulp_residual_fp16.h"

#define RES_T fp16
#define RES_BLOB struct blob_fp16
#define RES_ARGS struct SkipConn_args_fp16
#define RES_ADD(a, b) fp16_add((a), (b))
#define RES_NAME "fp16"
#include "pulp_residual_impl.h"

void pulp_residualconn_fp16_fw(void *SkipConn_args_fp16) { res_fw(SkipConn_args_fp16); }
void pulp_sumnode_fp16_bw(void *SkipConn_args_fp16) { res_sumnode_bw(SkipConn_args_fp16); }
void pulp_residualconn_fp16_bw(void *SkipConn_args_fp16) { res_bw(SkipConn_args_fp16); }
