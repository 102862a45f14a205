"""golden/bundle.py: the reference bundle format and its content-keyed cache."""
import os

import numpy as np
import pytest

from golden import bundle as bundle_module
from golden.bundle import BundleCache, Reference, ReferenceBundle, bundle_key
from harness.files import write_atomically

DESCRIPTION = {"entry": "matmul", "dtype": "fp16", "step": "fw", "shape": {"N": 2, "M": 3, "K": 4},
               "options": {"trans_B": 0}}


def sample_bundle() -> ReferenceBundle:
    return ReferenceBundle(
        inputs={"A": np.arange(8, dtype=np.float64).reshape(2, 4) - 3.5,
                "B": np.linspace(-1, 1, 12).reshape(4, 3)},
        outputs={"C": Reference(np.array([[1.5, -2.0, 0.25], [3.0, 4.0, -0.0]]),
                                np.array([[2.5, 2.0, 0.75], [3.0, 5.0, 1.0]]), 4),
                 "db": Reference(np.array([7.0]), np.array([7.0]), 0),
                 "y": Reference(np.array([0.5, 2.0]), np.array([0.5, 2.0]), 3,
                                propagated=np.array([0.015, 0.06]))},
    )


def cache_files(root):
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


# ---- format --------------------------------------------------------------------------

def test_bundle_round_trips_through_bytes_exactly():
    original = sample_bundle()
    restored = ReferenceBundle.from_bytes(original.to_bytes())
    assert list(restored.inputs) == ["A", "B"]
    assert list(restored.outputs) == ["C", "db", "y"]
    for name, array in original.inputs.items():
        assert restored.inputs[name].dtype == np.float64
        np.testing.assert_array_equal(restored.inputs[name], array)
    for name, ref in original.outputs.items():
        got = restored.outputs[name]
        np.testing.assert_array_equal(got.value, ref.value)
        np.testing.assert_array_equal(got.magnitude, ref.magnitude)
        assert got.reduction == ref.reduction and isinstance(got.reduction, int)
        if ref.propagated is None:
            assert got.propagated is None
        else:
            np.testing.assert_array_equal(got.propagated, ref.propagated)
    assert np.signbit(restored.outputs["C"].value[1, 2])       # -0.0 survives


def test_bundle_keeps_output_order_which_is_the_runner_tensor_order():
    b = ReferenceBundle({}, {"z": Reference(np.zeros(1), np.zeros(1), 1),
                             "a": Reference(np.ones(1), np.ones(1), 2)})
    assert list(ReferenceBundle.from_bytes(b.to_bytes()).outputs) == ["z", "a"]


# ---- key -------------------------------------------------------------------------------

def test_bundle_key_is_stable_and_independent_of_dict_order():
    reordered = {k: DESCRIPTION[k] for k in reversed(list(DESCRIPTION))}
    assert bundle_key(DESCRIPTION) == bundle_key(dict(DESCRIPTION)) == bundle_key(reordered)


@pytest.mark.parametrize("field, value", [("dtype", "bf16"), ("step", "wg"), ("shape", {"N": 2, "M": 3, "K": 5}),
                                          ("options", {"trans_B": 1})])
def test_bundle_key_changes_with_any_part_of_the_description(field, value):
    assert bundle_key({**DESCRIPTION, field: value}) != bundle_key(DESCRIPTION)


def test_bundle_key_changes_with_the_golden_source(monkeypatch):
    before = bundle_key(DESCRIPTION)
    monkeypatch.setattr(bundle_module, "_SOURCE_DIGEST", "0" * 64)
    assert bundle_key(DESCRIPTION) != before


# ---- cache -------------------------------------------------------------------------------

class Computations:
    def __init__(self):
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return sample_bundle()


def test_cache_computes_once_and_reuses_afterwards(tmp_path):
    cache, compute = BundleCache(tmp_path), Computations()
    first = cache.get(DESCRIPTION, compute)
    second = cache.get(DESCRIPTION, compute)
    assert compute.calls == 1
    assert (cache.generated, cache.reused) == (1, 1)
    np.testing.assert_array_equal(second.outputs["C"].value, first.outputs["C"].value)


def test_cache_reuses_entries_written_by_another_instance(tmp_path):
    BundleCache(tmp_path).get(DESCRIPTION, Computations())
    later, compute = BundleCache(tmp_path), Computations()
    later.get(DESCRIPTION, compute)
    assert compute.calls == 0 and (later.generated, later.reused) == (0, 1)


def test_cache_keeps_different_descriptions_apart(tmp_path):
    cache, compute = BundleCache(tmp_path), Computations()
    cache.get(DESCRIPTION, compute)
    cache.get({**DESCRIPTION, "dtype": "fp32"}, compute)
    assert compute.calls == 2 and cache.generated == 2
    assert len(list(tmp_path.rglob("*.bundle"))) == 2


def test_cache_stores_the_entry_under_its_key(tmp_path):
    BundleCache(tmp_path).get(DESCRIPTION, Computations())
    key = bundle_key(DESCRIPTION)
    assert cache_files(tmp_path) == [f"{key[:2]}/{key}.bundle"]   # no temporary files left behind


def _entry_path(root):
    key = bundle_key(DESCRIPTION)
    return root / key[:2] / f"{key}.bundle"


def test_cache_replaces_an_entry_that_is_not_a_bundle(tmp_path):
    cache, compute = BundleCache(tmp_path), Computations()
    cache.get(DESCRIPTION, compute)
    _entry_path(tmp_path).write_bytes(b"this is not a bundle at all, just text" * 4)
    rebuilt = cache.get(DESCRIPTION, compute)
    assert compute.calls == 2 and (cache.generated, cache.reused) == (2, 0)
    np.testing.assert_array_equal(rebuilt.inputs["A"], sample_bundle().inputs["A"])
    assert BundleCache.load_entry(_entry_path(tmp_path)).outputs["db"].reduction == 0


@pytest.mark.parametrize("damage", ["truncated", "empty", "flipped_byte"])
def test_cache_replaces_a_truncated_or_corrupted_entry(tmp_path, damage):
    cache, compute = BundleCache(tmp_path), Computations()
    cache.get(DESCRIPTION, compute)
    path = _entry_path(tmp_path)
    data = path.read_bytes()
    damaged = {"truncated": data[: len(data) // 2], "empty": b"",
               "flipped_byte": data[:100] + bytes([data[100] ^ 0xFF]) + data[101:]}[damage]
    path.write_bytes(damaged)
    cache.get(DESCRIPTION, compute)
    assert compute.calls == 2
    BundleCache.load_entry(path)    # the entry on disk is whole again


def test_write_atomically_leaves_no_temporary_file_and_creates_parents(tmp_path):
    target = tmp_path / "a" / "b" / "file.bin"
    write_atomically(target, b"first")
    write_atomically(target, b"second")
    assert target.read_bytes() == b"second"
    assert cache_files(tmp_path) == ["a/b/file.bin"]


def test_write_atomically_keeps_the_old_file_when_the_rename_fails(tmp_path, monkeypatch):
    target = tmp_path / "file.bin"
    target.write_bytes(b"old")

    def refuse(src, dst):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        write_atomically(target, b"new")
    assert target.read_bytes() == b"old"
    assert cache_files(tmp_path) == ["file.bin"]
