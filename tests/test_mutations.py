"""Mutation checks: the suite must catch seeded bugs in the library.

Each mutation copies lib_c/, changes one piece of source the way a real bug
would, and runs a slice of the regression on the host target against the
copy. The suite must report the mutated kernel's variants as numeric
failures that name the variant. The same slices on the clean library must
all pass: no false alarm.

A missing barrier is caught without depending on timing: its check runs the
host team sequenced (PTL_TEAM_ORDER, harness/targets/host/runtime/team_pthreads.c),
one core at a time between barriers in a fixed order, so a core that reads
another core's results too early reads the NaN sentinel or a half-done
value on every run, however busy the machine.
"""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness import catalogue, toolchain
from tests.mutants import LIBRARY, SourceEdit, mutant_library

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutation:
    name: str
    file: str                 # relative to the library root
    original: str             # exact text that the bug replaces
    mutated: str
    select: str               # pytest -k expression for the slice of the suite to run
    must_fail: str            # a variant id that must fail as numeric
    team_order: str = "free"  # the host team's PTL_TEAM_ORDER for the slice
    reports: str = "ULP"      # what the failure message must say besides the variant


MUTATIONS = [
    Mutation("dropped_leftover_row",
             "sources/pulp_mm_tiles_fp32.c",
             "    for (int i = row0; i < row1;) {",
             "    for (int i = row0; i + 1 < row1;) {",
             "matmul-fp32-fw-N7xM8xK9",
             "matmul-fp32-fw-N7xM8xK9-trans_B0-bias0-mm_unroll_4x1-c1"),
    Mutation("odd_k_leftover_skipped",  # off-by-one in the K loop: the last k of an odd K is lost
             "sources/pulp_mm_tiles_fp32.c",
             "            if ((KU) > 1 && rest) {",
             "            if ((KU) > 1 && rest && 0) {",
             "matmul-fp32-fw-N7xM8xK9",
             "matmul-fp32-fw-N7xM8xK9-trans_B1-bias0-mm_unroll_2x2-c3"),
    Mutation("missing_barrier_before_bias",
             "sources/pulp_mm_manager_fp32.c",
             "    pi_cl_team_barrier();\n",
             "\n",
             "linear-fp32-fw-inp37xout19-bias1",
             "linear-fp32-fw-inp37xout19-bias1-mm_M-c8",
             # core 0 runs last: the others add their rows' bias before mm_M's
             # column split has written those rows, and core 0 then overwrites them
             team_order="reverse"),
    Mutation("linear_wg_accumulates_into_the_bias_gradient",  # += where WG must overwrite bias->diff
             # (issue 25, class 5): hidden while the runner zeroed db; db starts as poison (NaN)
             "sources/pulp_linear_impl.h",
             "            job->bias_diff[o] = job->out_diff[o];",
             "            job->bias_diff[o] += job->out_diff[o];",
             "linear-fp32-wg-inp37xout19-bias1",
             "linear-fp32-wg-inp37xout19-bias1-mm_M-c3"),
    Mutation("bias_on_the_wrong_axis",  # bias_transposed read the wrong way round
             "sources/pulp_mm_manager_fp32.c",
             "    if (!mm_args->bias_transposed) { /* one bias per column */",
             "    if (mm_args->bias_transposed) { /* one bias per column */",
             "matmul-fp32-fw-N9xM4xK8 and bias2",
             "matmul-fp32-fw-N9xM4xK8-trans_B0-bias2-mm-c1"),
    Mutation("accumulates_in_16_bits",
             "sources/pulp_mm_tiles_fp32.c",
             "#define PTL_MAC(v, u, _) PTL_ACC(u, v) += av * bv##v;",
             # a call, not the conversion inlined into every MAC: GCC took 100 s on that file
             "static __attribute__((noinline)) float acc16(float x) { return fp16_to_f32(fp16_from_f32(x)); }\n"
             "#define PTL_MAC(v, u, _) PTL_ACC(u, v) = acc16(PTL_ACC(u, v) + av * bv##v);",
             "matmul-fp32-fw-N64xM64xK64-trans_B0-bias0 and unroll_4x4",   # a long K; 12 of its 1,260 variants
             "matmul-fp32-fw-N64xM64xK64-trans_B0-bias0-mm_unroll_4x4-c8"),
    Mutation("slice_rounds_down",  # leftover rows of a split that is not a multiple of the cores
             "sources/pulp_mm_tiles_fp32.c",
             "    const int chunk = (total + cores - 1) / cores;",
             "    const int chunk = total / cores;",
             "matmul-fp32-fw-N13xM11xK7",
             "matmul-fp32-fw-N13xM11xK7-trans_B0-bias0-mm-c8"),
    Mutation("relu_bw_passes_gradient_at_zero",  # x >= 0 instead of x > 0: dx must be 0 at x == 0
             "sources/pulp_act_fp32.c",   # the FP32 test of pulp_act_impl.h's ReLU FW and BW
             "#define ACT_POSITIVE(x) ((x) > 0.0f)",
             "#define ACT_POSITIVE(x) ((x) >= 0.0f)",
             "relu-fp32-bw-n17-",
             "relu-fp32-bw-n17-direct-c1"),
    Mutation("act_split_rounds_down",  # b = n / cores: the last n % cores elements are never written
             "sources/pulp_core_block.h",
             "    const long b = (n - 1) / cores + 1;",
             "    const long b = n / cores;",
             "sigmoid-bf16-fw-n17-",
             "sigmoid-bf16-fw-n17-direct-c8"),
    Mutation("caller_split_coarser",  # b = ceil((n + 2) / cores): still every element once, not the API's blocks
             # (mutation bench seed 2's survivor): only a core run alone shows it (harness/core_split.py)
             "sources/pulp_core_block.h",
             "    const long b = (n - 1) / cores + 1;",
             "    const long b = (n + 1) / cores + 1;",
             "gelu-fp32-fw-n17-",
             "gelu-fp32-fw-n17-alone2-direct-c3"),
    Mutation("pool_dropped_last_output_row",
             "sources/pulp_pooling_impl.h",
             "        const int oh = u - c * g.Ho;\n",
             "        const int oh = u - c * g.Ho;\n        if (oh == g.Ho - 1)\n            continue;\n",
             "maxpool-fp32-fw-C16xH16xW16",
             "maxpool-fp32-fw-C16xH16xW16xHk2xWk2xHs2xWs2-direct-c3"),
    Mutation("pool_stride_on_wrong_axis",
             "sources/pulp_pooling_impl.h",
             "        const int ih0 = oh * g.Hs;\n",
             "        const int ih0 = oh * g.Ws;\n",
             "avgpool-fp32-fw-C3xH9xW8",
             "avgpool-fp32-fw-C3xH9xW8xHk3xWk2xHs2xWs1-direct-c8"),
    Mutation("avgpool_bw_gap_takes_the_window_value",  # columns between windows (Wk < Ws) are not zeroed
             "sources/pulp_pooling_impl.h",
             "            const int w0 = ow * Ws, w1 = w0 + Wk;\n",
             "            const int w0 = ow * Ws, w1 = w0 + Ws;\n",
             "avgpool-fp32-bw-C5xH7xW6",
             "avgpool-fp32-bw-C5xH7xW6xHk1xWk1xHs2xWs3-direct-c3"),
    Mutation("maxpool_bw_routes_to_wrong_element",  # the column of the maximum is forgotten
             "sources/pulp_pooling_impl.h",
             "                arg = kh * W + kw;\n",
             "                arg = kh * W;\n",
             "maxpool-fp32-bw-C3xH9xW11",
             "maxpool-fp32-bw-C3xH9xW11xHk3xWk3xHs2xWs2-direct-c1"),
    Mutation("conv_pad_on_the_wrong_side",
             "sources/pulp_im2col_impl.h",
             "        g.off_x = -a->Lpad;",
             "        g.off_x = -a->Rpad;",
             "conv2d-fp32-fw-Ci3xH5xW7xCo4xHk3xWk2xsh1xsw1xL1xR0xU0xD2 and im2col1",
             "conv2d-fp32-fw-Ci3xH5xW7xCo4xHk3xWk2xsh1xsw1xL1xR0xU0xD2-HWC0-bias0-dma0-im2col1-mm-c1"),
    Mutation("conv_stride_on_the_wrong_axis",
             "sources/pulp_conv2d_impl.h",
             "    g.sw = a->stride_w;",
             "    g.sw = a->stride_h;",
             "conv2d-fp32-fw-Ci2xH7xW6xCo5xHk3xWk3xsh2xsw1xL1xR1xU1xD1 and im2col0",
             "conv2d-fp32-fw-Ci2xH7xW6xCo5xHk3xWk3xsh2xsw1xL1xR1xU1xD1-HWC0-bias0-dma0-im2col0-direct-c1"),
    Mutation("conv_dropped_last_output_row",
             "sources/pulp_im2col_impl.h",
             "    conv_core_slice(geom.OH * geom.OW, &first, &last);",
             "    conv_core_slice((geom.OH - 1) * geom.OW, &first, &last);",
             "conv2d-fp32-fw-Ci5xH7xW9xCo7xHk3xWk3xsh1xsw1xL0xR0xU0xD0-HWC1",
             "conv2d-fp32-fw-Ci5xH7xW9xCo7xHk3xWk3xsh1xsw1xL0xR0xU0xD0-HWC1-bias0-dma0-im2col1-mm_unroll_4x4-c8"),
    Mutation("conv_hwc_indexing_for_chw",
             "sources/pulp_conv2d_impl.h",
             "        g.xc = g.H * g.W, g.xy = g.W, g.xx = 1;",
             "        g.xc = 1, g.xy = g.W * g.Ci, g.xx = g.Ci;",
             "conv2d-fp32-fw-Ci3xH5xW7xCo4xHk3xWk2xsh1xsw1xL1xR0xU0xD2-HWC0 and im2col0",
             "conv2d-fp32-fw-Ci3xH5xW7xCo4xHk3xWk2xsh1xsw1xL1xR0xU0xD2-HWC0-bias0-dma0-im2col0-direct-c3"),
    Mutation("conv_wg_in_place_hwc_read_transposed",  # an HWC input read in place is P x T, not T x P
             "sources/pulp_conv2d_impl.h",
             "                     !(in_place && a->HWC));",
             "                     1);",
             "conv2d-fp32-wg-Ci3xH4xW5xCo2xHk1xWk1xsh1xsw1xL0xR0xU0xD0-HWC1 and im2col1",
             "conv2d-fp32-wg-Ci3xH4xW5xCo2xHk1xWk1xsh1xsw1xL0xR0xU0xD0-HWC1-bias0-dma0-im2col1-mm-c1"),
    Mutation("mse_bw_missing_factor_2",  # d/do (1/N)(t-o)^2 is (2/N)(o-t): the 2 is forgotten
             "sources/pulp_losses_impl.h",
             "    const LOSS_T two_n = LOSS_FROM_F(2.0f / (float)n);",
             "    const LOSS_T two_n = LOSS_FROM_F(1.0f / (float)n);",
             "mse_loss-fp32-bw-N17-",
             "mse_loss-fp32-bw-N17-direct-c1"),
    Mutation("ce_without_max_subtraction",  # e^(o-m) as e^o * e^-m: equal in exact math, Inf past o = 88.72
             "sources/pulp_losses_impl.h",
             "        se += expf(LOSS_TO_F(o[i]) - m);",
             "        se += expf(LOSS_TO_F(o[i])) * expf(-m);",
             "ce_loss-fp32-fw-N10xlarge_logits1",
             "ce_loss-fp32-fw-N10xlarge_logits1-direct-c1"),
    Mutation("ce_bw_drops_the_target_sum",  # issue 25, class 4: the factor S = sum t, 1 for one-hot targets
             "sources/pulp_losses_impl.h",
             "        g[i] = LOSS_FROM_F((expf(LOSS_TO_F(o[i]) - m) / se) * s - LOSS_TO_F(t[i]));",
             "        g[i] = LOSS_FROM_F((expf(LOSS_TO_F(o[i]) - m) / se) - LOSS_TO_F(t[i]));",
             "ce_loss-fp32-bw-N10xheavy_target1",
             "ce_loss-fp32-bw-N10xheavy_target1-direct-c1"),
    Mutation("ce_max_search_misses_the_last_logit",  # class 4: right wherever the maximum is not last
             "sources/pulp_losses_impl.h",
             "    for (int i = 1; i < n; i++) {\n        const float v = LOSS_TO_F(o[i]);\n        if (v > m)",
             "    for (int i = 1; i < n - 1; i++) {\n        const float v = LOSS_TO_F(o[i]);\n        if (v > m)",
             "ce_loss-fp32-fw-N9xmax_last1",
             "ce_loss-fp32-fw-N9xmax_last1-direct-c1"),
    Mutation("sgd_weight_decay_after_the_update",  # w moves by lr*g, the decay only reaches diff
             "sources/pulp_optimizers_fp32.c",
             "            g[i] = g[i] + lambda * w[i];\n            w[i] = w[i] - lr * g[i];\n",
             "            w[i] = w[i] - lr * g[i];\n            g[i] = g[i] + lambda * w[i];\n",
             "sgd-fp32-update-nw17xnb5 and lambda_micro100000",
             "sgd-fp32-update-nw17xnb5-use_biases1-lr_micro500000-lambda_micro100000-direct-c3"),
    Mutation("frozen_layer_stops_the_gradient",  # skip_wg_grad also skips the input gradient
             "sources/pulp_linear_impl.h",
             "    if (!la->skip_in_grad)\n        LIN_NAME(bw_input_grads)",
             "    if (!la->skip_in_grad && !la->skip_wg_grad)\n        LIN_NAME(bw_input_grads)",
             "train_cnn-fp32-train-Ci2xH8xW8xCo4xK3xS4xN20-frozen2",
             "train_cnn-fp32-train-Ci2xH8xW8xCo4xK3xS4xN20-frozen2-mm-c8"),
    Mutation("sumnode_overwrites_the_skip_gradient",  # = instead of +=: the skip branch's own gradient is lost
             "sources/pulp_residual_impl.h",
             "        ds[i] = RES_ADD(ds[i], dy[i]);",
             "        ds[i] = dy[i];",
             "residual-fp32-sumnode_bw-n17-",
             "residual-fp32-sumnode_bw-n17-skip_in_grad0-mismatch0-direct-c3"),
    Mutation("residual_ignores_a_size_mismatch",  # sums over output->dim although lout is shorter
             "sources/pulp_residual_impl.h",
             "    if (res_sizes_differ(\"pulp_residualconn\", a->skip, \"skip\", a->lout, \"lout\") ||",
             "    if (0 ||",
             "residual-bf16-fw-n9-",
             "residual-bf16-fw-n9-skip_in_grad0-mismatch1-direct-c8"),
    Mutation("residual_checks_skip_twice_instead_of_the_output",  # issue 25, class 2: the wrong tensor's size
             "sources/pulp_residual_impl.h",
             "        res_sizes_differ(\"pulp_residualconn\", a->skip, \"skip\", a->output, \"output\"))",
             "        res_sizes_differ(\"pulp_residualconn\", a->skip, \"skip\", a->lout, \"lout\"))",
             "residual-fp32-fw-n9-",
             "residual-fp32-fw-n9-skip_in_grad0-mismatch2-direct-c3"),
    Mutation("instnorm_ig_drops_the_mean_term",  # dx without - sum dy: only right where the gradients sum to 0
             "sources/pulp_instnorm_impl.h",
             "            dx[i] = IN_H(scale * ((float)D * IN_F(dy[i]) - sum_dy - (IN_F(x[i]) - mu) / v * dot));",
             "            dx[i] = IN_H(scale * ((float)D * IN_F(dy[i]) - (IN_F(x[i]) - mu) / v * dot));",
             "instnorm-fp32-ig-C9xH4xW4-",
             "instnorm-fp32-ig-C9xH4xW4-frozen0-direct-c8"),
    Mutation("instnorm_forgets_epsilon_when_clamping",  # v < 0 -> 0: sigma 0 on a zero-variance channel
             "sources/pulp_instnorm_impl.h",
             "            float v = sum_sq / (float)D - mu * mu + INSTNORM_EPSILON;",
             "            float v = sum_sq / (float)D - mu * mu;",
             "instnorm-fp32-fw-C8xH4xW4xconstant2-",
             "instnorm-fp32-fw-C8xH4xW4xconstant2-frozen0-direct-c3"),
    Mutation("instnorm_unfrozen_fw_never_stores_the_statistics",  # y is right, the running arrays stale
             "sources/pulp_instnorm_impl.h",
             "            a->running_mean[c] = IN_H(mu);\n"
             "            a->running_var[c] = IN_H(v);\n"
             "            a->running_stdev[c] = IN_H(sigma);\n",
             "",
             "instnorm-fp32-fw-C7xH3xW3-",
             "instnorm-fp32-fw-C7xH3xW3-frozen0-direct-c3"),
    Mutation("instnorm_frozen_fw_recomputes_the_statistics",  # the flag ignored: x's own statistics used
             "sources/pulp_instnorm_impl.h",
             "        if (a->freeze_running_params) {",
             "        if (0) {",
             "instnorm-fp16-fw-C9xH4xW4-",
             "instnorm-fp16-fw-C9xH4xW4-frozen1-direct-c8"),
    Mutation("instnorm_unbiased_variance",  # D / (D - 1) times the biased variance, as torch.var's default
             "sources/pulp_instnorm_impl.h",
             "            float v = sum_sq / (float)D - mu * mu + INSTNORM_EPSILON;",
             "            float v = (sum_sq / (float)D - mu * mu) * (float)D / (float)(D - 1) + INSTNORM_EPSILON;",
             "instnorm-fp32-fw-C3xH5xW7-",
             "instnorm-fp32-fw-C3xH5xW7-frozen0-direct-c1"),
    Mutation("instnorm_wg_swaps_dgamma_and_dbeta",
             "sources/pulp_instnorm_impl.h",
             "        a->coeff->diff[c] = IN_H(dot / IN_F(a->running_stdev[c]));\n"
             "        a->coeff->diff[C + c] = IN_H(sum_dy);",
             "        a->coeff->diff[C + c] = IN_H(dot / IN_F(a->running_stdev[c]));\n"
             "        a->coeff->diff[c] = IN_H(sum_dy);",
             "instnorm-bf16-wg-C8xH4xW4-",
             "instnorm-bf16-wg-C8xH4xW4-frozen0-direct-c8"),
    Mutation("instnorm_bw_skips_the_input_gradient_after_the_weights",  # `else if`: IG only when WG is skipped
             "sources/pulp_instnorm_fp32.c",
             "    if (!a->skip_in_grad)\n        pulp_instnorm_fp32_bw_input_grads_cl(InstNorm_args);",
             "    else if (!a->skip_in_grad)\n        pulp_instnorm_fp32_bw_input_grads_cl(InstNorm_args);",
             "instnorm-fp32-bw-C7xH3xW3-",
             "instnorm-fp32-bw-C7xH3xW3-frozen0-direct-c3"),
    Mutation("sum_of_squares_every_core_writes_slot_0",  # out[0] instead of out[core]: a race, and lost partials
             "sources/pulp_norms_fp32.c",
             "    a->out[pi_core_id()] = sum;",
             "    a->out[0] = sum;",
             "sum_of_squares-fp32-fw-n17-",
             "sum_of_squares-fp32-fw-n17-direct-c3"),
    Mutation("weighted_scaling_weights_from_the_block_start",  # w[i - first]: each core restarts the weights
             "sources/pulp_norms_fp32.c",
             "        a->out[i] = a->w[i] * (a->scaling_factor * a->in[i]);",
             "        a->out[i] = a->w[i - first] * (a->scaling_factor * a->in[i]);",
             "weighted_scaling-fp32-fw-n9-",
             "weighted_scaling-fp32-fw-n9-direct-c8"),
    Mutation("softmax_without_the_max_subtraction",  # exp(x) overflows for the large rows
             "sources/pulp_softmax_impl.h",
             "            e[j] = SM_FROM_F(SM_EXP(SM_TO_F(x[j]) - m));",
             "            e[j] = SM_FROM_F(SM_EXP(SM_TO_F(x[j])));",
             "softmax-fp32-fw-H5xW17xpatternlarge-",
             "softmax-fp32-fw-H5xW17xpatternlarge-direct-c3"),
    Mutation("softmax_bw_sign_flipped",  # (s - dy) * y
             "sources/pulp_softmax_impl.h",
             "            dx[j] = SM_FROM_F((SM_TO_F(dy[j]) - s_row) * SM_TO_F(y[j]));",
             "            dx[j] = SM_FROM_F((s_row - SM_TO_F(dy[j])) * SM_TO_F(y[j]));",
             "softmax-fp32-bw-H3xW8xpatternuniform-",
             "softmax-fp32-bw-H3xW8xpatternuniform-direct-c8"),
    Mutation("gelu_drops_the_half_x_term",  # y = 0.5 x t: the identity half of GELU is lost
             "sources/pulp_act_extra_fp32.c",
             "    return 0.5f * x * t + 0.5f * x;",
             "    return 0.5f * x * t;",
             "gelu-fp32-fw-n17-",
             "gelu-fp32-fw-n17-alone0-direct-c3"),
    Mutation("gelu_rational_constant_off_by_one",  # 3150 read as 3151: 1.87e-4 off tanh-GELU, inside the
             # documented 2e-4, so only a check of the page's own formula sees it (mutation bench seed 4)
             "sources/pulp_act_extra_fp32.c",
             "3150.0f * u4",
             "3151.0f * u4",
             "gelu-fp32-fw-n17-",
             "gelu-fp32-fw-n17-alone0-direct-c3"),
    Mutation("tanh_p2_without_the_upper_clip",  # the documented p2 overflows into the sign bit for x < -44
             "sources/pulp_act_extra_fp32.c",
             "    const float clipped = p < -126.0f ? -126.0f : p > 128.0f ? 128.0f : p;",
             "    const float clipped = p < -126.0f ? -126.0f : p;",
             "tanh-fp32-fw-n17-",
             "tanh-fp32-fw-n17-alone0-direct-c3"),
    Mutation("swiglu_forgets_the_gate",  # out = a * sigmoid(a): in2 unused
             "sources/pulp_act_extra_fp32.c",
             "    return a * sig * b;",
             "    return a * sig;",
             "swiglu-bf16-fw-n9-",
             "swiglu-bf16-fw-n9-alone0-direct-c8"),
    Mutation("dropout_keeps_where_it_should_drop",  # r < p: the complement of the documented mask
             "sources/pulp_dropout_impl.h",
             "pulp_generate_float_seed(a->seed + (int)i) > p ?",
             "pulp_generate_float_seed(a->seed + (int)i) < p ?",
             "dropout-fp32-fw-n17-p_milli500-use_mask0-seed12345",
             "dropout-fp32-fw-n17-p_milli500-use_mask0-seed12345-alone0-direct-c3"),
    Mutation("random_twist_with_the_wrong_offset",  # M = 9: another generator, the same for every seed
             "sources/pulp_random.c",
             "        rand->mt[k] = rand->mt[(k + STATE_VECTOR_M) % STATE_VECTOR_LENGTH]",
             "        rand->mt[k] = rand->mt[(k + STATE_VECTOR_M - 1) % STATE_VECTOR_LENGTH]",
             "random_float-fp32-fw-n64-seed42",
             "random_float-fp32-fw-n64-seed42-direct-c1"),
    Mutation("random_twist_wraps_one_word_early",  # issue 25, class 3: % 15 in the twist; draws 0..4 right
             "sources/pulp_random.c",
             "        rand->mt[k] = rand->mt[(k + STATE_VECTOR_M) % STATE_VECTOR_LENGTH]",
             "        rand->mt[k] = rand->mt[(k + STATE_VECTOR_M) % (STATE_VECTOR_LENGTH - 1)]",
             "random_stream-fp32-fw-n4000-seed5489-",
             "random_stream-fp32-fw-n4000-seed5489-index16-direct-c1"),
    Mutation("cordic_fold_keeps_the_sign",  # folding by pi without negating: cos and sin wrong beyond pi/2
             "sources/pulp_cordic.c",
             "        z -= CORDIC_PI;\n        sign = -1.0f;",
             "        z -= CORDIC_PI;",
             "cordic-fp32-fw-n64",
             "cordic-fp32-fw-n64-direct-c1"),
    Mutation("cordic_folds_at_a_third_of_pi",  # bench seed 10: angles in (-1.40, -1.05) land past the rotations' reach
             "sources/pulp_cordic.c",
             "    } else if (z < -CORDIC_PI / 2) {",
             "    } else if (z < -CORDIC_PI / 3) {",
             "cordic-fp32-fw-n64",
             "cordic-fp32-fw-n64-direct-c1"),
    Mutation("softmax_row_maximum_starts_at_zero",  # the same softmax unless every element is far below 0
             "sources/pulp_softmax_fp32.c",
             "#define SM_LOWEST (-3.4028235e38f)",
             "#define SM_LOWEST (0.0f)",
             "softmax-fp32-fw-H3xW9xpatternnegative",
             "softmax-fp32-fw-H3xW9xpatternnegative-direct-c3"),
    Mutation("row_kernel_splits_columns",  # the same C on the whole team; one core alone writes columns
             "sources/pulp_matmul_fp32.c",
             "void mm_unroll_4x1(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_4x1, 0); }",
             "void mm_unroll_4x1(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_4x1, 1); }",
             "matmul_alone-fp32-fw-N13xM11xK7-trans_B0",
             "matmul_alone-fp32-fw-N13xM11xK7-trans_B0-bias0-alone1-mm_unroll_4x1-c3",
             reports="elements outside that block changed"),
    Mutation("cross_entropy_bw_leaves_the_softmax_in_its_input",  # the gradient right; o overwritten
             "sources/pulp_losses_impl.h",
             "    for (int i = 0; i < n; i++)\n"
             "        g[i] = LOSS_FROM_F((expf(LOSS_TO_F(o[i]) - m) / se) * s - LOSS_TO_F(t[i]));",
             "    for (int i = 0; i < n; i++) {\n"
             "        g[i] = LOSS_FROM_F((expf(LOSS_TO_F(o[i]) - m) / se) * s - LOSS_TO_F(t[i]));\n"
             "        ((LOSS_T *)o)[i] = LOSS_FROM_F(expf(LOSS_TO_F(o[i]) - m) / se);\n"
             "    }",
             "ce_loss-fp32-bw-N9-",
             "ce_loss-fp32-bw-N9-direct-c1",
             reports="tensor o_after"),
    Mutation("bias_added_whenever_a_buffer_is_given",  # tests the pointer, not USE_BIASES
             "sources/pulp_mm_manager_fp32.c",
             "    if (!mm_args->USE_BIASES)\n",
             "    if (!mm_args->bias)\n",
             "matmul-fp32-fw-N9xM4xK8 and bias3",
             "matmul-fp32-fw-N9xM4xK8-trans_B0-bias3-mm-c1"),
    Mutation("sgd_updates_biases_it_is_given_without_use_biases",  # tests the blob, not the flag
             "sources/pulp_optimizers_fp32.c",
             "    if (a->use_biases == 1)\n",
             "    if (a->biases->dim > 0)\n",
             "sgd-fp32-update-nw7xnb3-use_biases0",
             "sgd-fp32-update-nw7xnb3-use_biases0-lr_micro10000-lambda_micro0-direct-c3"),
    Mutation("batchnorm_takes_torchs_default_epsilon",  # 1e-5 whatever eps[0] says
             "sources/pulp_norms_fp32.c",
             "a->B, hw, a->C * hw, a->eps[0], &mean);",
             "a->B, hw, a->C * hw, 1e-5f, &mean);",
             "batchnorm-fp32-fw-B2xC3xH2xW2",
             "batchnorm-fp32-fw-B2xC3xH2xW2xeps_micro100000-direct-c3"),
    Mutation("instnorm_wg_recomputes_the_mean_from_x",  # the page: "use stored stats"
             "sources/pulp_instnorm_impl.h",
             "        const float mu = IN_F(a->running_mean[c]);\n        float dot = 0.0f, sum_dy = 0.0f;",
             "        float mu = 0.0f;\n        for (int i = 0; i < D; i++)\n            mu += IN_F(x[i]);\n"
             "        mu /= (float)D;\n        float dot = 0.0f, sum_dy = 0.0f;",
             "instnorm-fp32-wg-C3xH4xW4xstored1",
             "instnorm-fp32-wg-C3xH4xW4xstored1-frozen0-direct-c3"),
    Mutation("instnorm_bw_ignores_skip_in_grad",  # "WG then IG unless skipped"
             "sources/pulp_instnorm_fp32.c",
             "    if (!a->skip_in_grad)\n",
             "    if (1)\n",
             "instnorm_skip-fp32-bw-C9xH4xW4",
             "instnorm_skip-fp32-bw-C9xH4xW4-frozen0-skip2-direct-c3"),
    Mutation("kernel_index_out_of_range_returns_silently",  # no line printed, C left as it was
             "sources/pulp_mm_manager_fp32.c",
             "        /* A result that can never pass a check, rather than a stale C. */\n",
             "        return;\n",
             "matmul_bad_index-fp32-fw-N9xM4xK8-where1",
             "matmul_bad_index-fp32-fw-N9xM4xK8-where1-out_of_range-c8",
             reports="printed nothing and left C as it was"),
    Mutation("vector_softmax_maximum_skips_the_last_core",  # mutation bench seed 12: the same result
             "sources/pulp_softmax_fp32.c",                      # unless the maximum is in the last block
             "    for (int c = 1; c < cores; c++)\n        m = job->buffer[c] > m",
             "    for (int c = 1; c < cores - 1; c++)\n        m = job->buffer[c] > m",
             "vector_softmax-fp32-fw-n19xpatternpeak_last",
             "vector_softmax-fp32-fw-n19xpatternpeak_last-direct-c3"),
    Mutation("transpose_matrix_with_n_and_m_swapped",  # right only for square matrices
             "sources/pulp_utils_moves_impl.h",
             "        a->out_matrix[o] = a->in_matrix[i * a->M + j];",
             "        a->out_matrix[o] = a->in_matrix[i * a->N + j];",
             "transpose_matrix-fp32-fw-N3xM8-",
             "transpose_matrix-fp32-fw-N3xM8-direct-c3"),
    Mutation("broadcast_ignores_a_size_one_dim",  # indexes a size-1 dim with the output's coordinate
             "sources/pulp_utils_arith_impl.h",
             "        index = index * dims[k] + (dims[k] == 1 ? 0 : c);",
             "        index = index * dims[k] + c;",
             "broadcast_sum-fp32-fw-l12xp03xp11",
             "broadcast_sum-fp32-fw-l12xp03xp11xp21xp31xl22xq01xq15xq21xq31-direct-c8"),
    Mutation("pad_offset_by_one_on_the_left",
             "sources/pulp_utils_moves_impl.h",
             "        const int sh = h - a->T_UPAD, sw = w - a->T_LPAD;",
             "        const int sh = h - a->T_UPAD, sw = w - a->T_LPAD - 1;",
             "pad-fp32-fw-C3xH4xW5xL0xR2xU1xD0-",
             "pad-fp32-fw-C3xH4xW5xL0xR2xU1xD0-HWC1-direct-c3"),
    Mutation("layout_converts_the_data_when_only_the_grad_is_asked",
             "sources/pulp_utils_moves_impl.h",
             "    UT_T *targets[2] = {a->transpose_data ? t->data : NULL, a->transpose_grad ? t->diff : NULL};",
             "    UT_T *targets[2] = {t->data, a->transpose_grad ? t->diff : NULL};",
             "layout-fp32-fw-C3xH4xW5-to_hwc1-data0-grad1",
             "layout-fp32-fw-C3xH4xW5-to_hwc1-data0-grad1-direct-c3"),
    Mutation("batchnorm_statistics_of_the_first_sample_only",  # one run of H*W instead of B
             "sources/pulp_norms_fp32.c",
             "norms_sigma(a->input->data + c * hw, a->B, hw, a->C * hw, a->eps[0], &mean);",
             "norms_sigma(a->input->data + c * hw, 1, hw, a->C * hw, a->eps[0], &mean);",
             "batchnorm-fp32-fw-B2xC3xH2xW2",
             "batchnorm-fp32-fw-B2xC3xH2xW2-direct-c3"),
    Mutation("rmsnorm_without_the_mean",  # sqrt(sum x^2 + eps): the sum is not divided by size
             "sources/pulp_norms_fp32.c",
             "1.0f / sqrtf(sum / (float)size + RMSNORM_EPSILON)",
             "1.0f / sqrtf(sum + RMSNORM_EPSILON)",
             "rmsnorm-fp32-fw-n17",
             "rmsnorm-fp32-fw-n17-direct-c3"),
    Mutation("nonorm_swaps_coeff_and_bias",  # x * bias[j] + coeff[j]
             "sources/pulp_nonorm_impl.h",
             "nonorm_row(y, x, a->coeff->data, a->bias->data, W);",
             "nonorm_row(y, x, a->bias->data, a->coeff->data, W);",
             "nonorm-fp32-fw-rows3xn8",
             "nonorm-fp32-fw-rows3xn8-alone0-direct-c3"),
    Mutation("sumnode_overwrites_in_a_training_run",  # the input gradient loses the block's part
             "sources/pulp_residual_impl.h",
             "        ds[i] = RES_ADD(ds[i], dy[i]);",
             "        ds[i] = dy[i];",
             "train_dsblock-fp32",
             "train_dsblock-fp32-train-C4xH8xW8xK3xS4xN20-mm-c8"),
    Mutation("cast_shifts_before_rounding",  # x(1 - 2^-12) rounded: ties and the values just above them go down
             "sources/pulp_cast.c",
             "        a->destination[i] = fp16_from_f32(a->source[i]);",
             "        a->destination[i] = fp16_from_f32(a->source[i] - a->source[i] * 0x1p-12f);",
             "cast_to_fp16-fp16-fw-n96",
             "cast_to_fp16-fp16-fw-n96-alone0-direct-c3"),
    Mutation("layernorm_weight_per_row",  # weight[r] instead of weight[j]
             "sources/pulp_norms_fp32.c",
             "            y[j] = (x[j] - mean) / sigma * a->weight[j] + a->bias[j];",
             "            y[j] = (x[j] - mean) / sigma * a->weight[r % n] + a->bias[j];",
             "layernorm-fp32-fw-rows9xn16",
             "layernorm-fp32-fw-rows9xn16-alone0-direct-c8"),
    Mutation("mm_broadcast_ignores_the_batch_of_b",  # every batch multiplies B's first matrix
             "sources/pulp_utils_arith_impl.h",
             "        const UT_T *B = a->B + utils_broadcast_index(coords, nb, a->B_dims, lb - 2) * K * M;",
             "        const UT_T *B = a->B;",
             "mm_broadcast-fp32-fw-la3xA02xA13xA24xA31xlb3xB02",
             "mm_broadcast-fp32-fw-la3xA02xA13xA24xA31xlb3xB02xB14xB25xB31-direct-c3"),
    Mutation("dw_pad_on_the_wrong_side",
             "sources/pulp_conv_dw_impl.h",
             "    g->L = a->Lpad;",
             "    g->L = a->Rpad;",
             "conv_dw-fp32-fw-C3xH7xW6xHk3xWk3xsh1xsw1xL2xR0xU0xD1",
             "conv_dw-fp32-fw-C3xH7xW6xHk3xWk3xsh1xsw1xL2xR0xU0xD1-HWC0-direct-c1"),
    Mutation("transp_conv_crop_on_the_wrong_side",
             "sources/pulp_transp_conv2d_impl.h",
             "    g->L = a->inLpad;",
             "    g->L = a->inRpad;",
             "transp_conv2d-fp32-fw-Ci3xCo2xH5xW4xHk3xWk2xsh1xsw2xL0xR1xU2xD0",
             "transp_conv2d-fp32-fw-Ci3xCo2xH5xW4xHk3xWk2xsh1xsw2xL0xR1xU2xD0-HWC0-bias0-im2col1-mm_M_unroll_4x4-c3"),
    Mutation("dw_stride_on_the_wrong_axis",
             "sources/pulp_conv_dw_impl.h",
             "        const int h0 = ho * g->sh - g->U;",
             "        const int h0 = ho * g->sw - g->U;",
             "conv_dw-fp32-fw-C5xH9xW7xHk3xWk2xsh2xsw1xL1xR0xU1xD1",
             "conv_dw-fp32-fw-C5xH9xW7xHk3xWk2xsh2xsw1xL1xR0xU1xD1-HWC1-direct-c7"),
    Mutation("transp_conv_dropped_last_output_row",
             "sources/pulp_transp_conv2d_impl.h",
             "        for (int y = 0; y < g->Ho; y++) {",
             "        for (int y = 0; y < g->Ho - 1; y++) {",
             "transp_conv2d-fp32-fw-Ci3xCo4xH4xW4xHk3xWk3xsh2xsw2xL1xR1xU1xD1",
             "transp_conv2d-fp32-fw-Ci3xCo4xH4xW4xHk3xWk3xsh2xsw2xL1xR1xU1xD1-HWC0-bias1-im2col1-mm-c8"),
    Mutation("dw_hwc_indexing_for_chw",
             "sources/pulp_conv_dw_impl.h",
             "        g->in_c = g->H * g->W, g->in_h = g->W, g->in_w = 1;",
             "        g->in_c = 1, g->in_h = g->W * g->C, g->in_w = g->C;",
             "conv_dw-fp32-fw-C32xH8xW8xHk3xWk3xsh1xsw1xL1xR1xU1xD1",
             "conv_dw-fp32-fw-C32xH8xW8xHk3xWk3xsh1xsw1xL1xR1xU1xD1-HWC0-direct-c8"),
    Mutation("pw_no_barrier_after_transpose",
             "sources/pulp_conv_pw_impl.h",
             "        pi_cl_team_barrier();\n",
             "\n",
             "conv_pw-fp32-ig-Ci32xCo64xH8xW8",
             "conv_pw-fp32-ig-Ci32xCo64xH8xW8-HWC0-mm_M-c8",
             # the cores that run first multiply rows the others have not transposed yet
             team_order="reverse"),
    Mutation("row_max_forgets_the_running_maxima",
             "sources/pulp_softmax_parts_impl.h",
             "        SP_T m = a->maxes[i];",
             "        SP_T m = row[0];",
             "row_max-fp32-fw-H9xW17",
             "row_max-fp32-fw-H9xW17-direct-c3"),
    Mutation("bias_add_transposed_reads_the_other_axis",
             "sources/pulp_softmax_parts_impl.h",
             "a->t ? a->bias[i] : a->bias[j])",
             "a->t ? a->bias[j % a->H] : a->bias[i])",
             "mm_bias_add_transposed-fp32-fw-H7xW16",
             "mm_bias_add_transposed-fp32-fw-H7xW16-t0-direct-c8"),
    Mutation("fp16_vect_sum_drops_its_second_operand",
             "sources/pulp_train_utils_fp16.c",
             "#define UT_ADD(a, b) fp16_add((a), (b))",
             "#define UT_ADD(a, b) (a)",
             "vect_sum-fp16-fw-n9",
             "vect_sum-fp16-fw-n9-alone0-direct-c3"),
    Mutation("fp16_matmul_utilities_drop_the_accumulator",  # the fma hook written as a plain product
             "sources/pulp_train_utils_fp16.c",
             "#define UT_FMA(a, b, c) fp16_fma((a), (b), (c))",
             "#define UT_FMA(a, b, c) fp16_mul((a), (b))",
             "mm_add-fp16-fw-N7xM8xK9",
             "mm_add-fp16-fw-N7xM8xK9-trans_B1-direct-c3"),
    Mutation("fp16_mean_std_reads_the_bit_patterns",  # the element's pattern taken as its value
             "sources/pulp_train_utils_fp16.c",
             "#define UT_TO_F(v) fp16_to_f32(v)",
             "#define UT_TO_F(v) ((float)fp16_bits(v))",
             "mean_std-bf16-fw-n17",
             "mean_std-bf16-fw-n17-direct-c1"),
    Mutation("bernoulli_reads_the_draw_the_wrong_way",
             "sources/pulp_random.c",
             "> a->probability ? 0 : 1;",
             "< a->probability ? 0 : 1;",
             "random_bernoulli-fp32-fw-n64",
             "random_bernoulli-fp32-fw-n64-seed42-p_milli300-direct-c1"),
    Mutation("rnn_drops_the_state_term",
             "sources/pulp_rnn_fp32.c",
             "                z += s[t * M + j] * ws[j * M + m];",
             "                z += 0.0f * s[t * M + j] * ws[j * M + m];",
             "rnn-fp32-fw-N9xK17xM7",
             "rnn-fp32-fw-N9xK17xM7-direct-c8"),
    Mutation("rnn_tanh_derivative_at_the_wrong_point",
             "sources/pulp_rnn_fp32.c",
             "        g[e] = (1.0f - y[e] * y[e]) * dy[e];",
             "        g[e] = (1.0f - y[e]) * dy[e];",   # 1 - y, not 1 - y^2
             "rnn-fp32-bw-N3xK5xM4",
             "rnn-fp32-bw-N3xK5xM4-direct-c3"),
    Mutation("nearest_source_row_off_by_one",
             "sources/pulp_interpolation_fp32.c",
             "const long sy0 = (long)oy * Hi / Ho;",
             "const long sy0 = ((long)oy + 1) * Hi / Ho;",
             "interpolation-fp32-fw-C9xHi5xWi7xHo3xWo11",
             "interpolation-fp32-fw-C9xHi5xWi7xHo3xWo11-bilinear0-flags0-direct-c3"),
    Mutation("bilinear_with_aligned_corners",   # the half-pixel shift of align_corners=False forgotten
             "sources/pulp_interpolation_fp32.c",
             "float s = ((float)o + 0.5f) * ((float)n_in / (float)n_out) - 0.5f;",
             "float s = (float)o * ((float)n_in / (float)n_out);",
             "interpolation-fp32-fw-C3xHi4xWi4xHo8xWo8",
             "interpolation-fp32-fw-C3xHi4xWi4xHo8xWo8-bilinear1-flags1-direct-c8"),
    Mutation("mhsa_query_transposed_the_wrong_way",   # q_h read as L x Hd instead of Hd x L
             "sources/pulp_mhsa_impl.h",
             "mh_transpose(a->q->data + o, T, Hd, L);",
             "mh_transpose(a->q->data + o, T, L, Hd);",
             "mhsa-fp32-fw-L9xE6xF12xheads2",
             "mhsa-fp32-fw-L9xE6xF12xheads2-mm_unroll_2x4-c3"),
    Mutation("mhsa_softmax_over_the_queries",   # scores as [key][query]: each row's softmax runs over queries
             "sources/pulp_mhsa_impl.h",
             "        mh_transpose(a->q->data + o, T, Hd, L);                       /* q_h^T, L x Hd */\n"
             "        mh_matmul(T, a->k->data + o, S,",
             "        mh_transpose(a->k->data + o, T, Hd, L);\n"
             "        mh_matmul(T, a->q->data + o, S,",
             "mhsa-fp32-fw-L9xE6xF12xheads2",
             "mhsa-fp32-fw-L9xE6xF12xheads2-mm_M-c8"),
    Mutation("mhsa_scores_not_scaled",   # the 1/sqrt(Hd) of the FW forgotten
             "sources/pulp_mhsa_impl.h",
             "        mh_scale(S, (long)L * L, s);\n",
             "        (void)s;\n",
             "mhsa-fp32-fw-L16xE16xF16xheads4",
             "mhsa-fp32-fw-L16xE16xF16xheads4-mm-c1"),
    Mutation("mhsa_head_offset_a_row_early",   # head h > 0 starts one row before its first
             "sources/pulp_mhsa_impl.h",
             "const long o = (long)h * Hd * L;",
             "const long o = (long)(h > 0 ? h * Hd - 1 : 0) * L;",
             "mhsa-fp32-bw-L7xE8xF8xheads4",
             "mhsa-fp32-bw-L7xE8xF8xheads4-mm_unroll_4x1-c8"),
    Mutation("embedding_reads_the_previous_row",
             "sources/pulp_embedding_fp16.c",
             "a->embeds + (long)a->ids[i] * n",
             "a->embeds + (long)(a->ids[i] > 0 ? a->ids[i] - 1 : 0) * n",
             "embedding-fp16-fw-rows9xembed_dim8xvocab200",
             "embedding-fp16-fw-rows9xembed_dim8xvocab200-alone0-direct-c3"),
]


