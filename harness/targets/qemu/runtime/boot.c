/*
 * C side of start-up and the trap handler of the QEMU runtime.
 *
 * picolibc's own crt0 is single-hart, so this replaces it: every hart gets a
 * TLS block (picolibc keeps errno there), hart 0 runs constructors and
 * main(), the other harts serve team forks.
 */
#include <picolibc.h> /* defines PICOLIBC_TLS, which picotls.h needs */
#include <picotls.h>
#include <stdint.h>

#include "ptl_platform.h"
#include "ptl_protocol.h"
#include "ptl_qemu_hw.h"

extern char __ptl_tls_blocks[], __ptl_tls_stride[];
extern void __libc_init_array(void);
extern int main(int argc, char **argv);

/* ---- Hart count from the flattened device tree --------------------------------
 * QEMU passes the tree's address in a1. Counting the cpu@N nodes under /cpus
 * lets a fork onto a hart that does not exist (-smp too small) fail with a
 * message instead of hanging. */

#define FDT_MAGIC 0xd00dfeedu
#define FDT_BEGIN_NODE 1u
#define FDT_END_NODE 2u
#define FDT_PROP 3u
#define FDT_NOP 4u
#define FDT_END 9u

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int starts_with(const char *s, const char *prefix)
{
    while (*prefix)
        if (*s++ != *prefix++)
            return 0;
    return 1;
}

static int name_is(const char *s, const char *name)
{
    return starts_with(s, name) && (s[__builtin_strlen(name)] == '\0' ||
                                    s[__builtin_strlen(name)] == '@');
}

/* Returns the number of cpu@ nodes under /cpus, or 0 if the tree is unusable. */
static uint32_t fdt_count_harts(uintptr_t fdt_addr)
{
    if (fdt_addr < PTL_QEMU_RAM_BASE || fdt_addr >= PTL_QEMU_RAM_BASE + PTL_QEMU_RAM_SIZE - 64 ||
        (fdt_addr & 3))
        return 0;
    const uint8_t *fdt = (const uint8_t *)fdt_addr;
    if (be32(fdt) != FDT_MAGIC)
        return 0;
    uint32_t total = be32(fdt + 4);
    if (total > PTL_QEMU_RAM_BASE + PTL_QEMU_RAM_SIZE - fdt_addr)
        return 0;
    const uint8_t *p = fdt + be32(fdt + 8), *end = fdt + total;
    int depth = 0, in_cpus = 0;
    uint32_t harts = 0;
    while (p + 4 <= end) {
        uint32_t token = be32(p);
        p += 4;
        if (token == FDT_BEGIN_NODE) {
            const char *name = (const char *)p;
            size_t len = __builtin_strlen(name);
            p += (len + 1 + 3) & ~(size_t)3;
            depth++;
            if (depth == 2 && name_is(name, "cpus"))
                in_cpus = 1;
            else if (depth == 3 && in_cpus && starts_with(name, "cpu@"))
                harts++;
        } else if (token == FDT_END_NODE) {
            if (depth == 2)
                in_cpus = 0;
            depth--;
        } else if (token == FDT_PROP) {
            if (p + 8 > end)
                return 0;
            uint32_t len = be32(p);
            p += 8 + ((len + 3) & ~3u);
        } else if (token == FDT_NOP) {
            continue;
        } else {
            break; /* FDT_END or garbage */
        }
    }
    return harts;
}

/* ---- Start-up ------------------------------------------------------------------- */

void ptl_qemu_boot(uint32_t hart, uintptr_t fdt_addr) __attribute__((noreturn));

void ptl_qemu_boot(uint32_t hart, uintptr_t fdt_addr)
{
    void *tls = __ptl_tls_blocks + hart * (uintptr_t)__ptl_tls_stride;
    _init_tls(tls);
    _set_tls(tls);
    if (hart != 0) {
        __atomic_fetch_add(&ptl_qemu_harts_online, 1, __ATOMIC_SEQ_CST);
        ptl_ipi_send(0);
        ptl_qemu_team_worker(hart);
    }
    __atomic_fetch_add(&ptl_qemu_harts_online, 1, __ATOMIC_SEQ_CST);
    /* Under -icount the harts run one at a time, and the others would only
     * run their start code when hart 0 first sleeps, inside some measured
     * region. So hart 0 sleeps here until every hart has come up. */
    uint32_t harts = fdt_count_harts(fdt_addr);
    if (harts > 0) {
        if (harts < PTL_QEMU_MAX_HARTS)
            ptl_qemu_harts_present = harts;
        while (__atomic_load_n(&ptl_qemu_harts_online, __ATOMIC_SEQ_CST) < ptl_qemu_harts_present)
            ptl_ipi_wait();
    }
    ptl_qemu_console_init();
    __libc_init_array();
    ptl_exit(main(0, 0));
}

/* ---- Traps --------------------------------------------------------------------- */

static volatile uint8_t in_trap[PTL_QEMU_MAX_HARTS] __attribute__((section(".data")));

void ptl_qemu_trap(uint32_t hart, uint32_t cause, uint32_t epc, uint32_t tval)
    __attribute__((noreturn));

void ptl_qemu_trap(uint32_t hart, uint32_t cause, uint32_t epc, uint32_t tval)
{
    if (in_trap[hart]) {
        /* The report itself trapped: end the run without another word. */
        ptl_qemu_abort();
    }
    in_trap[hart] = 1;
    /* Hold the console across record and exit: the CRASH line is whole, and
     * no other hart writes after it. */
    ptl_qemu_lock_acquire(&ptl_qemu_console_lock);
    ptl_qemu_stdout_end_line();
    ptl_emit_crash(hart, cause, epc, tval);
    ptl_exit(PTL_EXIT_TRAP);
}
