/*
 * Far memory and the DMA on targets with one flat memory (host, QEMU, a
 * serial board): both kinds of memory are malloc, and a transfer is a copy
 * done when it starts. A target with a cluster DMA (GVSOC) defines these
 * itself; these definitions are weak so that its own win at link time.
 */
#include <stdlib.h>
#include <string.h>

#include "ptl_platform.h"

__attribute__((weak)) void *ptl_far_malloc(size_t n) { return malloc(n); }

__attribute__((weak)) void *ptl_near_malloc(size_t n) { return malloc(n); }

__attribute__((weak)) int ptl_dma_start(void *near, const void *far, uint32_t row_bytes, uint32_t rows,
                                        uint32_t far_stride, int to_far)
{
    for (uint32_t r = 0; r < rows; r++) {
        unsigned char *n = (unsigned char *)near + (size_t)r * row_bytes;
        unsigned char *f = (unsigned char *)far + (size_t)r * far_stride;
        if (to_far)
            memcpy(f, n, row_bytes);
        else
            memcpy(n, f, row_bytes);
    }
    return 0;
}

__attribute__((weak)) void ptl_dma_wait(int id) { (void)id; }
