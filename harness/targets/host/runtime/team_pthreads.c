/*
 * Host flavour of the cluster team: a pool of pthreads that stands in for the
 * cores of a PULP cluster. Core 0 is the thread that calls pi_cl_team_fork();
 * cores 1..7 are pool threads that sleep on a condition variable between
 * forks.
 *
 * PTL_TEAM_ORDER (environment; the host target sets it) chooses how the cores
 * of a team run:
 *
 *   free     (default) all cores run at once, as real threads, released
 *            together at the fork and at each barrier. Sanitizers,
 *            ThreadSanitizer above all, need this real concurrency.
 *   forward  sequenced: ONE core runs at a time, each until it reaches
 *   reverse  pi_cl_team_barrier() or returns, then it hands a baton to the
 *   rotate   next core of the phase's order (ptl_team_order.h says which
 *   random:S order each word means). When every core has arrived at the
 *            barrier, the next phase runs.
 *
 * A sequenced run is deterministic: a kernel that forgets a barrier and reads
 * what another core writes reads, every time, the value from before that
 * core's phase (the runner fills fresh buffers with a NaN sentinel), instead
 * of whatever the scheduler happened to allow.
 *
 * In both modes every core of a team must call pi_cl_team_barrier() the same
 * number of times. If some cores wait at a barrier that the others have
 * returned without reaching, a PULP cluster would hang; here the team says
 * which cores wait and which returned, and the runner exits with
 * PTL_EXIT_DEADLOCK (the host target reports the run as a deadlock).
 *
 * The team calls exist in pmsis.h: pi_core_id, pi_cl_team_nb_cores,
 * pi_cl_team_fork, pi_cl_team_barrier (no critical sections: a sequenced team
 * runs one core at a time anyway).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pmsis.h"
#include "ptl_platform.h"
#include "ptl_team_order.h"

#define PTL_MAX_CORES 8

int ptl_num_cores = 1;

/* PTL_TEAM_ORDER's words, by enum ptl_team_order (ptl_team_order.h). */
static const char *const order_names[] = {"free", "forward", "reverse", "rotate", "random"};

enum core_state { CORE_RUNNING, CORE_AT_BARRIER, CORE_RETURNED };

struct team {
    pthread_mutex_t lock;
    pthread_cond_t start;    /* pool threads: a fork began */
    pthread_cond_t done;     /* fork caller: every core returned */
    pthread_cond_t turn[PTL_MAX_CORES]; /* sequenced mode: core c holds the baton */
    /* Free mode's two waits, on futexes so that no core leaves them through
     * the lock (see free_mode_wait). */
    atomic_uint gate;        /* cores of the current fork at the start gate */
    atomic_uint opened;      /* barriers opened, ever */
    void (*entry)(void *);
    void *arg;
    int nb_cores;
    unsigned generation;     /* bumped by every fork */
    int started;             /* pool threads created */
    enum ptl_team_order order_kind;
    /* Barrier bookkeeping of the current fork, both modes. */
    int arrived;             /* cores waiting at the current barrier */
    int returned;            /* cores that returned from entry() */
    unsigned phase;          /* barriers completed in this fork */
    unsigned char state[PTL_MAX_CORES];
    /* Sequenced mode: the phase's order and who holds the baton. */
    int order[PTL_MAX_CORES];
    int pos;                 /* index in order[] of the baton holder */
    int baton;               /* core allowed to run, -1 for none */
    uint64_t random_state;   /* random:S: the order generator, seeded once from S */
    unsigned long long random_seed;
};

static struct team team = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .start = PTHREAD_COND_INITIALIZER,
    .done = PTHREAD_COND_INITIALIZER,
};

static __thread int tls_core_id;
static __thread int tls_in_team;

int pi_core_id(void) { return tls_core_id; }

int pi_cl_team_nb_cores(void) { return tls_in_team ? team.nb_cores : 1; }

static enum ptl_team_order read_order(void)
{
    const char *name = getenv("PTL_TEAM_ORDER");
    if (!name || !*name)
        return PTL_ORDER_FREE;
    for (unsigned k = 0; k < PTL_ORDER_RANDOM; k++)
        if (strcmp(name, order_names[k]) == 0)
            return (enum ptl_team_order)k;
    if (strncmp(name, "random:", 7) == 0 && name[7] >= '0' && name[7] <= '9') {
        char *end;
        team.random_seed = strtoull(name + 7, &end, 10);
        if (!*end) {
            team.random_state = team.random_seed;
            return PTL_ORDER_RANDOM;
        }
    }
    fprintf(stderr, "ptl: PTL_TEAM_ORDER=%s is not a team order; use free, forward, reverse, rotate or "
                    "random:SEED\n", name);
    exit(3);
}

