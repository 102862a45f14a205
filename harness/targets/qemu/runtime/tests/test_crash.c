/*
 * With -DPTL_TEST_EMIT_RACE, hart 0 emits records while hart 3 traps: every
 * record and the CRASH record must arrive whole and in sequence.
 *
 * With -DPTL_TEST_SPINNING_HART, hart 1 spins without end while hart 3
 * traps: the CRASH record and the exit must not wait for the run's timeout.
 *
 * With -DPTL_TEST_STACK_OVERFLOW, hart 3 instead recurses without end: the
 * PMP guard under its stack must turn that into a CRASH record with cause 7
 * (store access fault) and tval inside the guard.
 *
 * A trap on hart 3 inside an 8-core fork must become one CRASH record
 * (hart 3, cause 2 = illegal instruction, epc = the faulting instruction)
 * and exit status 12 (PTL_EXIT_TRAP), while the other harts keep printing
 * (whole lines: the CRASH line must not be split). Prints "crash-pc <hex>"
 * first, so the check knows the epc.
 */
#include <stdio.h>

#include "pmsis.h"
#include "ptl_platform.h"
#include "ptl_protocol.h"

extern const char ptl_test_illegal[];

#pragma GCC diagnostic ignored "-Winfinite-recursion"
__attribute__((noinline)) static int recurse(volatile int depth)
{
    volatile char frame[64];
    frame[0] = (char)depth;
    return recurse(depth + 1) + frame[0];
}

static void body(void *arg)
{
    (void)arg;
    int id = pi_core_id();
    for (int i = 0; i < 3; i++) {
        printf("core %d step %d\n", id, i);
        pi_cl_team_barrier();
    }
#ifdef PTL_TEST_EMIT_RACE
    if (id == 0) /* records until hart 3's trap ends the run: neither may garble the other */
        for (;;)
            ptl_emit_error(0, 1, "hart 0 keeps emitting records");
#endif
#ifdef PTL_TEST_STACK_OVERFLOW
    if (id == 3)
        recurse(0);
#endif
#ifdef PTL_TEST_SPINNING_HART
    if (id == 1) /* busy forever, never sleeping: hart 3's crash must still end the run at once */
        for (volatile uint32_t spin = 0;; spin++)
            ;
#endif
    if (id == 3)
        __asm__ volatile(".option push\n.option norvc\n"
                         ".globl ptl_test_illegal\n"
                         "ptl_test_illegal: unimp\n"
                         ".option pop\n");
    /* The others print a little more and wait at a barrier that hart 3
     * never reaches: they sleep, so hart 3 runs and reports. */
    for (int i = 0; i < 5; i++)
        printf("core %d keeps printing\n", id);
    pi_cl_team_barrier();
}

int main(void)
{
    ptl_platform_init(0, NULL);
    printf("crash-pc %08x\n", (unsigned)(uintptr_t)ptl_test_illegal);
    ptl_emit_begin(0, 1);
    pi_cl_team_fork(8, body, NULL);
    ptl_emit_end();
    return 0;
}
