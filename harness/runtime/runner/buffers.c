/* Input copies and guarded output buffers for the operation code. */
#include <stdlib.h>
#include <string.h>

#include "ptl_platform.h"
#include "ptl_runner.h"

#define GUARD_WORDS 16
#define GUARD_WORD 0xa5c3e1f0u
/* A quiet NaN in binary32, and a NaN in both binary16 and bfloat16. */
#define SENTINEL_F32 0x7fc0deadu
#define SENTINEL_F16 0x7fc1u

static size_t element_size(uint32_t dtype) { return dtype == PTL_DTYPE_F16 ? 2 : 4; }

uint32_t ptl_regions_measured;

void ptl_measure_begin(uint32_t variant_index)
{
    ptl_region_begin(variant_index);
}

void ptl_measure_end(uint32_t variant_index)
{
    ptl_region_end(variant_index);
    ptl_regions_measured++;
}

int ptl_expect_params(const struct ptl_case *c, uint32_t expected, uint32_t variant_index)
{
    if (c->n_params == expected)
        return PTL_OK;
    ptl_emit_error(variant_index, PTL_ERR_BAD_CASE, "wrong number of params for this op");
    return PTL_ERR_BAD_CASE;
}

void *ptl_input_copy(const struct ptl_case *c, uint32_t i, uint32_t dtype, uint32_t count,
                     uint32_t variant_index)
{
    if (i >= c->n_tensors || c->tensors[i].dtype != dtype || c->tensors[i].count != count) {
        ptl_emit_error(variant_index, PTL_ERR_BAD_CASE,
                       "input tensor missing or its dtype/size does not match the params");
        return NULL;
    }
    size_t bytes = (size_t)count * element_size(dtype);
    void *copy = malloc(bytes ? bytes : 1);
    if (!copy) {
        ptl_emit_error(variant_index, PTL_ERR_NO_MEMORY, "out of memory copying an input");
        return NULL;
    }
    memcpy(copy, c->tensors[i].data, bytes);
    return copy;
}

void *ptl_output_alloc(uint32_t dtype, uint32_t count)
{
    size_t size = element_size(dtype);
    uint32_t *block = malloc(2 * GUARD_WORDS * 4 + (size_t)count * size + 4);
    if (!block)
        return NULL;
    for (int g = 0; g < GUARD_WORDS; g++)
        block[g] = GUARD_WORD;
    uint8_t *data = (uint8_t *)(block + GUARD_WORDS);
    for (uint32_t e = 0; e < count; e++) {
        if (size == 2) {
            uint16_t s = SENTINEL_F16;
            memcpy(data + 2 * e, &s, 2);
        } else {
            uint32_t s = SENTINEL_F32;
            memcpy(data + 4 * e, &s, 4);
        }
    }
    uint8_t *tail = data + (((size_t)count * size + 3) & ~(size_t)3);
    for (int g = 0; g < GUARD_WORDS; g++)
        memcpy(tail + 4 * g, &(uint32_t){GUARD_WORD}, 4);
    return data;
}

/* Whether the guard words around a buffer of ptl_output_alloc are intact. */
static int guards_intact(void *buffer, uint32_t dtype, uint32_t count)
{
    uint32_t *head = (uint32_t *)buffer - GUARD_WORDS;
    uint8_t *tail = (uint8_t *)buffer + (((size_t)count * element_size(dtype) + 3) & ~(size_t)3);
    int intact = 1;
    for (int g = 0; g < GUARD_WORDS; g++) {
        uint32_t t;
        memcpy(&t, tail + 4 * g, 4);
        intact &= head[g] == GUARD_WORD && t == GUARD_WORD;
    }
    return intact;
}

int ptl_output_emit(uint32_t variant_index, uint32_t tensor_index, uint32_t dtype, void *buffer,
                    uint32_t count)
{
    int intact = guards_intact(buffer, dtype, count);
    ptl_emit_tensor(variant_index, tensor_index, dtype, buffer, count);
    free((uint32_t *)buffer - GUARD_WORDS);
    if (intact)
        return PTL_OK;
    ptl_emit_error(variant_index, PTL_ERR_GUARD,
                   "the primitive wrote outside an output tensor (guard words changed)");
    return PTL_ERR_GUARD;
}

void *ptl_scratch_alloc(uint32_t dtype, uint32_t count)
{
    return ptl_output_alloc(dtype, count);
}

int ptl_scratch_release(uint32_t variant_index, uint32_t dtype, void *buffer, uint32_t count)
{
    if (!buffer)
        return PTL_OK;
    int intact = guards_intact(buffer, dtype, count);
    free((uint32_t *)buffer - GUARD_WORDS);
    if (intact)
        return PTL_OK;
    ptl_emit_error(variant_index, PTL_ERR_GUARD,
                   "the primitive wrote outside a work buffer (guard words changed)");
    return PTL_ERR_GUARD;
}