def catalogue_family(select: str) -> str:
    """The catalogue family of the entry a slice starts with, so that a run
    collects only that family (--family)."""
    entry_name = select.split("-", 1)[0]
    for family, entries in catalogue.families().items():
        if any(entry.name == entry_name for entry in entries):
            return family
    raise LookupError(f"no catalogue has an entry named {entry_name!r}")


def run_slice(library: Path, select: str, workdir: Path, cache: Path,
              extra: list[str] = (), team_order: str = "free",
              target: str = "host") -> tuple[list[dict], dict[str, str]]:
    """Run a slice of the suite on a target (host: with the team in
    team_order); return CSV rows and failure texts by test id."""
    reports = workdir / "reports"
    argv = [sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_ops.py"), "--family", catalogue_family(select), "-p", "no:xdist", "-q",
            "--target", target, "--trainlib", str(library), "-k", select,
            "--reports-dir", str(reports), "--ptl-cache", str(cache), *extra]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env["PTL_TEAM_ORDER"] = team_order
    result = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)
    csv_path = reports / "results.csv"
    assert csv_path.exists(), f"the suite wrote no report:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    texts = {case.get("name"): (case.find("failure").text or "")
             for case in ET.parse(reports / "junit.xml").getroot().iter("testcase")
             if case.find("failure") is not None}
    return rows, texts


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("ptl-cache")


