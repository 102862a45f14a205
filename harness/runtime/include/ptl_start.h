/*
 * ptl_start.h: assembler macros the bare-metal runtimes' start.S share
 * (targets/qemu/runtime/start.S, targets/gvsoc/runtime/start.S). Include it
 * from a .S file only.
 */
#ifndef PTL_START_H
#define PTL_START_H

#define MSTATUS_FS_INITIAL 0x2000

/* gp for the linker's relaxation; this la itself must not be relaxed. */
.macro PTL_LOAD_GP
    .option push
    .option norelax
    la gp, __global_pointer$
    .option pop
.endm

/* Traps go to ptl_trap_entry; the FPU on, its flags and rounding mode
 * cleared. Clobbers t1. */
.macro PTL_TRAP_VECTOR_AND_FPU
    la t1, ptl_trap_entry
    csrw mtvec, t1
    li t1, MSTATUS_FS_INITIAL
    csrs mstatus, t1
    csrw fcsr, zero
.endm

/* Zeroes the words from symbol \start up to symbol \end. Clobbers t1, t2. */
.macro PTL_ZERO_WORDS start, end
    la t1, \start
    la t2, \end
.Lptl_zero\@:
    bgeu t1, t2, .Lptl_zeroed\@
    sw zero, 0(t1)
    addi t1, t1, 4
    j .Lptl_zero\@
.Lptl_zeroed\@:
.endm

/* The end of a trap entry, its stack taken and a0 set: mcause, mepc and
 * mtval to \handler, which does not return. */
.macro PTL_TRAP_REPORT handler
    csrr a1, mcause
    csrr a2, mepc
    csrr a3, mtval
    call \handler
.Lptl_trapped\@:
    wfi
    j .Lptl_trapped\@
.endm

#endif /* PTL_START_H */
