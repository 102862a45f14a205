"""harness/protocol.py: decoding the runner's framed records.

The records are produced here by RecordWriter, an independent encoder that
follows runtime/include/ptl_protocol.h and runtime/runner/protocol.c:

    @PTL1 <seq %08x> <kind> <body as lowercase hex> <crc32 %08x>\\n

with the CRC-32 (zlib) over the little-endian u32 seq, the kind byte and
the body, and bodies packed as little-endian structs.
"""
import struct
import zlib

import numpy as np
import pytest

from harness.protocol import NO_VARIANT, TransportError, decode_records

PAYLOAD_CRC = 0xC0FFEE42
CHUNK = 256   # PTL_TENSOR_CHUNK


def record_line(seq: int, kind: str, body: bytes) -> bytes:
    crc = zlib.crc32(struct.pack("<I", seq) + kind.encode() + body)
    return b"@PTL1 %08x %s %s %08x\n" % (seq, kind.encode(), body.hex().encode(), crc)


class RecordWriter:
    """Mirror of the ptl_emit_* functions, one line per record."""

    def __init__(self):
        self.seq = 0
        self.lines: list[bytes] = []

    def emit(self, kind: str, body: bytes) -> "RecordWriter":
        self.lines.append(record_line(self.seq, kind, body))
        self.seq += 1
        return self

    def noise(self, text: bytes) -> "RecordWriter":
        self.lines.append(text + b"\n")
        return self

    def begin(self, n_variants: int, crc: int = PAYLOAD_CRC):
        return self.emit("B", struct.pack("<II", crc, n_variants))

    def variant(self, index: int, status: int = 0, region: int = NO_VARIANT, elapsed: int = 0):
        return self.emit("V", struct.pack("<IiIII", index, status, region, elapsed & 0xFFFFFFFF, elapsed >> 32))

    def tensor_chunk(self, index: int, tensor: int, data: np.ndarray, total: int, first: int):
        dtype = 1 if data.dtype == np.uint16 else 0
        head = struct.pack("<6I", index, tensor, dtype, total, first, data.size)
        return self.emit("T", head + data.astype(data.dtype.newbyteorder("<")).tobytes())

    def tensor(self, index: int, tensor: int, data: np.ndarray, skip_chunks=()):
        for number, first in enumerate(range(0, max(data.size, 1), CHUNK)):
            if number not in skip_chunks:
                self.tensor_chunk(index, tensor, data[first:first + CHUNK], data.size, first)
        return self

    def error(self, index: int, code: int, text: str):
        return self.emit("E", struct.pack("<Ii", index, code) + text.encode())

    def crash(self, hart: int, cause: int, epc: int, tval: int):
        return self.emit("C", struct.pack("<4I", hart, cause, epc, tval))

    def end(self, count: int | None = None):
        return self.emit("Z", struct.pack("<I", self.seq if count is None else count))

    def output(self) -> bytes:
        return b"".join(self.lines)


FP16_OUT = np.arange(600, dtype=np.uint16) * 7        # three chunks: 256 + 256 + 88
FP32_OUT = np.array([0x3F800000, 0xBF800000, 0x7FC00000], dtype=np.uint32)


def two_variant_run(writer=None) -> RecordWriter:
    w = writer or RecordWriter()
    w.begin(2)
    w.tensor(0, 0, FP16_OUT).variant(0, status=0, region=0, elapsed=(5 << 32) | 17)
    w.tensor(1, 0, FP32_OUT).tensor(1, 1, FP32_OUT[:1]).variant(1, status=0, region=1, elapsed=9)
    return w.end()


# ---- a clean run --------------------------------------------------------------------

def test_a_complete_run_decodes_every_field():
    run = decode_records(two_variant_run().output(), expected_crc=PAYLOAD_CRC)
    assert run.complete and run.payload_crc == PAYLOAD_CRC and run.n_variants == 2
    v0, v1 = run.variants
    assert (v0.index, v0.status, v0.region, v0.elapsed) == (0, 0, 0, (5 << 32) | 17)
    assert (v1.status, v1.region, v1.elapsed) == (0, 1, 9)
    np.testing.assert_array_equal(v0.tensors[0], FP16_OUT)
    assert v0.tensors[0].dtype == np.dtype("<u2")
    np.testing.assert_array_equal(v1.tensors[0], FP32_OUT)
    np.testing.assert_array_equal(v1.tensors[1], FP32_OUT[:1])
    assert run.console == [] and run.case_errors == [] and run.crash is None


def test_variant_without_a_measured_region_has_region_none():
    w = RecordWriter().begin(1).variant(0, status=4).end()
    assert decode_records(w.output()).variants[0].region is None


# ---- console noise ----------------------------------------------------------------------

def test_noise_lines_between_records_are_ignored_and_kept_in_console():
    w = RecordWriter().noise(b"GAP9 boot v1.2").noise(b"")
    w.begin(2).noise(b"[lib] tiling 4x8")
    w.tensor(0, 0, FP16_OUT[:300]).noise(b"\x1b[32mcore 3 up\x1b[0m\r")
    w.variant(0).tensor(1, 0, FP32_OUT).variant(1).end().noise(b"bye")
    run = decode_records(w.output())
    assert run.complete
    np.testing.assert_array_equal(run.variants[0].tensors[0], FP16_OUT[:300])
    assert run.console == ["GAP9 boot v1.2", "[lib] tiling 4x8", "\x1b[32mcore 3 up\x1b[0m", "bye"]