def test_every_mutation_names_a_variant_the_catalogue_has():
    """A renamed case (a new option changes its id) would otherwise fail the
    mutation's run only after its slice ran, with "passed"."""
    ids = {v.id for entries in catalogue.families().values() for e in entries for v in e.variants()}
    assert [m.name for m in MUTATIONS if m.must_fail not in ids] == []


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_suite_reports_the_seeded_bug_as_a_numeric_failure_naming_the_variant(mutation, tmp_path, cache_dir):
    mutant = mutant_library(tmp_path / "lib", SourceEdit(mutation.file, mutation.original, mutation.mutated))

    rows, texts = run_slice(mutant, mutation.select, tmp_path, cache_dir, team_order=mutation.team_order)

    failed = {r["test_id"]: r for r in rows if r["outcome"] == "failed"}
    assert failed, f"{mutation.name}: no variant failed out of {len(rows)}"
    assert mutation.must_fail in failed, f"{mutation.name}: {mutation.must_fail} passed"
    assert {r["failure_class"] for r in failed.values()} == {"numeric"}
    message = texts[mutation.must_fail]
    kernel = mutation.must_fail.rsplit("-", 2)[1]
    assert f"kernel={kernel} " in message and "cores=" in message and mutation.reports in message, message


@dataclass(frozen=True)
class Lawful:
    """lib_c changed to another reading the API page allows: the suite must
    pass it, or its test assumes what the page does not say."""
    name: str
    edit: SourceEdit
    select: str               # pytest -k expression for the slice of the suite to run


