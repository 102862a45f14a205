/*
 * QEMU flavour of ptl_platform.h: the payload is a memory image that QEMU's
 * generic loader places at PTL_QEMU_PAYLOAD_ADDR, the console is the NS16550
 * UART (or semihosting, see below), exit goes through the sifive_test
 * device, and a measured region is
 * bracketed by marker instructions that the counting plugin
 * (plugin/ptl_insn_count.c) sees. The program never measures itself:
 * ptl_region_elapsed() is 0 and the harness reads the plugin's counts.
 *
 * Built with -DPTL_SERIAL_BOARD, the same runtime is the firmware of a
 * virtual board (harness/targets/board/runtime/qemu_virt_board.c): the payload comes
 * over the UART, the console goes to a buffer the host reads back, exit
 * hands that buffer over, and regions measure themselves.
 */
#include <stdio.h>
#include <string.h>

#include "ptl_platform.h"
#include "ptl_protocol.h"
#include "ptl_qemu_hw.h"
#include "ptl_runner.h"

#define UART_THR 0
#define UART_LSR 5
#define UART_LSR_THRE 0x20

#define TEST_PASS 0x5555u
#define TEST_FAIL 0x3333u

struct ptl_qemu_lock ptl_qemu_console_lock;

void ptl_platform_init(int argc, char **argv)
{
    (void)argc;
    (void)argv;
}

static uint32_t read_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#ifdef PTL_EMBEDDED_PAYLOAD
/* Compiled-in payload (harness/payload.py: payload_as_c_source); a payload
 * placed by the loader still wins. */
extern const uint8_t ptl_embedded_payload[];
extern const uint32_t ptl_embedded_payload_len;
#endif

#ifndef PTL_SERIAL_BOARD
const uint8_t *ptl_payload(size_t *len, const char **why)
{
    const uint8_t *payload = (const uint8_t *)(uintptr_t)PTL_QEMU_PAYLOAD_ADDR;
#ifdef PTL_EMBEDDED_PAYLOAD
    if (read_le32(payload) != PTL_PAYLOAD_MAGIC) {
        *len = ptl_embedded_payload_len;
        return ptl_embedded_payload;
    }
#endif
    if (read_le32(payload) != PTL_PAYLOAD_MAGIC) {
        *why = "no payload at the loader address (expected magic PTLP at "
               PTL_STR(PTL_QEMU_PAYLOAD_ADDR) ")";
        return NULL;
    }
    uint32_t total = read_le32(payload + 8);
    if (total < 16 || total > PTL_QEMU_PAYLOAD_MAX) {
        *why = "payload total_len is outside 16..PTL_QEMU_PAYLOAD_MAX";
        return NULL;
    }
    *len = total;
    return payload;
}
#endif

/* ---- Console ----------------------------------------------------------------
 * The NS16550 UART, or semihosting when QEMU runs with -semihosting-config
 * enable=on. Both end up on QEMU's stdout, in program order; semihosting
 * writes a whole line per call, about 50x faster than the UART, which costs
 * two device accesses (and, under -icount, two block restarts) per byte.
 * The UART stays the path for a console on a pty or socket. */

#define SEMIHOST_SYS_OPEN 0x01
#define SEMIHOST_SYS_WRITE 0x05
#define SEMIHOST_MODE_W 4

extern long ptl_semihost_call(long op, const void *arg);
extern char ptl_semihost_probe_trap[];

/* Semihosting handle of the console, or -1 for the UART. Chosen before
 * main() and never changed. */
static long console_handle = -1;

void ptl_qemu_console_init(void)
{
    uintptr_t vector;
    __asm__ volatile("csrrw %0, mtvec, %1" : "=r"(vector) : "r"(ptl_semihost_probe_trap));
    const long open_args[3] = {(long)":tt", SEMIHOST_MODE_W, 3};
    long handle = ptl_semihost_call(SEMIHOST_SYS_OPEN, open_args);
    __asm__ volatile("csrw mtvec, %0" ::"r"(vector));
    console_handle = handle;
}

