/*
 * pulp_train.h: the umbrella header of the fake library (tests/fake_trainlib).
 *
 * This is NOT a training library: it is a small library of our own with the
 * published PULP-TrainLib API's names and struct layouts, built so that it
 * has the shapes that made the published library hard to test (issue 12,
 * facts 1-8). The suite is pointed at it by tests/test_fake_trainlib.py.
 * Like the published umbrella header, it includes every family's header, so
 * every runner unit sees all of them (fact 1), including the FP16 attention
 * header with its SDK includes. Like the published library's sources, the
 * fake's include their own families' headers, not this one. No include
 * guard, as in some published versions (the branch dnadalini-patch-4): a
 * translation unit that includes it twice fails (pulp_rnn_fp32.h has none
 * either).
 */

#include "pulp_train_defines.h"
#include "pulp_matmul_fp32.h"
#include "pulp_matmul_fp16.h"
#include "pulp_linear_fp32.h"
#include "pulp_linear_fp16.h"
#include "pulp_pooling_fp32.h"
#include "pulp_pooling_fp16.h"
#include "pulp_conv_pw_fp32.h"
#include "pulp_conv_pw_fp16.h"
#include "pulp_conv_dw_fp32.h"
#include "pulp_conv_dw_fp16.h"
#include "pulp_transp_conv2d_fp32.h"
#include "pulp_transp_conv2d_fp16.h"
#include "pulp_rnn_fp32.h"
#include "pulp_mhsa_fp16.h"
#include "pulp_cast_fp16.h"
#include "pulp_optimizers_fp32.h"

