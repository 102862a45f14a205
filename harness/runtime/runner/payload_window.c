/*
 * A payload in a memory window: where QEMU's generic loader and GVSOC's ELF
 * segment put it. Built with PTL_EMBEDDED_PAYLOAD (harness/delivery.py), a
 * runner falls back to the payload compiled in when the window holds none.
 */
#include "ptl_platform.h"
#include "ptl_runner.h"

#ifdef PTL_EMBEDDED_PAYLOAD
/* harness/payload.py: payload_as_c_source */
extern const uint8_t ptl_embedded_payload[];
extern const uint32_t ptl_embedded_payload_len;
#endif

static uint32_t read_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

const uint8_t *ptl_payload_in_window(const uint8_t *window, uint32_t capacity, const char *missing,
                                     const char *too_long, size_t *len, const char **why)
{
    if (read_le32(window) != PTL_PAYLOAD_MAGIC) {
#ifdef PTL_EMBEDDED_PAYLOAD
        *len = ptl_embedded_payload_len;
        return ptl_embedded_payload;
#else
        *why = missing;
        return NULL;
#endif
    }
    uint32_t total = read_le32(window + 8);
    if (total < 16 || total > capacity) {
        *why = too_long;
        return NULL;
    }
    *len = total;
    return window;
}
