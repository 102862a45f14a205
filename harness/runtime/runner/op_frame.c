/*
 * op_frame.c: the buffers of one variant of a runner op (op_frame.h).
 */
#include "op_frame.h"

#include <stdlib.h>
#include <string.h>

#include "pmsis.h"
#include "ptl_protocol.h"

void op_frame_init(struct op_frame *f, const struct ptl_case *c, uint32_t variant_index, uint32_t dtype)
{
    memset(f, 0, sizeof *f);
    f->c = c;
    f->vi = variant_index;
    f->dtype = dtype;
}

int op_frame_fail(struct op_frame *f, int status, const char *why)
{
    if (!f->status) {
        f->status = status;
        if (why)
            ptl_emit_error(f->vi, status, why);
    }
    return f->status;
}

static int frame_full(struct op_frame *f, int n)
{
    if (n < OP_FRAME_MAX)
        return 0;
    op_frame_fail(f, PTL_ERR_BAD_CASE, "op frame: more buffers than OP_FRAME_MAX (a bug in the op)");
    return 1;
}

void *op_frame_input(struct op_frame *f, const char *name, uint32_t count)
{
    return op_frame_input_as(f, name, count, f->dtype);
}

void *op_frame_input_as(struct op_frame *f, const char *name, uint32_t count, uint32_t dtype)
{
    if (f->status || frame_full(f, f->n_in))
        return NULL;
    void *p = ptl_input(f->c, name, dtype, count, f->vi);
    if (!p)
        op_frame_fail(f, PTL_ERR_BAD_CASE, NULL); /* ptl_input has said why */
    f->in[f->n_in++] = p;
    return p;
}

void *op_frame_output(struct op_frame *f, const char *name, uint32_t count)
{
    return op_frame_output_as(f, name, count, f->dtype);
}

void *op_frame_output_as(struct op_frame *f, const char *name, uint32_t count, uint32_t dtype)
{
    if (f->status || frame_full(f, f->n_out))
        return NULL;
    void *p = ptl_output_alloc(dtype, count);
    f->out[f->n_out++] = (struct op_frame_buffer){.name = name, .data = p, .count = count, .dtype = dtype};
    if (!p)
        op_frame_fail(f, PTL_ERR_NO_MEMORY, "out of memory allocating an output");
    return p;
}

void *op_frame_output_zeroed(struct op_frame *f, const char *name, uint32_t count)
{
    void *p = op_frame_output(f, name, count);
    if (p)
        memset(p, 0, (size_t)count * ptl_element_size(f->dtype)); /* +0 in every wire dtype */
    return p;
}

void *op_frame_output_from(struct op_frame *f, const char *input, const char *output, uint32_t count)
{
    return op_frame_output_led_by(f, input, count, output, count);
}

void *op_frame_output_led_by(struct op_frame *f, const char *input, uint32_t leading, const char *output,
                             uint32_t count)
{
    void *dst = op_frame_output(f, output, count);
    if (!dst)
        return NULL;
    void *src = ptl_input(f->c, input, f->dtype, leading, f->vi);
    if (!src) {
        op_frame_fail(f, PTL_ERR_BAD_CASE, NULL); /* ptl_input has said why */
        return NULL;
    }
    memcpy(dst, src, (size_t)leading * ptl_element_size(f->dtype));
    free(src);
    return dst;
}

void *op_frame_scratch(struct op_frame *f, uint32_t count)
{
    if (count == 0 || f->status || frame_full(f, f->n_scratch))
        return NULL;
    void *p = ptl_scratch_alloc(f->dtype, count);
    f->scratch[f->n_scratch++] = (struct op_frame_buffer){.name = NULL, .data = p, .count = count, .dtype = f->dtype};
    if (!p)
        op_frame_fail(f, PTL_ERR_NO_MEMORY, "out of memory allocating a work buffer");
    return p;
}

int op_frame_finish(struct op_frame *f, int ran)
{
    int status = f->status;
    for (int i = 0; i < f->n_in; i++)
        free(f->in[i]);
    for (int i = 0; i < f->n_out; i++) {
        const struct op_frame_buffer *b = &f->out[i];
        if (!b->data)
            continue;
        int s = ran ? ptl_output_emit(f->c, b->name, f->vi, b->dtype, b->data, b->count)
                    : ptl_scratch_release(f->vi, b->dtype, b->data, b->count);
        status = status ? status : s;
    }
    for (int i = 0; i < f->n_scratch; i++) {
        int s = ptl_scratch_release(f->vi, f->scratch[i].dtype, f->scratch[i].data, f->scratch[i].count);
        status = status ? status : s;
    }
    memset(f, 0, sizeof *f);
    ptl_place_buffers(PTL_PLACE_ANY);
    return status;
}

struct alone_call {
    void (*body)(void *);
    void *args;
    int core;
};

static void run_alone(void *p)
{
    const struct alone_call *call = p;
    if (pi_core_id() == call->core)
        call->body(call->args);
}

int op_frame_fork(struct op_frame *f, struct ptl_variant v, void (*body)(void *), void *args)
{
    if (f->status)
        return op_frame_finish(f, 0);
    const int alone = ptl_word_index(f->c->op_desc->params, PTL_ALONE_PARAM) >= 0
                          ? ptl_param(f->c, PTL_ALONE_PARAM, f->vi) : PTL_ALONE_TEAM;
    if (alone != PTL_ALONE_TEAM && alone != PTL_ALONE_FIRST && alone != PTL_ALONE_LAST) {
        op_frame_fail(f, PTL_ERR_BAD_CASE, "param alone must be 0 (the team), 1 (the first core) or 2 (the last core)");
        return op_frame_finish(f, 0);
    }
    struct alone_call call = {.body = body, .args = args, .core = alone == PTL_ALONE_FIRST ? 0 : v.cores - 1};
    /* chosen before the measured region, which holds the fork alone */
    void (*const entry)(void *) = alone == PTL_ALONE_TEAM ? body : run_alone;
    void *const entry_args = alone == PTL_ALONE_TEAM ? args : &call;
    ptl_measure_begin(f->vi);
    pi_cl_team_fork(v.cores, entry, entry_args);
    ptl_measure_end(f->vi);
    return op_frame_finish(f, 1);
}