LAWFUL = [
    # TRAINLIB_API_MORE.md: reduce_mean "adds into output (zero it first)".
    # Added as the sum, then the output divided: from a zeroed output the mean.
    Lawful("reduce_mean_adds_the_sum_then_divides_the_output",
           SourceEdit("sources/pulp_utils_arith_impl.h",
                      "        a->output[o] = UT_ADD(a->output[o], UT_DIV(sum, UT_FROM_F((float)n)));",
                      "        a->output[o] = UT_DIV(UT_ADD(a->output[o], sum), UT_FROM_F((float)n));"),
           "reduce_mean-"),
    # TRAINLIB_API_MORE.md, attention bw: "input->diff += Cq dq + Ck dk + Cv dv
    # (zero first)": all three products added into input->diff.
    Lawful("mhsa_bw_adds_every_product_into_input_diff",
           SourceEdit("sources/pulp_mhsa_impl.h",
                      "    mh_matmul(proj[0].coeff, proj[0].d, a->input->diff, E, F, L, 0, NULL, STEP_IN_GRAD, type);\n"
                      "    for (int p = 1; p < 3; p++)",
                      "    for (int p = 0; p < 3; p++)"),
           "mhsa- and -bw- and (L3xE5xF4xheads2 or L9xE6xF12xheads2)"),
    # The page does not say which maximum of a tie max pooling's BW routes
    # the gradient to: the last one in row-major order instead of the first.
    Lawful("maxpool_bw_routes_a_tie_to_its_last_maximum",
           SourceEdit("sources/pulp_pooling_impl.h",
                      "            if (v > best || v != v) {\n                best = v;\n                arg = kh * W + kw;",
                      "            if (v >= best || v != v) {\n                best = v;\n                arg = kh * W + kw;"),
           "maxpool- and -bw-"),
    # TRAINLIB_API.md, mm_manager: "An index out of range is an error the
    # caller must be able to see", not how: a C of NaN without a word, or a
    # printed line with C left as it was, are both seen.
    Lawful("mm_manager_fills_nan_without_a_word_for_an_index_out_of_range",
           SourceEdit("sources/pulp_mm_manager_fp32.c",
                      "        if (pi_core_id() == 0)\n            printf(",
                      "        if (0)\n            printf("),
           "matmul_bad_index-fp32"),
    Lawful("mm_manager_prints_and_leaves_c_for_an_index_out_of_range",
           SourceEdit("sources/pulp_mm_manager_fp32.c",
                      "                mm_args->C[i * M + j] = NAN;\n        return;",
                      "                (void)0;\n        return;"),
           "matmul_bad_index-fp32"),
]


