/*
 * Host flavour of ptl_platform.h: the payload is a file named on the command
 * line, the console is stdout (console_host.c), and a region is timed with
 * the monotonic clock in nanoseconds.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pmsis.h"
#include "ptl_platform.h"
#include "ptl_protocol.h"

static const char *payload_path;
static uint64_t region_start_ns, region_elapsed_ns;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A fault becomes a CRASH record, like a trap on the embedded targets, so
 * the harness can say which signal hit instead of only "died": the core
 * (the thread's team id), the signal, its si_code (why: e.g. an integer
 * division by zero) and the low 32 bits of si_addr (the faulting access,
 * or for SIGFPE and SIGILL the instruction). HostTarget.describe_crash
 * reads them so. */
static void on_fatal_signal(int signo, siginfo_t *info, void *context)
{
    (void)context;
    ptl_emit_crash((uint32_t)pi_core_id(), (uint32_t)signo, (uint32_t)info->si_code,
                   (uint32_t)(uintptr_t)info->si_addr);
    fflush(stdout);
    _exit(PTL_EXIT_TRAP);
}

void ptl_platform_init(int argc, char **argv)
{
    payload_path = argc > 1 ? argv[1] : NULL;
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    if (!getenv("PTL_NO_SIGNAL_HANDLERS")) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fatal_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
        sigaction(SIGSEGV, &sa, NULL);
        sigaction(SIGBUS, &sa, NULL);
        sigaction(SIGFPE, &sa, NULL);
        sigaction(SIGILL, &sa, NULL);
    }
}

#ifdef PTL_EMBEDDED_PAYLOAD
/* Compiled-in payload (harness/payload.py: payload_as_c_source), the way
 * SDK flows that cannot load files at run time deliver a case. */
extern const uint8_t ptl_embedded_payload[];
extern const uint32_t ptl_embedded_payload_len;
#endif

const uint8_t *ptl_payload(size_t *len, const char **why)
{
#ifdef PTL_EMBEDDED_PAYLOAD
    if (!payload_path) {
        *len = ptl_embedded_payload_len;
        return ptl_embedded_payload;
    }
#endif
    if (!payload_path) {
        *why = "usage: runner PAYLOAD_FILE";
        return NULL;
    }
    FILE *f = fopen(payload_path, "rb");
    if (!f) {
        *why = "cannot open the payload file";
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *bytes = size > 0 ? malloc((size_t)size) : NULL;
    if (!bytes || fread(bytes, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(bytes);
        *why = "cannot read the payload file";
        return NULL;
    }
    fclose(f);
    *len = (size_t)size;
    return bytes;
}

void ptl_exit(int status)
{
    fflush(stdout);
    exit(status);
}

void ptl_region_begin(uint32_t variant)
{
    (void)variant;
    /* What earlier variants emitted leaves the buffer before this one's call:
     * a run a sanitizer ends (_exit) then still shows which variant it was. */
    fflush(stdout);
    region_start_ns = now_ns();
}

void ptl_region_end(uint32_t variant)
{
    (void)variant;
    region_elapsed_ns = now_ns() - region_start_ns;
}

uint64_t ptl_region_elapsed(void) { return region_elapsed_ns; }
