/*
 * ptl_runner.h: the case model shared by the runner and its operation tables.
 *
 * Payload layout (little-endian; harness/payload.py writes it):
 *
 *     u32 magic "PTLP", u32 version, u32 total_len, u32 crc32 of bytes [16, total_len)
 *     char op[32]                      operation name, NUL padded
 *     u32 n_params,   i32 params[n_params]
 *     u32 n_tensors,  { u32 dtype, u32 count, data padded to 4 bytes } * n_tensors
 *     u32 n_variants, { i32 kernel, i32 cores } * n_variants
 */
#ifndef PTL_RUNNER_H
#define PTL_RUNNER_H

#include <stdint.h>
#include <stddef.h>

#include "ptl_protocol.h"

#define PTL_PAYLOAD_MAGIC 0x504c5450u /* "PTLP" */
#define PTL_PAYLOAD_VERSION 1u
#define PTL_MAX_PARAMS 32
#define PTL_MAX_TENSORS 16
#define PTL_MAX_CORES 8

struct ptl_tensor {
    uint32_t dtype;
    uint32_t count;
    const void *data; /* points into the payload: copy before handing it out */
};

struct ptl_variant {
    int32_t kernel; /* matmul kernel index for the step under test */
    int32_t cores;
};

struct ptl_case {
    char op[32];
    uint32_t n_params;
    int32_t params[PTL_MAX_PARAMS];
    uint32_t n_tensors;
    struct ptl_tensor tensors[PTL_MAX_TENSORS];
    uint32_t n_variants;
    const struct ptl_variant *variants; /* unaligned-safe: copied on read */
};

/* Status codes of a variant (the VARIANT record), mirrored in harness/protocol.py. */
enum {
    PTL_OK = 0,
    PTL_ERR_BAD_CASE = 1,     /* params or tensors do not match the op */
    PTL_ERR_NO_MEMORY = 2,
    PTL_ERR_GUARD = 3,        /* the primitive wrote outside an output or scratch buffer */
    PTL_ERR_BAD_VARIANT = 4,  /* core count or kernel index out of range */
    PTL_ERR_UNKNOWN_OP = 5,
};

/* One operation the runner can execute. run() executes one variant: it
 * copies the inputs, calls the primitive between ptl_region_begin/end and
 * emits every output with ptl_emit_output(). */
struct ptl_op {
    const char *name;
    int (*run)(const struct ptl_case *c, struct ptl_variant v, uint32_t variant_index);
};

/* Operation tables, one per family source file, each ending with {0}. */
extern const struct ptl_op ptl_ops_linalg[];
extern const struct ptl_op ptl_ops_conv2d[];
extern const struct ptl_op ptl_ops_pool[];
extern const struct ptl_op ptl_ops_conv_dw_pw[];

/* ---- Helpers for operation code -------------------------------------------- */

/* Bracket the call of the primitive under test. Every measured region gets a
 * sequence number; the VARIANT record names the region of its variant, so
 * counters taken outside the program (QEMU's plugin counts per region) are
 * matched to the right variant even when some variants never reach one. */
void ptl_measure_begin(uint32_t variant_index);
void ptl_measure_end(uint32_t variant_index);
extern uint32_t ptl_regions_measured;

/* A fresh heap copy of input tensor i, checked against the expected dtype and
 * element count. NULL (and an ERROR record) when it does not match. */
void *ptl_input_copy(const struct ptl_case *c, uint32_t i, uint32_t dtype,
                     uint32_t count, uint32_t variant_index);
/* An output buffer of `count` elements, pre-filled with a NaN sentinel and
 * surrounded by guard words, so unwritten or overrun elements are caught. */
void *ptl_output_alloc(uint32_t dtype, uint32_t count);
/* Checks the guards, emits the tensor, frees the buffer. Returns PTL_OK or
 * PTL_ERR_GUARD. */
int ptl_output_emit(uint32_t variant_index, uint32_t tensor_index, uint32_t dtype,
                    void *buffer, uint32_t count);
/* A work buffer handed to the primitive (im2col, transpose), NaN-filled and
 * guarded like an output: a read of an element it never wrote spoils the
 * outputs, an overrun is caught. ptl_scratch_release (NULL is fine) checks the
 * guards and frees it; PTL_OK, or PTL_ERR_GUARD with an ERROR record. */
void *ptl_scratch_alloc(uint32_t dtype, uint32_t count);
int ptl_scratch_release(uint32_t variant_index, uint32_t dtype, void *buffer, uint32_t count);
/* Rejects a case whose parameter count is not `expected`. */
int ptl_expect_params(const struct ptl_case *c, uint32_t expected, uint32_t variant_index);

#endif /* PTL_RUNNER_H */
