/*
 * The qemu target's console: the NS16550 UART, or semihosting when QEMU runs
 * with -semihosting-config enable=on. Both end up on QEMU's stdout, in
 * program order; semihosting writes a whole line per call, about 50x faster
 * than the UART, which costs two device accesses (and, under -icount, two
 * block restarts) per byte. The UART stays the path for a console on a pty
 * or socket.
 */
#include "ptl_platform.h"
#include "ptl_qemu_hw.h"

#define SEMIHOST_SYS_OPEN 0x01
#define SEMIHOST_SYS_WRITE 0x05
#define SEMIHOST_MODE_W 4

extern long ptl_semihost_call(long op, const void *arg);
extern char ptl_semihost_probe_trap[];

/* Semihosting handle of the console, or -1 for the UART. Chosen before
 * main() and never changed. */
static long console_handle = -1;

void ptl_qemu_console_init(void)
{
    uintptr_t vector;
    __asm__ volatile("csrrw %0, mtvec, %1" : "=r"(vector) : "r"(ptl_semihost_probe_trap));
    const long open_args[3] = {(long)":tt", SEMIHOST_MODE_W, 3};
    long handle = ptl_semihost_call(SEMIHOST_SYS_OPEN, open_args);
    __asm__ volatile("csrw mtvec, %0" ::"r"(vector));
    console_handle = handle;
}

void ptl_console_write(const char *text, size_t len)
{
    ptl_qemu_lock_acquire(&ptl_qemu_console_lock);
    if (console_handle >= 0) {
        while (len) {
            long args[3] = {console_handle, (long)text, (long)len};
            long left = ptl_semihost_call(SEMIHOST_SYS_WRITE, args);
            if (left < 0 || (size_t)left >= len)
                break; /* the host refused: nothing else can be done */
            text += len - (size_t)left;
            len = (size_t)left;
        }
    } else {
        for (size_t i = 0; i < len; i++)
            ptl_qemu_uart_put(text[i]);
    }
    ptl_qemu_lock_release(&ptl_qemu_console_lock);
}
