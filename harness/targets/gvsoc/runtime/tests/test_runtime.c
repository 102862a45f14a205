/*
 * Self-test of the GVSOC runtime, one behaviour per build (-DPTL_TEST_CASE=N):
 *
 *   0 team      forks of 1..8 cores with float work, a barrier and a
 *               cross-core read that is only right if the barrier held;
 *               one VARIANT record per core count (status 0: right), each
 *               with its measured region (COUNTS record); then 3 forks of 8
 *               inside one region, to show how worker counts add up
 *   1 illegal   core 3 of an 8-core fork executes an AMO (no A extension):
 *               a CRASH record, exit status 12
 *   2 unmapped  core 0 loads from an address nothing is mapped at: GVSOC
 *               stops with "Invalid access" and exit status 1
 *   3 hang      core 0 spins forever in a measured region: the FC's
 *               watchdog ends it (exit status 14) where the ELF holds a
 *               cycle budget, else only the timeout
 *   4 deadlock  core 1 of a 2-core fork leaves without the barrier that
 *               core 0 waits at, in a measured region: every core asleep,
 *               nothing to wake them but the watchdog's timer
 *   5 dma       the cluster DMA (ptl_dma_start, ptl_dma_wait) between an
 *               L2 and an L1 buffer (ptl_far_malloc, ptl_near_malloc): a
 *               1-D copy in, a 2-D copy in (every third row of four), the
 *               same rows back out to other places, two transfers in
 *               flight at once; one VARIANT record each, status 0 when
 *               every byte is where it belongs and nothing else changed,
 *               and status 2 when a buffer is not in the memory it must be
 *               (L2 from 0x1c000000, L1 from 0x10000000)
 *   6 past-l1   core 0 stores one word past the end of L1, in a measured
 *               region: an address inside the cluster's range that nothing
 *               is mapped at. GVSOC stops with "Invalid access" and exit
 *               status 1 (the install script's error-mapping patch;
 *               without it the access circled between the cluster and the
 *               SoC at one simulated instant, past any watchdog's reach)
 *
 * The recordings in tests/gvsoc_recordings/ come from these programs
 * (tests/gvsoc_recordings/record.py).
 */
#include <math.h>
#include <stdlib.h>
#include <stdint.h>

#include "pmsis.h"
#include "ptl_gvsoc.h"
#include "ptl_platform.h"
#include "ptl_protocol.h"

#ifndef PTL_TEST_CASE
#define PTL_TEST_CASE 0
#endif

#define WORK_PER_CORE 64

static float data[8 * WORK_PER_CORE];
static float partial[8];

static float element(int core, int i) { return sqrtf((float)(i + 1)) * 0.5f + (float)core; }

static void float_work(void *arg)
{
    (void)arg;
    int id = pi_core_id();
    int n = pi_cl_team_nb_cores();
    for (int i = 0; i < WORK_PER_CORE; i++)
        data[id * WORK_PER_CORE + i] = element(id, i);
    pi_cl_team_barrier();
    int other = (id + 1) % n;
    float sum = 0.0f;
    for (int i = 0; i < WORK_PER_CORE; i++)
        sum += data[other * WORK_PER_CORE + i];
    partial[id] = sum;
}

static int team_is_right(int n)
{
    for (int id = 0; id < n; id++) {
        int other = (id + 1) % n;
        float sum = 0.0f;
        for (int i = 0; i < WORK_PER_CORE; i++)
            sum += element(other, i);
        if (partial[id] != sum)
            return 0;
    }
    return 1;
}

static void illegal_on_core_3(void *arg)
{
    (void)arg;
    if (pi_core_id() == 3)
        __asm__ volatile(".word 0x00b5202f"); /* amoadd.w zero, a1, (a0) */
}

static void leave_without_barrier(void *arg)
{
    (void)arg;
    if (pi_core_id() == 0)
        pi_cl_team_barrier();
}

#define DMA_ROWS 12
#define DMA_ROW 40 /* floats per row of the L2 matrix */

static float pattern(int i) { return (float)i * 0.25f - 7.0f; }

static int dma_placed(const void *far, const void *near)
{
    const uintptr_t f = (uintptr_t)far, n = (uintptr_t)near;
    return f >> 24 == 0x1c && n >> 24 == 0x10;
}

