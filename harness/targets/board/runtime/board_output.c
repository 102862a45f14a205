/*
 * The virtual board's console output: a buffer in the upper half of the
 * payload window, which the host reads back over the link after the run,
 * and after a reset too (PTL_LINK_LEFTOVER): a case that hangs keeps the
 * variants it finished.
 */
#include <stdint.h>
#include <string.h>

#include "ptl_board_link.h"
#include "ptl_qemu_hw.h"

/* The console buffer's bookkeeping lives at the end of its window, not in
 * .bss: QEMU's system_reset reloads the ELF and the boot code clears .bss,
 * but neither touches the window, so after a reset the host can still read
 * what a hung run wrote (PTL_LINK_LEFTOVER). */
struct output_book {
    uint32_t magic;
    uint32_t len;
    uint32_t overflowed;
    uint32_t payload_crc;
};
#define OUTPUT_BOOK_MAGIC 0x4c54504fu /* "OPTL" */
#define OUTPUT_ROOM (PTL_QEMU_BOARD_OUTPUT_MAX - sizeof(struct output_book))
#define OUTPUT_BOOK ((volatile struct output_book *)(uintptr_t)(PTL_QEMU_BOARD_OUTPUT_ADDR + OUTPUT_ROOM))

void ptl_board_output_start(uint32_t payload_crc)
{
    OUTPUT_BOOK->len = 0;
    OUTPUT_BOOK->overflowed = 0;
    OUTPUT_BOOK->payload_crc = payload_crc;
    OUTPUT_BOOK->magic = OUTPUT_BOOK_MAGIC;
}

/* Called under the console lock. */
void ptl_board_output_append(const char *text, size_t len)
{
    uint8_t *output = (uint8_t *)(uintptr_t)PTL_QEMU_BOARD_OUTPUT_ADDR;
    uint32_t used = OUTPUT_BOOK->len;
    size_t room = OUTPUT_ROOM - used;
    if (len > room) {
        OUTPUT_BOOK->overflowed = 1;
        len = room;
    }
    memcpy(output + used, text, len);
    OUTPUT_BOOK->len = used + (uint32_t)len;
}

const uint8_t *ptl_board_output_take(uint32_t *len, uint32_t *overflowed)
{
    *len = OUTPUT_BOOK->len;
    *overflowed = OUTPUT_BOOK->overflowed;
    OUTPUT_BOOK->magic = 0; /* served whole: nothing is left over */
    return (const uint8_t *)(uintptr_t)PTL_QEMU_BOARD_OUTPUT_ADDR;
}

const uint8_t *ptl_link_leftover(uint32_t *len, uint32_t *overflowed, uint32_t *payload_crc)
{
    if (OUTPUT_BOOK->magic != OUTPUT_BOOK_MAGIC || OUTPUT_BOOK->len > OUTPUT_ROOM)
        return NULL;
    *len = OUTPUT_BOOK->len;
    *overflowed = OUTPUT_BOOK->overflowed;
    *payload_crc = OUTPUT_BOOK->payload_crc;
    return (const uint8_t *)(uintptr_t)PTL_QEMU_BOARD_OUTPUT_ADDR;
}
