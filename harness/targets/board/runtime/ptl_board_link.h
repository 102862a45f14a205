/*
 * ptl_board_link.h: the serial link between the harness and a board's
 * runner firmware. Flash once, run many: the firmware boots, takes one case
 * payload over the UART, runs it with its console going to a RAM buffer,
 * hands that buffer back, and resets itself for the next payload.
 *
 * Both directions carry frames, so a byte dropped, corrupted or delayed on
 * the cable is found and the piece is sent again:
 *
 *     0x00 | COBS( kind u8 | seq u32 | arg u32 | data[n] | crc32 u32 ) | 0x00
 *
 * COBS (consistent overhead byte stuffing) leaves no 0x00 inside a frame, so
 * a 0x00 always ends one: a damaged frame costs that frame only. The CRC-32
 * (the zlib polynomial, ptl_crc32) covers kind, seq, arg and data; numbers
 * are little-endian. The host asks, the device answers, one frame at a time
 * (stop and wait); every request can be repeated without harm.
 *
 * harness/board/link.py is the host half and reads the PTL_LINK_* numbers
 * below from this file: keep each a plain `#define NAME value` on one line.
 */
#ifndef PTL_BOARD_LINK_H
#define PTL_BOARD_LINK_H

#include <stddef.h>
#include <stdint.h>

/* Host -> device. */
#define PTL_LINK_PING 'P'   /* are you there? answered by READY (arg: payload capacity) */
#define PTL_LINK_START 'S'  /* arg: payload length, data: u32 crc32 of the whole payload */
#define PTL_LINK_DATA 'D'   /* arg: offset, data: payload bytes from there */
#define PTL_LINK_GO 'G'     /* run the payload received; ACK, then the run */
#define PTL_LINK_QUERY 'Q'  /* arg: offset, data: u32 length; 0 asks for FINISHED again */
#define PTL_LINK_DONE 'K'   /* the host has the output: reset for the next payload */
/* Before a payload (after a reset): the console output of the run that was
 * going when the board was reset, as QUERY has it after a run (arg: offset,
 * data: u32 length; 0 asks for the summary, answered FINISHED with a fourth
 * u32, that run's payload CRC). NAK_STATE when nothing was kept. So a case
 * that hangs keeps the variants it finished. */
#define PTL_LINK_LEFTOVER 'L'

/* Device -> host. */
#define PTL_LINK_READY 'R'    /* arg: payload capacity in bytes */
#define PTL_LINK_ACK 'A'      /* seq: the request's, arg: bytes received so far (DATA) or 0 */
#define PTL_LINK_NAK 'N'      /* seq: the request's (0xffffffff if unreadable), arg: a reason below */
#define PTL_LINK_FINISHED 'F' /* arg: output length, data: u32 crc32 of the output, i32 exit status, u32 overflowed */
#define PTL_LINK_OUTPUT 'O'   /* arg: offset, data: output bytes from there */
#define PTL_LINK_BOOT 'B'     /* sent once after every reset */

/* NAK reasons. */
#define PTL_LINK_NAK_FRAME 1     /* bad CRC, bad COBS or too long: send it again */
#define PTL_LINK_NAK_TOO_BIG 2   /* START: the payload exceeds the capacity */
#define PTL_LINK_NAK_ORDER 3     /* DATA beyond what was received, or nothing started */
#define PTL_LINK_NAK_MISSING 4   /* GO before the whole payload arrived */
#define PTL_LINK_NAK_CRC 5       /* GO: the assembled payload fails its CRC */
#define PTL_LINK_NAK_STATE 6     /* a request this state does not take */

/* Largest data part of a frame in either direction, and of a whole frame. */
#define PTL_LINK_MAX_DATA 4096
#define PTL_LINK_HEADER 9
#define PTL_LINK_NO_SEQ 0xffffffff

/* What the platform gives the link. */
int ptl_link_getc(void);                                /* next byte from the host; blocks */
void ptl_link_write(const uint8_t *bytes, size_t len);  /* raw bytes to the host */
void ptl_link_reset(void) __attribute__((noreturn));    /* reboot into a fresh firmware */
/* The console output of the run before the last reset, kept in RAM that a
 * reset leaves alone; NULL when there is none. */
const uint8_t *ptl_link_leftover(uint32_t *len, uint32_t *overflowed, uint32_t *payload_crc);

/* The virtual board's console buffer (board_output.c): started for each
 * payload with its CRC, appended to under the console lock, taken whole at
 * exit (after which nothing is left over). */
void ptl_board_output_start(uint32_t payload_crc);
void ptl_board_output_append(const char *text, size_t len);
const uint8_t *ptl_board_output_take(uint32_t *len, uint32_t *overflowed);

/* Announces the boot, then answers requests until a payload has arrived
 * whole and the host said GO. Returns the payload (at window). */
const uint8_t *ptl_link_receive(uint8_t *window, uint32_t capacity, size_t *len);

/* After the run: announces FINISHED and serves the buffered console output
 * until the host says DONE (or starts over), then resets. */
void ptl_link_serve(const uint8_t *output, uint32_t len, uint32_t overflowed, int32_t status)
    __attribute__((noreturn));

#endif /* PTL_BOARD_LINK_H */
