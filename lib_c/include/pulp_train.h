/*
 * pulp_train.h: umbrella header of the training library.
 */
#ifndef PULP_TRAIN_H
#define PULP_TRAIN_H

#include "pulp_train_defines.h"
#include "pulp_fp16.h"
#include "pulp_matmul_fp32.h"
#include "pulp_matmul_fp16.h"
#include "pulp_linear_fp32.h"
#include "pulp_linear_fp16.h"
#include "pulp_im2col_fp32.h"
#include "pulp_im2col_fp16.h"
#include "pulp_conv2d_fp32.h"
#include "pulp_conv2d_fp16.h"
#include "pulp_pooling_fp32.h"
#include "pulp_pooling_fp16.h"
#include "pulp_losses_fp32.h"
#include "pulp_losses_fp16.h"
#include "pulp_optimizers_fp32.h"
#include "pulp_optimizers_fp16.h"
#include "pulp_residual_fp32.h"
#include "pulp_residual_fp16.h"
#include "pulp_instnorm_fp32.h"
#include "pulp_softmax_fp32.h"
#include "pulp_softmax_fp16.h"
#include "pulp_act_extra_fp32.h"
#include "pulp_act_extra_fp16.h"
#include "pulp_random.h"
#include "pulp_dropout_fp32.h"
#include "pulp_dropout_fp16.h"
#include "pulp_cordic.h"
#include "pulp_train_utils_fp32.h"
#include "pulp_act_fp32.h"
#include "pulp_act_fp16.h"
#include "pulp_conv_pw_fp32.h"
#include "pulp_conv_pw_fp16.h"
#include "pulp_conv_dw_fp32.h"
#include "pulp_conv_dw_fp16.h"
#include "pulp_transp_conv2d_fp32.h"
#include "pulp_transp_conv2d_fp16.h"

#endif /* PULP_TRAIN_H */
