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

/* The `step` param of every op that has steps: which pass of a layer runs.
 * The catalogue's step names are these, lower-cased (harness/cases.py reads
 * them from here): "fw", "wg", "ig", "bw", "sumnode_bw". */
enum ptl_step { PTL_STEP_FW = 0, PTL_STEP_WG = 1, PTL_STEP_IG = 2, PTL_STEP_BW = 3, PTL_STEP_SUMNODE_BW = 4 };

struct ptl_tensor {
    uint32_t dtype;
    uint32_t count;
    const void *data; /* points into the payload: copy before handing it out */
};

struct ptl_variant {
    int32_t kernel; /* matmul kernel index for the step under test */
    int32_t cores;
};

struct ptl_op;

struct ptl_case {
    char op[32];
    uint32_t n_params;
    int32_t params[PTL_MAX_PARAMS];
    uint32_t n_tensors;
    struct ptl_tensor tensors[PTL_MAX_TENSORS];
    uint32_t n_variants;
    const struct ptl_variant *variants; /* unaligned-safe: copied on read */
    const struct ptl_op *op_desc;       /* the op it runs: names its params and tensors */
};

/* Status codes of a variant (the VARIANT record), mirrored in harness/protocol.py. */
enum {
    PTL_OK = 0,
    PTL_ERR_BAD_CASE = 1,     /* params or tensors do not match the op */
    PTL_ERR_NO_MEMORY = 2,
    PTL_ERR_GUARD = 3,        /* the primitive wrote outside an output or scratch buffer */
    PTL_ERR_BAD_VARIANT = 4,  /* core count or kernel index out of range */
    PTL_ERR_UNKNOWN_OP = 5,
    PTL_ERR_UNSUPPORTED = 6,  /* the library lacks what the case needs (PTL_HAS_FIELD) */
};

/* One operation the runner can execute, and its contract with the harness.
 *
 * The description is the one place the contract is written: the harness asks
 * the runner for it (the describe payload, PTL_DESCRIBE_OP) once per build and
 * orders the catalogue's named params and tensors by it, so a param or tensor
 * name that the catalogue and the op do not share is an error before any case
 * runs (harness/runner_contract.py).
 *
 *   name     "<family op>_<fp32|fp16>", e.g. "linear_fp32"
 *   params   param names, space separated, in payload order
 *   inputs   input tensor names, space separated, in payload order
 *   outputs  output tensor names, space separated; the index of a name is the
 *            tensor index the op emits it under (an op emits the subset its
 *            step produces)
 *   kernels  the matmul kernel table a variant's kernel index selects from
 *            ("fp32" or "fp16", ptl_kernels.def), or "none" for direct code
 *            that takes no kernel index (the variant's kernel must be 0)
 *   run      executes one variant: copies the inputs, calls the primitive
 *            between ptl_measure_begin/end and emits every output with
 *            ptl_output_emit().
 */
struct ptl_op {
    const char *name;
    const char *params;
    const char *inputs;
    const char *outputs;
    const char *kernels;
    int (*run)(const struct ptl_case *c, struct ptl_variant v, uint32_t variant_index);
};

/* The op name of the describe payload: the runner then emits one DESCRIBE
 * record per op and per kernel table, and runs nothing. */
#define PTL_DESCRIBE_OP "ptl.describe"

/* Op tables: each runner op source (runner/ops_<family>.c) is compiled once
 * per dtype, with -DPTL_OP_FP=32 or 16 and -DPTL_OP_TABLE=ptl_ops_<family>_fp<N>
 * (ptl_op_dtype.h), into a table of that name ending with {0}. The build
 * compiles each (family, dtype) unit on its own, so a unit that does not
 * compile or link against the library under test fails only its own cases,
 * and it generates ptl_op_units[] from the units that built. */
extern const struct ptl_op *const ptl_op_units[]; /* NULL-terminated */

/* ---- Helpers for operation code -------------------------------------------- */

