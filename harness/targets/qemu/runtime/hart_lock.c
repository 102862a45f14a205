/*
 * Sleeping, fair, recursive locks for the QEMU runtime, and picolibc's
 * retargetable locking on top of them (malloc and stdio may be used from
 * any hart).
 *
 * A ticket lock: each acquirer takes the next ticket and waits for
 * now_serving to reach it. A waiter marks itself in `waiters`, re-checks and
 * sleeps in wfi; the releaser advances now_serving and IPIs every marked
 * waiter. Both sides use sequentially consistent atomics, so either the
 * waiter sees its turn or the releaser sees the waiter's mark: no wake-up is
 * lost. A releaser that wants the lock again queues behind the others.
 */
#include <stddef.h>
#include <sys/lock.h>

#include "ptl_qemu_hw.h"

void ptl_qemu_lock_acquire(struct ptl_qemu_lock *lock)
{
    uint32_t hart = ptl_hart_id();
    uint32_t me = hart + 1;
    if (__atomic_load_n(&lock->owner, __ATOMIC_RELAXED) == me) {
        lock->depth++;
        return;
    }
    uint32_t ticket = __atomic_fetch_add(&lock->next_ticket, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&lock->now_serving, __ATOMIC_SEQ_CST) != ticket) {
        __atomic_fetch_or(&lock->waiters, 1u << hart, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&lock->now_serving, __ATOMIC_SEQ_CST) != ticket)
            ptl_ipi_wait();
        __atomic_fetch_and(&lock->waiters, ~(1u << hart), __ATOMIC_SEQ_CST);
    }
    lock->owner = me;
    lock->depth = 1;
}

void ptl_qemu_lock_release(struct ptl_qemu_lock *lock)
{
    if (--lock->depth)
        return;
    lock->owner = 0;
    __atomic_fetch_add(&lock->now_serving, 1, __ATOMIC_SEQ_CST);
    uint32_t waiters = __atomic_load_n(&lock->waiters, __ATOMIC_SEQ_CST);
    for (uint32_t hart = 0; waiters; hart++, waiters >>= 1)
        if (waiters & 1)
            ptl_ipi_send(hart);
}

/* ---- picolibc retargetable locking ---------------------------------------------
 * Defining every __retarget_lock_* function and the libc mutex keeps
 * picolibc's single-threaded stubs out of the link. Locks that picolibc
 * creates at run time (stdio streams) come from a small pool. */

struct __lock {
    struct ptl_qemu_lock lock;
};

struct __lock __lock___libc_recursive_mutex;

#define LOCK_POOL 8
static struct __lock lock_pool[LOCK_POOL];
static uint32_t lock_pool_used;

void __retarget_lock_init(_LOCK_T *lock)
{
    uint32_t slot = __atomic_fetch_add(&lock_pool_used, 1, __ATOMIC_SEQ_CST);
    /* Out of pool: share the libc mutex, which is recursive, so it is safe. */
    *lock = slot < LOCK_POOL ? &lock_pool[slot] : &__lock___libc_recursive_mutex;
}

void __retarget_lock_init_recursive(_LOCK_T *lock) { __retarget_lock_init(lock); }
void __retarget_lock_close(_LOCK_T lock) { (void)lock; }
void __retarget_lock_close_recursive(_LOCK_T lock) { (void)lock; }
void __retarget_lock_acquire(_LOCK_T lock) { ptl_qemu_lock_acquire(&lock->lock); }
void __retarget_lock_acquire_recursive(_LOCK_T lock) { ptl_qemu_lock_acquire(&lock->lock); }
void __retarget_lock_release(_LOCK_T lock) { ptl_qemu_lock_release(&lock->lock); }
void __retarget_lock_release_recursive(_LOCK_T lock) { ptl_qemu_lock_release(&lock->lock); }

int __retarget_lock_try_acquire(_LOCK_T lock)
{
    struct ptl_qemu_lock *l = &lock->lock;
    uint32_t me = ptl_hart_id() + 1;
    if (__atomic_load_n(&l->owner, __ATOMIC_RELAXED) == me) {
        l->depth++;
        return 1;
    }
    uint32_t serving = __atomic_load_n(&l->now_serving, __ATOMIC_SEQ_CST), ticket = serving;
    if (!__atomic_compare_exchange_n(&l->next_ticket, &ticket, serving + 1, 0, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST))
        return 0;
    l->owner = me;
    l->depth = 1;
    return 1;
}

int __retarget_lock_try_acquire_recursive(_LOCK_T lock) { return __retarget_lock_try_acquire(lock); }
