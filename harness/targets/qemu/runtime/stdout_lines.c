/*
 * picolibc's stdout on the QEMU runtime: each hart collects a line and
 * writes it whole through ptl_console_write, so the library's debug printf
 * from several cores never splits a record line.
 */
#include <stdio.h>

#include "ptl_platform.h"
#include "ptl_qemu_hw.h"

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
