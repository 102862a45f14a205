/* A whole layer run tile by tile with its transfers double-buffered (tiled_layer.h). */
#include "tiled_layer.h"

#include "ptl_platform.h"
#include "ptl_runner.h"

void tiled_layer_buffers(struct op_frame *f, const struct tiled_layer *layer, struct tiled_buffers *near)
{
    struct tiled_tile first = {0};
    layer->tile_at(layer->op, 0, &first);
    ptl_place_buffers(PTL_PLACE_NEAR);
    for (int set = 0; set < 2; set++) {
        for (int i = 0; i < TILED_MAX_IN; i++)
            near->in[set][i] = op_frame_scratch(f, (uint32_t)(first.in[i].row * first.in[i].rows));
        for (int o = 0; o < TILED_MAX_OUT; o++)
            near->out[set][o] = op_frame_scratch(f, (uint32_t)(first.out[o].row * first.out[o].rows));
    }
    ptl_place_buffers(PTL_PLACE_ANY);
}

/* Takes `elements` from the arena at offset *used: NULL for none; *used past `bytes` when they do not fit. */
static void *take(char *arena, uint32_t bytes, uint32_t *used, uint32_t elements, uint32_t element_size)
{
    const uint32_t size = (elements * element_size + 7u) & ~7u;
    void *at = arena + *used;
    *used = *used <= bytes && bytes - *used >= size ? *used + size : bytes + 1;
    return size && *used <= bytes ? at : NULL;
}

int tiled_layer_carve(const struct tiled_layer *layer, uint32_t element_size, uint32_t work_elements, void *arena,
                      uint32_t bytes, struct tiled_buffers *near, void **work)
{
    struct tiled_tile first = {0};
    layer->tile_at(layer->op, 0, &first);
    uint32_t used = 0;
    for (int set = 0; set < 2; set++) {
        for (int i = 0; i < TILED_MAX_IN; i++)
            near->in[set][i] = take(arena, bytes, &used, (uint32_t)(first.in[i].row * first.in[i].rows), element_size);
        for (int o = 0; o < TILED_MAX_OUT; o++)
            near->out[set][o] = take(arena, bytes, &used, (uint32_t)(first.out[o].row * first.out[o].rows),
                                     element_size);
    }
    *work = take(arena, bytes, &used, work_elements, element_size);
    return used > bytes ? -1 : 0;
}

/* Starts one copy; -1 when it has nothing to move. */
static int move(const struct tiled_copy *copy, void *near, int to_far, uint32_t element_size)
{
    if (copy->rows == 0 || copy->row == 0)
        return -1;
    return ptl_dma_start(near, copy->far, (uint32_t)copy->row * element_size, (uint32_t)copy->rows,
                         (uint32_t)copy->stride * element_size, to_far);
}

static void wait_all(int *ids, int n)
{
    for (int i = 0; i < n; i++)
        if (ids[i] >= 0)
            ptl_dma_wait(ids[i]);
    for (int i = 0; i < n; i++)
        ids[i] = -1;
}

static void load(const struct tiled_layer *layer, int t, void *const near[TILED_MAX_IN], int ids[TILED_MAX_IN],
                 uint32_t element_size)
{
    struct tiled_tile tile = {0};
    layer->tile_at(layer->op, t, &tile);
    for (int i = 0; i < TILED_MAX_IN; i++)
        ids[i] = move(&tile.in[i], near[i], 0, element_size);
}

void tiled_layer_run(const struct tiled_layer *layer, const struct tiled_buffers *near, uint32_t element_size)
{
    int loads[2][TILED_MAX_IN], stores[2][TILED_MAX_OUT] = {{-1, -1}, {-1, -1}};
    load(layer, 0, near->in[0], loads[0], element_size);
    for (int t = 0; t < layer->tiles; t++) {
        const int b = t & 1;
        struct tiled_tile tile = {0};
        layer->tile_at(layer->op, t, &tile);
        wait_all(loads[b], TILED_MAX_IN);
        if (t + 1 < layer->tiles)
            load(layer, t + 1, near->in[!b], loads[!b], element_size);
        wait_all(stores[b], TILED_MAX_OUT); /* tile t-2's outputs have left this set */
        layer->compute(layer->op, t, near->in[b], near->out[b]);
        for (int o = 0; o < TILED_MAX_OUT; o++)
            stores[b][o] = move(&tile.out[o], near->out[b][o], 1, element_size);
    }
    wait_all(stores[0], TILED_MAX_OUT);
    wait_all(stores[1], TILED_MAX_OUT);
}

int tiled_layer_measure(struct op_frame *f, const struct tiled_layer *layer, const struct tiled_buffers *near,
                        uint32_t element_size)
{
    if (f->status)
        return op_frame_finish(f, 0);
    ptl_measure_begin(f->vi);
    tiled_layer_run(layer, near, element_size);
    ptl_measure_end(f->vi);
    return op_frame_finish(f, 1);
}
