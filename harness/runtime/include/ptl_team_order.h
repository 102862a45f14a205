/*
 * ptl_team_order.h: the sequenced team orders (PTL_TEAM_ORDER), shared by
 * the targets whose team can run one core at a time: the host's pthreads
 * team (read from the environment) and the QEMU harts (compiled in).
 *
 * A fork's phases are bounded by the fork, each pi_cl_team_barrier() and
 * the return; phase 0 runs from the fork to the first barrier. In a
 * sequenced order the cores of a phase run one after another, each until
 * it reaches the barrier or returns:
 *
 *   forward  0, 1, ..., n-1 in every phase;
 *   reverse  n-1, ..., 1, 0 in every phase;
 *   rotate   phase p starts at core p mod n: p, p+1, ..., p-1;
 *   random   a permutation drawn afresh for every phase of every fork from
 *            one generator seeded once with S (random:S), so two runs with
 *            the same seed run the same orders.
 *
 * The names, as the user spells them, are harness/team_order.py's.
 */
#ifndef PTL_TEAM_ORDER_H
#define PTL_TEAM_ORDER_H

#include <stdint.h>

enum ptl_team_order { PTL_ORDER_FREE, PTL_ORDER_FORWARD, PTL_ORDER_REVERSE, PTL_ORDER_ROTATE, PTL_ORDER_RANDOM };

/* splitmix64: the next number of random:S's generator. */
static inline uint64_t ptl_team_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* order[0..n-1]: the cores of `phase` of a fork of n cores, in the order
 * they run. random_state is random:S's generator (unused by the others). */
static inline void ptl_team_make_order(enum ptl_team_order kind, int n, unsigned phase, uint64_t *random_state,
                                       int *order)
{
    for (int i = 0; i < n; i++) {
        switch (kind) {
        case PTL_ORDER_REVERSE: order[i] = n - 1 - i; break;
        case PTL_ORDER_ROTATE: order[i] = (int)((phase + (unsigned)i) % (unsigned)n); break;
        default: order[i] = i; break;
        }
    }
    if (kind == PTL_ORDER_RANDOM) /* Fisher-Yates */
        for (int i = n - 1; i > 0; i--) {
            const int j = (int)(ptl_team_random(random_state) % (uint64_t)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
}

#endif
