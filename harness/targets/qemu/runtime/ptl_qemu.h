/*
 * ptl_qemu.h: the fixed facts of the QEMU target, shared by the bare-metal
 * runtime (C and assembly), the counting plugin (host C) and the Python side
 * (harness/targets/qemu/ reads the PTL_QEMU_* defines from this file, so
 * keep each one a plain `#define NAME value` on one line).
 *
 * Machine: qemu-system-riscv32 -machine virt -bios none -m 128M -smp 8.
 * RAM is 0x80000000..0x88000000. QEMU puts its device tree in the top 2 MiB
 * of RAM, so the payload window stops well below it.
 */
#ifndef PTL_QEMU_H
#define PTL_QEMU_H

/* ---- Memory map of the guest ----------------------------------------------- */
#define PTL_QEMU_RAM_BASE 0x80000000
#define PTL_QEMU_RAM_SIZE 0x08000000
/* Where `-device loader,file=payload.bin,addr=...,force-raw=on` puts the case
 * payload, and the most bytes it may have. The program image, stacks and heap
 * all live below PTL_QEMU_PAYLOAD_ADDR (link.ld asserts it). */
#define PTL_QEMU_PAYLOAD_ADDR 0x86000000
#define PTL_QEMU_PAYLOAD_MAX 0x01000000
/* The virtual board's firmware (harness/targets/board/runtime/) receives the payload
 * over the UART into the lower half of that window and keeps its console
 * output in the upper half until the host has read it. */
#define PTL_QEMU_BOARD_PAYLOAD_MAX 0x00800000
#define PTL_QEMU_BOARD_OUTPUT_ADDR 0x86800000
#define PTL_QEMU_BOARD_OUTPUT_MAX 0x00800000

/* ---- Harts -------------------------------------------------------------------- */
/* Harts the runtime serves; extra harts (a larger -smp) park forever. */
#define PTL_QEMU_MAX_HARTS 8
/* Stack of each hart (bytes, a power of two). The lowest 32 bytes of each are
 * a PMP guard, so an overflow is a store access fault (CRASH record, cause 7)
 * instead of silent corruption of the next hart's stack. */
#define PTL_QEMU_STACK_SIZE 0x4000
#define PTL_QEMU_STACK_GUARD 32
/* Separate stack for the trap handler of each hart, so a trap caused by a
 * broken stack pointer can still report. */
#define PTL_QEMU_TRAP_STACK_SIZE 0x800

/* ---- Devices of the virt machine ----------------------------------------------- */
#define PTL_QEMU_UART_BASE 0x10000000
#define PTL_QEMU_TEST_BASE 0x00100000
#define PTL_QEMU_CLINT_MSIP 0x02000000
#define PTL_QEMU_PLIC_BASE 0x0c000000
#define PTL_QEMU_UART_IRQ 10

/* ---- Marker instructions for the counting plugin ----------------------------------
 * Each is the HINT `addi x0, x0, ID` in its 32-bit encoding ((ID << 20) | 0x13);
 * compilers never emit these. BEGIN/END on hart 0 open and close the next
 * measured region. SPLIT follows every memory-mapped I/O access of the
 * runtime: under -icount QEMU restarts an I/O instruction in a block of its
 * own, and a split right after it keeps the plugin's per-block counts exact. */
#define PTL_QEMU_MARK_BEGIN 0x6b1
#define PTL_QEMU_MARK_END 0x6b2
#define PTL_QEMU_MARK_SPLIT 0x6b3

#endif /* PTL_QEMU_H */
