/*
 * pulp_embedding_fp16.h: FP16 embedding lookup, forward. A per-core body
 * FORKED BY THE CALLER: core id takes its block of the dim rows
 * (pulp_core_block) and, for each row i, brings embeds row ids[i] through
 * its own staging row BUFF + id * embed_dim (the L1 buffer that a DMA
 * would fill on a PULP cluster) into out row i. Rows are copied unchanged.
 * An id outside 0 .. the caller's vocabulary is the caller's to prevent.
 */
#ifndef PULP_EMBEDDING_FP16_H
#define PULP_EMBEDDING_FP16_H

#include "pulp_train_defines.h"

struct Embedding_args_fp16 {
    fp16 *BUFF;
    int dim;
    int embed_dim;
    int *ids;
    fp16 *embeds;
    fp16 *out;
};

void embedding_fw_tiled_fp16(void *Embedding_args_fp16);

#endif /* PULP_EMBEDDING_FP16_H */
