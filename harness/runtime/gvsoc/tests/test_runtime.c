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
 *
 * The recordings in tests/gvsoc_recordings/ come from these programs
 * (tests/gvsoc_recordings/record.py).
 */
#include <math.h>
#include <stdint.h>

#include "pmsis.h"
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
#endif
    return 0;
}
