/*
 * pmsis.h: the subset of the PULP pmsis API that a training library may use,
 * provided by the harness on targets that are not a real PULP SDK (host, QEMU).
 *
 * The team calls follow the PULP cluster model: the caller forks a team of
 * cores, each core finds its slice through pi_core_id(), and
 * pi_cl_team_barrier() synchronises the team. The implementation lives in one
 * file per target (targets/host/runtime/team_pthreads.c, targets/qemu/runtime/team_harts.c).
 *
 * NUM_CORES is normally a compile-time constant. The harness builds the
 * library once and picks the core count per variant at run time, so it
 * compiles with -DNUM_CORES=ptl_num_cores and sets that variable before each
 * variant. A library that reads NUM_CORES therefore sees the variant's count.
 */
#ifndef PTL_PMSIS_SHIM_H
#define PTL_PMSIS_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>  /* the SDK's pmsis.h makes printf available */
#include <stdlib.h> /* ... and exit(), which library code calls on a fatal error */
#include <string.h>

#include "ptl_toolchain_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Core count of the current variant; the value NUM_CORES expands to. */
extern int ptl_num_cores;

/* ---- Team ---------------------------------------------------------------- */

/* Id of the calling core inside the current team, 0..nb_cores-1. */
int pi_core_id(void);
/* Cluster id; a single cluster on every harness target. */
static inline int pi_cluster_id(void) { return 0; }
/* Number of cores in the team that is currently running. */
int pi_cl_team_nb_cores(void);
/* Runs entry(arg) on nb_cores cores (0 means ptl_num_cores) and returns when
 * all of them have finished. The caller takes the part of core 0. */
void pi_cl_team_fork(int nb_cores, void (*entry)(void *), void *arg);
/* Blocks until every core of the current team has reached the barrier. */
void pi_cl_team_barrier(void);

/* ---- Performance counters -------------------------------------------------
 * Per-core counters. On host PI_PERF_CYCLES counts nanoseconds of wall time and
 * PI_PERF_INSTR is not available (reads 0); the harness labels the unit. */
enum {
    PI_PERF_CYCLES = 0,
    PI_PERF_ACTIVE_CYCLES = 1,
    PI_PERF_INSTR = 2,
};
void pi_perf_conf(unsigned events);
void pi_perf_reset(void);
void pi_perf_start(void);
void pi_perf_stop(void);
unsigned int pi_perf_read(int event);

/* ---- DMA: emulated by a core copy, completed on issue ---------------------- */

/* A word, a half-word and a byte of any object: the copy below reads and
 * writes the library's floats and halves through them. */
typedef uint32_t __attribute__((may_alias)) ptl_dma_word;
typedef uint16_t __attribute__((may_alias)) ptl_dma_half;
typedef uint8_t __attribute__((may_alias)) ptl_dma_byte;

#define PTL_DMA_COPY_BY(T, dst, src, n)                                     \
    do {                                                                    \
        volatile T *to_ = (volatile T *)(dst);                              \
        const T *from_ = (const T *)(src);                                  \
        for (uint32_t n_ = (n); n_; n_--)                                   \
            *to_++ = *from_++;                                              \
    } while (0)

/* The transfer a DMA engine would make, made by the calling core, by the
 * widest unit that both ends and the size allow: a library's DMA variant is
 * charged this copy on every target (GVSOC's cluster DMA serves the runner's
 * far memory, runtime/runner/far_memory.c, not these calls). Not memmove:
 * Debian's picolibc is built for size, and its memmove is a byte loop of 6
 * instructions a byte, five times the words' cost. The stores are volatile
 * so that the compiler keeps the loops and does not call memcpy; the
 * function is not inlined, so that it does not take the registers of the
 * library's loop around it. Like a DMA, it does not make overlapping
 * transfers right: the library's are between L2 and L1. */
