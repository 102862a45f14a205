/*
 * The virtual board's payload delivery: the QEMU runtime
 * (targets/qemu/runtime/) as a board's firmware, reachable only through its
 * NS16550 UART. This folder takes the place of the qemu target's delivery
 * (targets/qemu/runtime/loader/):
 *
 * - the payload arrives over the UART through the link (board_link.c) into
 *   the lower half of the payload window;
 * - the console fills a buffer in the upper half, which the host reads back
 *   over the link after the run;
 * - exit serves that buffer, and the host's DONE resets the machine
 *   (sifive_test "reset"): QEMU reloads the ELF, so every run starts from
 *   the flashed image, as a real board does after a reset;
 * - a region measures itself with minstret. Under -icount that is QEMU's one
 *   global instruction counter: the instructions of all harts together in
 *   the region (sleeping harts count nothing), not cycles and not the
 *   slowest hart. The board target labels it so.
 *
 * The UART side of the link is board_uart.c, the console buffer
 * board_output.c, the console board_console.c, the link's protocol
 * board_link.c.
 */
#include <stdint.h>

#include "ptl_board_link.h"
#include "ptl_platform.h"
#include "ptl_qemu_hw.h"

const uint8_t *ptl_payload(size_t *len, const char **why)
{
    (void)why;
    const uint8_t *payload =
        ptl_link_receive((uint8_t *)(uintptr_t)PTL_QEMU_PAYLOAD_ADDR, PTL_QEMU_BOARD_PAYLOAD_MAX, len);
    uint32_t crc = 0;
    if (*len >= 16) /* the payload header's body CRC: what its records echo */
        crc = (uint32_t)payload[12] | (uint32_t)payload[13] << 8 | (uint32_t)payload[14] << 16 |
              (uint32_t)payload[15] << 24;
    ptl_board_output_start(crc);
    return payload;
}

void ptl_exit(int status)
{
    ptl_qemu_stdout_end_line();
    uint32_t len, overflowed;
    const uint8_t *output = ptl_board_output_take(&len, &overflowed);
    ptl_link_serve(output, len, overflowed, status);
}

/* A crash report that trapped: reboot; the host times out on this run. */
void ptl_qemu_abort(void) { ptl_link_reset(); }

/* ---- Measured regions ------------------------------------------------------------ */

static uint64_t region_start, region_elapsed;

static uint64_t instret(void)
{
    uint32_t hi, lo, again;
    do {
        __asm__ volatile("csrr %0, minstreth" : "=r"(hi));
        __asm__ volatile("csrr %0, minstret" : "=r"(lo));
        __asm__ volatile("csrr %0, minstreth" : "=r"(again));
    } while (hi != again);
    return (uint64_t)hi << 32 | lo;
}

__attribute__((noinline)) void ptl_region_begin(uint32_t variant)
{
    (void)variant;
    __asm__ volatile("" ::: "memory");
    region_start = instret();
}

__attribute__((noinline)) void ptl_region_end(uint32_t variant)
{
    (void)variant;
    region_elapsed = instret() - region_start;
    __asm__ volatile("" ::: "memory");
}

uint64_t ptl_region_elapsed(void) { return region_elapsed; }