def test_a_line_printed_while_a_variant_ran_is_that_variants_and_a_banner_is_no_variants():
    w = RecordWriter().noise(b"boot").begin(3).noise(b"mm_manager: unknown matmul_type 35")
    w.tensor(0, 0, FP32_OUT).noise(b"and again").variant(0)
    w.tensor(1, 0, FP32_OUT).variant(1).noise(b"third").variant(2).end().noise(b"bye")
    run = decode_records(w.output())
    assert [v.console for v in run.variants] == [["mm_manager: unknown matmul_type 35", "and again"], [], ["third"]]
    assert run.console == ["boot", "mm_manager: unknown matmul_type 35", "and again", "third", "bye"]


def test_records_survive_crlf_line_endings_and_text_before_the_marker():
    clean = two_variant_run().output()
    noisy = clean.replace(b"\n", b"\r\n").replace(b"@PTL1 00000001", b"uart0> @PTL1 00000001")
    run = decode_records(noisy)
    assert run.complete
    np.testing.assert_array_equal(run.variants[0].tensors[0], FP16_OUT)


# ---- corruption, loss, truncation --------------------------------------------------------

def _flip_hex_digit(line: bytes, position: int) -> bytes:
    digit = line[position:position + 1]
    replacement = b"0" if digit != b"0" else b"1"
    return line[:position] + replacement + line[position + 1:]


@pytest.mark.parametrize("where", ["seq", "body", "crc"])
def test_a_flipped_hex_digit_is_a_crc_error(where):
    w = two_variant_run()
    line = w.lines[1]                       # a tensor record
    position = {"seq": 6 + 7, "body": line.index(b" T ") + 3 + 10, "crc": len(line) - 3}[where]
    w.lines[1] = _flip_hex_digit(line, position)
    assert w.lines[1] != line
    with pytest.raises(TransportError, match="CRC"):
        decode_records(w.output())


def test_a_missing_record_is_a_sequence_gap():
    w = two_variant_run()
    del w.lines[4]
    with pytest.raises(TransportError, match=r"record 4 is missing \(next record seen is 5\)"):
        decode_records(w.output())


def test_a_malformed_marked_line_is_rejected():
    w = two_variant_run()
    w.lines[2] = w.lines[2].upper()          # hex must be lowercase
    with pytest.raises(TransportError, match="malformed record"):
        decode_records(w.output())


def test_output_that_stops_between_records_decodes_as_incomplete():
    w = two_variant_run()
    cut = w.lines.index(next(l for l in w.lines if b" V " in l)) + 1   # after variant 0's result
    run = decode_records(b"".join(w.lines[:cut]))
    assert run.complete is False
    assert run.variants[0].status == 0
    np.testing.assert_array_equal(run.variants[0].tensors[0], FP16_OUT)
    assert run.variants[1].status is None and run.variants[1].tensors == {}


def test_output_cut_inside_the_last_record_line_decodes_as_incomplete():
    output = two_variant_run().output()
    last_v = output.index(b" V ", output.index(b" V ") + 1)
    run = decode_records(output[:last_v + 20])           # cut inside variant 1's VARIANT record
    assert run.complete is False and run.variants[0].status == 0 and run.variants[1].status is None


# ---- tensors -------------------------------------------------------------------------------

def test_tensor_chunks_reassemble_by_their_offset_in_any_arrival_order():
    w = RecordWriter().begin(1)
    for first in (512, 0, 256):
        w.tensor_chunk(0, 0, FP16_OUT[first:first + CHUNK], FP16_OUT.size, first)
    run = decode_records(w.variant(0).end().output())
    np.testing.assert_array_equal(run.variants[0].tensors[0], FP16_OUT)


@pytest.mark.parametrize("skipped", [0, 1, 2], ids=["first", "middle", "last"])
def test_a_missing_tensor_chunk_is_a_transport_error(skipped):
    w = RecordWriter().begin(1).tensor(0, 0, FP16_OUT, skip_chunks={skipped}).variant(0).end()
    with pytest.raises(TransportError, match="variant 0 tensor 0"):
        decode_records(w.output())


def test_a_repeated_tensor_chunk_is_a_transport_error():
    w = RecordWriter().begin(1).tensor(0, 0, FP16_OUT)
    w.tensor_chunk(0, 0, FP16_OUT[:CHUNK], FP16_OUT.size, 0)
    with pytest.raises(TransportError, match="missing or repeated"):
        decode_records(w.variant(0).end().output())


def test_a_chunk_whose_data_length_disagrees_with_its_header_is_rejected():
    w = RecordWriter().begin(1)
    head = struct.pack("<6I", 0, 0, 1, 4, 0, 4)
    w.emit("T", head + b"\0" * 6)             # 3 fp16 elements where the header says 4
    with pytest.raises(TransportError, match="chunk size does not match"):
        decode_records(w.variant(0).end().output())


