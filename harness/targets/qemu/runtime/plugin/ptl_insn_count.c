/*
 * ptl_insn_count: a QEMU TCG plugin (API v1, QEMU 7.x) that counts the
 * instructions each vCPU executes inside the runner's measured regions.
 *
 * The runner brackets a region with marker hints on hart 0 (ptl_qemu.h):
 * the k-th BEGIN opens region k, the next END closes it, and every vCPU's
 * instructions executed while a region is open count for that region. The
 * BEGIN marker itself counts, the END marker does not. Markers on other
 * vCPUs are ignored.
 *
 * Counting is per straight-line segment, not per instruction: a translated
 * block is cut into segments at every marker, and one callback at the start
 * of a segment adds its length. A SPLIT marker after each device access of
 * the runtime makes this exact under -icount, where QEMU abandons a block at
 * an I/O instruction and re-executes that instruction on its own.
 * tests/test_count.c checks the counts against minstret (QEMU's exact global
 * instruction clock under -icount) for plain code, device accesses, wfi and
 * an 8-hart fork. (A callback on every instruction is not only slower: it was
 * measured to miss instructions around wfi and interrupts.)
 *
 * Exact and deterministic only with -icount shift=0,sleep=off: vCPUs then
 * run one at a time in a fixed order. Without -icount the per-region split
 * between vCPUs is racy (totals stay right).
 *
 * Arguments: out=PATH (default: QEMU's log, i.e. stderr); budget=N (default
 * none): the most instructions, summed over vCPUs, that one region may take;
 * profile=PATH (default none): a file of address ranges, one a line,
 * "<start hex> <end hex> <name>" (end excluded, sorted, not overlapping), by
 * which each region's instructions are also counted, summed over vCPUs: each
 * instruction for the range holding it, or for "other" (a translation block
 * is cut into segments where it crosses from one range into another, so a
 * range may be a single instruction: bench/qemu_profile.py --by-instruction).
 * A region past its budget is a hang or a livelock (a spinning core never
 * sleeps, so QEMU's deadlock warning never comes): the plugin writes its
 * output at once, says so on stderr (PTL_BUDGET_MESSAGE below) and ends
 * QEMU, so a hang costs the budget's instructions, not a wall-clock timeout.
 * Under -icount the cut falls at the same instruction every time.
 * Output, written at exit, one line per region, then the whole run:
 *     region <k> <count vcpu0> ... <count vcpuN-1>
 *     unclosed <k> <counts...>     (only if the run ended inside a region)
 *     total <counts...>
 * and with profile=, for each closed region, one line per range it ran in:
 *     profile <k> <name> <count>
 *
 * Build: gcc -shared -fPIC -O2 -o libptl_insn_count.so ptl_insn_count.c
 * Run:   qemu-system-riscv32 ... -plugin ./libptl_insn_count.so,out=counts.txt
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../ptl_qemu.h"

/* ---- The part of QEMU's qemu-plugin.h (API v1) that this plugin uses -----------
 * Debian's QEMU has plugin support but ships no header, so the few types and
 * prototypes are declared here, as documented for QEMU 7.x. */

#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;

typedef struct qemu_info_t {
    const char *target_name;
    struct {
        int min;
        int cur;
    } version;
    bool system_emulation;
    union {
        struct {
            int smp_vcpus;
            int max_vcpus;
        } system;
    };
} qemu_info_t;

struct qemu_plugin_tb;
struct qemu_plugin_insn;

enum qemu_plugin_cb_flags {
    QEMU_PLUGIN_CB_NO_REGS,
    QEMU_PLUGIN_CB_R_REGS,
    QEMU_PLUGIN_CB_RW_REGS,
};

typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
                                            qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb,
                                    void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_outs(const char *string);

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;

/* ---- Counting ------------------------------------------------------------------ */

enum segment_kind { SEGMENT_PLAIN = 0, SEGMENT_BEGIN = 1, SEGMENT_END = 2 };

/* A segment's callback data: its profile range (bits 32 up; the "other" range
 * without profile=), its length (bits 2-31) and whether it starts at a marker. */
#define SEGMENT_UDATA(range, n, kind)                                                     \
    ((void *)(((uintptr_t)(range) << 32) | ((uintptr_t)(n) << 2) | (uintptr_t)(kind)))
_Static_assert(sizeof(uintptr_t) >= 8, "the segment data needs a 64-bit host");
#define SEGMENT_LENGTH(data) (((data) >> 2) & 0x3fffffffu)
#define SEGMENT_RANGE(data) ((size_t)((data) >> 32))

#define INSN_HINT(id) (((uint32_t)(id) << 20) | 0x13u)

/* The line on QEMU's log when a region passes its budget; the harness looks
 * for this text (harness/targets/qemu/, BUDGET_MESSAGE). */