@pytest.mark.parametrize("lawful", LAWFUL, ids=lambda m: m.name)
def test_suite_passes_a_library_that_reads_the_page_another_way(lawful, tmp_path, cache_dir):
    library = mutant_library(tmp_path / "lib", lawful.edit)

    rows, _ = run_slice(library, lawful.select, tmp_path, cache_dir)

    assert rows, f"{lawful.name}: the slice ran no variant"
    assert {r["outcome"] for r in rows} == {"passed"}, [r["test_id"] for r in rows if r["outcome"] != "passed"][:10]


def _clean_runs() -> dict[tuple[str, str], list[str]]:
    """The mutations' slices grouped into one run per catalogue family and team order."""
    by_run: dict[tuple[str, str], set[str]] = {}
    for m in MUTATIONS:
        by_run.setdefault((catalogue_family(m.select), m.team_order), set()).add(m.select)
    return {key: sorted(selects) for key, selects in sorted(by_run.items())}


@pytest.mark.parametrize("run", list(_clean_runs().items()), ids=lambda r: f"{r[0][0]}-{r[0][1]}")
def test_clean_library_passes_every_slice_the_mutations_use(run, tmp_path, cache_dir):
    """Each slice in the team order its mutation runs in, so that what fails
    on a mutant fails because of the mutation."""
    (_, order), selects = run
    rows, _ = run_slice(LIBRARY, " or ".join(selects), tmp_path, cache_dir, team_order=order)
    assert rows, f"the slices {selects} ran no variant"
    assert {r["outcome"] for r in rows} == {"passed"}, [r["test_id"] for r in rows if r["outcome"] != "passed"][:10]


