/*
 * GVSOC flavour of the cluster team (pmsis.h), on the pulp-open event unit:
 * no atomics anywhere (these cores have no A extension).
 *
 *   fork:    core 0 publishes entry/arg/nb_cores and a new generation in L1,
 *            sets hardware barrier 0 to the team, and sends software event 0
 *            to the other members, which sleep until it arrives; all run
 *            their share and meet at the barrier (the join).
 *   barrier: hardware barrier 0; every member sleeps until the last arrives.
 *
 * Counters: every core counts cycles and instructions from boot (start.S).
 * Core 0's part of a measured region is its own counter from begin to end.
 * A worker sleeps outside its shares, so its part is the sum, over the forks
 * inside the region, of its counters across each share, taken before the
 * join barrier so that core 0 sees them when the join releases it.
 */
#include "pmsis.h"
#include "ptl_gvsoc_hw.h"

int ptl_num_cores = 1;

static struct team {
    void (*entry)(void *);
    void *arg;
    int nb_cores;
    uint32_t barrier_mask;        /* cores of barrier 0, as configured */
    volatile uint32_t generation; /* forks so far */
    volatile uint8_t in_team[PTL_GVSOC_CORES];
    volatile uint32_t measuring;  /* a measured region is open */
    volatile uint32_t cycles[PTL_GVSOC_CORES], instructions[PTL_GVSOC_CORES];
} team __attribute__((section(".l1_bss")));

/* The lowest word of each cluster stack, checked after every fork. */
#define STACK_CANARY 0x5354434bu /* "STCK" */
extern uint32_t __stacks_bottom[], __stacks_end[];

static volatile uint32_t *stack_canary(uint32_t core)
{
    if (core == 0)
        return __stacks_end;
    return (volatile uint32_t *)((uintptr_t)__stacks_bottom + (PTL_GVSOC_CORES - 1 - core) * PTL_GVSOC_STACK_SIZE);
}

void ptl_gvsoc_team_init(void)
{
    for (uint32_t core = 0; core < PTL_GVSOC_CORES; core++)
        *stack_canary(core) = STACK_CANARY;
}

static void check_stacks(void)
{
    for (uint32_t core = 0; core < PTL_GVSOC_CORES; core++)
        if (*stack_canary(core) != STACK_CANARY)
            ptl_gvsoc_fatal("a cluster core overflowed its stack (PTL_GVSOC_STACK_SIZE in "
                            "targets/gvsoc/runtime/ptl_gvsoc.h)");
}

int pi_core_id(void) { return (int)ptl_core_id(); }

int pi_cl_team_nb_cores(void) { return team.in_team[ptl_core_id()] ? team.nb_cores : 1; }

static void hw_barrier(void) { (void)ptl_mmio_read32(PTL_EU_BARRIER_TRIGGER_WAIT_CLEAR); }

static void barrier_wait(void)
{
    ptl_mmio_write32(PTL_EU_MASK, 1u << PTL_EU_BARRIER_EVENT);
    hw_barrier();
}

void ptl_gvsoc_team_worker(uint32_t core)
{
    uint32_t seen = 0;
    for (;;) {
        while (team.generation == seen)
            ptl_eu_wait(PTL_EU_FORK_EVENT);
        seen = team.generation;
        uint32_t measuring = team.measuring;
        uint32_t cycles = ptl_perf_cycles(), instructions = ptl_perf_instructions();
        team.in_team[core] = 1;
        team.entry(team.arg);
        team.in_team[core] = 0;
        if (measuring) {
            team.cycles[core] += ptl_perf_cycles() - cycles;
            team.instructions[core] += ptl_perf_instructions() - instructions;
        }
        barrier_wait();
    }
}

