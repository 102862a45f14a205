"""harness/payload.py: the case payload, in the layout of runtime/include/ptl_runner.h."""
import struct
import zlib

import numpy as np
import pytest

from harness.payload import (DTYPE_F16, DTYPE_F32, DTYPE_I32, MAGIC, VERSION, VariantSpec, encode_payload,
                             payload_crc)


def simple_payload(tensors=(), params=(3, -4), variants=(VariantSpec(2, 8),), op="matmul_fp16"):
    return encode_payload(op, list(params), list(tensors), list(variants))


def test_header_holds_magic_version_total_length_and_crc_of_the_body():
    payload = simple_payload([np.array([1, 2], dtype=np.uint32)])
    magic, version, total, crc = struct.unpack_from("<IIII", payload)
    assert payload[:4] == b"PTLP"            # 0x504C5450 stored little-endian
    assert (magic, version) == (MAGIC, VERSION) == (0x504C5450, 1)
    assert total == len(payload)
    assert crc == zlib.crc32(payload[16:]) == payload_crc(payload)


def test_body_layout_is_op_params_tensors_variants():
    payload = simple_payload([np.array([7], dtype=np.int32)], params=(3, -4),
                             variants=[VariantSpec(2, 8), VariantSpec(0, 1)])
    body = payload[16:]
    assert body[:32] == b"matmul_fp16".ljust(32, b"\0")
    assert struct.unpack_from("<Iii", body, 32) == (2, 3, -4)
    assert struct.unpack_from("<IIIi", body, 44) == (1, DTYPE_I32, 1, 7)
    assert struct.unpack_from("<Iiiii", body, 60) == (2, 2, 8, 0, 1)
    assert len(body) == 80


def test_odd_fp16_count_is_padded_to_a_four_byte_boundary_with_zeros():
    payload = simple_payload([np.array([0x3C00, 0xBC00, 0x0001], dtype=np.uint16)], params=(),
                             variants=())
    block = payload[16 + 32 + 4 + 4:]
    assert struct.unpack_from("<II", block) == (DTYPE_F16, 3)
    assert block[8:14] == bytes.fromhex("003c00bc0100")
    assert block[14:16] == b"\0\0"
    assert struct.unpack_from("<I", block, 16) == (0,)          # n_variants follows the padding
    assert len(payload) % 4 == 0


def test_even_fp16_count_gets_no_padding():
    payload = simple_payload([np.array([1, 2], dtype=np.uint16)], params=(), variants=())
    assert len(payload) == 16 + 32 + 4 + 4 + 8 + 4 + 4


def test_fp32_patterns_are_written_as_dtype_f32_little_endian():
    payload = simple_payload([np.array([0x3F800000], dtype=np.uint32)], params=(), variants=())
    assert payload[16 + 40: 16 + 52] == struct.pack("<II", DTYPE_F32, 1) + bytes.fromhex("0000803f")


def test_multidimensional_tensors_are_flattened_in_row_major_order():
    t = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.uint32)
    payload = simple_payload([t.T], params=(), variants=())   # a non-contiguous view
    count = struct.unpack_from("<I", payload, 16 + 40 + 4)[0]
    data = np.frombuffer(payload, dtype="<u4", count=count, offset=16 + 48)
    np.testing.assert_array_equal(data, [1, 4, 2, 5, 3, 6])


def test_crc_changes_when_any_input_changes():
    base = payload_crc(simple_payload([np.array([1], dtype=np.uint16)]))
    assert payload_crc(simple_payload([np.array([2], dtype=np.uint16)])) != base
    assert payload_crc(simple_payload([np.array([1], dtype=np.uint16)], variants=[VariantSpec(2, 7)])) != base
    assert payload_crc(simple_payload([np.array([1], dtype=np.uint16)], op="matmul_fp32")) != base


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.uint8, np.int64])
def test_tensors_that_are_not_bit_patterns_are_rejected(dtype):
    with pytest.raises(ValueError, match=r"uint16/uint32 bit patterns or int32"):
        simple_payload([np.zeros(2, dtype=dtype)])


def test_op_name_of_31_bytes_is_accepted_and_32_bytes_rejected():
    assert simple_payload(op="x" * 31)[16:48] == b"x" * 31 + b"\0"
    with pytest.raises(ValueError, match="longer than 31 bytes"):
        simple_payload(op="x" * 32)


def test_op_name_length_is_counted_in_utf8_bytes():
    with pytest.raises(ValueError, match="longer than 31 bytes"):
        simple_payload(op="\u00e9" * 16)     # 16 characters, 32 bytes


def test_too_many_params_or_tensors_are_rejected():
    with pytest.raises(ValueError, match="at most 32 params"):
        simple_payload(params=range(33))
    with pytest.raises(ValueError, match="16 tensors"):
        simple_payload([np.zeros(1, dtype=np.uint16)] * 17)
    simple_payload([np.zeros(1, dtype=np.uint16)] * 16, params=range(32))   # the limits themselves fit
