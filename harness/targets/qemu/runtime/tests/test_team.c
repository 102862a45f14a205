/*
 * Self-test of the QEMU team runtime: fork/join and barriers on 1..8 harts,
 * float work on every core, printf from workers, picolibc malloc, and
 * records through protocol.c. Each check is one VARIANT record (status 0:
 * passed) whose region number is the plugin region that measured it.
 *
 * Regions, in order (tests/check_runtime.py knows them):
 *   0        a loop of exactly 3 * CALIBRATION_LOOPS + 5 instructions, hart 0
 *   1..8     a fork of n = 1..8 cores; each core fills its slice with float
 *            work, then after a barrier sums its neighbour's slice
 *   9..16    a barrier stress of BARRIER_ROUNDS rounds on n = 1..8 cores
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "pmsis.h"
#include "ptl_platform.h"
#include "ptl_protocol.h"

#define WORK_PER_CORE 1024
#define BARRIER_ROUNDS 1000
#define CALIBRATION_LOOPS 1000
#define N_CHECKS 17

static float data[8 * WORK_PER_CORE];
static float partial[8];
static volatile int counters[8];
static int barrier_errors;
static int core_seen[8];
static int nb_seen[8];

static float element(int core, int i) { return sqrtf((float)(i + 1)) * 0.5f + (float)core; }

static void float_work(void *arg)
{
    (void)arg;
    int id = pi_core_id();
    int n = pi_cl_team_nb_cores();
    core_seen[id]++;
    nb_seen[id] = n;
    float *mine = data + id * WORK_PER_CORE;
    for (int i = 0; i < WORK_PER_CORE; i++)
        mine[i] = element(id, i);
    pi_cl_team_barrier();
    /* Reads another core's slice: only correct if the barrier held. */
    int other = (id + 1) % n;
    float sum = 0.0f;
    for (int i = 0; i < WORK_PER_CORE; i++)
        sum += data[other * WORK_PER_CORE + i];
    partial[id] = sum;
}

static void barrier_stress(void *arg)
{
    (void)arg;
    int id = pi_core_id();
    int n = pi_cl_team_nb_cores();
    for (int round = 0; round < BARRIER_ROUNDS; round++) {
        counters[id] = round + 1;
        pi_cl_team_barrier();
        for (int c = 0; c < n; c++)
            if (counters[c] != round + 1)
                barrier_errors++; /* racy on purpose: any non-zero value fails */
        pi_cl_team_barrier();
    }
}

static void say_hello(void *arg)
{
    (void)arg;
    printf("hello from core %d of %d\n", pi_core_id(), pi_cl_team_nb_cores());
}

int main(void)
{
    ptl_platform_init(0, NULL);
    ptl_emit_begin(0, N_CHECKS);
    uint32_t region = 0;

    ptl_region_begin(0);
    __asm__ volatile(".option push\n.option norvc\n"
                     "li t0, %0\n"
                     "1: addi t0, t0, -1\n"
                     "addi x0, x0, 0\n"
                     "bnez t0, 1b\n"
                     ".option pop\n" ::"i"(CALIBRATION_LOOPS)
                     : "t0");
    ptl_region_end(0);
    ptl_emit_variant(0, 0, region++, 0);

    for (int n = 1; n <= 8; n++) {
        for (int c = 0; c < 8; c++)
            core_seen[c] = nb_seen[c] = 0, partial[c] = 0;
        ptl_region_begin((uint32_t)n);
        pi_cl_team_fork(n, float_work, NULL);
        ptl_region_end((uint32_t)n);
        int status = 0;
        for (int c = 0; c < 8; c++) {
            int member = c < n;
            if (core_seen[c] != member || (member && nb_seen[c] != n))
                status = 1;
            if (member) {
                float expect = 0.0f;
                for (int i = 0; i < WORK_PER_CORE; i++)
                    expect += element((c + 1) % n, i);
                if (partial[c] != expect)
                    status = 2;
            }
        }
        ptl_emit_variant((uint32_t)n, status, region++, 0);
        ptl_emit_tensor((uint32_t)n, 0, PTL_DTYPE_F32, partial, (uint32_t)n);
    }

    for (int n = 1; n <= 8; n++) {
        barrier_errors = 0;
        for (int c = 0; c < 8; c++)
            counters[c] = 0;
        ptl_region_begin((uint32_t)(8 + n));
        pi_cl_team_fork(n, barrier_stress, NULL);
        ptl_region_end((uint32_t)(8 + n));
        ptl_emit_variant((uint32_t)(8 + n), barrier_errors ? 1 : 0, region++, 0);
    }

    pi_cl_team_fork(8, say_hello, NULL);
    printf("outside team: core %d, nb %d\n", pi_core_id(), pi_cl_team_nb_cores());
    void *p = malloc(1 << 20);
    printf("malloc of 1 MiB %s\n", p ? "ok" : "FAILED");
    free(p);
    ptl_emit_end();
    return 0;
}