/* 0 right, 1 wrong bytes, 2 wrong memories. */
static int dma_test(int kind)
{
    float *far = ptl_far_malloc(DMA_ROWS * DMA_ROW * sizeof(float));
    float *near = ptl_near_malloc(2 * DMA_ROWS * DMA_ROW * sizeof(float));
    if (!far || !near || !dma_placed(far, near))
        return 2;
    for (int i = 0; i < DMA_ROWS * DMA_ROW; i++)
        far[i] = pattern(i), near[i] = -1.0f, near[DMA_ROWS * DMA_ROW + i] = -1.0f;
    int wrong = 0;
    if (kind == 0) { /* 1-D in: the whole matrix */
        ptl_dma_wait(ptl_dma_start(near, far, DMA_ROWS * DMA_ROW * sizeof(float), 1, 0, 0));
        for (int i = 0; i < DMA_ROWS * DMA_ROW; i++)
            wrong |= near[i] != pattern(i);
    } else if (kind == 1) { /* 2-D in: 6 floats from column 3 of rows 0, 3, 6, 9 */
        ptl_dma_wait(ptl_dma_start(near, far + 3, 6 * sizeof(float), DMA_ROWS / 3, 3 * DMA_ROW * sizeof(float), 0));
        for (int r = 0; r < DMA_ROWS / 3; r++)
            for (int c = 0; c < 6; c++)
                wrong |= near[r * 6 + c] != pattern(3 * r * DMA_ROW + 3 + c);
        wrong |= near[DMA_ROWS / 3 * 6] != -1.0f;
    } else { /* 2-D out: 4 rows of 5 floats to column 30 of rows 1, 2, 3, 4, while a 1-D copy comes in */
        for (int i = 0; i < 20; i++)
            near[i] = 100.0f + (float)i;
        const int out = ptl_dma_start(near, far + DMA_ROW + 30, 5 * sizeof(float), 4, DMA_ROW * sizeof(float), 1);
        const int in = ptl_dma_start(near + DMA_ROWS * DMA_ROW, far + 6 * DMA_ROW, DMA_ROW * sizeof(float), 1, 0, 0);
        ptl_dma_wait(in);
        ptl_dma_wait(out);
        for (int i = 0; i < DMA_ROWS * DMA_ROW; i++) {
            const int r = i / DMA_ROW, c = i % DMA_ROW;
            const int written = r >= 1 && r <= 4 && c >= 30 && c < 35;
            wrong |= far[i] != (written ? 100.0f + (float)((r - 1) * 5 + c - 30) : pattern(i));
        }
        for (int i = 0; i < DMA_ROW; i++)
            wrong |= near[DMA_ROWS * DMA_ROW + i] != pattern(6 * DMA_ROW + i);
    }
    free(far);
    free(near);
    return wrong;
}

int main(void)
{
    ptl_platform_init(0, 0);
#if PTL_TEST_CASE == 0
    ptl_emit_begin(0, 9);
    for (int n = 1; n <= 8; n++) {
        ptl_region_begin((uint32_t)n - 1);
        pi_cl_team_fork(n, float_work, 0);
        ptl_region_end((uint32_t)n - 1);
        ptl_emit_variant((uint32_t)n - 1, team_is_right(n) ? 0 : 1, (uint32_t)n - 1, 0);
    }
    ptl_region_begin(8);
    for (int i = 0; i < 3; i++)
        pi_cl_team_fork(8, float_work, 0);
    ptl_region_end(8);
    ptl_emit_variant(8, team_is_right(8) ? 0 : 1, 8, 0);
    ptl_emit_end();
    return 0;
#elif PTL_TEST_CASE == 1
    ptl_emit_begin(0, 1);
    pi_cl_team_fork(8, illegal_on_core_3, 0);
#elif PTL_TEST_CASE == 2
    ptl_emit_begin(0, 1);
    return (int)*(volatile uint32_t *)0x30000000u;
#elif PTL_TEST_CASE == 3
    ptl_emit_begin(0, 1);
    ptl_region_begin(0);
    for (volatile int spin = 0;; spin++)
        ;
#elif PTL_TEST_CASE == 4
    ptl_emit_begin(0, 1);
    ptl_region_begin(0);
    pi_cl_team_fork(2, leave_without_barrier, 0);
#elif PTL_TEST_CASE == 5
    ptl_emit_begin(0, 3);
    for (int kind = 0; kind < 3; kind++)
        ptl_emit_variant((uint32_t)kind, (uint32_t)dma_test(kind), (uint32_t)kind, 0);
    ptl_emit_end();
#elif PTL_TEST_CASE == 6
    ptl_emit_begin(0, 1);
    ptl_region_begin(0);
    *(volatile uint32_t *)(uintptr_t)(PTL_GVSOC_L1_BASE + PTL_GVSOC_L1_SIZE) = 1;
#endif
    return 0;
}
