/*
 * The virtual board's side of the serial link (ptl_board_link.h, "what the
 * platform gives the link"): the NS16550 UART of QEMU's virt machine, and
 * its reset through the sifive_test device.
 *
 * Waiting for a byte sleeps in wfi on the UART's receive interrupt through
 * the PLIC, so an idle board costs its host no CPU.
 */
#include <stdint.h>

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
