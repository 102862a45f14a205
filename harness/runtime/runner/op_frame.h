/*
 * op_frame.h: the buffers of one variant of a runner op, owned in one place.
 *
 * An op takes its input copies, guarded outputs and guarded scratch buffers
 * from a frame as it sets up the call; the first failure is remembered (and
 * reported once), so the op checks frame.status once before the call instead
 * of after each allocation. op_frame_finish() then frees every buffer, emits
 * the outputs by name when the primitive ran, and checks every guard.
 *
 * Dtype-agnostic: the frame carries the wire dtype its buffers are made of.
 */
#ifndef OP_FRAME_H
#define OP_FRAME_H

#include <stdint.h>

#include "ptl_runner.h"

#define OP_FRAME_MAX 12

struct op_frame_buffer {
    const char *name; /* outputs: the description's output name */
    void *data;
    uint32_t count;
    uint32_t dtype; /* wire dtype of the buffer's elements */
};

struct op_frame {
    const struct ptl_case *c;
    uint32_t vi, dtype;
    int status; /* first failure while setting up; PTL_OK while none */
    int n_in, n_out, n_scratch;
    void *in[OP_FRAME_MAX];
    struct op_frame_buffer out[OP_FRAME_MAX];
    struct op_frame_buffer scratch[OP_FRAME_MAX];
};

void op_frame_init(struct op_frame *f, const struct ptl_case *c, uint32_t variant_index, uint32_t dtype);
/* Records a failure (the first one wins) with an ERROR record when `why` is
 * set; returns the frame's status. */
int op_frame_fail(struct op_frame *f, int status, const char *why);
/* A heap copy of the input called `name`, which must hold `count` elements
 * (ptl_input); NULL after a failure. */
void *op_frame_input(struct op_frame *f, const char *name, uint32_t count);
/* A guarded, NaN-filled output buffer emitted as `name` by op_frame_finish. */
void *op_frame_output(struct op_frame *f, const char *name, uint32_t count);
/* A guarded output that starts as zeros, for an output the API says the
 * call accumulates into and the caller zeroes first (shared/TRAINLIB_API.md:
 * only there; every other output starts as NaN). */
void *op_frame_output_zeroed(struct op_frame *f, const char *name, uint32_t count);
/* An output that starts as a copy of the input `input` (for primitives that
 * work in place or accumulate); NULL after a failure. */
void *op_frame_output_from(struct op_frame *f, const char *input, const char *output, uint32_t count);
/* An output of `count` elements whose first `leading` start as a copy of the
 * input `input` (which must hold `leading`), the rest NaN: an op that keeps
 * a sequence of states in one output, the first seeded from an input. The
 * input's copy is freed at once. */
void *op_frame_output_led_by(struct op_frame *f, const char *input, uint32_t leading, const char *output,
                             uint32_t count);
/* The same in another wire dtype than the frame's (the other side of a cast). */
void *op_frame_input_as(struct op_frame *f, const char *name, uint32_t count, uint32_t dtype);
void *op_frame_output_as(struct op_frame *f, const char *name, uint32_t count, uint32_t dtype);
/* A guarded, NaN-filled work buffer; NULL, and nothing allocated, for 0 elements. */
void *op_frame_scratch(struct op_frame *f, uint32_t count);
/* The largest of three element counts: a work buffer sized for its largest use. */
static inline uint32_t op_frame_max3(uint32_t a, uint32_t b, uint32_t c)
{
    const uint32_t ab = a > b ? a : b;
    return ab > c ? ab : c;
}
/* Forks the API's per-core body on the variant's team, measured, then
 * finishes the frame (nothing runs after a set-up failure). When the op
 * describes the param PTL_ALONE_PARAM and it is not PTL_ALONE_TEAM, the
 * whole team is forked but only its first or last core runs the body. */
int op_frame_fork(struct op_frame *f, struct ptl_variant v, void (*body)(void *), void *args);
/* Frees every buffer; emits the outputs when `ran` (else only checks their
 * guards). Returns the variant's status: the first failure of set-up,
 * emission or guards. */
int op_frame_finish(struct op_frame *f, int ran);

#endif /* OP_FRAME_H */
