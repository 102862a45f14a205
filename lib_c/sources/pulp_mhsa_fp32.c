/*
 * pulp_mhsa_fp32.c: FP32 multi-head self-attention (contract in
 * pulp_mhsa_fp32.h; body in pulp_mhsa_impl.h).
 */
#include "pulp_mhsa_fp32.h"
#include "pulp_matmul_fp32.h"
#include "pulp_softmax_fp32.h"
#include "pulp_train_utils_fp32.h"

#define MH_T float
#define MH_ARGS struct Mhsa_args
#define MH_MM_ARGS struct matMul_args
#define MH_MM_MANAGER_ARGS struct mm_manager_args
#define MH_MM_MANAGER mm_manager
#define MH_SM_ARGS struct softmax_args
#define MH_SM_FW pulp_softmax_fp32_fw_cl
#define MH_SM_BW pulp_softmax_fp32_bw_cl
#define MH_TRANSP_ARGS struct transp_args
#define MH_TRANSPOSE transpose_matrix
#define MH_TO_F(v) (v)
#define MH_FROM_F(f) (f)
#define MH_SCALE_FW(hd) q_rsqrt((float)(hd))
#define MH_SCALE_BW(hd) q_rsqrt((float)(hd))
#include "pulp_mhsa_impl.h"

void pulp_mhsa_fp32_fw_cl(void *Mhsa_args) { mhsa_fw(Mhsa_args); }
void pulp_mhsa_fp32_bw_cl(void *Mhsa_args) { mhsa_bw(Mhsa_args); }