static void list_cores(char *text, size_t size, enum core_state state)
{
    size_t used = 0;
    text[0] = 0;
    for (int c = 0; c < team.nb_cores && used < size; c++)
        if (team.state[c] == state)
            used += (size_t)snprintf(text + used, size - used, " %d", c);
}

/* Called with the lock held when every core has either arrived at the
 * current barrier or returned, and both kinds exist. */
static void deadlock(void)
{
    char waiting[64], gone[64];
    list_cores(waiting, sizeof waiting, CORE_AT_BARRIER);
    list_cores(gone, sizeof gone, CORE_RETURNED);
    char seed_text[32] = "";
    if (team.order_kind == PTL_ORDER_RANDOM)
        snprintf(seed_text, sizeof seed_text, ":%llu", team.random_seed);
    fflush(stdout);
    fprintf(stderr,
            "ptl: deadlock in a team of %d cores (PTL_TEAM_ORDER=%s%s): core(s)%s wait at barrier %u of the "
            "fork, core(s)%s returned without reaching it\n"
            "ptl: every core must call pi_cl_team_barrier() equally often; a PULP cluster would hang here\n",
            team.nb_cores, order_names[team.order_kind], seed_text, waiting, team.phase + 1, gone);
    fflush(stderr);
    exit(PTL_EXIT_DEADLOCK);
}

/* ---- Sequenced mode (lock held throughout) -------------------------------- */

static void make_order(void)
{
    ptl_team_make_order(team.order_kind, team.nb_cores, team.phase, &team.random_state, team.order);
    team.pos = 0;
    team.baton = team.order[0];
}

static void give_baton_to(int core)
{
    team.baton = core;
    pthread_cond_signal(&team.turn[core]);
}

/* The baton holder has reached a barrier or returned: the next core of the
 * phase runs, or the phase ends. */
static void pass_baton(void)
{
    if (++team.pos < team.nb_cores) {
        give_baton_to(team.order[team.pos]);
        return;
    }
    if (team.returned == team.nb_cores) {
        team.baton = -1;
        pthread_cond_signal(&team.done);
        return;
    }
    if (team.returned > 0)
        deadlock();
    /* Everyone is at the barrier: open it, next phase. */
    team.phase++;
    team.arrived = 0;
    memset(team.state, CORE_RUNNING, sizeof team.state);
    make_order();
    give_baton_to(team.baton);
}

static void wait_for_baton(int core)
{
    while (team.baton != core)
        pthread_cond_wait(&team.turn[core], &team.lock);
}

/* ---- Free mode's waits -----------------------------------------------------
 *
 * ThreadSanitizer reports two accesses as a race only when no synchronisation
 * orders them. The team's lock would order them by accident: a core that
 * finished its share and took the lock to say so, before a slower core took
 * the same lock on its way in (to see the fork, or out of a barrier), makes
 * the first core's writes "happen before" the second core's. On a loaded
 * 2-CPU machine that is the common interleaving, and a race between cores
 * went unreported. So in free mode every core of a fork passes a start gate
 * that opens only when all have arrived, and a barrier releases its waiters
 * through an atomic word: the only synchronisation between two cores' work is
 * the one a PULP cluster has, the fork and the barriers.
 */

static void futex_wait(atomic_uint *word, unsigned seen)
{
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
}

