/*
 * QEMU flavour of the cluster team (pmsis.h): the cores are real harts of the
 * virt machine. Hart 0 runs main() and forks; harts 1..7 sleep in wfi until a
 * fork names them. Every wait sleeps and is ended by an IPI (CLINT MSIP), so
 * a waiting hart executes (and counts) almost nothing. This file is the only
 * place that uses atomics; nothing in the library or the runner may.
 *
 *   fork:    hart 0 publishes entry/arg/nb_cores, writes each member's
 *            mailbox, IPIs it, runs core 0's share, sleeps until the last
 *            worker IPIs it back.
 *   barrier: generation barrier; the last arriver bumps the phase and IPIs
 *            the other members.
 *
 * Under -icount one thread runs the harts in turn, a hart until it sleeps, so
 * the machine's own order is a rotation: a fork's first phase in core order,
 * each later one from the hart that arrived last at the barrier, which does
 * not sleep (README, "Concurrency checks"). A build with -DPTL_TEAM_ORDER=PTL_ORDER_<X> (and -DPTL_TEAM_SEED
 * for random) runs the team in a sequenced order of ptl_team_order.h
 * instead: a baton goes from core to core, and a hart without it sleeps. The
 * default build compiles none of it, so its counts are unchanged.
 */
#include "pmsis.h"
#include "ptl_qemu_hw.h"

int ptl_num_cores = 1;

/* Harts present on the machine and harts up, counted by boot.c; both are
 * written by harts that may run before hart 0 clears .bss. */
uint32_t ptl_qemu_harts_present __attribute__((section(".data"))) = PTL_QEMU_MAX_HARTS;
volatile uint32_t ptl_qemu_harts_online __attribute__((section(".data"))) = 0;

/* Shared with harts that start before hart 0 clears .bss: keep it in .data. */
static struct team {
    void (*entry)(void *);
    void *arg;
    int nb_cores;
    uint32_t generation;                    /* forks so far */
    volatile uint32_t start[PTL_QEMU_MAX_HARTS]; /* fork generation each hart must join */
    volatile uint32_t running;              /* workers still inside entry() */
    volatile uint32_t arrived;              /* cores at the current barrier */
    volatile uint32_t phase;                /* barriers completed */
    volatile uint8_t in_team[PTL_QEMU_MAX_HARTS];
} team __attribute__((section(".data")));

int pi_core_id(void) { return (int)ptl_hart_id(); }

int pi_cl_team_nb_cores(void) { return team.in_team[ptl_hart_id()] ? team.nb_cores : 1; }

#ifdef PTL_TEAM_ORDER
#include "ptl_team_order.h"
#ifndef PTL_TEAM_SEED
#define PTL_TEAM_SEED 0
#endif

/* The sequenced team; only the baton holder changes it. */
static struct {
    volatile int baton;                     /* the hart that may run; -1: none */
    int order[PTL_QEMU_MAX_HARTS];          /* the phase's cores, in turn */
    int pos;                                /* the baton holder's index in order[] */
    unsigned phase;                         /* barriers opened in this fork */
    int returned;                           /* cores that returned from entry() */
    uint64_t random_state;
} seq __attribute__((section(".data"))) = {.baton = -1, .random_state = PTL_TEAM_SEED};

static void give_baton(int hart)
{
    __atomic_store_n(&seq.baton, hart, __ATOMIC_RELEASE);
    if (hart >= 0 && (uint32_t)hart != ptl_hart_id())
        ptl_ipi_send((uint32_t)hart);
}

static void start_phase(void)
{
    ptl_team_make_order(PTL_TEAM_ORDER, team.nb_cores, seq.phase, &seq.random_state, seq.order);
    seq.pos = 0;
    give_baton(seq.order[0]);
}

static void wait_for_baton(uint32_t hart)
{
    while (__atomic_load_n(&seq.baton, __ATOMIC_ACQUIRE) != (int)hart)
        ptl_ipi_wait();
}

/* The holder reached a barrier or returned: the next core of the phase runs,
 * or the phase ends. Cores that wait at a barrier that others returned
 * without reaching keep waiting: every hart sleeps, and QEMU's warning ends
 * the run as a deadlock, as a cluster would hang. */
static void pass_baton(void)
{
    if (++seq.pos < team.nb_cores) {
        give_baton(seq.order[seq.pos]);
    } else if (seq.returned > 0) {   /* the fork's end, or a deadlock */
        give_baton(-1);
    } else {                          /* every core at the barrier */
        seq.phase++;
        start_phase();
    }
}
#endif

static void run_share(uint32_t hart)
{
    team.in_team[hart] = 1;
#ifdef PTL_TEAM_ORDER
    wait_for_baton(hart);
    team.entry(team.arg);
    seq.returned++;
    pass_baton();
#else
    team.entry(team.arg);
#endif
    team.in_team[hart] = 0;
}

void ptl_qemu_team_worker(uint32_t hart)
{
    uint32_t seen = 0;
    for (;;) {
        uint32_t generation;
        while ((generation = __atomic_load_n(&team.start[hart], __ATOMIC_ACQUIRE)) == seen)
            ptl_ipi_wait();
        seen = generation;
        run_share(hart);
        if (__atomic_sub_fetch(&team.running, 1, __ATOMIC_ACQ_REL) == 0)
            ptl_ipi_send(0);
    }
}