static __attribute__((noinline, unused)) void ptl_dma_copy(void *dst, const void *src, uint32_t size)
{
    const uintptr_t align = (uintptr_t)dst | (uintptr_t)src | size;
    if ((align & 3) == 0)
        PTL_DMA_COPY_BY(ptl_dma_word, dst, src, size / 4);
    else if ((align & 1) == 0)
        PTL_DMA_COPY_BY(ptl_dma_half, dst, src, size / 2);
    else
        PTL_DMA_COPY_BY(ptl_dma_byte, dst, src, size);
}

typedef enum {
    PI_CL_DMA_DIR_LOC2EXT = 0,
    PI_CL_DMA_DIR_EXT2LOC = 1,
} pi_cl_dma_dir_e;

typedef struct pi_cl_dma_cmd_s {
    int id;
} pi_cl_dma_cmd_t;

typedef struct pi_cl_dma_copy_s {
    uint32_t ext;
    uint32_t loc;
    uint32_t size;
    pi_cl_dma_dir_e dir;
    int merge;
    uint32_t stride;
    uint32_t length;
    int id;
} pi_cl_dma_copy_t;

static inline void pi_cl_dma_cmd(uint32_t ext, uint32_t loc, uint32_t size,
                                 pi_cl_dma_dir_e dir, pi_cl_dma_cmd_t *cmd)
{
    void *e = (void *)(uintptr_t)ext, *l = (void *)(uintptr_t)loc;
    if (dir == PI_CL_DMA_DIR_EXT2LOC)
        ptl_dma_copy(l, e, size);
    else
        ptl_dma_copy(e, l, size);
    if (cmd)
        cmd->id = 0;
}

/* 2D transfer: `size` bytes in rows of `length` bytes; rows are `stride`
 * bytes apart on the external side and contiguous on the local side. */
static inline void pi_cl_dma_cmd_2d(uint32_t ext, uint32_t loc, uint32_t size,
                                    uint32_t stride, uint32_t length,
                                    pi_cl_dma_dir_e dir, pi_cl_dma_cmd_t *cmd)
{
    uint32_t done = 0;
    for (uint32_t row = 0; done < size; row++) {
        uint32_t chunk = (size - done < length) ? size - done : length;
        pi_cl_dma_cmd(ext + row * stride, loc + done, chunk, dir, NULL);
        done += chunk;
    }
    if (cmd)
        cmd->id = 0;
}

static inline void pi_cl_dma_cmd_wait(pi_cl_dma_cmd_t *cmd) { (void)cmd; }
static inline void pi_cl_dma_memcpy(pi_cl_dma_copy_t *copy)
{
    pi_cl_dma_cmd(copy->ext, copy->loc, copy->size, copy->dir, NULL);
}
/* 2-D copy descriptor: `size` bytes in rows of `length` bytes, rows `stride`
 * bytes apart on the external side, contiguous on the local side. */
typedef struct pi_cl_dma_copy_2d_s {
    pi_cl_dma_dir_e dir;
    int merge;
    uint32_t size;
    uint32_t stride;
    uint32_t length;
    int id;
    uint32_t ext;
    uint32_t loc;
} pi_cl_dma_copy_2d_t;

static inline void pi_cl_dma_memcpy_2d(pi_cl_dma_copy_2d_t *copy)
{
    pi_cl_dma_cmd_2d(copy->ext, copy->loc, copy->size, copy->stride, copy->length, copy->dir, NULL);
}
/* Waits for a copy; takes either descriptor, 1-D or 2-D (both complete on
 * issue here). */
static inline void pi_cl_dma_wait(void *copy) { (void)copy; }

/* ---- Memory placement: one flat memory on harness targets ------------------ */
#define PI_L1
#define PI_L2
#define PI_CL_L1
#define PI_FC_L1

/* ---- Toolchain types --------------------------------------------------------
 * float16, float16alt and v2s: ptl_toolchain_types.h (included above), which
 * the harness also force-includes in every library and op unit. v2f16 is the
 * library's own (a vector of its fp16). */

#ifdef __cplusplus
}
#endif

#endif /* PTL_PMSIS_SHIM_H */