static void futex_wake_all(atomic_uint *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Waits, holding no lock, until *word is no longer `seen`. */
static void free_mode_wait(atomic_uint *word, unsigned seen)
{
    unsigned now;
    while ((now = atomic_load_explicit(word, memory_order_acquire)) == seen)
        futex_wait(word, now);
}

static void start_gate(void)
{
    const unsigned all = (unsigned)team.nb_cores;
    unsigned here = atomic_fetch_add_explicit(&team.gate, 1, memory_order_acq_rel) + 1;
    if (here == all) {
        futex_wake_all(&team.gate);
        return;
    }
    while (here < all) {
        free_mode_wait(&team.gate, here);
        here = atomic_load_explicit(&team.gate, memory_order_acquire);
    }
}

/* ---- Both modes ------------------------------------------------------------ */

static void run_share(int core_id)
{
    tls_core_id = core_id;
    tls_in_team = 1;
    if (team.order_kind != PTL_ORDER_FREE) {
        pthread_mutex_lock(&team.lock);
        wait_for_baton(core_id);
        pthread_mutex_unlock(&team.lock);
    } else {
        start_gate();
    }
    team.entry(team.arg);
    tls_in_team = 0;

    pthread_mutex_lock(&team.lock);
    team.state[core_id] = CORE_RETURNED;
    team.returned++;
    if (team.order_kind != PTL_ORDER_FREE) {
        pass_baton();
    } else {
        if (team.arrived > 0 && team.arrived + team.returned == team.nb_cores)
            deadlock();
        if (team.returned == team.nb_cores)
            pthread_cond_signal(&team.done);
    }
    pthread_mutex_unlock(&team.lock);
}

static void *pool_thread(void *raw_id)
{
    int core_id = (int)(intptr_t)raw_id;
    unsigned seen = 0;
    for (;;) {
        pthread_mutex_lock(&team.lock);
        while (team.generation == seen)
            pthread_cond_wait(&team.start, &team.lock);
        seen = team.generation;
        int mine = core_id < team.nb_cores;
        pthread_mutex_unlock(&team.lock);
        if (mine)
            run_share(core_id);
    }
    return NULL;
}

static void start_pool(void)
{
    team.order_kind = read_order();
    for (int c = 0; c < PTL_MAX_CORES; c++)
        pthread_cond_init(&team.turn[c], NULL);
    for (int c = 1; c < PTL_MAX_CORES; c++) {
        pthread_t tid;
        if (pthread_create(&tid, NULL, pool_thread, (void *)(intptr_t)c) != 0) {
            fprintf(stderr, "ptl: cannot start core thread %d\n", c);
            exit(3);
        }
        pthread_detach(tid);
    }
    team.started = 1;
}

void pi_cl_team_fork(int nb_cores, void (*entry)(void *), void *arg)
{
    if (nb_cores <= 0)
        nb_cores = ptl_num_cores;
    if (nb_cores > PTL_MAX_CORES) {
        fprintf(stderr, "ptl: pi_cl_team_fork asked for %d cores, the cluster has %d\n",
                nb_cores, PTL_MAX_CORES);
        exit(3);
    }
    if (tls_in_team) {
        fprintf(stderr, "ptl: nested pi_cl_team_fork is not supported by a PULP cluster\n");
        exit(3);
    }
    if (!team.started)
        start_pool();

    pthread_mutex_lock(&team.lock);
    team.entry = entry;
    team.arg = arg;
    team.nb_cores = nb_cores;
    team.arrived = 0;
    team.returned = 0;
    team.phase = 0;
    memset(team.state, CORE_RUNNING, sizeof team.state);
    if (team.order_kind != PTL_ORDER_FREE)
        make_order();
    atomic_store_explicit(&team.gate, 0, memory_order_relaxed); /* published by the lock */
    team.generation++;
    pthread_cond_broadcast(&team.start);
    pthread_mutex_unlock(&team.lock);

    run_share(0);

    pthread_mutex_lock(&team.lock);
    while (team.returned < team.nb_cores)
        pthread_cond_wait(&team.done, &team.lock);
    pthread_mutex_unlock(&team.lock);
    tls_core_id = 0;
}

void pi_cl_team_barrier(void)
{
    if (!tls_in_team || team.nb_cores == 1)
        return;
    const int me = tls_core_id;
    pthread_mutex_lock(&team.lock);
    team.state[me] = CORE_AT_BARRIER;
    team.arrived++;
    if (team.order_kind != PTL_ORDER_FREE) {
        pass_baton();
        wait_for_baton(me);
    } else if (team.arrived + team.returned < team.nb_cores) {
        const unsigned opened = atomic_load_explicit(&team.opened, memory_order_relaxed);
        pthread_mutex_unlock(&team.lock);
        free_mode_wait(&team.opened, opened);
        return;
    } else {
        if (team.returned > 0)
            deadlock();
        team.phase++;
        team.arrived = 0;
        memset(team.state, CORE_RUNNING, sizeof team.state);
        atomic_fetch_add_explicit(&team.opened, 1, memory_order_release);
        futex_wake_all(&team.opened);
    }
    pthread_mutex_unlock(&team.lock);
}

/* ---- Performance counters: wall-clock nanoseconds per core ---------------- */

static __thread uint64_t perf_start_ns, perf_total_ns;
static __thread int perf_running;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void pi_perf_conf(unsigned events) { (void)events; }
void pi_perf_reset(void) { perf_total_ns = 0; perf_start_ns = now_ns(); }
void pi_perf_start(void) { perf_start_ns = now_ns(); perf_running = 1; }

void pi_perf_stop(void)
{
    if (perf_running)
        perf_total_ns += now_ns() - perf_start_ns;
    perf_running = 0;
}

unsigned int pi_perf_read(int event)
{
    if (event == PI_PERF_INSTR)
        return 0;
    uint64_t total = perf_total_ns;
    if (perf_running)
        total += now_ns() - perf_start_ns;
    return (unsigned int)total;
}
