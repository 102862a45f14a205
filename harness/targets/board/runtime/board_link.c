/*
 * Device half of the serial link (ptl_board_link.h): framing, CRC, and the
 * two loops of a run, receiving the payload and serving the output. It
 * knows nothing of the UART; the platform gives it ptl_link_getc,
 * ptl_link_write and ptl_link_reset.
 */
#include "ptl_board_link.h"

#include <string.h>

#include "ptl_protocol.h"

#define MAX_FRAME (PTL_LINK_HEADER + PTL_LINK_MAX_DATA + 4)
/* COBS adds one byte per 254 and one at the start. */
#define MAX_ENCODED (MAX_FRAME + MAX_FRAME / 254 + 2)

struct frame {
    uint8_t kind;
    uint32_t seq;
    uint32_t arg;
    const uint8_t *data;
    uint32_t len;
};

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- Sending ------------------------------------------------------------------- */

static void send(uint8_t kind, uint32_t seq, uint32_t arg, const uint8_t *data, uint32_t len)
{
    static uint8_t raw[MAX_FRAME];
    static uint8_t out[MAX_ENCODED + 1];
    if (len > PTL_LINK_MAX_DATA)
        len = PTL_LINK_MAX_DATA;
    raw[0] = kind;
    put_u32(raw + 1, seq);
    put_u32(raw + 5, arg);
    memcpy(raw + PTL_LINK_HEADER, data, len);
    uint32_t n = PTL_LINK_HEADER + len;
    put_u32(raw + n, ptl_crc32(0, raw, n));
    n += 4;

    /* A 0x00 ends whatever came before, then COBS: each block starts with
     * the distance to the next zero. */
    out[0] = 0;
    uint32_t code_at = 1, o = 2;
    uint8_t code = 1;
    for (uint32_t i = 0; i < n; i++) {
        if (raw[i] == 0) {
            out[code_at] = code;
            code_at = o++;
            code = 1;
        } else {
            out[o++] = raw[i];
            if (++code == 0xff) {
                out[code_at] = code;
                code_at = o++;
                code = 1;
            }
        }
    }
    out[code_at] = code;
    out[o++] = 0;
    ptl_link_write(out, o);
}

/* ---- Receiving ------------------------------------------------------------------ */

/* Reads up to the next 0x00 and decodes. Returns 1 with a checked frame, 0
 * for an empty frame (ignored), -1 for a damaged one. */
static int read_frame(struct frame *f)
{
    static uint8_t encoded[MAX_ENCODED];
    static uint8_t raw[MAX_FRAME];
    uint32_t n = 0;
    int too_long = 0;
    for (;;) {
        int c = ptl_link_getc();
        if (c == 0)
            break;
        if (n < sizeof encoded)
            encoded[n++] = (uint8_t)c;
        else
            too_long = 1;
    }
    if (n == 0 && !too_long)
        return 0;
    if (too_long)
        return -1;
    uint32_t r = 0;
    for (uint32_t i = 0; i < n;) {
        uint8_t code = encoded[i++];
        if (code == 0 || i + code - 1 > n)
            return -1;
        for (uint32_t k = 1; k < code; k++) {
            if (r >= sizeof raw)
                return -1;
            raw[r++] = encoded[i++];
        }
        if (code < 0xff && i < n) {
            if (r >= sizeof raw)
                return -1;
            raw[r++] = 0;
        }
    }
    if (r < PTL_LINK_HEADER + 4 || ptl_crc32(0, raw, r - 4) != get_u32(raw + r - 4))
        return -1;
    f->kind = raw[0];
    f->seq = get_u32(raw + 1);
    f->arg = get_u32(raw + 5);
    f->data = raw + PTL_LINK_HEADER;
    f->len = r - 4 - PTL_LINK_HEADER;
    return 1;
}

/* The next well-formed request; damaged ones are answered NAK on the way. */
static void next_request(struct frame *f)
{
    for (;;) {
        int got = read_frame(f);
        if (got > 0)
            return;
        if (got < 0)
            send(PTL_LINK_NAK, PTL_LINK_NO_SEQ, PTL_LINK_NAK_FRAME, NULL, 0);
    }
}

