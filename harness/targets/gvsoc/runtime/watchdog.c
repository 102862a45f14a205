/*
 * The FC's watchdog: a hang found in simulated time, not wall-clock time.
 *
 * After it starts the cluster, the FC has nothing to do, so it watches. Its
 * timer raises line PTL_GVSOC_FC_TIMER_LINE of its interrupt controller every
 * PTL_GVSOC_WATCH_PERIOD SoC cycles; the FC sleeps in wfi between two ticks
 * (wfi ends on a pending line even with interrupts disabled, so no handler
 * runs). At each tick it looks at the measured region core 0 has open: one
 * that stays open past ptl_gvsoc_cycle_budget cycles is a hang, a livelock or
 * a deadlock (every core asleep: the timer still ticks), and the FC ends the
 * run with PTL_EXIT_NO_PROGRESS after one console line that says so.
 *
 * The budget is a word of .data that the harness writes into each run's copy
 * of the ELF (harness/targets/gvsoc/), so that it follows the case's work.
 * Outside measured regions (decoding, formatting) nothing is watched.
 */
#include <stdint.h>

#include "ptl_gvsoc_hw.h"
#include "ptl_platform.h"

/* SoC cycles one measured region may take, written into each run's ELF (so
 * it must have file bytes: .data, never .bss); NO_BUDGET watches nothing. */
#define NO_BUDGET 0xffffffffu
volatile uint32_t ptl_gvsoc_cycle_budget __attribute__((section(".data"))) = NO_BUDGET;

static struct {
    volatile uint32_t open;       /* a measured region is open */
    volatile uint32_t generation; /* regions opened so far */
} watched;

/* Timer 0's registers, and the bits of its configuration. */
#define TIMER_CFG_LO (PTL_GVSOC_FC_TIMER + 0x00)
#define TIMER_CNT_LO (PTL_GVSOC_FC_TIMER + 0x08)
#define TIMER_CMP_LO (PTL_GVSOC_FC_TIMER + 0x10)
#define TIMER_ENABLE (1u << 0)
#define TIMER_RESET (1u << 1)
#define TIMER_IRQ (1u << 2)
#define TIMER_CLEAR_ON_MATCH (1u << 4)
/* The interrupt controller's registers. */
#define ITC_MASK_SET (PTL_GVSOC_FC_ITC + 0x04)
#define ITC_STATUS_CLR (PTL_GVSOC_FC_ITC + 0x14)

void ptl_gvsoc_watch_region(int open)
{
    if (open)
        watched.generation = watched.generation + 1;
    watched.open = (uint32_t)open;
}

static char *put_decimal(char *at, uint32_t value)
{
    char digits[10];
    int n = 0;
    do {
        digits[n++] = (char)('0' + value % 10u);
        value /= 10u;
    } while (value);
    while (n)
        *at++ = digits[--n];
    return at;
}

static void put_text(char **at, const char *text)
{
    while (*text)
        *(*at)++ = *text++;
}

/* One line on the FC's console channel, then the end of the run. */
static void no_progress(uint32_t generation, uint32_t cycles) __attribute__((noreturn));

static void no_progress(uint32_t generation, uint32_t cycles)
{
    char line[200], *at = line;
    put_text(&at, "\nptl-gvsoc-watchdog: measured region ");
    at = put_decimal(at, generation - 1u);
    put_text(&at, " still open after ");
    at = put_decimal(at, cycles);
    put_text(&at, " SoC cycles, past its budget of ");
    at = put_decimal(at, ptl_gvsoc_cycle_budget);
    put_text(&at, "\n");
    ptl_console_write(line, (size_t)(at - line));
    ptl_exit(PTL_EXIT_NO_PROGRESS);
}

void ptl_gvsoc_watch(void)
{
    uint32_t budget = ptl_gvsoc_cycle_budget;
    if (budget == NO_BUDGET) {
        for (;;)
            __asm__ volatile("wfi");
    }
    ptl_mmio_write32(TIMER_CMP_LO, PTL_GVSOC_WATCH_PERIOD);
    ptl_mmio_write32(TIMER_CFG_LO, TIMER_ENABLE | TIMER_RESET | TIMER_IRQ | TIMER_CLEAR_ON_MATCH);
    ptl_mmio_write32(ITC_MASK_SET, 1u << PTL_GVSOC_FC_TIMER_LINE);
    uint32_t seen = 0, ticks = 0;
    for (;;) {
        __asm__ volatile("wfi");
        ptl_mmio_write32(ITC_STATUS_CLR, 1u << PTL_GVSOC_FC_TIMER_LINE);
        uint32_t generation = watched.generation;
        if (!watched.open || generation != seen) {
            seen = generation;
            ticks = 0;
            continue;
        }
        ticks++;
        uint64_t cycles = (uint64_t)ticks * PTL_GVSOC_WATCH_PERIOD;
        if (cycles > budget)
            no_progress(generation, cycles > UINT32_MAX ? UINT32_MAX : (uint32_t)cycles);
    }
}
