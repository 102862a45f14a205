/*
 * The two ways a run ends by itself on the QEMU runtime, whatever its
 * delivery: picolibc's exit() and abort(), and a misuse of the runtime.
 */
#include "ptl_platform.h"
#include "ptl_protocol.h"
#include "ptl_qemu_hw.h"

/* picolibc's exit() and abort() end here. */
void _exit(int status) { ptl_exit(status); }

void ptl_qemu_fatal(const char *text)
{
    ptl_emit_error(PTL_NO_VARIANT, -1, text);
    ptl_exit(3);
}
