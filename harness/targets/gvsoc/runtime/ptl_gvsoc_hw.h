/*
 * ptl_gvsoc_hw.h: small hardware helpers of the GVSOC runtime (not part of
 * any public interface): core ids, device accesses, the event unit and the
 * PULP performance counters.
 */
#ifndef PTL_GVSOC_HW_H
#define PTL_GVSOC_HW_H

#include <stdint.h>

#include "ptl_gvsoc.h"

#define PTL_STR_(x) #x
#define PTL_STR(x) PTL_STR_(x)

/* ---- Cores -------------------------------------------------------------------------- */

static inline uint32_t ptl_hart_id(void)
{
    uint32_t id;
    __asm__ volatile("csrr %0, mhartid" : "=r"(id));
    return id;
}

static inline int ptl_is_fc(void) { return ptl_hart_id() == PTL_GVSOC_FC_HART; }

/* Cluster core id 0..7 (hart id & 31); the FC is cluster 31, core 0. */
static inline uint32_t ptl_core_id(void) { return ptl_hart_id() & 31u; }

/* ---- Devices ------------------------------------------------------------------------- */

static inline void ptl_mmio_write32(uintptr_t addr, uint32_t value)
{
    *(volatile uint32_t *)addr = value;
}

static inline uint32_t ptl_mmio_read32(uintptr_t addr) { return *(volatile uint32_t *)addr; }

static inline void ptl_mmio_write8(uintptr_t addr, uint8_t value) { *(volatile uint8_t *)addr = value; }

/* ---- Event unit (each cluster core's own view, the demux) ------------------------------
 * A core sleeps (clock-gated) on a read of a WAIT register until an event of
 * its mask arrives; the read clears the events it waited for. The mask is
 * set before every wait to exactly the event awaited, so an event meant for
 * another kind of wait can never end this one. */
#define PTL_EU_MASK (PTL_GVSOC_EU_DEMUX + 0x00)
#define PTL_EU_EVENT_WAIT_CLEAR (PTL_GVSOC_EU_DEMUX + 0x3c)
#define PTL_EU_MUTEX0 (PTL_GVSOC_EU_DEMUX + 0xc0)
#define PTL_EU_SW_EVENT(n) (PTL_GVSOC_EU_DEMUX + 0x100 + 4u * (n))
#define PTL_EU_BARRIER0 (PTL_GVSOC_EU_DEMUX + 0x200)
#define PTL_EU_BARRIER_TRIGGER_MASK (PTL_EU_BARRIER0 + 0x00)
#define PTL_EU_BARRIER_TARGET_MASK (PTL_EU_BARRIER0 + 0x0c)
#define PTL_EU_BARRIER_TRIGGER_WAIT_CLEAR (PTL_EU_BARRIER0 + 0x1c)

/* Event lines: software event 0 starts a fork, 16 is the hardware barrier, 17
 * the mutex. */
#define PTL_EU_FORK_EVENT 0
#define PTL_EU_BARRIER_EVENT 16
#define PTL_EU_MUTEX_EVENT 17

/* Sleeps until `event` arrives (it may have arrived already), and clears it. */
static inline void ptl_eu_wait(uint32_t event)
{
    ptl_mmio_write32(PTL_EU_MASK, 1u << event);
    (void)ptl_mmio_read32(PTL_EU_EVENT_WAIT_CLEAR);
}

/* ---- PULP performance counters -----------------------------------------------------
 * PCER (0xcc0) selects the events, PCMR (0xcc1) bit 0 runs them; PCCR n
 * (0x780 + n) is the counter of event n: 0 cycles, 1 instructions. */
#define PTL_PCER_CYCLES_INSTR 0x3u

static inline void ptl_perf_enable(void)
{
    __asm__ volatile("csrw 0xcc0, %0" ::"r"(PTL_PCER_CYCLES_INSTR));
    __asm__ volatile("csrw 0xcc1, %0" ::"r"(1u));
}

static inline uint32_t ptl_perf_cycles(void)
{
    uint32_t value;
    __asm__ volatile("csrr %0, 0x780" : "=r"(value));
    return value;
}

static inline uint32_t ptl_perf_instructions(void)
{
    uint32_t value;
    __asm__ volatile("csrr %0, 0x781" : "=r"(value));
    return value;
}

/* ---- Shared between the runtime's files -------------------------------------------- */

/* The loop of cluster cores 1..7: wait for a fork, run the share, join. */
void ptl_gvsoc_team_worker(uint32_t core) __attribute__((noreturn));
/* Sets up the team and its stack canaries; called by core 0 before main(). */
void ptl_gvsoc_team_init(void);
/* Flushes the calling core's buffered printf line, if any; the _end_line
 * form also ends a partial line, so a record written next starts a line. */
void ptl_gvsoc_stdout_flush(void);
void ptl_gvsoc_stdout_end_line(void);
/* Reports a misuse of the runtime (an ERROR record) and ends the run. */
void ptl_gvsoc_fatal(const char *text) __attribute__((noreturn));
/* The FC's loop after boot: watches measured regions (watchdog.c). */
void ptl_gvsoc_watch(void) __attribute__((noreturn));
/* Core 0 opens and closes a measured region for the watchdog. */
void ptl_gvsoc_watch_region(int open);
/* Per-core counters of the open measured region (team_eu.c). */
void ptl_gvsoc_counts_begin(void);
void ptl_gvsoc_counts_end(uint32_t cycles[PTL_GVSOC_CORES], uint32_t instructions[PTL_GVSOC_CORES]);
/* Bytes of the heap's used blocks in L2, headers included (heap.c). */
uint32_t ptl_gvsoc_heap_l2_bytes(void);

#endif /* PTL_GVSOC_HW_H */
