/*
 * pulp_dropout_impl.h (internal): dropout's per-core body for both element
 * types (contract in include/pulp_dropout_fp32.h). Define DROP_ARGS,
 * DROP_TO_F(v) (exact) and DROP_FROM_F(f) (rounded) first; defines the
 * static drop_core().
 */
static void drop_core(DROP_ARGS *a)
{
    const float p = a->probability;
    if (p == 0.0f)
        return;
    const long long cores = NUM_CORES, id = pi_core_id(), n = a->size;
    const long long b = (n + cores - 1) / cores;
    const long long first = id * b < n ? id * b : n, last = first + b < n ? first + b : n;
    const float keep = 1.0f - p;
    for (long long i = first; i < last; i++) {
        const float x = DROP_TO_F(a->input[i]);
        if (a->use_mask)
            a->input[i] = DROP_FROM_F(x * DROP_TO_F(a->mask[i]));
        else
            a->input[i] = pulp_generate_float_seed(a->seed + (int)i) > p ? DROP_FROM_F(x / keep) : DROP_FROM_F(0.0f);
    }
}
