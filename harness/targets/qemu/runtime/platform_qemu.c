/*
 * QEMU flavour of ptl_platform.h, the part every build on this runtime
 * shares: the NS16550 UART's transmit side and the console lock.
 *
 * How a payload arrives, where the console goes, how a run ends and how a
 * region is measured is the payload delivery, one folder of files each:
 *
 *   loader/ (the qemu target)   QEMU's generic loader places the payload,
 *                               the console is semihosting or the UART,
 *                               exit is the sifive_test device, and regions
 *                               are marker instructions the counting plugin
 *                               sees;
 *   targets/board/runtime/      the virtual board: the payload and the
 *                               console output go over the serial link.
 *
 * Files of this folder never call into a delivery's console or exit except
 * through ptl_platform.h's functions, so the two swap without an #ifdef.
 */
#include "ptl_platform.h"
#include "ptl_qemu_hw.h"

#define UART_THR 0
#define UART_LSR 5
#define UART_LSR_THRE 0x20

struct ptl_qemu_lock ptl_qemu_console_lock;

void ptl_platform_init(int argc, char **argv)
{
    (void)argc;
    (void)argv;
}

void ptl_qemu_uart_put(char c)
{
    while (!(ptl_mmio_read8(PTL_QEMU_UART_BASE + UART_LSR) & UART_LSR_THRE))
        ;
    ptl_mmio_write8(PTL_QEMU_UART_BASE + UART_THR, (uint8_t)c);
}

void ptl_console_lock(void) { ptl_qemu_lock_acquire(&ptl_qemu_console_lock); }

void ptl_console_unlock(void) { ptl_qemu_lock_release(&ptl_qemu_console_lock); }