/* Bracket the call of the primitive under test. Every measured region gets a
 * sequence number; the VARIANT record names the region of its variant, so
 * counters taken outside the program (QEMU's plugin counts per region) are
 * matched to the right variant even when some variants never reach one. */
void ptl_measure_begin(uint32_t variant_index);
void ptl_measure_end(uint32_t variant_index);
extern uint32_t ptl_regions_measured;

/* Params, inputs and outputs are named as the op's description names them
 * (struct ptl_op); the runner has already checked that the case carries as
 * many params and tensors as the description lists. */

/* The value of the param called `name`. A name the description lacks is a
 * bug in the op: an ERROR record, and PTL_PARAM_MISSING. */
#define PTL_PARAM_MISSING INT32_MIN
int32_t ptl_param(const struct ptl_case *c, const char *name, uint32_t variant_index);
/* Where the next input copies, outputs and work buffers go (ptl_platform.h):
 * anywhere (malloc: near memory first), far memory only (a tiled layer's
 * whole tensors), or near memory only (its tile buffers). op_frame_finish
 * sets it back to anywhere. */
enum ptl_placement { PTL_PLACE_ANY = 0, PTL_PLACE_FAR = 1, PTL_PLACE_NEAR = 2 };
void ptl_place_buffers(enum ptl_placement placement);
/* A fresh heap copy of the input called `name`, checked against the expected
 * dtype and element count. NULL (and an ERROR record) when it does not match. */
void *ptl_input(const struct ptl_case *c, const char *name, uint32_t dtype, uint32_t count,
                uint32_t variant_index);
/* An output buffer of `count` elements, pre-filled with a NaN sentinel and
 * surrounded by guard words, so unwritten or overrun elements are caught. */
void *ptl_output_alloc(uint32_t dtype, uint32_t count);
/* The sentinel: a quiet NaN as one binary32, and a NaN in both binary16 and
 * bfloat16. The harness reads it from here to tell an element that nothing
 * wrote (harness/core_split.py). */
#define PTL_SENTINEL_F32 0x7fc0deadu
#define PTL_SENTINEL_F16 0x7fc1u

/* One core alone: an op whose description lists the param PTL_ALONE_PARAM
 * forks its per-core body (op_frame_fork) on the variant's whole team, but
 * only the core the param names runs the body; the others return at once.
 * The harness then checks that exactly that core's block of the API's split
 * was written (shared/TRAINLIB_API_MORE.md, "caller"; harness/core_split.py
 * reads these). */
#define PTL_ALONE_PARAM "alone"
enum ptl_alone { PTL_ALONE_TEAM = 0, PTL_ALONE_FIRST = 1, PTL_ALONE_LAST = 2 };
/* Bytes of one element of a wire dtype. */
size_t ptl_element_size(uint32_t dtype);
/* Checks the guards, emits the buffer as the output called `name` (its index
 * in the description's outputs), frees it. PTL_OK or PTL_ERR_GUARD. */
int ptl_output_emit(const struct ptl_case *c, const char *name, uint32_t variant_index, uint32_t dtype,
                    void *buffer, uint32_t count);
/* A work buffer handed to the primitive (im2col, transpose), NaN-filled and
 * guarded like an output: a read of an element it never wrote spoils the
 * outputs, an overrun is caught. ptl_scratch_release (NULL is fine) checks the
 * guards and frees it; PTL_OK, or PTL_ERR_GUARD with an ERROR record. It also
 * frees an output buffer that is not emitted (an op giving up half-way). */
void *ptl_scratch_alloc(uint32_t dtype, uint32_t count);
int ptl_scratch_release(uint32_t variant_index, uint32_t dtype, void *buffer, uint32_t count);

/* Position of `word` in a space-separated list, or -1. */
int ptl_word_index(const char *list, const char *word);
/* Number of words in a space-separated list. */
uint32_t ptl_word_count(const char *list);

#endif /* PTL_RUNNER_H */
