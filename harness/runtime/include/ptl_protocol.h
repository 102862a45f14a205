/*
 * ptl_protocol.h: the framed, checksummed records that every runner writes to
 * its console, whatever the target.
 *
 * One record is one text line, so boot banners and other console noise
 * between records are harmless:
 *
 *     @PTL1 <seq> <kind> <body as lowercase hex> <crc32 as 8 hex digits>\n
 *
 * seq counts records from 0. The CRC-32 (the zlib polynomial) covers the
 * little-endian u32 seq, the kind byte and the body bytes. Bodies are packed
 * little-endian structs; harness/protocol.py decodes them and is the other
 * half of this contract.
 */
#ifndef PTL_PROTOCOL_H
#define PTL_PROTOCOL_H

#include <stdint.h>
#include <stddef.h>

enum ptl_record_kind {
    PTL_REC_BEGIN = 'B',   /* u32 payload_crc, u32 n_variants */
    PTL_REC_VARIANT = 'V', /* u32 variant, i32 status, u32 region (0xffffffff: none), u64 elapsed */
    PTL_REC_TENSOR = 'T',  /* u32 variant, u32 tensor, u32 dtype, u32 total, u32 first, u32 n, data */
    PTL_REC_ERROR = 'E',   /* u32 variant (0xffffffff: the case), i32 code, utf-8 text */
    PTL_REC_CRASH = 'C',   /* u32 hart, u32 cause, u32 epc, u32 tval */
    PTL_REC_DESCRIBE = 'D', /* utf-8 text: "op <name>|<params>|<inputs>|<outputs>|<kernels>"
                               or "kernels <table>|<names by index>" (describe payload) */
    PTL_REC_END = 'Z',     /* u32 records written before this one */
    PTL_REC_COUNTS = 'K',  /* u32 region, u32 n_cores, u32 cycles[n_cores], u32 instructions[n_cores]:
                              per-core counters of a measured region, from targets whose
                              program reads them itself (GVSOC) */
    PTL_REC_SPILL = 'S',   /* u32 region, u32 l2_bytes: heap bytes in L2 while that region ran,
                              from targets whose heap spills from L1 into L2 (GVSOC); sent only
                              when not 0 */
};

/* Element types on the wire, shared with the payload format. */
enum ptl_dtype {
    PTL_DTYPE_F32 = 0,
    PTL_DTYPE_F16 = 1, /* 16-bit patterns of the build's fp16 format */
    PTL_DTYPE_I32 = 2,
};

#define PTL_NO_VARIANT 0xffffffffu
/* Elements per tensor record: keeps lines short enough for a UART. */
#define PTL_TENSOR_CHUNK 256
/* Most cores a COUNTS record carries. */
#define PTL_MAX_COUNTS_CORES 32

uint32_t ptl_crc32(uint32_t crc, const void *data, size_t len);

void ptl_emit_begin(uint32_t payload_crc, uint32_t n_variants);
void ptl_emit_variant(uint32_t variant, int32_t status, uint32_t region, uint64_t elapsed);
void ptl_emit_tensor(uint32_t variant, uint32_t tensor, uint32_t dtype,
                     const void *data, uint32_t count);
void ptl_emit_error(uint32_t variant, int32_t code, const char *text);
void ptl_emit_describe(const char *text);
void ptl_emit_crash(uint32_t hart, uint32_t cause, uint32_t epc, uint32_t tval);
void ptl_emit_counts(uint32_t region, uint32_t n_cores, const uint32_t *cycles,
                     const uint32_t *instructions);
void ptl_emit_spill(uint32_t region, uint32_t l2_bytes);
void ptl_emit_end(void);

#endif /* PTL_PROTOCOL_H */
