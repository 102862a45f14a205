/* Writer side of the record protocol described in ptl_protocol.h. */
#include "ptl_protocol.h"

#include "ptl_platform.h"

#include <string.h>

#define MAX_BODY (24 + PTL_TENSOR_CHUNK * 4)

static uint32_t next_seq;

uint32_t ptl_crc32(uint32_t crc, const void *data, size_t len)
{
    /* Nibble table: small enough for an MCU, fast enough for tensors. */
    static const uint32_t table[16] = {
        0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac, 0x76dc4190, 0x6b6b51f4,
        0x4db26158, 0x5005713c, 0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
        0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c,
    };
    const uint8_t *p = data;
    crc = ~crc;
    for (size_t i = 0; i < len; i++) {
        crc ^= p[i];
        crc = (crc >> 4) ^ table[crc & 15];
        crc = (crc >> 4) ^ table[crc & 15];
    }
    return ~crc;
}

static char *put_hex(char *out, const uint8_t *bytes, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        *out++ = digits[bytes[i] >> 4];
        *out++ = digits[bytes[i] & 15];
    }
    return out;
}

static char *put_u32_hex(char *out, uint32_t value)
{
    for (int shift = 28; shift >= 0; shift -= 4)
        *out++ = "0123456789abcdef"[(value >> shift) & 15];
    return out;
}

static void emit(char kind, const uint8_t *body, size_t len)
{
    static char line[16 + 2 * 8 + 2 * MAX_BODY + 16];
    uint8_t head[5];
    ptl_console_lock(); /* line and next_seq are shared by every core */
    uint32_t seq = next_seq++;
    for (int i = 0; i < 4; i++)
        head[i] = (uint8_t)(seq >> (8 * i));
    head[4] = (uint8_t)kind;
    uint32_t crc = ptl_crc32(ptl_crc32(0, head, 5), body, len);

    char *p = line;
    memcpy(p, "@PTL1 ", 6);
    p = put_u32_hex(p + 6, seq);
    *p++ = ' ';
    *p++ = kind;
    *p++ = ' ';
    p = put_hex(p, body, len);
    *p++ = ' ';
    p = put_u32_hex(p, crc);
    *p++ = '\n';
    ptl_console_write(line, (size_t)(p - line));
    ptl_console_unlock();
}

static uint8_t *put_u32(uint8_t *out, uint32_t value)
{
    for (int i = 0; i < 4; i++)
        out[i] = (uint8_t)(value >> (8 * i));
    return out + 4;
}

void ptl_emit_begin(uint32_t payload_crc, uint32_t n_variants)
{
    uint8_t body[8];
    put_u32(put_u32(body, payload_crc), n_variants);
    emit(PTL_REC_BEGIN, body, sizeof body);
}

void ptl_emit_variant(uint32_t variant, int32_t status, uint32_t region, uint64_t elapsed)
{
    uint8_t body[20], *p = body;
    p = put_u32(p, variant);
    p = put_u32(p, (uint32_t)status);
    p = put_u32(p, region);
    p = put_u32(p, (uint32_t)elapsed);
    put_u32(p, (uint32_t)(elapsed >> 32));
    emit(PTL_REC_VARIANT, body, sizeof body);
}

void ptl_emit_tensor(uint32_t variant, uint32_t tensor, uint32_t dtype,
                     const void *data, uint32_t count)
{
    static uint8_t body[MAX_BODY];
    uint32_t size = dtype == PTL_DTYPE_F16 ? 2 : 4;
    const uint8_t *bytes = data;
    uint32_t first = 0;
    do {
        uint32_t n = count - first < PTL_TENSOR_CHUNK ? count - first : PTL_TENSOR_CHUNK;
        uint8_t *p = body;
        p = put_u32(p, variant);
        p = put_u32(p, tensor);
        p = put_u32(p, dtype);
        p = put_u32(p, count);
        p = put_u32(p, first);
        p = put_u32(p, n);
        memcpy(p, bytes + (size_t)first * size, (size_t)n * size);
        emit(PTL_REC_TENSOR, body, (size_t)(p - body) + (size_t)n * size);
        first += n;
    } while (first < count);
}

void ptl_emit_error(uint32_t variant, int32_t code, const char *text)
{
    uint8_t body[8 + 200], *p = body;
    size_t len = strlen(text);
    if (len > 200)
        len = 200;
    p = put_u32(p, variant);
    p = put_u32(p, (uint32_t)code);
    memcpy(p, text, len);
    emit(PTL_REC_ERROR, body, 8 + len);
}

void ptl_emit_describe(const char *text)
{
    size_t len = strlen(text);
    emit(PTL_REC_DESCRIBE, (const uint8_t *)text, len < MAX_BODY ? len : MAX_BODY);
}

void ptl_emit_crash(uint32_t hart, uint32_t cause, uint32_t epc, uint32_t tval)
{
    uint8_t body[16], *p = body;
    p = put_u32(p, hart);
    p = put_u32(p, cause);
    p = put_u32(p, epc);
    put_u32(p, tval);
    emit(PTL_REC_CRASH, body, sizeof body);
}

void ptl_emit_counts(uint32_t region, uint32_t n_cores, const uint32_t *cycles,
                     const uint32_t *instructions)
{
    uint8_t body[8 + 8 * PTL_MAX_COUNTS_CORES], *p = body;
    if (n_cores > PTL_MAX_COUNTS_CORES)
        n_cores = PTL_MAX_COUNTS_CORES;
    p = put_u32(p, region);
    p = put_u32(p, n_cores);
    for (uint32_t i = 0; i < n_cores; i++)
        p = put_u32(p, cycles[i]);
    for (uint32_t i = 0; i < n_cores; i++)
        p = put_u32(p, instructions[i]);
    emit(PTL_REC_COUNTS, body, (size_t)(p - body));
}

void ptl_emit_spill(uint32_t region, uint32_t l2_bytes)
{
    uint8_t body[8], *p = body;
    p = put_u32(p, region);
    put_u32(p, l2_bytes);
    emit(PTL_REC_SPILL, body, sizeof body);
}

void ptl_emit_end(void)
{
    uint8_t body[4];
    put_u32(body, next_seq);
    emit(PTL_REC_END, body, sizeof body);
}
