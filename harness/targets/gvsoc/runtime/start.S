/*
 * Entry of every core on gvsoc --target=pulp-open.
 *
 * GVSOC's loader starts the fabric controller (FC) at the ELF entry. The FC
 * clears .bss and the L1 variables, then starts the 8 cluster cores at this
 * same entry (boot.c). Each core takes its own stack (cluster cores in L1,
 * the FC in L2), trap vector and FPU state, and runs its performance
 * counters from the start; then the FC goes to ptl_gvsoc_fc_boot() and the
 * cluster cores to ptl_gvsoc_cluster_boot().
 */
#include "ptl_gvsoc.h"
#include "ptl_start.h"


/* Layout constants for link.ld, which cannot include a C header. */
    .globl __ptl_payload_addr, __ptl_payload_max, __ptl_cores, __ptl_main_stack_size, __ptl_stack_size
    .globl __ptl_fc_stack_size, __ptl_trap_stack_size, __ptl_l1_base, __ptl_l1_size, __ptl_l2_base
    .set __ptl_payload_addr, PTL_GVSOC_PAYLOAD_ADDR
    .set __ptl_payload_max, PTL_GVSOC_PAYLOAD_MAX
    .set __ptl_cores, PTL_GVSOC_CORES
    .set __ptl_main_stack_size, PTL_GVSOC_MAIN_STACK_SIZE
    .set __ptl_stack_size, PTL_GVSOC_STACK_SIZE
    .set __ptl_fc_stack_size, PTL_GVSOC_FC_STACK_SIZE
    .set __ptl_trap_stack_size, PTL_GVSOC_TRAP_STACK_SIZE
    .set __ptl_l1_base, PTL_GVSOC_L1_BASE
    .set __ptl_l1_size, PTL_GVSOC_L1_SIZE
    .set __ptl_l2_base, PTL_GVSOC_L2_BASE

    .section .text.init.enter, "ax", @progbits
    .globl _start
    .type _start, @function
_start:
    PTL_LOAD_GP
    PTL_TRAP_VECTOR_AND_FPU
    /* PCER: cycles and instructions; PCMR: counting. */
    li t1, 3
    csrw 0xcc0, t1
    li t1, 1
    csrw 0xcc1, t1

    csrr t0, mhartid
    li t1, PTL_GVSOC_FC_HART
    bne t0, t1, cluster

    la sp, __fc_stack_end
    PTL_ZERO_WORDS __bss_start, __bss_end
    PTL_ZERO_WORDS __l1_bss_start, __l1_bss_end
    call ptl_gvsoc_fc_boot
    j park

cluster:
    andi t0, t0, 31
    li t1, PTL_GVSOC_CORES
    bgeu t0, t1, park
    /* Core 0 owns the main stack (the highest); core i > 0 the i-th below it. */
    la sp, __main_stack_end
    beqz t0, 5f
    la sp, __stacks_end
    addi t2, t0, -1
    li t1, PTL_GVSOC_STACK_SIZE
    mul t2, t2, t1
    sub sp, sp, t2
5:  mv a0, t0
    call ptl_gvsoc_cluster_boot
park:
    wfi
    j park
    .size _start, . - _start

/*
 * Every trap is fatal: interrupts are never enabled. GVSOC's PULP cores
 * enter here for every exception, with mcause 11 whatever the cause
 * (boot.c tells the causes apart from the instruction). The handler takes a
 * fresh stack of its own (the old sp may be the cause) and reports.
 */
    .text
    .align 2
    .globl ptl_trap_entry
    .type ptl_trap_entry, @function
ptl_trap_entry:
    PTL_LOAD_GP
    /* Trap stack slot: cluster core i uses i, the FC uses PTL_GVSOC_CORES. */
    csrr a0, mhartid
    andi t0, a0, 31
    li t1, PTL_GVSOC_FC_HART
    bne a0, t1, 1f
    li t0, PTL_GVSOC_CORES
1:  la sp, __trap_stacks_end
    li t1, PTL_GVSOC_TRAP_STACK_SIZE
    mul t2, t0, t1
    sub sp, sp, t2
    PTL_TRAP_REPORT ptl_gvsoc_trap
    .size ptl_trap_entry, . - ptl_trap_entry
