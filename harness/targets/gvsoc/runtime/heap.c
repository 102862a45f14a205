/*
 * malloc for the GVSOC runtime: two arenas, the cluster's L1 first, then L2.
 *
 * The runner's tensors and work buffers belong in L1, where a PULP
 * deployment keeps them and where the cycle counts mean something. A case
 * whose buffers do not all fit there still runs: the rest goes to L2, at
 * L2's cost. picolibc's own malloc assumes one contiguous heap, hence this.
 *
 * ptl_far_malloc and ptl_near_malloc take one arena each: a tiled layer's
 * tensors in L2, its tiles in L1 (ptl_platform.h).
 *
 * First fit over an implicit list of blocks per arena (an 8-byte header:
 * size with the low bit marking "used"), free neighbours merged while
 * scanning. Only core 0 allocates (the runner); the library allocates nothing.
 *
 * The heap counts the bytes of its used L2 blocks (headers included), so
 * that a measured region can say how much of what it may touch was in L2
 * (ptl_gvsoc_heap_l2_bytes, the SPILL record).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptl_platform.h"

#define HEADER 8u
#define USED 1u

struct arena {
    uint8_t *start, *end;
};

extern uint8_t __l1_heap_start[], __l1_heap_end[], __l2_heap_start[], __l2_heap_end[];

static struct arena arenas[2];
static int ready;
static uint32_t l2_used;

static uint32_t *header_at(uint8_t *p) { return (uint32_t *)p; }
static uint32_t block_size(uint8_t *p) { return *header_at(p) & ~USED; }

static void arenas_init(void)
{
    arenas[0] = (struct arena){__l1_heap_start, __l1_heap_end};
    arenas[1] = (struct arena){__l2_heap_start, __l2_heap_end};
    for (int i = 0; i < 2; i++)
        *header_at(arenas[i].start) = (uint32_t)(arenas[i].end - arenas[i].start) & ~7u;
    ready = 1;
}

static void *arena_alloc(struct arena *a, uint32_t need)
{
    for (uint8_t *p = a->start; p + HEADER <= a->end && block_size(p);) {
        uint32_t size = block_size(p);
        if (!(*header_at(p) & USED)) {
            uint8_t *next = p + size;
            while (next + HEADER <= a->end && block_size(next) && !(*header_at(next) & USED)) {
                size += block_size(next);
                next = p + size;
            }
            *header_at(p) = size;
            if (size >= need) {
                if (size - need >= 2 * HEADER) {
                    *header_at(p + need) = size - need;
                    size = need;
                }
                *header_at(p) = size | USED;
                return p + HEADER;
            }
        }
        p += size;
    }
    return NULL;
}

/* Allocates from arenas first..last (0: L1, 1: L2). */
static void *arenas_alloc(int first, int last, size_t n)
{
    if (!ready)
        arenas_init();
    if (n > 0x7fffffffu - 2 * HEADER) {
        errno = ENOMEM;
        return NULL;
    }
    uint32_t need = (uint32_t)((n + 7u) & ~(size_t)7u) + HEADER;
    for (int i = first; i <= last; i++) {
        uint8_t *p = arena_alloc(&arenas[i], need);
        if (p) {
            if (i == 1)
                l2_used += block_size(p - HEADER);
            return p;
        }
    }
    errno = ENOMEM;
    return NULL;
}

void *malloc(size_t n) { return arenas_alloc(0, 1, n); }

/* ptl_platform.h: a tiled layer's tensors in L2, its tiles in L1. */
void *ptl_far_malloc(size_t n) { return arenas_alloc(1, 1, n); }

void *ptl_near_malloc(size_t n) { return arenas_alloc(0, 0, n); }

void free(void *ptr)
{
    if (!ptr)
        return;
    uint8_t *block = (uint8_t *)ptr - HEADER;
    if (block >= arenas[1].start && block < arenas[1].end)
        l2_used -= block_size(block);
    *header_at(block) &= ~USED;
}

uint32_t ptl_gvsoc_heap_l2_bytes(void) { return l2_used; }

void *calloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = malloc(count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
}

void *realloc(void *ptr, size_t n)
{
    if (!ptr)
        return malloc(n);
    uint32_t have = block_size((uint8_t *)ptr - HEADER) - HEADER;
    if (n <= have)
        return ptr;
    void *p = malloc(n);
    if (p) {
        memcpy(p, ptr, have);
        free(ptr);
    }
    return p;
}