void pi_cl_team_fork(int nb_cores, void (*entry)(void *), void *arg)
{
    if (nb_cores <= 0)
        nb_cores = ptl_num_cores;
    if (ptl_hart_id() != 0 || team.in_team[0])
        ptl_qemu_fatal("pi_cl_team_fork: nested fork, or a fork from a worker core; "
                       "a PULP cluster supports neither");
    if (nb_cores > PTL_QEMU_MAX_HARTS || (uint32_t)nb_cores > ptl_qemu_harts_present)
        ptl_qemu_fatal("pi_cl_team_fork: more cores than harts; run QEMU with -smp 8");

    team.entry = entry;
    team.arg = arg;
    team.nb_cores = nb_cores;
    team.arrived = 0;
#ifdef PTL_TEAM_ORDER
    seq.phase = 0;
    seq.returned = 0;
    start_phase();
#endif
    __atomic_store_n(&team.running, (uint32_t)nb_cores - 1, __ATOMIC_RELEASE);
    uint32_t generation = ++team.generation;
    for (int hart = 1; hart < nb_cores; hart++) {
        __atomic_store_n(&team.start[hart], generation, __ATOMIC_RELEASE);
        ptl_ipi_send((uint32_t)hart);
    }

    run_share(0);

    while (__atomic_load_n(&team.running, __ATOMIC_ACQUIRE) != 0)
        ptl_ipi_wait();
}

void pi_cl_team_barrier(void)
{
    uint32_t hart = ptl_hart_id();
    if (!team.in_team[hart] || team.nb_cores <= 1)
        return;
#ifdef PTL_TEAM_ORDER
    pass_baton();
    wait_for_baton(hart);
#else
    uint32_t phase = __atomic_load_n(&team.phase, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&team.arrived, 1, __ATOMIC_ACQ_REL) == (uint32_t)team.nb_cores) {
        /* Nobody can arrive at the next barrier before seeing the new phase,
         * so resetting the count first is safe. */
        __atomic_store_n(&team.arrived, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&team.phase, phase + 1, __ATOMIC_RELEASE);
        for (uint32_t other = 0; other < (uint32_t)team.nb_cores; other++)
            if (other != hart)
                ptl_ipi_send(other);
    } else {
        while (__atomic_load_n(&team.phase, __ATOMIC_ACQUIRE) == phase)
            ptl_ipi_wait();
    }
#endif
}

/* ---- Performance counters ----------------------------------------------------------
 * mcycle and minstret. Under -icount both read QEMU's one global virtual
 * clock (shift=0: one tick per instruction of any hart), not a per-hart count;
 * without -icount they follow host time. Per-hart instruction counts come
 * from the counting plugin instead; these exist so library code that calls
 * pi_perf_* builds and runs. */

#define CSR_READ64(lo, hi)                                                                     \
    ({                                                                                         \
        uint32_t h0, l, h1;                                                                    \
        do {                                                                                   \
            __asm__ volatile("csrr %0, " #hi : "=r"(h0));                                      \
            __asm__ volatile("csrr %0, " #lo : "=r"(l));                                       \
            __asm__ volatile("csrr %0, " #hi : "=r"(h1));                                      \
        } while (h0 != h1);                                                                    \
        (uint64_t)h1 << 32 | l;                                                                \
    })

static struct {
    uint64_t start_cycles, start_instr;
    uint64_t cycles, instr;
    int running;
} perf[PTL_QEMU_MAX_HARTS];

void pi_perf_conf(unsigned events) { (void)events; }

void pi_perf_reset(void)
{
    uint32_t hart = ptl_hart_id();
    perf[hart].cycles = perf[hart].instr = 0;
    perf[hart].start_cycles = CSR_READ64(mcycle, mcycleh);
    perf[hart].start_instr = CSR_READ64(minstret, minstreth);
}

void pi_perf_start(void)
{
    uint32_t hart = ptl_hart_id();
    perf[hart].start_cycles = CSR_READ64(mcycle, mcycleh);
    perf[hart].start_instr = CSR_READ64(minstret, minstreth);
    perf[hart].running = 1;
}

void pi_perf_stop(void)
{
    uint32_t hart = ptl_hart_id();
    if (perf[hart].running) {
        perf[hart].cycles += CSR_READ64(mcycle, mcycleh) - perf[hart].start_cycles;
        perf[hart].instr += CSR_READ64(minstret, minstreth) - perf[hart].start_instr;
    }
    perf[hart].running = 0;
}

unsigned int pi_perf_read(int event)
{
    uint32_t hart = ptl_hart_id();
    uint64_t cycles = perf[hart].cycles, instr = perf[hart].instr;
    if (perf[hart].running) {
        cycles += CSR_READ64(mcycle, mcycleh) - perf[hart].start_cycles;
        instr += CSR_READ64(minstret, minstreth) - perf[hart].start_instr;
    }
    return (unsigned int)(event == PI_PERF_INSTR ? instr : cycles);
}