# ---- the END record and the payload ---------------------------------------------------------

def test_an_end_record_with_the_wrong_count_is_rejected():
    w = RecordWriter().begin(1).variant(0)
    w.end(count=7)
    with pytest.raises(TransportError, match="END says 7 records were written, 2 arrived"):
        decode_records(w.output())


def test_end_before_every_variant_reported_is_rejected():
    w = RecordWriter().begin(2).variant(0).end()
    with pytest.raises(TransportError, match="variant 1 has no VARIANT record"):
        decode_records(w.output())


def test_output_of_another_payload_is_stale():
    output = two_variant_run().output()
    with pytest.raises(TransportError, match=r"another payload \(crc 0xc0ffee42, sent 0x12345678\)"):
        decode_records(output, expected_crc=0x12345678)
    assert decode_records(output, expected_crc=PAYLOAD_CRC).complete


def test_an_unknown_record_kind_is_rejected():
    w = RecordWriter().begin(1).emit("Q", b"\x01\x02").variant(0).end()
    with pytest.raises(TransportError, match="unknown kind 'Q'"):
        decode_records(w.output())


def test_every_record_kind_of_ptl_protocol_h_is_decoded():
    """The kinds come from the header; an empty body of each reaches its own
    branch of the decoder (and is too short for it), not the fallback."""
    from harness import c_header
    from harness.protocol import DecodedRun, _apply
    kinds = c_header.prefixed("ptl_protocol.h", "PTL_REC_")
    assert set(kinds) >= {"BEGIN", "VARIANT", "TENSOR", "ERROR", "CRASH", "DESCRIBE", "END", "COUNTS", "SPILL"}
    for name in kinds:
        try:
            _apply(DecodedRun(), 0, name, b"")
        except (struct.error, TransportError) as exc:
            assert "does not handle" not in str(exc), name


def test_every_status_code_of_ptl_runner_h_has_words_and_every_word_a_code():
    from harness import c_header
    from harness.protocol import STATUS_WORDS
    codes = {name for name in c_header.prefixed("ptl_runner.h", "PTL_") if name == "OK" or name.startswith("ERR_")}
    assert codes == set(STATUS_WORDS)


def test_a_record_with_a_short_body_is_rejected():
    w = RecordWriter().begin(1).emit("V", struct.pack("<Ii", 0, 0)).end()
    with pytest.raises(TransportError, match=r"record 1 \(VARIANT\) has a short body"):
        decode_records(w.output())


@pytest.mark.parametrize("kind", ["V", "T", "E"])
def test_a_variant_index_out_of_range_is_rejected(kind):
    w = RecordWriter().begin(2)
    {"V": lambda: w.variant(2), "T": lambda: w.tensor(2, 0, FP32_OUT), "E": lambda: w.error(5, 1, "x")}[kind]()
    with pytest.raises(TransportError, match=r"names variant \d, but the case has 2"):
        decode_records(w.output())


def test_records_without_a_begin_record_are_rejected():
    w = RecordWriter().emit("Z", struct.pack("<I", 0))
    with pytest.raises(TransportError, match="without a BEGIN record"):
        decode_records(w.output())


# ---- errors and crashes --------------------------------------------------------------------

def test_error_records_attach_to_their_variant_or_to_the_case():
    w = RecordWriter().begin(2).error(1, 5, "the runner has no operation of this name")
    w.error(NO_VARIANT, 2, "heap exhausted").variant(0).variant(1, status=5).end()
    run = decode_records(w.output())
    assert run.variants[1].errors == ["unknown op: the runner has no operation of this name"]
    assert run.variants[0].errors == []
    assert run.case_errors == ["out of memory: heap exhausted"]


def test_a_crash_record_is_decoded_and_leaves_the_run_incomplete():
    w = RecordWriter().begin(1).crash(3, 11, 0x1C008A4, 0xDEAD)
    run = decode_records(w.output())
    assert (run.crash.hart, run.crash.cause, run.crash.epc, run.crash.tval) == (3, 11, 0x1C008A4, 0xDEAD)
    assert run.complete is False and run.variants[0].status is None


def test_a_rejected_payload_decodes_as_a_case_error():
    w = RecordWriter().error(NO_VARIANT, 1, "payload CRC mismatch").end()
    run = decode_records(w.output(), expected_crc=PAYLOAD_CRC)
    assert run.complete and run.case_errors == ["bad case: payload CRC mismatch"]


def test_header_strings_are_read_and_a_missing_one_is_named(tmp_path):
    from harness import c_header
    from harness.runner_contract import DESCRIBE_OP
    assert DESCRIBE_OP == c_header.string("ptl_runner.h", "PTL_DESCRIBE_OP") == "ptl.describe"
    header = tmp_path / "h.h"
    header.write_text('/* #define HIDDEN "no" */\n#define SHOWN "yes"\n#define NUMBER 3\n')
    assert c_header.string(header, "SHOWN") == "yes"
    for name in ("HIDDEN", "NUMBER"):
        with pytest.raises(KeyError, match=f"h.h defines no string {name}"):
            c_header.string(header, name)
