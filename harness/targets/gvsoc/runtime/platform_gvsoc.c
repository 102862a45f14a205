/*
 * GVSOC flavour of ptl_platform.h: the payload is a segment of the ELF at
 * PTL_GVSOC_PAYLOAD_ADDR, which the harness fills in each run's copy and
 * GVSOC's loader places; the console is each core's channel of the pulp-open
 * stdout device; exit goes through the SoC control's exit register. A
 * measured region is regions.c; a misuse of the runtime ends in fatal.c.
 */
#include <stdio.h>
#include <string.h>

#include "ptl_gvsoc_hw.h"
#include "ptl_platform.h"
#include "ptl_protocol.h"
#include "ptl_runner.h"

void ptl_platform_init(int argc, char **argv)
{
    (void)argc;
    (void)argv;
}

const uint8_t *ptl_payload(size_t *len, const char **why)
{
    return ptl_payload_in_window((const uint8_t *)(uintptr_t)PTL_GVSOC_PAYLOAD_ADDR, PTL_GVSOC_PAYLOAD_MAX,
                                 "no payload in the payload segment (expected magic PTLP at "
                                 PTL_STR(PTL_GVSOC_PAYLOAD_ADDR) ")",
                                 "payload total_len is outside 16..PTL_GVSOC_PAYLOAD_MAX", len, why);
}

/* ---- Console ------------------------------------------------------------------
 * One channel per core; GVSOC prints a channel's bytes when a line ends (or
 * after 1023 bytes). Records are longer than that, so whole lines are
 * written under the console lock: the event unit's mutex 0 (no atomics on
 * these cores), taken recursively. The FC has no event unit demux and never
 * writes while the cluster runs, except a trap report. */

static volatile uint32_t lock_owner __attribute__((section(".l1_bss"))); /* core id + 1, 0 when free */
static uint32_t lock_depth __attribute__((section(".l1_bss")));

void ptl_console_lock(void)
{
    if (ptl_is_fc())
        return;
    uint32_t me = ptl_core_id() + 1;
    if (lock_owner == me) {
        lock_depth++;
        return;
    }
    ptl_mmio_write32(PTL_EU_MASK, 1u << PTL_EU_MUTEX_EVENT);
    (void)ptl_mmio_read32(PTL_EU_MUTEX0); /* sleeps until the mutex is ours */
    lock_owner = me;
    lock_depth = 1;
}

void ptl_console_unlock(void)
{
    if (ptl_is_fc())
        return;
    if (--lock_depth == 0) {
        lock_owner = 0;
        ptl_mmio_write32(PTL_EU_MUTEX0, 0);
    }
}

static uintptr_t console_channel(void)
{
    uint32_t hart = ptl_hart_id();
    return PTL_GVSOC_STDOUT + ((hart >> 5) << 7) + ((hart & 31u) << 3);
}

void ptl_console_write(const char *text, size_t len)
{
    uintptr_t channel = console_channel();
    ptl_console_lock();
    for (size_t i = 0; i < len; i++)
        ptl_mmio_write32(channel, (uint8_t)text[i]);
    ptl_console_unlock();
}

/* picolibc's stdout: each core collects a line and writes it whole. */
#define LINE_MAX_BYTES 160

static struct {
    char bytes[LINE_MAX_BYTES];
    uint32_t len;
} line_buffer[PTL_GVSOC_CORES];

void ptl_gvsoc_stdout_flush(void)
{
    uint32_t core = ptl_core_id();
    if (!ptl_is_fc() && line_buffer[core].len) {
        ptl_console_write(line_buffer[core].bytes, line_buffer[core].len);
        line_buffer[core].len = 0;
    }
}

void ptl_gvsoc_stdout_end_line(void)
{
    uint32_t core = ptl_core_id();
    if (!ptl_is_fc() && line_buffer[core].len) {
        if (line_buffer[core].len < LINE_MAX_BYTES)
            line_buffer[core].bytes[line_buffer[core].len++] = '\n';
        ptl_gvsoc_stdout_flush();
    }
}

static int stdout_put(char c, FILE *file)
{
    (void)file;
    if (ptl_is_fc()) {
        ptl_console_write(&c, 1);
        return (unsigned char)c;
    }
    uint32_t core = ptl_core_id();
    line_buffer[core].bytes[line_buffer[core].len++] = c;
    if (c == '\n' || line_buffer[core].len == LINE_MAX_BYTES)
        ptl_gvsoc_stdout_flush();
    return (unsigned char)c;
}

static int stdout_flush(FILE *file)
{
    (void)file;
    ptl_gvsoc_stdout_flush();
    return 0;
}

static FILE console_stream = FDEV_SETUP_STREAM(stdout_put, NULL, stdout_flush, _FDEV_SETUP_WRITE);
FILE *const stdin = &console_stream;
FILE *const stdout = &console_stream;
FILE *const stderr = &console_stream;

/* ---- Exit ---------------------------------------------------------------------- */

void ptl_exit(int status)
{
    ptl_gvsoc_stdout_end_line();
    ptl_mmio_write32(PTL_GVSOC_EXIT, 0x80000000u | ((uint32_t)status & 0xffu));
    for (;;)
        __asm__ volatile("wfi");
}
