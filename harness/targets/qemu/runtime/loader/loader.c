/*
 * The qemu target's payload delivery: the payload is a memory image that
 * QEMU's generic loader places at PTL_QEMU_PAYLOAD_ADDR (or, built with
 * PTL_EMBEDDED_PAYLOAD, one compiled in), exit goes through the sifive_test
 * device, and a measured region is bracketed by marker instructions that
 * the counting plugin (plugin/ptl_insn_count.c) sees. The program never
 * measures itself: ptl_region_elapsed() is 0 and the harness reads the
 * plugin's counts.
 */
#include "ptl_platform.h"
#include "ptl_protocol.h"
#include "ptl_qemu_hw.h"
#include "ptl_runner.h"

#define TEST_PASS 0x5555u
#define TEST_FAIL 0x3333u

const uint8_t *ptl_payload(size_t *len, const char **why)
{
    return ptl_payload_in_window((const uint8_t *)(uintptr_t)PTL_QEMU_PAYLOAD_ADDR, PTL_QEMU_PAYLOAD_MAX,
                                 "no payload at the loader address (expected magic PTLP at "
                                 PTL_STR(PTL_QEMU_PAYLOAD_ADDR) ")",
                                 "payload total_len is outside 16..PTL_QEMU_PAYLOAD_MAX", len, why);
}

/* ---- Exit -------------------------------------------------------------------- */

void ptl_exit(int status)
{
    ptl_qemu_stdout_end_line();
    uint32_t code = (uint32_t)status & 0xffffu;
    ptl_mmio_write32(PTL_QEMU_TEST_BASE, code ? (code << 16) | TEST_FAIL : TEST_PASS);
    for (;;)
        __asm__ volatile("wfi");
}

void ptl_qemu_abort(void)
{
    ptl_mmio_write32(PTL_QEMU_TEST_BASE, ((uint32_t)PTL_EXIT_TRAP << 16) | TEST_FAIL);
    for (;;)
        __asm__ volatile("wfi");
}

/* ---- Measured regions ----------------------------------------------------------
 * noinline keeps the markers where the runner put them; the memory clobber
 * keeps the compiler from moving loads and stores across them. */

__attribute__((noinline)) void ptl_region_begin(uint32_t variant)
{
    (void)variant;
    __asm__ volatile(PTL_QEMU_MARK_ASM(PTL_QEMU_MARK_BEGIN) ::: "memory");
}

__attribute__((noinline)) void ptl_region_end(uint32_t variant)
{
    (void)variant;
    __asm__ volatile(PTL_QEMU_MARK_ASM(PTL_QEMU_MARK_END) ::: "memory");
}

uint64_t ptl_region_elapsed(void) { return 0; }
