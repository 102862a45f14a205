/*
 * tiled_layer.h: a whole layer run tile by tile, as a deployment runs it on
 * a PULP cluster. The layer's tensors stay in far memory (L2 on GVSOC); the
 * DMA moves each tile's inputs into near memory (L1) and its outputs back
 * out, double-buffered: the next tile's inputs come in and the last tile's
 * outputs go out while the cores compute this one (ptl_platform.h).
 *
 * An op describes its tiles (where each input and output of tile t lies in
 * far memory) and how to compute one tile on near buffers; the loop, the
 * buffers and the transfers are here, once for every op.
 */
#ifndef TILED_LAYER_H
#define TILED_LAYER_H

#include "op_frame.h"

#define TILED_MAX_IN 3
#define TILED_MAX_OUT 2

/* `rows` rows of `row` elements, `stride` elements apart in far memory,
 * contiguous in near memory. rows 0: nothing to move. */
struct tiled_copy {
    void *far;
    int row, rows, stride;
};

static inline struct tiled_copy tiled_rows(const void *far, int row, int rows, int stride)
{
    return (struct tiled_copy){.far = (void *)far, .row = row, .rows = rows, .stride = stride};
}

/* n contiguous elements: one row. */
static inline struct tiled_copy tiled_block(const void *far, int n) { return tiled_rows(far, n, 1, 0); }

/* Tiles of `tile` along `length`: the last one is the edge tile. */
static inline int tiles_along(int length, int tile) { return (length + tile - 1) / tile; }

struct tiled_tile {
    struct tiled_copy in[TILED_MAX_IN], out[TILED_MAX_OUT];
};

struct tiled_layer {
    int tiles;
    /* Tile t's copies. Tile 0 must be the largest in each of them (tiles cut
     * by ceil division: the edge tiles come last). */
    void (*tile_at)(const void *op, int t, struct tiled_tile *tile);
    /* Computes tile t with its inputs and outputs in near memory. */
    void (*compute)(const void *op, int t, void *const in[TILED_MAX_IN], void *const out[TILED_MAX_OUT]);
    const void *op;
};

/* The near buffers of both sets, sized by tile 0, from the frame (guarded,
 * NaN-filled, in near memory only: a failure is the frame's NO_MEMORY). */
struct tiled_buffers {
    void *in[2][TILED_MAX_IN], *out[2][TILED_MAX_OUT];
};
void tiled_layer_buffers(struct op_frame *f, const struct tiled_layer *layer, struct tiled_buffers *near);

/* The same carved from one near arena of `bytes` (for a chain of layers that
 * share it), each buffer 8-byte aligned, then `work_elements` elements of
 * work buffer for the op (*work; NULL for none). Returns 0, or -1 when they
 * do not fit (nothing is allocated either way). */
int tiled_layer_carve(const struct tiled_layer *layer, uint32_t element_size, uint32_t work_elements, void *arena,
                      uint32_t bytes, struct tiled_buffers *near, void **work);

/* Runs every tile; returns when the last output is in far memory. */
void tiled_layer_run(const struct tiled_layer *layer, const struct tiled_buffers *near, uint32_t element_size);

/* The variant's measured region: the frame's set-up status checked, every
 * tile run in it, then op_frame_finish (the outputs emitted if it ran). */
int tiled_layer_measure(struct op_frame *f, const struct tiled_layer *layer, const struct tiled_buffers *near,
                        uint32_t element_size);

#endif /* TILED_LAYER_H */