/* LEFTOVER: what the run before the reset wrote, summary or a piece. */
static void serve_leftover(const struct frame *f)
{
    uint32_t len = 0, overflowed = 0, payload_crc = 0;
    const uint8_t *output = ptl_link_leftover(&len, &overflowed, &payload_crc);
    if (output == NULL || f->len != 4) {
        send(PTL_LINK_NAK, f->seq, PTL_LINK_NAK_STATE, NULL, 0);
        return;
    }
    uint32_t want = get_u32(f->data);
    if (want == 0) {
        uint8_t summary[16];
        put_u32(summary, ptl_crc32(0, output, len));
        put_u32(summary + 4, (uint32_t)-1);
        put_u32(summary + 8, overflowed);
        put_u32(summary + 12, payload_crc);
        send(PTL_LINK_FINISHED, f->seq, len, summary, sizeof summary);
    } else if (f->arg > len) {
        send(PTL_LINK_NAK, f->seq, PTL_LINK_NAK_ORDER, NULL, 0);
    } else {
        send(PTL_LINK_OUTPUT, f->seq, f->arg, output + f->arg, len - f->arg < want ? len - f->arg : want);
    }
}

const uint8_t *ptl_link_receive(uint8_t *window, uint32_t capacity, size_t *len)
{
    uint32_t total = 0, crc = 0, received = 0;
    int started = 0;
    uint8_t cap[4];
    put_u32(cap, capacity);
    send(PTL_LINK_BOOT, 0, capacity, NULL, 0);
    for (;;) {
        struct frame f;
        next_request(&f);
        switch (f.kind) {
        case PTL_LINK_PING:
            send(PTL_LINK_READY, f.seq, capacity, cap, 4);
            break;
        case PTL_LINK_START:
            if (f.len != 4) {
                send(PTL_LINK_NAK, f.seq, PTL_LINK_NAK_FRAME, NULL, 0);
            } else if (f.arg > capacity) {
                send(PTL_LINK_NAK, f.seq, PTL_LINK_NAK_TOO_BIG, cap, 4);
            } else {
                started = 1;
                total = f.arg;
                crc = get_u32(f.data);
                received = 0;
                send(PTL_LINK_ACK, f.seq, 0, NULL, 0);
            }
            break;
        case PTL_LINK_DATA:
            if (!started || f.arg > received || f.len > total - f.arg) {
                send(PTL_LINK_NAK, f.seq, PTL_LINK_NAK_ORDER, NULL, 0);
            } else {
                memcpy(window + f.arg, f.data, f.len);
                if (f.arg + f.len > received)
                    received = f.arg + f.len;
                send(PTL_LINK_ACK, f.seq, received, NULL, 0);
            }
            break;
        case PTL_LINK_GO:
            if (!started || received < total) {
                send(PTL_LINK_NAK, f.seq, PTL_LINK_NAK_MISSING, NULL, 0);
            } else if (ptl_crc32(0, window, total) != crc) {
                send(PTL_LINK_NAK, f.seq, PTL_LINK_NAK_CRC, NULL, 0);
            } else {
                send(PTL_LINK_ACK, f.seq, total, NULL, 0);
                *len = total;
                return window;
            }
            break;
        case PTL_LINK_LEFTOVER:
            serve_leftover(&f);
            break;
        default:
            send(PTL_LINK_NAK, f.seq, PTL_LINK_NAK_STATE, NULL, 0);
        }
    }
}

void ptl_link_serve(const uint8_t *output, uint32_t len, uint32_t overflowed, int32_t status)
{
    uint8_t summary[12];
    put_u32(summary, ptl_crc32(0, output, len));
    put_u32(summary + 4, (uint32_t)status);
    put_u32(summary + 8, overflowed);
    send(PTL_LINK_FINISHED, 0, len, summary, sizeof summary);
    for (;;) {
        struct frame f;
        next_request(&f);
        if (f.kind == PTL_LINK_QUERY && f.len == 4) {
            uint32_t want = get_u32(f.data);
            if (want == 0)
                send(PTL_LINK_FINISHED, f.seq, len, summary, sizeof summary);
            else if (f.arg > len)
                send(PTL_LINK_NAK, f.seq, PTL_LINK_NAK_ORDER, NULL, 0);
            else
                send(PTL_LINK_OUTPUT, f.seq, f.arg, output + f.arg,
                     len - f.arg < want ? len - f.arg : want);
        } else if (f.kind == PTL_LINK_DONE) {
            send(PTL_LINK_ACK, f.seq, 0, NULL, 0);
            ptl_link_reset();
        } else if (f.kind == PTL_LINK_PING || f.kind == PTL_LINK_START) {
            ptl_link_reset(); /* a host starting over: come back fresh */
        } else {
            send(PTL_LINK_NAK, f.seq, PTL_LINK_NAK_STATE, NULL, 0);
        }
    }
}
