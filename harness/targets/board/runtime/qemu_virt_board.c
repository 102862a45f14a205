/*
 * The virtual board: the QEMU runtime (targets/qemu/runtime/) as a board's firmware,
 * reachable only through its NS16550 UART. Built with -DPTL_SERIAL_BOARD,
 * which takes platform_qemu.c's payload, exit and region functions out in
 * favour of these:
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
 * Waiting for a byte sleeps in wfi on the UART's receive interrupt through
 * the PLIC, so an idle board costs its host no CPU.
 */
#ifdef PTL_SERIAL_BOARD

#include <stdint.h>
#include <string.h>

#include "ptl_board_link.h"
#include "ptl_platform.h"
#include "ptl_qemu_hw.h"

#define UART_RBR 0
#define UART_IER 1
#define UART_LSR 5
#define UART_LSR_DR 0x01
#define UART_LSR_TEMT 0x40
#define UART_IER_RDI 0x01

#define PLIC_PRIORITY(irq) (PTL_QEMU_PLIC_BASE + 4u * (irq))
#define PLIC_ENABLE(ctx) (PTL_QEMU_PLIC_BASE + 0x2000u + 0x80u * (ctx))
#define PLIC_THRESHOLD(ctx) (PTL_QEMU_PLIC_BASE + 0x200000u + 0x1000u * (ctx))
#define PLIC_CLAIM(ctx) (PLIC_THRESHOLD(ctx) + 4u)
/* The machine-mode context of a hart on the virt machine. */
#define PLIC_M_CONTEXT(hart) (2u * (hart))
#define MIE_MEIE 0x800
#define TEST_RESET 0x7777u

/* ---- UART receive --------------------------------------------------------------- */

static uint8_t rx_ready[PTL_QEMU_MAX_HARTS];

/* Routes the UART's receive interrupt to the calling hart, so its wfi
 * wakes on a byte (hart 0 normally; a hart that trapped serves the output
 * itself). */
static void rx_enable(uint32_t hart)
{
    uint32_t ctx = PLIC_M_CONTEXT(hart);
    /* The FIFO stays off: QEMU empties it when it is switched on, losing a
     * byte already there and stalling its input, and its timeout interrupt
     * runs on the virtual clock, which stands still while every hart
     * sleeps. One byte at a time interrupts at once. */
    if (hart == 0 || !rx_ready[0]) {
        ptl_mmio_write8(PTL_QEMU_UART_BASE + UART_IER, UART_IER_RDI);
        ptl_mmio_write32(PLIC_PRIORITY(PTL_QEMU_UART_IRQ), 1);
    }
    ptl_mmio_write32(PLIC_ENABLE(ctx) + 4u * (PTL_QEMU_UART_IRQ / 32), 1u << (PTL_QEMU_UART_IRQ % 32));
    ptl_mmio_write32(PLIC_THRESHOLD(ctx), 0);
    __asm__ volatile("csrs mie, %0" ::"r"(MIE_MEIE));
    rx_ready[hart] = 1;
}

int ptl_link_getc(void)
{
    uint32_t hart = ptl_hart_id();
    if (!rx_ready[hart])
        rx_enable(hart);
    uint32_t ctx = PLIC_M_CONTEXT(hart);
    for (;;) {
        if (ptl_mmio_read8(PTL_QEMU_UART_BASE + UART_LSR) & UART_LSR_DR)
            return ptl_mmio_read8(PTL_QEMU_UART_BASE + UART_RBR);
        /* Clear a stale claim, look once more, then sleep: a byte that came
         * in between leaves the interrupt pending, and wfi returns at once. */
        uint32_t claimed = ptl_mmio_read32(PLIC_CLAIM(ctx));
        if (claimed)
            ptl_mmio_write32(PLIC_CLAIM(ctx), claimed);
        if (ptl_mmio_read8(PTL_QEMU_UART_BASE + UART_LSR) & UART_LSR_DR)
            continue;
        __asm__ volatile("wfi" ::: "memory");
        /* No team work waits on this hart now: a software interrupt (the
         * other harts announce themselves at boot) would keep wfi from
         * sleeping. */
        ptl_mmio_write32(PTL_QEMU_CLINT_MSIP + 4u * hart, 0);
    }
}

