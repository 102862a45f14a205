/*
 * Two ways a broken kernel hangs the emulated cluster; the harness must be
 * able to kill either with its timeout:
 *   PTL_TEST_SPIN   hart 0 loops forever (one hart busy, the others asleep),
 *                   outside any measured region
 *   PTL_TEST_SPIN_IN_REGION   the same inside a measured region, where the
 *                   plugin's instruction budget stops it
 *   otherwise       a barrier that core 0 never reaches: cores 1..7 sleep in
 *                   it and core 0 sleeps in the join, so every hart is asleep
 */
#include <stdio.h>

#include "pmsis.h"
#include "ptl_platform.h"

#if !defined(PTL_TEST_SPIN) && !defined(PTL_TEST_SPIN_IN_REGION)
static void body(void *arg)
{
    (void)arg;
    if (pi_core_id() != 0)
        pi_cl_team_barrier();
}
#endif

int main(void)
{
    ptl_platform_init(0, NULL);
    printf("hang test starts\n");
#if defined(PTL_TEST_SPIN_IN_REGION)
    ptl_region_begin(0);
    for (volatile int i = 0;; i++)
        ;
#elif defined(PTL_TEST_SPIN)
    for (volatile int i = 0;; i++)
        ;
#else
    pi_cl_team_fork(8, body, NULL);
#endif
    printf("not reached\n");
    return 0;
}
