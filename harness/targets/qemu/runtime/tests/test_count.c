/*
 * Ground truth for the counting plugin, on hart 0 alone: each region is
 * bracketed by minstret reads. Under -icount shift=0 minstret is QEMU's
 * global instruction clock, exact even across device accesses and wfi, and
 * only hart 0 runs here, so (minstret delta) - (plugin count) must be the
 * same constant for every region. Prints "count <region> <minstret delta>".
 *
 *   0  a plain loop
 *   1  a loop of device writes through ptl_mmio_write32 (with SPLIT)
 *   2  a loop of raw device writes without SPLIT (the plugin over-counts
 *      these; shows why the runtime needs SPLIT)
 *   3  a loop of self-IPI + ptl_ipi_wait (wfi mid-block)
 *   4  an 8-core fork with barriers (other harts run too, so minstret is
 *      not comparable; the check compares segment and per-insn plugin modes)
 */
#include <stdio.h>

#include "pmsis.h"
#include "ptl_platform.h"
#include "ptl_qemu_hw.h"

#define LOOPS 100

static inline uint32_t instret(void)
{
    uint32_t v;
    __asm__ volatile("csrr %0, minstret" : "=r"(v)::"memory");
    return v;
}

static void loop_plain(void)
{
    for (volatile int i = 0; i < LOOPS; i++)
        ;
}

static void loop_mmio_split(void)
{
    for (volatile int i = 0; i < LOOPS; i++)
        ptl_mmio_write32(PTL_QEMU_CLINT_MSIP, 0);
}

static void loop_mmio_raw(void)
{
    for (volatile int i = 0; i < LOOPS; i++)
        *(volatile uint32_t *)PTL_QEMU_CLINT_MSIP = 0;
}

static void loop_wfi(void)
{
    for (volatile int i = 0; i < LOOPS; i++) {
        ptl_ipi_send(0);
        ptl_ipi_wait();
    }
}

static void team_body(void *arg)
{
    (void)arg;
    for (int i = 0; i < 10; i++)
        pi_cl_team_barrier();
}

static void team(void) { pi_cl_team_fork(8, team_body, NULL); }

static void (*const bodies[])(void) = {loop_plain, loop_mmio_split, loop_mmio_raw, loop_wfi, team};

int main(void)
{
    ptl_platform_init(0, NULL);
    for (uint32_t r = 0; r < sizeof bodies / sizeof bodies[0]; r++) {
        void (*body)(void) = bodies[r];
        uint32_t before = instret();
        ptl_region_begin(r);
        body();
        ptl_region_end(r);
        uint32_t after = instret();
        printf("count %u %u\n", (unsigned)r, (unsigned)(after - before));
    }
    return 0;
}
