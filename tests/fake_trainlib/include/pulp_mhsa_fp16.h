/*
 * pulp_mhsa_fp16.h: FP16 attention, reduced to what fact 1 is about: the
 * header includes the SDK's board-support and file-system headers and uses
 * the SDK type pi_fs_file_t in a prototype. Nothing implements it.
 */
#ifndef PULP_MHSA_FP16_H
#define PULP_MHSA_FP16_H

#include <bsp/bsp.h>
#include <bsp/fs/readfs.h>

#include "pulp_train_defines.h"

/* Reads `count` fp16 weights from an open file into `dst`. */
void mhsa_fp16_load_weights(pi_fs_file_t *file, fp16 *dst, int count);

#endif
