/*
 * The order in which a team's cores run (a build with -DPTL_TEAM_ORDER, or
 * the machine's own without it). Every core notes its id in a log when it
 * starts a phase (after the fork, after each barrier); tests/test_qemu_runtime.py
 * reads the log, one console line per fork:
 *
 *   fork <n>: <ids of phase 0> <ids of phase 1> ...
 *
 * The log is written without atomics: in a sequenced order one core runs at
 * a time, which is what the test checks. Forks of 8, 3 and 8 cores, with
 * PHASES phases each; the third shows that random draws afresh per fork.
 */
#include <stdio.h>

#include "pmsis.h"
#include "ptl_platform.h"

#define PHASES 4

static char log_text[PHASES][9];
static int log_len[PHASES];

static void body(void *arg)
{
    (void)arg;
    for (int phase = 0; phase < PHASES; phase++) {
        if (phase > 0)
            pi_cl_team_barrier();
        log_text[phase][log_len[phase]++] = (char)('0' + pi_core_id());
    }
}

int main(void)
{
    ptl_platform_init(0, NULL);
    static const int sizes[] = {8, 3, 8};
    for (unsigned f = 0; f < sizeof sizes / sizeof sizes[0]; f++) {
        for (int phase = 0; phase < PHASES; phase++) {
            log_len[phase] = 0;
            for (int i = 0; i < 9; i++)
                log_text[phase][i] = 0;
        }
        pi_cl_team_fork(sizes[f], body, NULL);
        printf("fork %d: %s %s %s %s\n", sizes[f], log_text[0], log_text[1], log_text[2], log_text[3]);
    }
    return 0;
}
