/*
 * Host flavour of the cluster team: a pool of pthreads that stands in for the
 * cores of a PULP cluster. Core 0 is the thread that calls pi_cl_team_fork();
 * cores 1..7 are pool threads that sleep on a condition variable between
 * forks.
 *
 * PTL_STAGGER_US (environment) delays the start of core c by (n-1-c) times
 * that many microseconds in a team of n: core 0 starts last. A kernel that
 * forgets a barrier then uses data that another core has not written yet,
 * reliably rather than once in a while, so a missing barrier shows up as a
 * numeric failure. Core 0 goes last because it is the core that most often
 * owns all the work of a degenerate split (M = 1 or N = 1) while the others
 * run ahead into the next phase.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "pmsis.h"

#define PTL_MAX_CORES 8

int ptl_num_cores = 1;

struct team {
    pthread_mutex_t lock;
    pthread_cond_t start;
    pthread_cond_t done;
    pthread_barrier_t barrier;
    void (*entry)(void *);
    void *arg;
    int nb_cores;
    unsigned generation; /* bumped by every fork */
    int running;         /* workers still inside entry() */
    int started;         /* pool threads created */
    unsigned stagger_us;
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

static void run_share(int core_id)
{
    tls_core_id = core_id;
    tls_in_team = 1;
    if (team.stagger_us && core_id < team.nb_cores - 1)
        usleep(team.stagger_us * (unsigned)(team.nb_cores - 1 - core_id));
    team.entry(team.arg);
    tls_in_team = 0;
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
        if (!mine)
            continue;
        run_share(core_id);
        pthread_mutex_lock(&team.lock);
        if (--team.running == 0)
            pthread_cond_signal(&team.done);
        pthread_mutex_unlock(&team.lock);
    }
    return NULL;
}

static void start_pool(void)
{
    const char *stagger = getenv("PTL_STAGGER_US");
    team.stagger_us = stagger ? (unsigned)strtoul(stagger, NULL, 10) : 0;
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

    pthread_barrier_init(&team.barrier, NULL, (unsigned)nb_cores);
    pthread_mutex_lock(&team.lock);
    team.entry = entry;
    team.arg = arg;
    team.nb_cores = nb_cores;
    team.running = nb_cores - 1;
    team.generation++;
    pthread_cond_broadcast(&team.start);
    pthread_mutex_unlock(&team.lock);

    run_share(0);

    pthread_mutex_lock(&team.lock);
    while (team.running > 0)
        pthread_cond_wait(&team.done, &team.lock);
    pthread_mutex_unlock(&team.lock);
    pthread_barrier_destroy(&team.barrier);
    tls_core_id = 0;
}

void pi_cl_team_barrier(void)
{
    if (tls_in_team && team.nb_cores > 1)
        pthread_barrier_wait(&team.barrier);
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