void pi_cl_team_fork(int nb_cores, void (*entry)(void *), void *arg)
{
    if (nb_cores <= 0)
        nb_cores = ptl_num_cores;
    if (ptl_core_id() != 0 || ptl_is_fc() || team.in_team[0])
        ptl_gvsoc_fatal("pi_cl_team_fork: nested fork, or a fork from a worker core; "
                        "a PULP cluster supports neither");
    if (nb_cores > PTL_GVSOC_CORES)
        ptl_gvsoc_fatal("pi_cl_team_fork: more cores than the cluster has (8)");

    team.entry = entry;
    team.arg = arg;
    team.nb_cores = nb_cores;
    uint32_t mask = (1u << nb_cores) - 1u;
    if (mask != team.barrier_mask) {
        /* Trigger mask first: with status 0 and a non-zero mask, neither
         * write can complete the barrier by itself. */
        ptl_mmio_write32(PTL_EU_BARRIER_TRIGGER_MASK, mask);
        ptl_mmio_write32(PTL_EU_BARRIER_TARGET_MASK, mask);
        team.barrier_mask = mask;
    }
    team.generation = team.generation + 1;
    if (nb_cores > 1)
        ptl_mmio_write32(PTL_EU_SW_EVENT(PTL_EU_FORK_EVENT), mask & ~1u);

    team.in_team[0] = 1;
    entry(arg);
    team.in_team[0] = 0;
    if (nb_cores > 1)
        barrier_wait();
    check_stacks();
}

void pi_cl_team_barrier(void)
{
    uint32_t core = ptl_core_id();
    if (!team.in_team[core] || team.nb_cores <= 1)
        return;
    barrier_wait();
}

/* ---- Measured regions ---------------------------------------------------------- */

static uint32_t begin_cycles, begin_instructions;

void ptl_gvsoc_counts_begin(void)
{
    /* Every region starts from the same instruction cache: empty, and its
     * pseudo-random replacement at the start of its sequence (the LFSR
     * restart is scripts/gvsoc/cache-flush.patch). Without it, a variant's
     * cycles depended on every earlier access, up to 24% at 8 cores. */
    ptl_mmio_write32(PTL_GVSOC_ICACHE_FLUSH, 1u);
    for (uint32_t core = 1; core < PTL_GVSOC_CORES; core++)
        team.cycles[core] = team.instructions[core] = 0;
    team.measuring = 1;
    begin_cycles = ptl_perf_cycles();
    begin_instructions = ptl_perf_instructions();
}

void ptl_gvsoc_counts_end(uint32_t cycles[PTL_GVSOC_CORES], uint32_t instructions[PTL_GVSOC_CORES])
{
    cycles[0] = ptl_perf_cycles() - begin_cycles;
    instructions[0] = ptl_perf_instructions() - begin_instructions;
    team.measuring = 0;
    for (uint32_t core = 1; core < PTL_GVSOC_CORES; core++) {
        cycles[core] = team.cycles[core];
        instructions[core] = team.instructions[core];
    }
}

/* ---- Performance counters for library code (pmsis.h) ---------------------------------
 * The calling core's own PULP counters, accumulated between start and stop. */

static struct {
    uint32_t start_cycles, start_instr;
    uint32_t cycles, instr;
    int running;
} perf[PTL_GVSOC_CORES] __attribute__((section(".l1_bss")));

void pi_perf_conf(unsigned events) { (void)events; }

void pi_perf_reset(void)
{
    uint32_t core = ptl_core_id();
    perf[core].cycles = perf[core].instr = 0;
    perf[core].start_cycles = ptl_perf_cycles();
    perf[core].start_instr = ptl_perf_instructions();
}

void pi_perf_start(void)
{
    uint32_t core = ptl_core_id();
    perf[core].start_cycles = ptl_perf_cycles();
    perf[core].start_instr = ptl_perf_instructions();
    perf[core].running = 1;
}

void pi_perf_stop(void)
{
    uint32_t core = ptl_core_id();
    if (perf[core].running) {
        perf[core].cycles += ptl_perf_cycles() - perf[core].start_cycles;
        perf[core].instr += ptl_perf_instructions() - perf[core].start_instr;
    }
    perf[core].running = 0;
}

unsigned int pi_perf_read(int event)
{
    uint32_t core = ptl_core_id();
    uint32_t cycles = perf[core].cycles, instr = perf[core].instr;
    if (perf[core].running) {
        cycles += ptl_perf_cycles() - perf[core].start_cycles;
        instr += ptl_perf_instructions() - perf[core].start_instr;
    }
    return event == PI_PERF_INSTR ? instr : cycles;
}
