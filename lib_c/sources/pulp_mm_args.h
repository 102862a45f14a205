/*
 * pulp_mm_args.h (internal): the matMul_args and mm_manager_args of a
 * product, for the layers that run one through mm_manager (linear, MHSA,
 * pointwise and transposed convolution).
 */
#ifndef PULP_MM_ARGS_H
#define PULP_MM_ARGS_H

/* Sets every field of MM, a struct matMul_args of either element type, for
 * C (N x M) = A (N x K) B (K x M, or M x K when TRANS_B), plus one bias per
 * row of C from BIAS_ROWS when it is not NULL. Field by field, through a
 * volatile pointer: a memset of the struct, or an initializer (GCC 12 for a
 * partial one, clang 14 for any), calls picolibc's memset, a byte loop that
 * took 387 instructions for these 100 bytes on QEMU (60% of a 1 x 1 linear
 * FW, 23% of a small FP16 MHSA BW); the volatile stores stay stores. */
#define PTL_MM_PLAIN_INIT(MM, A_, B_, C_, N_, K_, M_, TRANS_B, BIAS_ROWS)                              \
    do {                                                                                               \
        _Static_assert(sizeof(MM) == 4 * sizeof(void *) + 20 * sizeof(int), /* a new field: set it */   \
                       "matMul_args has fields that this macro leaves unset");                         \
        volatile __typeof__(MM) *mm_ = &(MM);                                                          \
        mm_->A = (A_), mm_->B = (B_), mm_->C = (C_);                                                   \
        mm_->N = (N_), mm_->M = (M_), mm_->K = (K_), mm_->trans_B = (TRANS_B);                         \
        mm_->H = mm_->W = mm_->pW = mm_->pH = mm_->pCin = mm_->pCout = 0;                              \
        mm_->stride_h = mm_->stride_w = mm_->Lpad = mm_->Rpad = mm_->Upad = mm_->Dpad = 0;             \
        mm_->bias = (BIAS_ROWS);                                                                       \
        mm_->bias_dim = (BIAS_ROWS) ? (N_) : 0;                                                        \
        mm_->USE_BIASES = mm_->bias_transposed = (BIAS_ROWS) != 0;                                     \
        mm_->HWC = 0;                                                                                  \
    } while (0)

/* Sets every field of MGR, a struct mm_manager_args of either element type
 * (five fields: no memset to avoid). */
#define PTL_MGR_INIT(MGR, MM_ARGS, LAYER, STEP, MATMUL_TYPE)                                           \
    do {                                                                                               \
        _Static_assert(sizeof(MGR) == sizeof(struct { void *p[2]; int i[3]; }), /* a new field: set it */ \
                       "mm_manager_args has fields that this macro leaves unset");                     \
        (MGR).mm_args = (MM_ARGS), (MGR).mm_dw_args = NULL;                                            \
        (MGR).layer_type = (LAYER), (MGR).step_type = (STEP), (MGR).matmul_type = (MATMUL_TYPE);       \
    } while (0)

#endif /* PULP_MM_ARGS_H */
