"""Encoder of the case payload that the runner reads (layout in
runtime/include/ptl_runner.h)."""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import numpy as np

from harness import c_header

MAGIC = c_header.number("ptl_runner.h", "PTL_PAYLOAD_MAGIC")   # "PTLP"
VERSION = c_header.number("ptl_runner.h", "PTL_PAYLOAD_VERSION")

DTYPE_F32, DTYPE_F16, DTYPE_I32 = (c_header.number("ptl_protocol.h", f"PTL_DTYPE_{name}") for name in ("F32", "F16", "I32"))
MAX_PARAMS, MAX_TENSORS, MAX_CORES = (c_header.number("ptl_runner.h", f"PTL_MAX_{name}")
                                      for name in ("PARAMS", "TENSORS", "CORES"))


@dataclass(frozen=True)
class VariantSpec:
    kernel: int
    cores: int


def _tensor_block(bits: np.ndarray) -> bytes:
    flat = np.ascontiguousarray(bits).reshape(-1)
    if flat.dtype == np.uint16:
        dtype = DTYPE_F16
    elif flat.dtype == np.uint32:
        dtype = DTYPE_F32
    elif flat.dtype == np.int32:
        dtype = DTYPE_I32
    else:
        raise ValueError(f"payload tensors must be uint16/uint32 bit patterns or int32, got {flat.dtype}")
    data = flat.astype(flat.dtype.newbyteorder("<")).tobytes()
    data += b"\0" * (-len(data) % 4)
    return struct.pack("<II", dtype, flat.size) + data


def encode_payload(op: str, params: list[int], tensors: list[np.ndarray],
                   variants: list[VariantSpec]) -> bytes:
    """Bytes of one case: op name, integer params, input tensors (as bit
    patterns) and the variants to run."""
    name = op.encode()
    if len(name) > 31:
        raise ValueError(f"op name {op!r} is longer than 31 bytes")
    if len(params) > MAX_PARAMS or len(tensors) > MAX_TENSORS:
        raise ValueError(f"a payload holds at most {MAX_PARAMS} params and {MAX_TENSORS} tensors")
    body = name.ljust(32, b"\0")
    body += struct.pack(f"<I{len(params)}i", len(params), *params)
    body += struct.pack("<I", len(tensors)) + b"".join(_tensor_block(t) for t in tensors)
    body += struct.pack("<I", len(variants))
    body += b"".join(struct.pack("<ii", v.kernel, v.cores) for v in variants)
    total = 16 + len(body)
    crc = zlib.crc32(body)
    return struct.pack("<IIII", MAGIC, VERSION, total, crc) + body


def payload_crc(payload: bytes) -> int:
    return struct.unpack_from("<I", payload, 12)[0]


def payload_as_c_source(payload: bytes) -> str:
    """A C file that compiles the payload into the runner (build with
    -DPTL_EMBEDDED_PAYLOAD), for flows that cannot deliver it at run time."""
    rows = [", ".join(f"0x{b:02x}" for b in payload[i:i + 16]) for i in range(0, len(payload), 16)]
    body = ",\n    ".join(rows)
    return ("#include <stdint.h>\n"
            f"const uint32_t ptl_embedded_payload_len = {len(payload)}u;\n"
            "__attribute__((aligned(4))) const uint8_t ptl_embedded_payload[] = {\n    "
            f"{body}\n}};\n")
