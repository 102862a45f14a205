/*
 * Entry of every hart on qemu-system-riscv32 -machine virt -bios none.
 *
 * QEMU's reset vector jumps here on all harts with a0 = mhartid and a1 = the
 * device tree address. Each hart sets up its own stack, stack guard, trap
 * vector and FPU; hart 0 clears .bss; then all go to ptl_qemu_boot() (C),
 * which sets up TLS and sends hart 0 to main() and the others to the team
 * worker loop.
 */
#include "ptl_qemu.h"
#include "ptl_start.h"

#define MIE_MSIE 0x8
/* pmpcfg byte: L (also binds M-mode) | A=NAPOT | no R/W/X. */
#define PMP_GUARD_CFG 0x98

/* Layout constants for link.ld, which cannot include a C header. */
    .globl __ptl_payload_addr, __ptl_max_harts, __ptl_stack_size, __ptl_trap_stack_size
    .set __ptl_payload_addr, PTL_QEMU_PAYLOAD_ADDR
    .set __ptl_max_harts, PTL_QEMU_MAX_HARTS
    .set __ptl_stack_size, PTL_QEMU_STACK_SIZE
    .set __ptl_trap_stack_size, PTL_QEMU_TRAP_STACK_SIZE

    .section .text.init.enter, "ax", @progbits
    .globl _start
    .type _start, @function
_start:
    PTL_LOAD_GP
    csrr t0, mhartid
    li t1, PTL_QEMU_MAX_HARTS
    bgeu t0, t1, park

    /* sp = __stacks_end - hart * STACK_SIZE; hart 0 owns the highest stack. */
    la sp, __stacks_end
    li t1, PTL_QEMU_STACK_SIZE
    mul t2, t0, t1
    sub sp, sp, t2

    /* A locked NAPOT PMP region with no permissions over the lowest bytes
     * of this hart's stack: an overflow faults instead of corrupting. */
    sub t2, sp, t1
    srli t2, t2, 2
    ori t2, t2, (PTL_QEMU_STACK_GUARD / 8 - 1)
    csrw pmpaddr0, t2
    li t2, PMP_GUARD_CFG
    csrw pmpcfg0, t2

    PTL_TRAP_VECTOR_AND_FPU
    /* Software interrupts may wake wfi; mstatus.MIE stays 0, so they never
     * trap. */
    li t1, MIE_MSIE
    csrw mie, t1

    bnez t0, 2f
    PTL_ZERO_WORDS __bss_start, __bss_end
2:
    mv a0, t0
    call ptl_qemu_boot
park:
    wfi
    j park
    .size _start, . - _start

/*
 * Every trap is fatal: mstatus.MIE is never set, so there are no interrupt
 * traps. The handler does not return, so it may clobber everything; it takes
 * a fresh stack of its own (the old sp may be the cause) and reports.
 */
    .text
    .align 2
    .globl ptl_trap_entry
    .type ptl_trap_entry, @function
ptl_trap_entry:
    PTL_LOAD_GP
    csrr a0, mhartid
    la sp, __trap_stacks_end
    li t1, PTL_QEMU_TRAP_STACK_SIZE
    mul t2, a0, t1
    sub sp, sp, t2
    PTL_TRAP_REPORT ptl_qemu_trap
    .size ptl_trap_entry, . - ptl_trap_entry

/*
 * long ptl_semihost_call(long op, void *arg): one RISC-V semihosting call.
 * The three instructions must be uncompressed and on one page (hence the
 * alignment). ebreak ends QEMU's translation block, so the counting plugin
 * stays exact across the call.
 */
    .text
    .balign 16
    .globl ptl_semihost_call
    .type ptl_semihost_call, @function
ptl_semihost_call:
    .option push
    .option norvc
    slli x0, x0, 0x1f
    ebreak
    srai x0, x0, 7
    .option pop
    ret
    .size ptl_semihost_call, . - ptl_semihost_call

/*
 * Trap vector while probing for semihosting: without -semihosting-config
 * enable=on the ebreak above traps (breakpoint); make the call return -1.
 */
    .balign 4
    .globl ptl_semihost_probe_trap
    .type ptl_semihost_probe_trap, @function
ptl_semihost_probe_trap:
    csrr t0, mepc
    addi t0, t0, 4
    csrw mepc, t0
    li a0, -1
    mret
    .size ptl_semihost_probe_trap, . - ptl_semihost_probe_trap