def test_a_core_that_skips_a_barrier_is_reported_as_a_deadlock_free_and_sequenced(tmp_path, cache_dir):
    """Core 1 returns without the barrier the others wait at: a PULP cluster
    would hang. The host team must say so at once, free-running and
    sequenced (the orders share one baton), and the suite must report it as
    a deadlock, not wait for the run timeout."""
    mutant = tmp_path / "lib"
    shutil.copytree(LIBRARY, mutant)
    source = mutant / "sources" / "pulp_conv_pw_impl.h"
    barrier = "        pi_cl_team_barrier();\n"
    text = source.read_text()
    assert text.count(barrier) == 1, "the barrier after the transpose moved; update this test"
    source.write_text(text.replace(barrier, "        if (pi_core_id() != 1)\n    " + barrier))
    variant = "conv_pw-fp32-ig-Ci32xCo64xH8xW8-HWC0-mm_M-c8"
    for order in ("free", "reverse"):
        rows, texts = run_slice(mutant, variant, tmp_path / order, cache_dir, ["--run-timeout", "60"], order)
        assert [(r["test_id"], r["outcome"], r["failure_class"]) for r in rows] == [(variant, "failed", "timeout")]
        assert "deadlock" in texts[variant], texts[variant]
        assert (f"ptl: deadlock in a team of 8 cores (PTL_TEAM_ORDER={order}): core(s) 0 2 3 4 5 6 7 wait at "
                f"barrier 1 of the fork, core(s) 1 returned without reaching it") in texts[variant], texts[variant]