void ptl_link_write(const uint8_t *bytes, size_t len)
{
    for (size_t i = 0; i < len; i++)
        ptl_qemu_uart_put((char)bytes[i]);
}

void ptl_link_reset(void)
{
    while (!(ptl_mmio_read8(PTL_QEMU_UART_BASE + UART_LSR) & UART_LSR_TEMT))
        ;
    ptl_mmio_write32(PTL_QEMU_TEST_BASE, TEST_RESET);
    for (;;)
        __asm__ volatile("wfi");
}

/* ---- Payload, console, exit --------------------------------------------------------- */

/* The console buffer's bookkeeping lives at the end of its window, not in
 * .bss: QEMU's system_reset reloads the ELF and the boot code clears .bss,
 * but neither touches the window, so after a reset the host can still read
 * what a hung run wrote (PTL_LINK_LEFTOVER). */
struct output_book {
    uint32_t magic;
    uint32_t len;
    uint32_t overflowed;
    uint32_t payload_crc;
};
#define OUTPUT_BOOK_MAGIC 0x4c54504fu /* "OPTL" */
#define OUTPUT_ROOM (PTL_QEMU_BOARD_OUTPUT_MAX - sizeof(struct output_book))
#define OUTPUT_BOOK ((volatile struct output_book *)(uintptr_t)(PTL_QEMU_BOARD_OUTPUT_ADDR + OUTPUT_ROOM))

const uint8_t *ptl_payload(size_t *len, const char **why)
{
    (void)why;
    const uint8_t *payload =
        ptl_link_receive((uint8_t *)(uintptr_t)PTL_QEMU_PAYLOAD_ADDR, PTL_QEMU_BOARD_PAYLOAD_MAX, len);
    uint32_t crc = 0;
    if (*len >= 16) /* the payload header's body CRC: what its records echo */
        crc = (uint32_t)payload[12] | (uint32_t)payload[13] << 8 | (uint32_t)payload[14] << 16 |
              (uint32_t)payload[15] << 24;
    OUTPUT_BOOK->len = 0;
    OUTPUT_BOOK->overflowed = 0;
    OUTPUT_BOOK->payload_crc = crc;
    OUTPUT_BOOK->magic = OUTPUT_BOOK_MAGIC;
    return payload;
}

/* Called under the console lock. */
void ptl_board_output_append(const char *text, size_t len)
{
    uint8_t *output = (uint8_t *)(uintptr_t)PTL_QEMU_BOARD_OUTPUT_ADDR;
    uint32_t used = OUTPUT_BOOK->len;
    size_t room = OUTPUT_ROOM - used;
    if (len > room) {
        OUTPUT_BOOK->overflowed = 1;
        len = room;
    }
    memcpy(output + used, text, len);
    OUTPUT_BOOK->len = used + (uint32_t)len;
}

void ptl_exit(int status)
{
    ptl_qemu_stdout_end_line();
    uint32_t len = OUTPUT_BOOK->len, overflowed = OUTPUT_BOOK->overflowed;
    OUTPUT_BOOK->magic = 0; /* served whole: nothing is left over */
    ptl_link_serve((const uint8_t *)(uintptr_t)PTL_QEMU_BOARD_OUTPUT_ADDR, len, overflowed, status);
}

const uint8_t *ptl_link_leftover(uint32_t *len, uint32_t *overflowed, uint32_t *payload_crc)
{
    if (OUTPUT_BOOK->magic != OUTPUT_BOOK_MAGIC || OUTPUT_BOOK->len > OUTPUT_ROOM)
        return NULL;
    *len = OUTPUT_BOOK->len;
    *overflowed = OUTPUT_BOOK->overflowed;
    *payload_crc = OUTPUT_BOOK->payload_crc;
    return (const uint8_t *)(uintptr_t)PTL_QEMU_BOARD_OUTPUT_ADDR;
}

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

#endif /* PTL_SERIAL_BOARD */
