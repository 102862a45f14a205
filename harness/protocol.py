"""Decoder of the runner's framed records (writer: runtime/runner/protocol.c).

Console output is scanned for lines that start with the record marker; all
other lines (boot banners, library printf) are kept as plain text for
failure messages, and each line printed after one VARIANT record and before
the next as that variant's own (what the library printed while it ran: the
API's "prints" and "the caller must be able to see" are judged by it). A
marked line that does not parse, fails its CRC, or breaks the sequence
raises TransportError: nothing unchecked is believed.
"""
from __future__ import annotations

import re
import struct
import zlib
from dataclasses import dataclass, field

import numpy as np

from harness import c_header

MARKER = b"@PTL1 "
NO_VARIANT = c_header.number("ptl_protocol.h", "PTL_NO_VARIANT")
_DTYPE_F16 = c_header.number("ptl_protocol.h", "PTL_DTYPE_F16")
# The record kinds, by the letter on the wire: PTL_REC_<NAME> = '<letter>'.
KINDS = {chr(letter): name for name, letter in c_header.prefixed("ptl_protocol.h", "PTL_REC_").items()}
_LINE = re.compile(rb"@PTL1 ([0-9a-f]{8}) ([A-Z]) ([0-9a-f]*) ([0-9a-f]{8})\s*$")

# Variant status codes: the codes are ptl_runner.h's PTL_OK and PTL_ERR_*,
# the words for a person are these (tests/test_protocol.py checks that each
# code has words and each word a code).
STATUS_WORDS = {
    "OK": "ok", "ERR_BAD_CASE": "bad case", "ERR_NO_MEMORY": "out of memory",
    "ERR_GUARD": "wrote outside a guarded buffer", "ERR_BAD_VARIANT": "core count or kernel index out of range",
    "ERR_UNKNOWN_OP": "unknown op", "ERR_UNSUPPORTED": "unsupported by the library",
}
STATUS_TEXT = {c_header.number("ptl_runner.h", f"PTL_{name}"): words for name, words in STATUS_WORDS.items()}
STATUS_GUARD = c_header.number("ptl_runner.h", "PTL_ERR_GUARD")
STATUS_UNSUPPORTED = c_header.number("ptl_runner.h", "PTL_ERR_UNSUPPORTED")
STATUS_NO_MEMORY = c_header.number("ptl_runner.h", "PTL_ERR_NO_MEMORY")


class TransportError(Exception):
    """The records cannot be trusted: corrupt, truncated, lost or stale."""


@dataclass
class Crash:
    hart: int
    cause: int
    epc: int
    tval: int


@dataclass
class VariantOutput:
    index: int
    status: int | None = None           # None until its VARIANT record arrives
    elapsed: int = 0
    region: int | None = None          # measured region number, matches QEMU plugin counts
    tensors: dict[int, np.ndarray] = field(default_factory=dict)  # bit patterns
    errors: list[str] = field(default_factory=list)
    # Unmarked lines printed after the previous variant's VARIANT record and
    # before this one's: what the library printed while this variant ran.
    console: list[str] = field(default_factory=list)
    _chunks: dict[int, list] = field(default_factory=dict, repr=False)


@dataclass
class DecodedRun:
    payload_crc: int | None = None
    n_variants: int = 0
    variants: list[VariantOutput] = field(default_factory=list)
    case_errors: list[str] = field(default_factory=list)
    crash: Crash | None = None
    complete: bool = False              # the END record arrived and matched
    console: list[str] = field(default_factory=list)   # unmarked lines
    descriptions: list[str] = field(default_factory=list)  # DESCRIBE records (describe payload)
    # COUNTS records: per measured region, the per-core (cycles, instructions)
    # a target's program read itself (GVSOC); QEMU counts outside the program.
    region_counts: dict[int, tuple[list[int], list[int]]] = field(default_factory=dict)
    # SPILL records: per measured region, the heap bytes that were in L2 while
    # it ran (GVSOC); a region of such a target without one had none.
    region_l2_bytes: dict[int, int] = field(default_factory=dict)


def _records(output: bytes):
    expected_seq = 0
    lines = output.split(b"\n")
    for number, line in enumerate(lines, 1):
        start = line.find(MARKER)
        if start < 0:
            yield None, line
            continue
        match = _LINE.match(line[start:])
        if not match and number == len(lines):
            return  # the writer ends every record with a newline: the output was cut here
        if not match:
            raise TransportError(f"console line {number}: malformed record {line[start:start + 60]!r}")
        seq_hex, kind, body_hex, crc_hex = match.groups()
        if len(body_hex) % 2:
            raise TransportError(f"console line {number}: odd number of hex digits in record body")
        seq, body = int(seq_hex, 16), bytes.fromhex(body_hex.decode())
        crc = zlib.crc32(struct.pack("<I", seq) + kind + body)
        if crc != int(crc_hex, 16):
            raise TransportError(f"console line {number}: CRC mismatch in record {seq}")
        if seq != expected_seq:
            raise TransportError(f"record {expected_seq} is missing (next record seen is {seq})")
        expected_seq += 1
        letter = kind.decode()
        if letter not in KINDS:
            raise TransportError(f"record {seq} has unknown kind {letter!r}")
        yield (seq, KINDS[letter], body), None


