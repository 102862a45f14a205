/*
 * ptl_qemu_hw.h: small hardware helpers of the QEMU runtime (not part of any
 * public interface). Everything that touches a device goes through here, so
 * the SPLIT marker after each access is never forgotten (see ptl_qemu.h).
 */
#ifndef PTL_QEMU_HW_H
#define PTL_QEMU_HW_H

#include <stddef.h>
#include <stdint.h>

#include "ptl_qemu.h"

#define PTL_STR_(x) #x
#define PTL_STR(x) PTL_STR_(x)

/* The marker hint, always in its 32-bit form so the plugin can match it. */
#define PTL_QEMU_MARK_ASM(id) \
    ".option push\n.option norvc\naddi x0, x0, " PTL_STR(id) "\n.option pop\n"

static inline uint32_t ptl_hart_id(void)
{
    uint32_t id;
    __asm__ volatile("csrr %0, mhartid" : "=r"(id));
    return id;
}

static inline void ptl_mmio_write32(uintptr_t addr, uint32_t value)
{
    __asm__ volatile("sw %0, 0(%1)\n" PTL_QEMU_MARK_ASM(PTL_QEMU_MARK_SPLIT)
                     :
                     : "r"(value), "r"(addr)
                     : "memory");
}

static inline void ptl_mmio_write8(uintptr_t addr, uint8_t value)
{
    __asm__ volatile("sb %0, 0(%1)\n" PTL_QEMU_MARK_ASM(PTL_QEMU_MARK_SPLIT)
                     :
                     : "r"(value), "r"(addr)
                     : "memory");
}

static inline uint32_t ptl_mmio_read32(uintptr_t addr)
{
    uint32_t value;
    __asm__ volatile("lw %0, 0(%1)\n" PTL_QEMU_MARK_ASM(PTL_QEMU_MARK_SPLIT)
                     : "=r"(value)
                     : "r"(addr)
                     : "memory");
    return value;
}

static inline uint8_t ptl_mmio_read8(uintptr_t addr)
{
    uint32_t value;
    __asm__ volatile("lbu %0, 0(%1)\n" PTL_QEMU_MARK_ASM(PTL_QEMU_MARK_SPLIT)
                     : "=r"(value)
                     : "r"(addr)
                     : "memory");
    return (uint8_t)value;
}

/* Orders this hart's earlier memory writes before a later device write (the
 * IPI), so the woken hart sees the state that it was woken for. */
static inline void ptl_fence_io(void) { __asm__ volatile("fence iorw, iorw" ::: "memory"); }

/* Raises the software interrupt of `hart` (CLINT MSIP). It stays pending until
 * that hart clears it, so an IPI sent before the target sleeps is not lost. */
static inline void ptl_ipi_send(uint32_t hart)
{
    ptl_fence_io();
    ptl_mmio_write32(PTL_QEMU_CLINT_MSIP + 4u * hart, 1);
}

/* Sleeps until an IPI is pending, then clears it. mie.MSIE=1 and
 * mstatus.MIE=0 (start.S), so wfi wakes without taking a trap. Callers always
 * re-check their condition around this: wake-ups may be spurious. */
static inline void ptl_ipi_wait(void)
{
    __asm__ volatile("wfi" ::: "memory");
    ptl_mmio_write32(PTL_QEMU_CLINT_MSIP + 4u * ptl_hart_id(), 0);
    ptl_fence_io();
}

/* A fair (ticket) recursive lock whose waiters sleep in wfi and are woken by
 * the releaser, so no hart ever busy-waits: under -icount one emulation
 * thread runs the harts in turn, and a spinning hart would burn its whole
 * time slice. Fairness matters for the same reason: a hart that releases and
 * re-acquires within its slice would starve the others (a crash report
 * waiting for the console would never get out). */
struct ptl_qemu_lock {
    volatile uint32_t next_ticket;
    volatile uint32_t now_serving;
    volatile uint32_t owner; /* 0: free, else hart id + 1 */
    uint32_t depth;
    volatile uint32_t waiters; /* bit per sleeping hart */
};

void ptl_qemu_lock_acquire(struct ptl_qemu_lock *lock);
void ptl_qemu_lock_release(struct ptl_qemu_lock *lock);

/* Serialises whole lines on the UART (records, printf lines, crash reports). */
extern struct ptl_qemu_lock ptl_qemu_console_lock;

/* Harts present on the machine (from the device tree), and harts that have run
 * their start code; both are written before .bss is cleared, so they live in
 * .data. */
extern uint32_t ptl_qemu_harts_present;
extern volatile uint32_t ptl_qemu_harts_online;

/* The loop of harts 1..7: wait for a fork, run the share, report, sleep. */
void ptl_qemu_team_worker(uint32_t hart) __attribute__((noreturn));
/* Writes one byte to the UART, waiting for room. */
void ptl_qemu_uart_put(char c);
/* Readies the delivery's console before main() (loader/: semihosting if
 * QEMU offers it, else the UART). */
void ptl_qemu_console_init(void);
/* Ends the run at once, without a word: the crash report itself trapped
 * (the delivery's: loader/ exits QEMU, the virtual board reboots). */
void ptl_qemu_abort(void) __attribute__((noreturn));
/* Flushes the calling hart's buffered printf line, if any; the _end_line
 * form also ends a partial line, so a record written next starts a line. */
void ptl_qemu_stdout_flush(void);
void ptl_qemu_stdout_end_line(void);
/* Reports a misuse of the runtime (an ERROR record) and ends the run. */
void ptl_qemu_fatal(const char *text) __attribute__((noreturn));

#endif /* PTL_QEMU_HW_H */
