/*
 * pulp_mhsa_fp16.c: FP16 multi-head self-attention (contract in
 * pulp_mhsa_fp16.h; body in pulp_mhsa_impl.h).
 */
#include <math.h>

#include "pulp_mhsa_fp16.h"
#include "pulp_fp16.h"
#include "pulp_matmul_fp16.h"
#include "pulp_softmax_fp16.h"
#include "pulp_train_utils_fp16.h"
#include "pulp_train_utils_fp32.h"

#define MH_T fp16
#define MH_ARGS struct Mhsa_args_fp16
#define MH_MM_ARGS struct matMul_args_fp16
#define MH_MM_MANAGER_ARGS struct mm_manager_args_fp16
#define MH_MM_MANAGER mm_manager_fp16
#define MH_SM_ARGS struct softmax_args_fp16
#define MH_SM_FW pulp_softmax_fp16_fw_cl
#define MH_SM_BW pulp_softmax_fp16_bw_cl
#define MH_TRANSP_ARGS struct transp_args_fp16
#define MH_TRANSPOSE transpose_matrix_fp16
#define MH_TO_F(v) fp16_to_f32(v)
#define MH_FROM_F(f) fp16_from_f32(f)
/* The scale as fp16 holds it: 1/sqrt(Hd) in the FW, q_rsqrt's in the BW. */
#define MH_SCALE_FW(hd) fp16_to_f32(fp16_from_f32(1.0f / sqrtf((float)(hd))))
#define MH_SCALE_BW(hd) fp16_to_f32(fp16_from_f32(q_rsqrt((float)(hd))))
#include "pulp_mhsa_impl.h"

void pulp_mhsa_fp16_fw_cl(void *Mhsa_args_fp16) { mhsa_fw(Mhsa_args_fp16); }
void pulp_mhsa_fp16_bw_cl(void *Mhsa_args_fp16) { mhsa_bw(Mhsa_args_fp16); }
