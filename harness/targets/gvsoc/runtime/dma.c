/*
 * The cluster DMA (MCHAN v7 of pulp-open) behind ptl_dma_start/ptl_dma_wait
 * (ptl_platform.h), for the cluster cores.
 *
 * A core talks to it through its own view of the DMA (the demux): a read of
 * the command register reserves a transfer counter and returns its id; then
 * the command words go to the same register: the command (bytes, direction,
 * incremental, 2-D, event on completion), the TCDM address, the external
 * address, and for a 2-D transfer the row length and the external stride.
 * The status register has bit `id` set while transfer `id` has bytes
 * pending; writing 1 << id frees its counter. The DMA raises the issuing
 * core's DMA event when a transfer ends, so a waiting core sleeps.
 */
#include <stdint.h>

#include "ptl_gvsoc_hw.h"
#include "ptl_platform.h"

#define DMA_BASE (PTL_GVSOC_EU_DEMUX + 0x400) /* the core's own view of the DMA */
#define DMA_COMMAND (DMA_BASE + 0x0)
#define DMA_STATUS (DMA_BASE + 0x4)
#define DMA_EVENT 8 /* event line dma_0 of a cluster core */

#define CMD_EXT_TO_TCDM (1u << 17)
#define CMD_INCREMENTAL (1u << 18)
#define CMD_2D_EXT (1u << 19)
#define CMD_EVENT (1u << 20)
#define CMD_MAX_BYTES 0x1ffffu

int ptl_dma_start(void *near, const void *far, uint32_t row_bytes, uint32_t rows, uint32_t far_stride, int to_far)
{
    const uint32_t bytes = row_bytes * rows;
    if (bytes == 0 || bytes > CMD_MAX_BYTES)
        ptl_gvsoc_fatal("ptl_dma_start: a transfer of 0 bytes or more than 128 KiB");
    const int two_d = rows > 1 && far_stride != row_bytes;
    const uint32_t id = ptl_mmio_read32(DMA_COMMAND); /* waits for a free counter */
    ptl_mmio_write32(DMA_COMMAND, bytes | (to_far ? 0u : CMD_EXT_TO_TCDM) | CMD_INCREMENTAL | CMD_EVENT |
                                      (two_d ? CMD_2D_EXT : 0u));
    ptl_mmio_write32(DMA_COMMAND, (uint32_t)(uintptr_t)near);
    ptl_mmio_write32(DMA_COMMAND, (uint32_t)(uintptr_t)far);
    if (two_d) {
        ptl_mmio_write32(DMA_COMMAND, row_bytes);
        ptl_mmio_write32(DMA_COMMAND, far_stride);
    }
    return (int)id;
}

void ptl_dma_wait(int id)
{
    const uint32_t bit = 1u << (uint32_t)id;
    while (ptl_mmio_read32(DMA_STATUS) & bit)
        ptl_eu_wait(DMA_EVENT); /* an event of an earlier transfer only loops once more */
    ptl_mmio_write32(DMA_STATUS, bit);
}
