"""Fuzzing the record decoder (harness/protocol.py) with damaged consoles.

Shared by tests/test_protocol_fuzz.py (a short hypothesis profile in every
run) and bench/fuzz_decoder.py (the long profile, with counts).

The streams are real: `record_corpus` runs the host runner on a few payloads
(several variants with output tensors, an error record, the describe
payload). Each fuzzed input applies one to four damages to one of them:
flipped bits, a cut, duplicated, swapped or interleaved lines, noise, or the
console of another payload. `judge` then holds the decoder to its promise:
it raises nothing but TransportError, and whatever it returns agrees with
the undamaged run, except what it flags: an incomplete run (no END record)
carries only variants whose records all arrived, each exactly as sent.
"""
from __future__ import annotations

import struct
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from harness.payload import VariantSpec, encode_payload, payload_crc
from harness.protocol import DecodedRun, TransportError, decode_records
from harness.runner_contract import DESCRIBE_OP

# What a fuzzed input came to.
REJECTED, IDENTICAL, FLAGGED_INCOMPLETE = "rejected (TransportError)", "identical", "flagged incomplete"


@dataclass(frozen=True)
class Recording:
    name: str
    output: bytes
    crc: int


def record_corpus(cache_dir: Path) -> list[Recording]:
    """Real console streams of the host runner built from lib_c."""
    from harness.session import Session
    from harness.target import DEFAULT_LIBRARY
    from harness.targets.host import HostTarget
    from harness.catalogue.pool import AVGPOOL, MAXPOOL

    session = Session(HostTarget(), DEFAULT_LIBRARY, cache_dir)
    payloads = {"describe": encode_payload(DESCRIBE_OP, [], [], [])}
    for entry, dtype, step in ((MAXPOOL, "fp32", "bw"), (AVGPOOL, "bf16", "fw")):
        case = next(c for c in entry.cases() if c.dtype == dtype and c.step == step and c.shape["C"] == 3)
        bundle = session.bundle_for(case)
        layout = session.layout_for(case, session.artefact_for(dtype), bundle)
        variants = [v for v in entry.variants() if v.case == case]
        payloads[f"{entry.name}-{dtype}-{step}"] = session.payload_for(case, variants, bundle, layout)
        if dtype == "fp32":  # one variant the runner refuses (too many cores): an ERROR record
            payload = session.payload_for(case, variants[:1], bundle, layout)
            payloads[f"{entry.name}-{dtype}-bad-variant"] = _with_cores(payload, 99)
    corpus = []
    artefact = session.artefact_for("fp32").path
    for name, payload in payloads.items():
        with tempfile.TemporaryDirectory() as workdir:
            raw = session.target.run(artefact, payload, 60.0, Path(workdir))
        recording = Recording(name, raw.output, payload_crc(payload))
        assert decode_records(recording.output, recording.crc).complete, f"recording {name} did not complete"
        corpus.append(recording)
    return corpus


def _with_cores(payload: bytes, cores: int) -> bytes:
    """The same payload with its last variant's core count replaced (CRC redone)."""
    body = bytearray(payload)
    struct.pack_into("<i", body, len(body) - 4, cores)
    struct.pack_into("<I", body, 12, zlib.crc32(bytes(body[16:])))
    return bytes(body)


# ---- damage ----------------------------------------------------------------------

def damages(corpus_size: int):
    """A hypothesis strategy: (recording index, [damage, ...])."""
    position = st.integers(min_value=0, max_value=1 << 20)
    damage = st.one_of(
        st.tuples(st.just("flip"), position, st.integers(0, 7)),
        st.tuples(st.just("cut"), position),
        st.tuples(st.just("duplicate_line"), position),
        st.tuples(st.just("swap_lines"), position, position),
        st.tuples(st.just("drop_line"), position),
        st.tuples(st.just("noise"), position,
                  st.binary(min_size=1, max_size=40) | st.sampled_from([b"\n", b"@PTL1 ", b"\r\n", b"@PTL1 00"])),
        st.tuples(st.just("interleave"), st.integers(0, corpus_size - 1), position),
        st.tuples(st.just("other_payload"), st.integers(0, corpus_size - 1)),
    )
    return st.tuples(st.integers(0, corpus_size - 1), st.lists(damage, min_size=1, max_size=4))


def damage_sample(corpus: list[Recording], sample) -> tuple[Recording, bytes]:
    """The recording a sample of `damages` names, and its console after the sample's damages."""
    index, steps = sample
    output = corpus[index].output
    for step in steps:
        output = apply(corpus, output, step)
    return corpus[index], output


def apply(corpus: list[Recording], output: bytes, damage: tuple) -> bytes:
    kind, *args = damage
    if kind == "flip":
        if not output:
            return output
        i = args[0] % len(output)
        return output[:i] + bytes([output[i] ^ (1 << args[1])]) + output[i + 1:]
    if kind == "cut":
        return output[:args[0] % (len(output) + 1)]
    if kind == "noise":
        i = args[0] % (len(output) + 1)
        return output[:i] + args[1] + output[i:]
    if kind == "other_payload":
        return corpus[args[0]].output
    lines = output.split(b"\n")
    if kind == "interleave":  # another run's lines spliced in, as two consoles sharing a wire
        other = corpus[args[0]].output.split(b"\n")
        i = args[1] % (len(lines) + 1)
        return b"\n".join(lines[:i] + other[: 1 + args[1] % len(other)] + lines[i:])
    i = args[0] % len(lines)
    if kind == "duplicate_line":
        lines.insert(i, lines[i])
    elif kind == "drop_line":
        del lines[i]
    elif kind == "swap_lines":
        j = args[1] % len(lines)
        lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


# ---- the promise -------------------------------------------------------------------

def _variant_view(v) -> tuple:
    return (v.index, v.status, v.elapsed, v.region, tuple(v.errors),
            tuple(sorted((k, t.tobytes()) for k, t in v.tensors.items())))


def _view(run: DecodedRun) -> tuple:
    return (run.payload_crc, run.n_variants, tuple(_variant_view(v) for v in run.variants),
            tuple(run.case_errors), run.crash, run.complete, tuple(run.descriptions))


class SilentWrongResult(AssertionError):
    pass


def judge(recording: Recording, damaged: bytes) -> str:
    """REJECTED, IDENTICAL or FLAGGED_INCOMPLETE; SilentWrongResult if the
    decoder returns something the undamaged run did not say; any other
    exception escapes (a decoder bug)."""
    original = decode_records(recording.output, recording.crc)
    try:
        got = decode_records(damaged, recording.crc)
    except TransportError:
        return REJECTED
    if got.complete:
        if _view(got) != _view(original):
            raise SilentWrongResult(f"complete decode of damaged {recording.name} differs from the original")
        return IDENTICAL
    # Incomplete: the harness judges only variants whose VARIANT record arrived.
    sent = {v.index: _variant_view(v) for v in original.variants}
    for v in got.variants:
        if v.status is not None and _variant_view(v) != sent.get(v.index):
            raise SilentWrongResult(f"variant {v.index} of damaged {recording.name} differs from what was sent")
    if got.payload_crc not in (None, original.payload_crc) or (got.crash and got.crash != original.crash):
        raise SilentWrongResult(f"damaged {recording.name} decodes to another run")
    if got.descriptions != original.descriptions[:len(got.descriptions)]:
        raise SilentWrongResult(f"damaged {recording.name} carries descriptions that were not sent")
    return FLAGGED_INCOMPLETE
