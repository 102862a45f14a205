/*
 * C side of start-up and the trap handler of the GVSOC runtime.
 *
 * The FC starts the cluster, then watches the measured regions for a hang
 * (watchdog.c): the run ends when cluster core 0 writes the exit register,
 * or when the FC finds a region past its cycle budget. Every cluster core gets a TLS block
 * (picolibc keeps errno there); core 0 runs constructors and main(), the
 * others serve team forks.
 */
#include <picolibc.h> /* defines PICOLIBC_TLS, which picotls.h needs */
#include <picotls.h>
#include <stdint.h>

#include "ptl_gvsoc_hw.h"
#include "ptl_platform.h"
#include "ptl_protocol.h"

extern char __ptl_tls_blocks[], __ptl_tls_stride[];
extern void __libc_init_array(void);
extern int main(int argc, char **argv);
extern char _start[];

static void set_tls(uint32_t slot)
{
    void *tls = __ptl_tls_blocks + slot * (uintptr_t)__ptl_tls_stride;
    _init_tls(tls);
    _set_tls(tls);
}

void ptl_gvsoc_fc_boot(void) __attribute__((noreturn));

void ptl_gvsoc_fc_boot(void)
{
    set_tls(PTL_GVSOC_CORES);
    ptl_mmio_write32(PTL_GVSOC_ICACHE_ENABLE, 0xffffffffu);
    for (uint32_t core = 0; core < PTL_GVSOC_CORES; core++)
        ptl_mmio_write32(PTL_GVSOC_CLUSTER_BOOT_ADDR + 4u * core, (uint32_t)(uintptr_t)_start);
    ptl_mmio_write32(PTL_GVSOC_CLUSTER_FETCH_ENABLE, (1u << PTL_GVSOC_CORES) - 1u);
    ptl_gvsoc_watch();
}

void ptl_gvsoc_cluster_boot(uint32_t core) __attribute__((noreturn));

void ptl_gvsoc_cluster_boot(uint32_t core)
{
    set_tls(core);
    if (core != 0)
        ptl_gvsoc_team_worker(core);
    ptl_gvsoc_team_init();
    __libc_init_array();
    ptl_exit(main(0, 0));
}

/* ---- Traps ----------------------------------------------------------------------
 * GVSOC's PULP cores report every exception with mcause 11 and mtval 0. The
 * cause that matters here is told apart from the instruction at mepc: an
 * ecall stays 11, an ebreak is 3, anything else is an illegal instruction (2),
 * which includes the AMOs of the A extension that these cores lack. Bad
 * memory accesses do not trap on GVSOC: the simulator prints "Invalid access"
 * and the harness classifies that (harness/targets/gvsoc/). */

#define CAUSE_ILLEGAL_INSTRUCTION 2
#define CAUSE_BREAKPOINT 3
#define CAUSE_ECALL_M 11
#define INSN_ECALL 0x00000073u
#define INSN_EBREAK 0x00100073u
#define INSN_C_EBREAK 0x9002u

static uint32_t trap_cause(uint32_t mcause, uint32_t epc)
{
    if (mcause != CAUSE_ECALL_M || (epc & 1))
        return mcause;
    const volatile uint16_t *pc = (const volatile uint16_t *)(uintptr_t)epc;
    uint32_t low = pc[0];
    if (low == INSN_C_EBREAK)
        return CAUSE_BREAKPOINT;
    if ((low & 3) != 3)
        return CAUSE_ILLEGAL_INSTRUCTION;
    uint32_t insn = low | (uint32_t)pc[1] << 16;
    if (insn == INSN_ECALL)
        return CAUSE_ECALL_M;
    return insn == INSN_EBREAK ? CAUSE_BREAKPOINT : CAUSE_ILLEGAL_INSTRUCTION;
}

static volatile uint8_t in_trap[PTL_GVSOC_CORES + 1];

void ptl_gvsoc_trap(uint32_t hart, uint32_t mcause, uint32_t epc, uint32_t tval) __attribute__((noreturn));

void ptl_gvsoc_trap(uint32_t hart, uint32_t mcause, uint32_t epc, uint32_t tval)
{
    uint32_t slot = hart == PTL_GVSOC_FC_HART ? PTL_GVSOC_CORES : (hart & 31u);
    if (slot > PTL_GVSOC_CORES || in_trap[slot]) {
        /* The report itself trapped: end the run without another word. */
        ptl_mmio_write32(PTL_GVSOC_EXIT, 0x80000000u | PTL_EXIT_TRAP);
        for (;;)
            __asm__ volatile("wfi");
    }
    in_trap[slot] = 1;
    /* The FC cannot take the cluster's console lock; it never traps in
     * practice, and its report is one line on its own console channel. */
    if (hart != PTL_GVSOC_FC_HART) {
        ptl_console_lock();
        ptl_gvsoc_stdout_end_line();
    }
    ptl_emit_crash(hart, trap_cause(mcause, epc), epc, tval);
    ptl_exit(PTL_EXIT_TRAP);
}