#define PTL_BUDGET_MESSAGE "ptl_insn_count: instruction budget exceeded"
/* Exit status of QEMU ended by the budget. */
#define PTL_BUDGET_EXIT 3

static unsigned n_vcpus;
static uint64_t *totals;  /* [n_vcpus], the whole run */
static uint64_t *current; /* [n_vcpus], the open region */
static bool region_open;
static uint64_t *closed;  /* [n_closed * n_vcpus] */
static size_t n_closed, closed_capacity;
static const char *out_path;
static uint64_t budget;        /* 0: none */
static uint64_t region_total;  /* the open region's instructions, all vCPUs */

/* profile=: ranges [start, end) with names, and "other" after them. */
struct range {
    uint64_t start, end;
    char name[128];
};
static struct range *ranges;
static size_t n_ranges;               /* without "other" */
static uint64_t *range_current;       /* [n_ranges + 1], the open region */
static uint64_t *range_closed;        /* [n_closed * (n_ranges + 1)] */
static size_t range_closed_capacity;  /* in regions */

static void on_exit_write(qemu_plugin_id_t id, void *userdata);

static void close_region(void)
{
    if (n_closed == closed_capacity) {
        closed_capacity = closed_capacity ? 2 * closed_capacity : 64;
        closed = realloc(closed, closed_capacity * n_vcpus * sizeof *closed);
        if (!closed) {
            qemu_plugin_outs("ptl_insn_count: out of memory\n");
            abort();
        }
    }
    memcpy(closed + n_closed * n_vcpus, current, n_vcpus * sizeof *current);
    if (ranges) {
        if (n_closed == range_closed_capacity) {
            range_closed_capacity = range_closed_capacity ? 2 * range_closed_capacity : 64;
            range_closed = realloc(range_closed, range_closed_capacity * (n_ranges + 1) * sizeof *range_closed);
            if (!range_closed) {
                qemu_plugin_outs("ptl_insn_count: out of memory\n");
                abort();
            }
        }
        memcpy(range_closed + n_closed * (n_ranges + 1), range_current, (n_ranges + 1) * sizeof *range_current);
    }
    n_closed++;
    region_open = false;
}

static void on_segment(unsigned int vcpu, void *udata)
{
    uintptr_t data = (uintptr_t)udata;
    uint64_t n = SEGMENT_LENGTH(data);
    if (vcpu >= n_vcpus)
        return;
    if (vcpu == 0) {
        if ((data & 3) == SEGMENT_BEGIN) {
            if (region_open) /* BEGIN without END: keep what was counted */
                close_region();
            memset(current, 0, n_vcpus * sizeof *current);
            if (ranges)
                memset(range_current, 0, (n_ranges + 1) * sizeof *range_current);
            region_total = 0;
            region_open = true;
        } else if ((data & 3) == SEGMENT_END && region_open) {
            close_region();
        }
    }
    totals[vcpu] += n;
    if (region_open) {
        current[vcpu] += n;
        region_total += n;
        if (ranges)
            range_current[SEGMENT_RANGE(data)] += n;
        if (budget && region_total > budget) {
            on_exit_write(0, NULL);
            /* stderr, not qemu_plugin_outs: QEMU's log shows plugin output only with -d plugin. */
            fprintf(stderr, PTL_BUDGET_MESSAGE " in region %zu: more than %" PRIu64 " instructions\n",
                    n_closed, budget);
            fflush(stderr);
            /* _exit, not exit: QEMU's own exit handlers are not safe from a vCPU thread. */
            _exit(PTL_BUDGET_EXIT);
        }
    }
}

static int marker_kind(struct qemu_plugin_insn *insn)
{
    if (qemu_plugin_insn_size(insn) != 4)
        return -1;
    uint32_t word;
    memcpy(&word, qemu_plugin_insn_data(insn), 4); /* RISC-V is little-endian, so is the host */
    if (word == INSN_HINT(PTL_QEMU_MARK_BEGIN))
        return SEGMENT_BEGIN;
    if (word == INSN_HINT(PTL_QEMU_MARK_END))
        return SEGMENT_END;
    if (word == INSN_HINT(PTL_QEMU_MARK_SPLIT))
        return SEGMENT_PLAIN;
    return -1;
}

/* The range holding addr, or n_ranges ("other"). */
static size_t range_of(uint64_t addr)
{
    size_t lo = 0, hi = n_ranges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (addr < ranges[mid].start)
            hi = mid;
        else if (addr >= ranges[mid].end)
            lo = mid + 1;
        else
            return mid;
    }
    return n_ranges;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    if (n == 0)
        return;
    size_t start = 0;
    int start_kind = marker_kind(qemu_plugin_tb_get_insn(tb, 0));
    if (start_kind < 0)
        start_kind = SEGMENT_PLAIN;
    size_t start_range = ranges ? range_of(qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, 0))) : 0;
    for (size_t i = 1; i <= n; i++) {
        int kind = SEGMENT_PLAIN;
        size_t range = start_range;
        if (i < n) {
            struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
            kind = marker_kind(insn);
            if (ranges)
                range = range_of(qemu_plugin_insn_vaddr(insn));
        }
        if (i == n || kind >= 0 || range != start_range) {
            qemu_plugin_register_vcpu_insn_exec_cb(qemu_plugin_tb_get_insn(tb, start), on_segment,
                                                   QEMU_PLUGIN_CB_NO_REGS,
                                                   SEGMENT_UDATA(start_range, i - start, start_kind));
            start = i;
            start_kind = kind >= 0 ? kind : SEGMENT_PLAIN;
            start_range = range;
        }
    }
}

