/*
 * pulp_dropout_impl.h (internal): dropout's per-core body for both element
 * types (contract in include/pulp_dropout_fp32.h). Define DROP_ARGS,
 * DROP_TO_F(v) (exact) and DROP_FROM_F(f) (rounded) first; defines the
 * static drop_core().
 */
#include "pulp_core_block.h"

static void drop_core(DROP_ARGS *a)
{
    const float p = DROP_TO_F(a->probability);
    if (p == 0.0f)
        return;
    long first, last;
    pulp_core_block(a->size, &first, &last);
    const float keep = 1.0f - p;
    for (long i = first; i < last; i++) {
        const float x = DROP_TO_F(a->input[i]);
        if (a->use_mask)
            a->input[i] = DROP_FROM_F(x * DROP_TO_F(a->mask[i]));
        else
            a->input[i] = pulp_generate_float_seed(a->seed + (int)i) > p ? DROP_FROM_F(x / keep) : DROP_FROM_F(0.0f);
    }
}