def test_a_signal_on_the_host_is_a_crash_naming_the_signal_its_cause_and_the_core(tmp_path, cache_dir):
    """Core 2 divides by zero (as the published DS-CNN does with a stride its
    call leaves unset): the host runner's CRASH record names the signal, why
    (si_code), and the core, not a trap cause and pc 0."""
    mutant = mutant_library(tmp_path / "lib", SourceEdit(
        "sources/pulp_matmul_fp32.c",
        "void mm_unroll_2x2(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_2x2, 0); }",
        "void mm_unroll_2x2(void *matMul_args)\n{\n    volatile int dividend = 1, divisor = pi_core_id() != 2;\n"
        "    volatile int quotient = dividend / divisor; /* a constant 1 / x GCC computes without a division */\n"
        "    (void)quotient;\n"
        "    ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_2x2, 0);\n}"))
    variant = "matmul-fp32-fw-N9xM4xK8-trans_B0-bias0-mm_unroll_2x2-c3"
    rows, texts = run_slice(mutant, variant, tmp_path / "run", cache_dir)
    assert [(r["test_id"], r["outcome"], r["failure_class"]) for r in rows] == [(variant, "failed", "crash")]
    assert ("the runner crashed in this variant: signal SIGFPE (integer division by zero) at address ..."
            in texts[variant]), texts[variant]
    assert "(its low 32 bits) on core 2" in texts[variant], texts[variant]


@pytest.mark.skipif(toolchain.unavailable_reason() is not None,
                    reason=f"QEMU toolchain: {toolchain.unavailable_reason()}")
def test_a_kernel_that_spins_is_a_timeout_at_its_budget_and_hides_no_other_variant(tmp_path, cache_dir):
    """mm_unroll_2x4 loops forever: no core sleeps, so QEMU never warns of a
    deadlock. Each of its variants must be a timeout stopped by the
    instruction budget (not the 120 s wall clock), and every other variant
    of the same case, before and after it in the payload, still runs and
    passes."""
    kernel = "void mm_unroll_2x4(void *matMul_args) { ptl_mm_fp32_run(matMul_args, &ptl_mm_fp32_tiles_2x4, 0); }"
    mutant = mutant_library(tmp_path / "lib", SourceEdit(
        "sources/pulp_matmul_fp32.c", kernel,
        "void mm_unroll_2x4(void *matMul_args) { (void)matMul_args; for (volatile int i = 0;; i++) ; }"))
    rows, texts = run_slice(mutant, "matmul-fp32-fw-N7xM8xK9 and trans_B0 and bias0", tmp_path, cache_dir,
                            target="qemu")
    hung = {r["test_id"]: r for r in rows if "-mm_unroll_2x4-" in r["test_id"]}
    others = [r for r in rows if r["test_id"] not in hung]
    cores = {r["test_id"].rsplit("-c", 1)[1] for r in rows}
    assert len(hung) == len(cores) > 1 and len(others) > 10 * len(cores), [r["test_id"] for r in rows]
    for test_id, row in hung.items():
        assert (row["outcome"], row["failure_class"]) == ("failed", "timeout"), row
        assert "instruction budget exceeded" in texts[test_id], texts[test_id]
    assert {r["outcome"] for r in others} == {"passed"}, [(r["test_id"], r["message"][:200]) for r in others
                                                          if r["outcome"] != "passed"][:5]


