/*
 * The host's console: stdout, whose own lock keeps a record line whole.
 * Apart from platform_host.c, whose crash report (a signal handler) writes
 * through it.
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "ptl_platform.h"

void ptl_console_write(const char *text, size_t len) { fwrite(text, 1, len, stdout); }

void ptl_console_lock(void) { flockfile(stdout); }

void ptl_console_unlock(void) { funlockfile(stdout); }
