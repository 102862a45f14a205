/*
 * pulp_embedding_fp16.c: FP16 embedding lookup (contract in
 * pulp_embedding_fp16.h).
 */
#include "pulp_embedding_fp16.h"
#include "pulp_core_block.h"
#include "pulp_elem_loops.h"

void embedding_fw_tiled_fp16(void *Embedding_args_fp16)
{
    const struct Embedding_args_fp16 *a = Embedding_args_fp16;
    const int n = a->embed_dim;
    fp16 *stage = a->BUFF + (long)pi_core_id() * a->embed_dim;
    long first, last;
    pulp_core_block(a->dim, &first, &last);
    for (long i = first; i < last; i++) {
        PTL_COPY_ELEMS(stage, a->embeds + (long)a->ids[i] * n, n); /* L2 -> L1 */
        PTL_COPY_ELEMS(a->out + i * n, stage, n);                   /* L1 -> L2 */
    }
}
