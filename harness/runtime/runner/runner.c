/*
 * The table-driven runner: one binary per build configuration runs any case.
 *
 * It reads the case payload that the target delivers, checks it, and runs
 * each listed variant (kernel index x core count) through the operation table,
 * writing framed records (ptl_protocol.h). The harness compares the outputs
 * on the host, so the runner never judges a result itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmsis.h"
#include "ptl_platform.h"
#include "ptl_runner.h"


static uint32_t read_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Bounds-checked reader over the payload bytes. */
struct reader {
    const uint8_t *at;
    const uint8_t *end;
    int bad;
};

static uint32_t take_u32(struct reader *r)
{
    if (r->bad || r->end - r->at < 4) {
        r->bad = 1;
        return 0;
    }
    uint32_t v = read_u32(r->at);
    r->at += 4;
    return v;
}

static const uint8_t *take_bytes(struct reader *r, size_t len)
{
    if (r->bad || (size_t)(r->end - r->at) < len) {
        r->bad = 1;
        return NULL;
    }
    const uint8_t *p = r->at;
    r->at += (len + 3) & ~(size_t)3;
    if (r->at > r->end)
        r->at = r->end;
    return p;
}

static const char *parse_case(const uint8_t *payload, size_t len, struct ptl_case *c,
                              uint32_t *crc)
{
    if (len < 48)
        return "payload shorter than its header";
    if (read_u32(payload) != PTL_PAYLOAD_MAGIC)
        return "payload magic is not PTLP";
    if (read_u32(payload + 4) != PTL_PAYLOAD_VERSION)
        return "payload version is not 1";
    uint32_t total = read_u32(payload + 8);
    if (total > len || total < 48)
        return "payload length field exceeds the delivered bytes";
    *crc = read_u32(payload + 12);
    if (ptl_crc32(0, payload + 16, total - 16) != *crc)
        return "payload CRC mismatch";

    struct reader r = {.at = payload + 16, .end = payload + total, .bad = 0};
    memcpy(c->op, take_bytes(&r, 32), 32);
    c->op[31] = '\0';
    c->n_params = take_u32(&r);
    if (c->n_params > PTL_MAX_PARAMS)
        return "too many params";
    for (uint32_t i = 0; i < c->n_params; i++)
        c->params[i] = (int32_t)take_u32(&r);
    c->n_tensors = take_u32(&r);
    if (c->n_tensors > PTL_MAX_TENSORS)
        return "too many tensors";
    for (uint32_t i = 0; i < c->n_tensors; i++) {
        struct ptl_tensor *t = &c->tensors[i];
        t->dtype = take_u32(&r);
        t->count = take_u32(&r);
        if (t->dtype > PTL_DTYPE_I32 || t->count > (1u << 24))
            return "tensor header out of range";
        t->data = take_bytes(&r, (size_t)t->count * ptl_element_size(t->dtype));
    }
    c->n_variants = take_u32(&r);
    c->variants = (const struct ptl_variant *)take_bytes(&r, (size_t)c->n_variants * 8);
    if (r.bad)
        return "payload truncated inside its body";
    return NULL;
}

static const struct ptl_op *find_op(const char *name)
{
    for (const struct ptl_op *const *unit = ptl_op_units; *unit; unit++)
        for (const struct ptl_op *op = *unit; op->name; op++)
            if (strcmp(op->name, name) == 0)
                return op;
    return NULL;
}

/* The describe payload: one DESCRIBE record per op and per kernel table. */
static void describe(void)
{
    static char text[1024];
    for (const struct ptl_op *const *unit = ptl_op_units; *unit; unit++)
        for (const struct ptl_op *op = *unit; op->name; op++) {
            snprintf(text, sizeof text, "op %s|%s|%s|%s|%s", op->name, op->params, op->inputs,
                     op->outputs, op->kernels);
            ptl_emit_describe(text);
        }
    static const char *const tables[] = {"fp32", "fp16"};
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        size_t used = (size_t)snprintf(text, sizeof text, "kernels %s|", tables[t]);
#define PTL_KERNEL(table, index, name, _)                                                           \
    if (strcmp(#table, tables[t]) == 0 && used < sizeof text)                                      \
        used += (size_t)snprintf(text + used, sizeof text - used, "%s%s", index ? " " : "", #name);
#include "ptl_kernels.def"
#undef PTL_KERNEL
        ptl_emit_describe(text);
    }
}

/* Whether the case carries what the op's description lists. */
static const char *check_shape(const struct ptl_case *c, const struct ptl_op *op)
{
    if (c->n_params != ptl_word_count(op->params))
        return "the number of params is not the number the op describes";
    if (c->n_tensors != ptl_word_count(op->inputs))
        return "the number of input tensors is not the number the op describes";
    return NULL;
}

static struct ptl_variant variant_at(const struct ptl_case *c, uint32_t i)
{
    const uint8_t *p = (const uint8_t *)c->variants + 8 * i;
    struct ptl_variant v = {.kernel = (int32_t)read_u32(p), .cores = (int32_t)read_u32(p + 4)};
    return v;
}

int main(int argc, char **argv)
{
    ptl_platform_init(argc, argv);

    size_t len = 0;
    const char *why = "no payload";
    const uint8_t *payload = ptl_payload(&len, &why);
    static struct ptl_case c;
    uint32_t crc = 0;
    if (payload)
        why = parse_case(payload, len, &c, &crc);
    if (!payload || why) {
        ptl_emit_error(PTL_NO_VARIANT, PTL_ERR_BAD_CASE, why);
        ptl_emit_end();
        ptl_exit(PTL_EXIT_BAD_PAYLOAD);
    }

    ptl_emit_begin(crc, c.n_variants);
    if (strcmp(c.op, PTL_DESCRIBE_OP) == 0)
        describe();
    const struct ptl_op *op = find_op(c.op);
    const char *mismatch = op ? check_shape(&c, op) : NULL;
    c.op_desc = op;
    for (uint32_t i = 0; i < c.n_variants; i++) {
        struct ptl_variant v = variant_at(&c, i);
        int status;
        uint32_t regions_before = ptl_regions_measured;
        if (!op) {
            ptl_emit_error(i, PTL_ERR_UNKNOWN_OP, "the runner has no operation of this name");
            status = PTL_ERR_UNKNOWN_OP;
        } else if (mismatch) {
            ptl_emit_error(i, PTL_ERR_BAD_CASE, mismatch);
            status = PTL_ERR_BAD_CASE;
        } else if (strcmp(op->kernels, "none") == 0 && v.kernel != 0) {
            ptl_emit_error(i, PTL_ERR_BAD_VARIANT, "this op takes no kernel index: the variant's kernel must be 0");
            status = PTL_ERR_BAD_VARIANT;
        } else if (v.cores < 1 || v.cores > PTL_MAX_CORES) {
            ptl_emit_error(i, PTL_ERR_BAD_VARIANT, "core count outside 1..8");
            status = PTL_ERR_BAD_VARIANT;
        } else {
            ptl_num_cores = v.cores;
            status = op->run(&c, v, i);
        }
        int measured = ptl_regions_measured == regions_before + 1;
        ptl_emit_variant(i, status, measured ? regions_before : PTL_NO_VARIANT,
                         measured ? ptl_region_elapsed() : 0);
    }
    ptl_emit_end();
    ptl_exit(PTL_EXIT_OK);
}
