/*
 * pulp_embedding_fp16.c: FP16 embedding lookup (contract in
 * pulp_embedding_fp16.h).
 */
#include <string.h>

#include "pulp_embedding_fp16.h"
#include "pulp_core_block.h"

void embedding_fw_tiled_fp16(void *Embedding_args_fp16)
{
    const struct Embedding_args_fp16 *a = Embedding_args_fp16;
    const size_t row_bytes = (size_t)a->embed_dim * sizeof(fp16);
    fp16 *stage = a->BUFF + (long)pi_core_id() * a->embed_dim;
    long first, last;
    pulp_core_block(a->dim, &first, &last);
    for (long i = first; i < last; i++) {
        memcpy(stage, a->embeds + (long)a->ids[i] * a->embed_dim, row_bytes);   /* L2 -> L1 */
        memcpy(a->out + i * a->embed_dim, stage, row_bytes);                    /* L1 -> L2 */
    }
}
