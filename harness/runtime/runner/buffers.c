/* Input copies and guarded output buffers for the operation code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptl_platform.h"
#include "ptl_runner.h"

#define GUARD_WORDS 16
/* The guard words around an output or scratch buffer: a NaN as one binary32
 * and as two binary16 or bfloat16 halves (and not the sentinel), so that a
 * kernel that reads past either end of a buffer computes a NaN, which the
 * comparison reports, instead of adding a value near zero (the old pattern,
 * 0xa5c3e1f0, is -3.5e-16 as a float: an RNN weight gradient that summed one
 * row past its scratch passed). A write past either end changes them. */
#define GUARD_WORD 0x7fc37fc3u

/* Under AddressSanitizer (host, --sanitize address,undefined) the guard words
 * are also poisoned, so that any read of one stops the run naming the line:
 * a read that only a comparison uses (a maximum over one element too many:
 * NaN > m is false) leaves every output right and every guard intact, and
 * nothing else sees it. They are unpoisoned before the runner reads them. */
#if defined(__SANITIZE_ADDRESS__)
#define PTL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PTL_ASAN 1
#endif
#endif
#ifdef PTL_ASAN
#include <sanitizer/asan_interface.h>
#define guards_poison(at) ASAN_POISON_MEMORY_REGION((at), GUARD_WORDS * 4)
#define guards_unpoison(at) ASAN_UNPOISON_MEMORY_REGION((at), GUARD_WORDS * 4)
#else
#define guards_poison(at) ((void)(at))
#define guards_unpoison(at) ((void)(at))
#endif

size_t ptl_element_size(uint32_t dtype) { return dtype == PTL_DTYPE_F16 ? 2 : 4; }

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

uint32_t ptl_word_count(const char *list)
{
    uint32_t n = 0;
    for (const char *p = list; *p;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        n++;
        while (*p && *p != ' ')
            p++;
    }
    return n;
}

int ptl_word_index(const char *list, const char *word)
{
    size_t len = strlen(word);
    int index = 0;
    for (const char *p = list; *p;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        const char *end = p;
        while (*end && *end != ' ')
            end++;
        if ((size_t)(end - p) == len && memcmp(p, word, len) == 0)
            return index;
        index++;
        p = end;
    }
    return -1;
}

/* An ERROR record "<op>: <what> <name>" for a name the op's description lacks. */
static void undescribed(const struct ptl_case *c, const char *what, const char *name, uint32_t vi)
{
    char text[128];
    snprintf(text, sizeof text, "%s: the op's description has no %s named %s", c->op_desc->name, what, name);
    ptl_emit_error(vi, PTL_ERR_BAD_CASE, text);
}

int32_t ptl_param(const struct ptl_case *c, const char *name, uint32_t variant_index)
{
    int i = ptl_word_index(c->op_desc->params, name);
    if (i < 0 || (uint32_t)i >= c->n_params) {
        undescribed(c, "param", name, variant_index);
        return PTL_PARAM_MISSING;
    }
    return c->params[i];
}

static enum ptl_placement placement = PTL_PLACE_ANY;

void ptl_place_buffers(enum ptl_placement where) { placement = where; }

static void *buffer_malloc(size_t bytes)
{
    if (placement == PTL_PLACE_FAR)
        return ptl_far_malloc(bytes);
    return placement == PTL_PLACE_NEAR ? ptl_near_malloc(bytes) : malloc(bytes);
}

void *ptl_input(const struct ptl_case *c, const char *name, uint32_t dtype, uint32_t count,
                uint32_t variant_index)
{
    int i = ptl_word_index(c->op_desc->inputs, name);
    if (i < 0 || (uint32_t)i >= c->n_tensors) {
        undescribed(c, "input", name, variant_index);
        return NULL;
    }
    if (c->tensors[i].dtype != dtype || c->tensors[i].count != count) {
        char text[160];
        snprintf(text, sizeof text, "%s: input %s has dtype %u and %u elements; the params call for dtype %u "
                 "and %u", c->op_desc->name, name, (unsigned)c->tensors[i].dtype,
                 (unsigned)c->tensors[i].count, (unsigned)dtype, (unsigned)count);
        ptl_emit_error(variant_index, PTL_ERR_BAD_CASE, text);
        return NULL;
    }
    size_t bytes = (size_t)count * ptl_element_size(dtype);
    void *copy = buffer_malloc(bytes ? bytes : 1);
    if (!copy) {
        ptl_emit_error(variant_index, PTL_ERR_NO_MEMORY, "out of memory copying an input");
        return NULL;
    }
    memcpy(copy, c->tensors[i].data, bytes);
    return copy;
}

void *ptl_output_alloc(uint32_t dtype, uint32_t count)
{
    size_t size = ptl_element_size(dtype);
    uint32_t *block = buffer_malloc(2 * GUARD_WORDS * 4 + (size_t)count * size + 4);
    if (!block)
        return NULL;
    for (int g = 0; g < GUARD_WORDS; g++)
        block[g] = GUARD_WORD;
    uint8_t *data = (uint8_t *)(block + GUARD_WORDS);
    for (uint32_t e = 0; e < count; e++) {
        if (size == 2) {
            uint16_t s = PTL_SENTINEL_F16;
            memcpy(data + 2 * e, &s, 2);
        } else {
            uint32_t s = PTL_SENTINEL_F32;
            memcpy(data + 4 * e, &s, 4);
        }
    }
    uint8_t *tail = data + (((size_t)count * size + 3) & ~(size_t)3);
    if (tail != data + (size_t)count * size)   /* an odd count of halves: the pad before the guard reads as NaN too */
        memcpy(data + (size_t)count * size, &(uint16_t){PTL_SENTINEL_F16}, 2);
    for (int g = 0; g < GUARD_WORDS; g++)
        memcpy(tail + 4 * g, &(uint32_t){GUARD_WORD}, 4);
    guards_poison(block);
    guards_poison(tail);
    return data;
}

/* Whether the guard words around a buffer of ptl_output_alloc are intact
 * (and, under AddressSanitizer, unpoisoned for the free that follows). */
static int guards_intact(void *buffer, uint32_t dtype, uint32_t count)
{
    uint32_t *head = (uint32_t *)buffer - GUARD_WORDS;
    uint8_t *tail = (uint8_t *)buffer + (((size_t)count * ptl_element_size(dtype) + 3) & ~(size_t)3);
    guards_unpoison(head);
    guards_unpoison(tail);
    int intact = 1;
    for (int g = 0; g < GUARD_WORDS; g++) {
        uint32_t t;
        memcpy(&t, tail + 4 * g, 4);
        intact &= head[g] == GUARD_WORD && t == GUARD_WORD;
    }
    return intact;
}

int ptl_output_emit(const struct ptl_case *c, const char *name, uint32_t variant_index, uint32_t dtype,
                    void *buffer, uint32_t count)
{
    int tensor_index = ptl_word_index(c->op_desc->outputs, name);
    if (tensor_index < 0) {
        undescribed(c, "output", name, variant_index);
        ptl_scratch_release(variant_index, dtype, buffer, count);
        return PTL_ERR_BAD_CASE;
    }
    int intact = guards_intact(buffer, dtype, count);
    ptl_emit_tensor(variant_index, (uint32_t)tensor_index, dtype, buffer, count);
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