@pytest.mark.skipif(toolchain.unavailable_reason() is not None,
                    reason=f"QEMU toolchain: {toolchain.unavailable_reason()}")
def test_qemu_in_reverse_order_sees_the_missing_barrier_its_own_round_robin_hides(tmp_path, cache_dir):
    """QEMU runs the harts of a phase about in core order (README,
    "Concurrency checks"), so a core that reads a LOWER core's output
    without a barrier reads it written. PTL_TEAM_ORDER=reverse on qemu
    (compiled into team_harts.c) runs core 0 last and the bug shows, as
    numeric failures naming the variant."""
    mutation = next(m for m in MUTATIONS if m.name == "missing_barrier_before_bias")
    mutant = mutant_library(tmp_path / "lib", SourceEdit(mutation.file, mutation.original, mutation.mutated))
    outcomes = {}
    for order in ("free", "reverse"):
        rows, texts = run_slice(mutant, mutation.must_fail, tmp_path / order, cache_dir, team_order=order,
                                target="qemu")
        assert [r["test_id"] for r in rows] == [mutation.must_fail]
        outcomes[order] = (rows[0]["outcome"], rows[0]["failure_class"])
    assert outcomes == {"free": ("passed", ""), "reverse": ("failed", "numeric")}, outcomes
    assert "kernel=mm_M " in texts[mutation.must_fail] and "ULP" in texts[mutation.must_fail]


# Issue 25, class 1: a race between cores that no team order shows. Every
# core stages its rows in slot 0 of BUFF instead of its own slot: each core
# copies a row in and straight out again, so sequenced orders (one core at a
# time) and, almost always, the free-running team give the right rows. Only
# ThreadSanitizer, on the free-running team, sees the unordered accesses.
STAGING_RACE = SourceEdit("sources/pulp_embedding_fp16.c",
                          "    fp16 *stage = a->BUFF + (long)pi_core_id() * a->embed_dim;",
                          "    fp16 *stage = a->BUFF + 0L * a->embed_dim;")
STAGING_SLICE = "embedding-fp16-fw-rows9xembed_dim8xvocab200-alone0"   # the team: one core alone races with none


def test_a_race_between_cores_is_reported_as_race_under_thread_sanitizer(tmp_path, cache_dir):
    mutant = mutant_library(tmp_path / "lib", STAGING_RACE)
    rows, texts = run_slice(mutant, STAGING_SLICE, tmp_path / "tsan", cache_dir, ["--sanitize", "thread"], "free")
    multi = [r for r in rows if not r["test_id"].endswith("-c1")]
    # Every multi-core variant, whatever the interleaving: the free team
    # releases its cores together (team_pthreads.c, "Free mode's waits"), so
    # no lock orders one core's copy before another's. Before it did, a loaded
    # CI machine ordered them through the team's lock and TSan saw no race.
    assert multi and {(r["outcome"], r["failure_class"]) for r in multi} == {("failed", "race")}, rows
    raced = [t for t in texts.values() if "a data race in this variant" in t]
    assert raced, texts
    # the two accesses, each with its function and line
    assert "ThreadSanitizer: data race between" in raced[0] and raced[0].count("pulp_embedding_fp16.c:") >= 2, raced[0]
    assert all(r["outcome"] == "passed" for r in rows if r["test_id"].endswith("-c1")), rows


def test_the_staging_race_slice_passes_on_the_clean_library_under_thread_sanitizer(tmp_path, cache_dir):
    rows, _ = run_slice(LIBRARY, STAGING_SLICE, tmp_path, cache_dir, ["--sanitize", "thread"], "free")
    assert rows and {r["outcome"] for r in rows} == {"passed"}, [r["test_id"] for r in rows if r["outcome"] != "passed"]


@pytest.mark.parametrize("order", ["reverse", "random:1"])
def test_the_staging_race_passes_the_sequenced_orders_without_a_sanitizer(order, tmp_path, cache_dir):
    """Why the sanitizer pass exists: no sequenced order shows this race (each core copies its row in and
    out before the next core runs), and the free-running team shows it only by chance."""
    mutant = mutant_library(tmp_path / "lib", STAGING_RACE)
    rows, _ = run_slice(mutant, STAGING_SLICE, tmp_path / "run", cache_dir, [], order)
    assert rows and {r["outcome"] for r in rows} == {"passed"}, [r["test_id"] for r in rows if r["outcome"] != "passed"]


# A read one past a work buffer that only a comparison uses (mutation bench
# seed 5): the vector softmax takes the maximum of the cores' partial maxima
# over one slot too many. The runner's guard word there is a NaN, and
# `NaN > m` is false, so every output stays right and no guard changes. Under
# AddressSanitizer the guard words are poisoned (runner/buffers.c), and the
# read stops the variant as a crash naming the line.
MAX_OVER_ONE_TOO_MANY = SourceEdit("sources/pulp_softmax_fp32.c",
                                   "    for (int c = 1; c < cores; c++)",
                                   "    for (int c = 1; c <= cores; c++)")
MAX_SLICE = "vector_softmax-fp32-fw-n1xpatternuniform"


def test_a_read_of_a_guard_word_is_a_crash_under_address_sanitizer_and_passes_unchecked(tmp_path, cache_dir):
    mutant = mutant_library(tmp_path / "lib", MAX_OVER_ONE_TOO_MANY)
    rows, _ = run_slice(mutant, MAX_SLICE, tmp_path / "asan", cache_dir, ["--sanitize", "address,undefined"])
    assert {r["test_id"].rsplit("-", 1)[-1] for r in rows} >= {"c1", "c8"}, [r["test_id"] for r in rows]
    for row in rows:    # every core count reads buffer[cores], the first tail guard word
        assert (row["outcome"], row["failure_class"]) == ("failed", "crash"), row
        assert "a read of a guard word past an output or work buffer" in row["message"], row["message"]
        assert "(AddressSanitizer: use-after-poison, READ of size 4) in vector_softmax_core at pulp_softmax_fp32.c:" \
            in row["message"], row["message"]
    # Why the poisoning exists: without the sanitizer the mutant passes every
    # variant. (The clean library passes this slice under AddressSanitizer in
    # .ci/run's concurrency passes.)
    rows, _ = run_slice(mutant, MAX_SLICE, tmp_path / "plain", cache_dir)
    assert rows and {r["outcome"] for r in rows} == {"passed"}, [r["test_id"] for r in rows if r["outcome"] != "passed"]


def test_a_size_mismatch_refused_without_printing_fails(tmp_path, cache_dir):
    """The API's residual contract is 'print, return': a refusal that writes
    nothing but says nothing is reported (OpEntry.prints), the rest passes."""
    mutant = mutant_library(tmp_path / "lib", SourceEdit(
        "sources/pulp_residual_impl.h",
        "    printf(\"%s_%s: %s->dim %d != %s->dim %d; nothing written\\n\", call, RES_NAME, a_name, a->dim, b_name,\n"
        "           b->dim);\n",
        "    (void)call, (void)a_name, (void)b_name;\n"))
    rows, texts = run_slice(mutant, "residual-fp32-fw-n9-", tmp_path, cache_dir)
    failed = sorted(r["test_id"] for r in rows if r["outcome"] == "failed")
    assert failed == sorted(r["test_id"] for r in rows if "mismatch0" not in r["test_id"]), failed
    assert all("prints why it refuses" in texts[t] for t in failed)