def decode_records(output: bytes, expected_crc: int | None = None) -> DecodedRun:
    """Decode a run's console output. Raises TransportError on any damage.
    A run that simply stopped (crash, timeout) decodes with complete=False."""
    run = DecodedRun()
    finished = 0    # VARIANT records seen: the next unmarked line belongs to variant `finished`
    for record, plain in _records(output):
        if record is None:
            text = plain.decode("utf-8", "replace").rstrip("\r")
            if text:
                run.console.append(text)
                if finished < len(run.variants):
                    run.variants[finished].console.append(text)
            continue
        seq, kind, body = record
        try:
            _apply(run, seq, kind, body)
        except struct.error as exc:
            raise TransportError(f"record {seq} ({kind}) has a short body: {exc}") from None
        if kind == "VARIANT":
            finished += 1
        if kind == "END":
            run.complete = True
    if run.payload_crc is None and run.complete and not run.case_errors:
        raise TransportError("records arrived without a BEGIN record")
    if expected_crc is not None and run.payload_crc not in (None, expected_crc):
        raise TransportError(
            f"the output answers another payload (crc {run.payload_crc:#010x}, sent {expected_crc:#010x})")
    if run.complete:
        for v in run.variants:
            if v.status is None:
                raise TransportError(f"variant {v.index} has no VARIANT record before END")
    return run


def _variant(run: DecodedRun, index: int) -> VariantOutput:
    if index >= run.n_variants:
        raise TransportError(f"record names variant {index}, but the case has {run.n_variants}")
    return run.variants[index]


def _apply(run: DecodedRun, seq: int, kind: str, body: bytes) -> None:
    if kind == "BEGIN":
        run.payload_crc, run.n_variants = struct.unpack("<II", body)
        run.variants = [VariantOutput(i) for i in range(run.n_variants)]
    elif kind == "VARIANT":
        index, status, region, lo, hi = struct.unpack("<IiIII", body)
        v = _variant(run, index)
        v.status, v.elapsed = status, lo | hi << 32
        v.region = None if region == NO_VARIANT else region
        _assemble_tensors(v)
    elif kind == "TENSOR":
        index, tensor, dtype, total, first, n = struct.unpack_from("<6I", body)
        data = body[24:]
        width = 2 if dtype == _DTYPE_F16 else 4
        if len(data) != n * width or first + n > total:
            raise TransportError(f"record {seq}: tensor chunk size does not match its header")
        np_dtype = np.dtype("<u2") if width == 2 else np.dtype("<u4")
        _variant(run, index)._chunks.setdefault(tensor, []).append(
            (first, total, np.frombuffer(data, dtype=np_dtype)))
    elif kind == "ERROR":
        index, code = struct.unpack_from("<Ii", body)
        text = body[8:].decode("utf-8", "replace")
        message = f"{STATUS_TEXT.get(code, f'error {code}')}: {text}"
        if index == NO_VARIANT:
            run.case_errors.append(message)
        else:
            _variant(run, index).errors.append(message)
    elif kind == "DESCRIBE":
        run.descriptions.append(body.decode("utf-8", "replace"))
    elif kind == "CRASH":
        run.crash = Crash(*struct.unpack("<4I", body))
    elif kind == "COUNTS":
        region, n = struct.unpack_from("<II", body)
        if len(body) != 8 + 8 * n:
            raise TransportError(f"record {seq}: COUNTS body has {len(body)} bytes for {n} cores")
        values = list(struct.unpack_from(f"<{2 * n}I", body, 8))
        if region in run.region_counts:
            raise TransportError(f"record {seq}: a second COUNTS record for region {region}")
        run.region_counts[region] = (values[:n], values[n:])
    elif kind == "SPILL":
        if len(body) != 8:
            raise TransportError(f"record {seq}: SPILL body has {len(body)} bytes, not 8")
        region, l2_bytes = struct.unpack("<II", body)
        if region in run.region_l2_bytes:
            raise TransportError(f"record {seq}: a second SPILL record for region {region}")
        run.region_l2_bytes[region] = l2_bytes
    elif kind == "END":
        (count,) = struct.unpack("<I", body)
        if count != seq:
            raise TransportError(f"END says {count} records were written, {seq} arrived")
    else:
        raise TransportError(f"record {seq}: the decoder does not handle kind {kind}")


def _assemble_tensors(v: VariantOutput) -> None:
    for tensor, chunks in v._chunks.items():
        total = chunks[0][1]
        data = np.zeros(total, dtype=chunks[0][2].dtype)
        covered = 0
        for first, _, part in sorted(chunks, key=lambda c: c[0]):
            if first != covered:
                raise TransportError(f"variant {v.index} tensor {tensor}: chunk at {first} missing or repeated")
            data[first:first + part.size] = part
            covered += part.size
        if covered != total:
            raise TransportError(f"variant {v.index} tensor {tensor}: {covered} of {total} elements arrived")
        v.tensors[tensor] = data
    v._chunks.clear()
