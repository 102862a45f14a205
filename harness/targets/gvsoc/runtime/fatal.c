/*
 * The two ways a run ends by itself on the GVSOC runtime: picolibc's exit()
 * and abort(), and a misuse of the runtime (an ERROR record, then exit).
 */
#include "ptl_gvsoc_hw.h"
#include "ptl_platform.h"
#include "ptl_protocol.h"

/* picolibc's exit() and abort() end here. */
void _exit(int status) { ptl_exit(status); }

void ptl_gvsoc_fatal(const char *text)
{
    ptl_emit_error(PTL_NO_VARIANT, -1, text);
    ptl_exit(3);
}
