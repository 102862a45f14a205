/*
 * Runner op of the FP16 embedding lookup (pulp_embedding_fp16.h), its
 * per-core body forked here on the variant's cores. FP16 only (the FP32
 * table is empty: the API has no FP32 embedding).
 *
 * Params: rows (dim), embed_dim, vocab. Tensors in: ids [rows] (each id an
 * exact small integer in the tensor's format, converted to the int array
 * the call takes), embeds [vocab * embed_dim]; out [rows * embed_dim].
 * BUFF is guarded scratch of cores * embed_dim.
 */
#include "op_frame.h"
#include "pmsis.h"
#include "ptl_op_dtype.h"
#include "ptl_platform.h"
#include "ptl_runner.h"
#include "pulp_train.h"

#if PTL_OP_FP == 16

#define MAX_ROWS 4096

static int run_embedding(const struct ptl_case *c, struct ptl_variant v, uint32_t vi)
{
    const int rows = ptl_param(c, "rows", vi), embed_dim = ptl_param(c, "embed_dim", vi);
    const int vocab = ptl_param(c, "vocab", vi);
    if (rows < 1 || rows > MAX_ROWS || embed_dim < 1 || vocab < 1) {
        ptl_emit_error(vi, PTL_ERR_BAD_CASE, "embedding needs 1 <= rows <= 4096, embed_dim >= 1, vocab >= 1");
        return PTL_ERR_BAD_CASE;
    }
    struct op_frame f;
    op_frame_init(&f, c, vi, PTL_DTYPE);
    fp16 *id_values = op_frame_input(&f, "ids", (uint32_t)rows);
    fp16 *embeds = op_frame_input(&f, "embeds", (uint32_t)(vocab * embed_dim));
    fp16 *out = op_frame_output(&f, "out", (uint32_t)(rows * embed_dim));
    fp16 *buff = op_frame_scratch(&f, (uint32_t)(v.cores * embed_dim));
    if (f.status)
        return op_frame_finish(&f, 0);
    static int ids[MAX_ROWS];
    for (int i = 0; i < rows; i++) {
        const float id = PTL_TO_F32(id_values[i]);
        if (!(id >= 0.0f && id < (float)vocab) || id != (float)(int)id) {
            op_frame_fail(&f, PTL_ERR_BAD_CASE, "embedding ids must be integers in 0 .. vocab - 1");
            return op_frame_finish(&f, 0);
        }
        ids[i] = (int)id;
    }
    struct Embedding_args_fp16 args = {.BUFF = buff, .dim = rows, .embed_dim = embed_dim, .ids = ids,
                                       .embeds = embeds, .out = out};
    return op_frame_fork(&f, v, embedding_fw_tiled_fp16, &args);
}

const struct ptl_op PTL_OP_TABLE[] = {
    {PTL_OP_NAME("embedding"), "rows embed_dim vocab alone", "ids embeds", "out", "none", run_embedding},
    {0},
};

#else /* the embedding is FP16 only in the API */

const struct ptl_op PTL_OP_TABLE[] = {
    {0},
};

#endif