void ptl_qemu_uart_put(char c)
{
    while (!(ptl_mmio_read8(PTL_QEMU_UART_BASE + UART_LSR) & UART_LSR_THRE))
        ;
    ptl_mmio_write8(PTL_QEMU_UART_BASE + UART_THR, (uint8_t)c);
}

void ptl_console_lock(void) { ptl_qemu_lock_acquire(&ptl_qemu_console_lock); }

void ptl_console_unlock(void) { ptl_qemu_lock_release(&ptl_qemu_console_lock); }

void ptl_console_write(const char *text, size_t len)
{
    ptl_qemu_lock_acquire(&ptl_qemu_console_lock);
#ifdef PTL_SERIAL_BOARD
    ptl_board_output_append(text, len);
#else
    if (console_handle >= 0) {
        while (len) {
            long args[3] = {console_handle, (long)text, (long)len};
            long left = ptl_semihost_call(SEMIHOST_SYS_WRITE, args);
            if (left < 0 || (size_t)left >= len)
                break; /* the host refused: nothing else can be done */
            text += len - (size_t)left;
            len = (size_t)left;
        }
    } else {
        for (size_t i = 0; i < len; i++)
            ptl_qemu_uart_put(text[i]);
    }
#endif
    ptl_qemu_lock_release(&ptl_qemu_console_lock);
}

/* picolibc's stdout: each hart collects a line and writes it whole, so the
 * library's debug printf from several cores never splits a record line. */
#define LINE_MAX_BYTES 160

static struct {
    char bytes[LINE_MAX_BYTES];
    uint32_t len;
} line_buffer[PTL_QEMU_MAX_HARTS];

void ptl_qemu_stdout_flush(void)
{
    uint32_t hart = ptl_hart_id();
    if (hart < PTL_QEMU_MAX_HARTS && line_buffer[hart].len) {
        ptl_console_write(line_buffer[hart].bytes, line_buffer[hart].len);
        line_buffer[hart].len = 0;
    }
}

void ptl_qemu_stdout_end_line(void)
{
    uint32_t hart = ptl_hart_id();
    if (hart < PTL_QEMU_MAX_HARTS && line_buffer[hart].len) {
        if (line_buffer[hart].len < LINE_MAX_BYTES)
            line_buffer[hart].bytes[line_buffer[hart].len++] = '\n';
        ptl_qemu_stdout_flush();
    }
}

static int stdout_put(char c, FILE *file)
{
    (void)file;
    uint32_t hart = ptl_hart_id();
    line_buffer[hart].bytes[line_buffer[hart].len++] = c;
    if (c == '\n' || line_buffer[hart].len == LINE_MAX_BYTES)
        ptl_qemu_stdout_flush();
    return (unsigned char)c;
}

static int stdout_flush(FILE *file)
{
    (void)file;
    ptl_qemu_stdout_flush();
    return 0;
}

static FILE uart_stream = FDEV_SETUP_STREAM(stdout_put, NULL, stdout_flush, _FDEV_SETUP_WRITE);
FILE *const stdin = &uart_stream;
FILE *const stdout = &uart_stream;
FILE *const stderr = &uart_stream;

/* ---- Exit -------------------------------------------------------------------- */

#ifndef PTL_SERIAL_BOARD
void ptl_exit(int status)
{
    ptl_qemu_stdout_end_line();
    uint32_t code = (uint32_t)status & 0xffffu;
    ptl_mmio_write32(PTL_QEMU_TEST_BASE, code ? (code << 16) | TEST_FAIL : TEST_PASS);
    for (;;)
        __asm__ volatile("wfi");
}

#endif

/* picolibc's exit() and abort() end here. */
void _exit(int status) { ptl_exit(status); }

void ptl_qemu_fatal(const char *text)
{
    ptl_emit_error(PTL_NO_VARIANT, -1, text);
    ptl_exit(3);
}

#ifndef PTL_SERIAL_BOARD
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
#endif