static void write_counts(FILE *out, const char *label, long index, const uint64_t *counts)
{
    fprintf(out, "%s", label);
    if (index >= 0)
        fprintf(out, " %ld", index);
    for (unsigned v = 0; v < n_vcpus; v++)
        fprintf(out, " %" PRIu64, counts[v]);
    fprintf(out, "\n");
}

static void on_exit_write(qemu_plugin_id_t id, void *userdata)
{
    (void)id;
    (void)userdata;
    FILE *out = out_path ? fopen(out_path, "w") : NULL;
    if (out_path && !out) {
        qemu_plugin_outs("ptl_insn_count: cannot open the out= file\n");
        return;
    }
    char *text = NULL;
    size_t text_len = 0;
    if (!out)
        out = open_memstream(&text, &text_len);
    for (size_t k = 0; k < n_closed; k++)
        write_counts(out, "region", (long)k, closed + k * n_vcpus);
    if (region_open)
        write_counts(out, "unclosed", (long)n_closed, current);
    write_counts(out, "total", -1, totals);
    for (size_t k = 0; ranges && k < n_closed; k++)
        for (size_t r = 0; r <= n_ranges; r++) {
            uint64_t count = range_closed[k * (n_ranges + 1) + r];
            if (count)
                fprintf(out, "profile %zu %s %" PRIu64 "\n", k, r < n_ranges ? ranges[r].name : "other", count);
        }
    fclose(out);
    if (text) {
        qemu_plugin_outs(text);
        free(text);
    }
}

/* Reads profile=PATH; 0, or -1 after one line on stderr. */
static int read_ranges(const char *path)
{
    FILE *in = fopen(path, "r");
    if (!in) {
        fprintf(stderr, "ptl_insn_count: cannot read the profile= file '%s'\n", path);
        return -1;
    }
    size_t capacity = 0;
    char line[256];
    while (fgets(line, sizeof line, in)) {
        struct range r;
        if (sscanf(line, "%" SCNx64 " %" SCNx64 " %127s", &r.start, &r.end, r.name) != 3 || r.end <= r.start ||
            (n_ranges && r.start < ranges[n_ranges - 1].end)) {
            fprintf(stderr, "ptl_insn_count: %s line %zu: expected '<start hex> <end hex> <name>', "
                    "sorted and not overlapping\n", path, n_ranges + 1);
            fclose(in);
            return -1;
        }
        if (n_ranges == capacity) {
            capacity = capacity ? 2 * capacity : 256;
            ranges = realloc(ranges, capacity * sizeof *ranges);
            if (!ranges) {
                fclose(in);
                return -1;
            }
        }
        ranges[n_ranges++] = r;
    }
    fclose(in);
    if (!n_ranges) {
        fprintf(stderr, "ptl_insn_count: the profile= file '%s' has no ranges\n", path);
        return -1;
    }
    range_current = calloc(n_ranges + 1, sizeof *range_current);
    return range_current ? 0 : -1;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                           char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0) {
            out_path = argv[i] + 4;
        } else if (strncmp(argv[i], "budget=", 7) == 0) {
            char *end;
            budget = strtoull(argv[i] + 7, &end, 10);
            if (*end || argv[i][7] == '\0') {
                fprintf(stderr, "ptl_insn_count: budget= takes a whole number, not '%s'\n",
                        argv[i] + 7);
                return -1;
            }
        } else if (strncmp(argv[i], "profile=", 8) == 0) {
            if (read_ranges(argv[i] + 8) != 0)
                return -1;
        } else {
            fprintf(stderr, "ptl_insn_count: unknown argument '%s' (expected out=PATH, "
                    "budget=N or profile=PATH)\n", argv[i]);
            return -1;
        }
    }
    if (!info->system_emulation) {
        fprintf(stderr, "ptl_insn_count: needs full-system emulation\n");
        return -1;
    }
    n_vcpus = (unsigned)(info->system.max_vcpus > 0 ? info->system.max_vcpus : 1);
    totals = calloc(n_vcpus, sizeof *totals);
    current = calloc(n_vcpus, sizeof *current);
    if (!totals || !current)
        return -1;
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_exit_write, NULL);
    return 0;
}
