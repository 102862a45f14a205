/*
 * ptl_platform.h: what the table-driven runner needs from a target.
 *
 * Each target provides these in its own runtime directory
 * (targets/host/runtime/platform_host.c; targets/qemu/runtime/platform_qemu.c with its
 * payload delivery, loader/ or the board's; ...), next to
 * its implementation of the pmsis team calls.
 */
#ifndef PTL_PLATFORM_H
#define PTL_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

/* Called first by the runner's main(); argc/argv are 0/NULL on bare metal. */
void ptl_platform_init(int argc, char **argv);

/* The case payload delivered at run time (a file on host, a memory image
 * placed by the loader on QEMU). Returns NULL and sets *why when absent. */
const uint8_t *ptl_payload(size_t *len, const char **why);

/* For a platform whose payload is placed in a memory window of `capacity`
 * bytes (runner/payload_window.c): the payload there, or NULL with *why set
 * to `missing` (no payload magic) or `too_long` (a length outside
 * 16..capacity). Built with PTL_EMBEDDED_PAYLOAD, the compiled-in payload
 * where the window holds none. */
const uint8_t *ptl_payload_in_window(const uint8_t *window, uint32_t capacity, const char *missing,
                                     const char *too_long, size_t *len, const char **why);

/* Raw console output: stdout on host, the UART on QEMU. */
void ptl_console_write(const char *text, size_t len);
/* Hold the console (recursive): a record is numbered, formatted and written
 * under it, so a trap report from another core never garbles a record. */
void ptl_console_lock(void);
void ptl_console_unlock(void);

/* Ends the program with an exit status. */
void ptl_exit(int status) __attribute__((noreturn));

/* Bracket the measured region of one variant. On host they read a clock; on
 * QEMU they execute marker instructions that the counting plugin sees. */
void ptl_region_begin(uint32_t variant);
void ptl_region_end(uint32_t variant);
/* Elapsed time of the last region in the target's native unit, or 0 when the
 * target measures outside the program (QEMU's plugin). */
uint64_t ptl_region_elapsed(void);

/* ---- Far memory and the DMA (runtime/runner/far_memory.c; GVSOC overrides) ----
 * A tiled layer keeps its tensors in far memory (L2 on GVSOC, where a PULP
 * deployment keeps them) and moves each tile into near memory (L1) and each
 * result out with the DMA, while the cores compute. On targets with one flat
 * memory both are malloc and a transfer is a copy done on issue. */

/* Memory of each kind, freed with free(); NULL when that memory is full
 * (near memory never falls back to far memory). */
void *ptl_far_malloc(size_t n);
void *ptl_near_malloc(size_t n);
/* Starts a copy of `rows` rows of `row_bytes` bytes, `far_stride` bytes apart
 * in far memory and contiguous in near memory; to_far says the direction.
 * Returns the transfer's id for ptl_dma_wait. */
int ptl_dma_start(void *near, const void *far, uint32_t row_bytes, uint32_t rows, uint32_t far_stride,
                  int to_far);
/* Returns when the transfer `id` has finished (its bytes are in place). */
void ptl_dma_wait(int id);

/* Exit statuses shared by every target's runtime and the Python decoder. */
enum {
    PTL_EXIT_OK = 0,
    PTL_EXIT_BAD_PAYLOAD = 10,
    PTL_EXIT_OUT_OF_MEMORY = 11,
    PTL_EXIT_TRAP = 12,
    PTL_EXIT_DEADLOCK = 13, /* host team: cores wait at a barrier the others never reach */
    PTL_EXIT_NO_PROGRESS = 14, /* a measured region passed its budget (GVSOC's watchdog) */
};

#endif /* PTL_PLATFORM_H */
