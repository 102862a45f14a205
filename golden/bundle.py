"""The reference bundle of one case: its inputs and what each output must be.

A bundle holds, for every output tensor, the exact value computed in float64
from the (already rounded) inputs, the magnitude of the terms that were summed
for each element, and the length of that sum. The comparison on the host
turns those into a tolerance (harness/compare.py).

Bundles are cached on disk under a key made from everything that produced
them: the case description, the seed, the torch version and the source of the
golden package. A second run with nothing changed reads them back. Each
file starts with the sha256 of the bundle it holds: a damaged file is
recomputed, with a one-line warning, never believed.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from harness.files import mark_used, write_atomically


@dataclass
class Reference:
    """Expected value of one output tensor."""

    value: np.ndarray      # exact result in float64
    magnitude: np.ndarray  # sum over the reduction of |term|, same shape
    reduction: int         # rounded operations that contribute to one element
    # Per-element absolute bound of the error this output inherits beyond
    # the roundings counted by magnitude and reduction, propagated to it by
    # the golden model: the documented bound of an API approximation
    # (fastexp_gist, q_rsqrt, CORDIC; stated in OpEntry.approximations), or
    # the bounds of earlier operations of a chain (statistics a norm
    # computes first, the steps of a training run). None: nothing inherited.
    propagated: np.ndarray | None = None


@dataclass
class ReferenceBundle:
    inputs: dict[str, np.ndarray] = field(default_factory=dict)       # float64, on the format's grid
    outputs: dict[str, Reference] = field(default_factory=dict)

    def to_bytes(self) -> bytes:
        arrays = {f"in/{k}": v for k, v in self.inputs.items()}
        for name, ref in self.outputs.items():
            arrays[f"out/{name}"] = ref.value
            arrays[f"mag/{name}"] = ref.magnitude
            if ref.propagated is not None:
                arrays[f"apx/{name}"] = ref.propagated
        meta = {"inputs": list(self.inputs), "outputs": {k: r.reduction for k, r in self.outputs.items()}}
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> "ReferenceBundle":
        with np.load(io.BytesIO(data)) as archive:
            meta = json.loads(archive["meta"].tobytes().decode())
            inputs = {k: archive[f"in/{k}"] for k in meta["inputs"]}
            outputs = {
                k: Reference(archive[f"out/{k}"], archive[f"mag/{k}"], int(n),
                             archive[f"apx/{k}"] if f"apx/{k}" in archive.files else None)
                for k, n in meta["outputs"].items()
            }
        return cls(inputs, outputs)


def _golden_source_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


_SOURCE_DIGEST = _golden_source_digest()


# The installed torch's version, read without importing it (the same string
# as torch.__version__, e.g. "2.13.0+cpu"): a run whose bundles are all
# cached never imports torch (golden/lazy_torch.py).
_TORCH_VERSION = importlib.metadata.version("torch")


def bundle_key(description: dict) -> str:
    material = json.dumps(
        {"case": description, "torch": _TORCH_VERSION, "golden": _SOURCE_DIGEST}, sort_keys=True
    )
    return hashlib.sha256(material.encode()).hexdigest()


BUNDLE_MAGIC = b"PTLBUNDLE1\n"
BUNDLE_SUFFIX = ".bundle"


def seal(data: bytes) -> bytes:
    """A bundle's bytes as they are stored: a header, their sha256, themselves."""
    return BUNDLE_MAGIC + hashlib.sha256(data).digest() + data


def unseal(stored: bytes) -> bytes:
    """The bundle bytes of a stored file; ValueError saying what is wrong."""
    head = len(BUNDLE_MAGIC)
    if not stored.startswith(BUNDLE_MAGIC) or len(stored) < head + 32:
        raise ValueError("it has no digest header")
    data = stored[head + 32:]
    if hashlib.sha256(data).digest() != stored[head:head + 32]:
        raise ValueError("its bytes do not match their recorded digest")
    return data


class BundleCache:
    """Content-keyed store of reference bundles. Writes are atomic, so
    parallel workers that compute the same bundle never see half a file."""

    def __init__(self, root: Path, warn=None):
        self.root = Path(root)
        self.generated = 0
        self.reused = 0
        self.repaired = 0
        self.warn = warn or (lambda message: None)

    def path_of(self, description: dict) -> Path:
        key = bundle_key(description)
        return self.root / key[:2] / f"{key}{BUNDLE_SUFFIX}"

    @staticmethod
    def load_entry(path: Path) -> ReferenceBundle:
        """The bundle of a cache file; raises when it is damaged."""
        return ReferenceBundle.from_bytes(unseal(Path(path).read_bytes()))

    def get(self, description: dict, compute) -> ReferenceBundle:
        path = self.path_of(description)
        if path.exists():
            try:
                bundle = self.load_entry(path)
                mark_used(path)
                self.reused += 1
                return bundle
            except Exception as exc:  # noqa: BLE001 - any damaged entry (digest, zip, npy, json) is recomputed
                self.warn(f"the golden cache entry {path} is damaged: {exc}; computing it again")
                self.repaired += 1
        bundle = compute()
        write_atomically(path, seal(bundle.to_bytes()))
        self.generated += 1
        return bundle
