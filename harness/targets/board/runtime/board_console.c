/*
 * The virtual board's console: every line goes to the output buffer
 * (board_output.c), none to the UART, which carries the link's frames.
 */
#include "ptl_board_link.h"
#include "ptl_platform.h"
#include "ptl_qemu_hw.h"

void ptl_qemu_console_init(void) {}

void ptl_console_write(const char *text, size_t len)
{
    ptl_qemu_lock_acquire(&ptl_qemu_console_lock);
    ptl_board_output_append(text, len);
    ptl_qemu_lock_release(&ptl_qemu_console_lock);
}
