"""The case model: a declarative catalogue entry per primitive family, and
the cases and variants generated from it.

An OpEntry reads like an OpInfo entry: the steps and dtypes it supports, the
shapes (edge cases included), the options, the core counts, how to lay out
the runner's params and tensors, the reference, and any known failures with
their reasons. To test a new primitive, add one entry.

A Case is one golden computation (entry x dtype x step x shape x options).
A Variant is one way to run it (matmul kernel x core count); one run of the
runner executes every selected variant of a case.
"""
from __future__ import annotations

import hashlib
import inspect
import itertools
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable

import golden.bundle
from golden.bundle import Reference
from harness import c_header, core_split
from harness.core_split import CoreSplit, KernelSplit
from harness.kernels import kernel_table

GOLDEN_DIR = Path(golden.bundle.__file__).resolve().parent   # the reference code every entry computes with

# The `step` param of the runner ops that have steps (enum ptl_step in
# ptl_runner.h): a case's step name is the enum's suffix, lower-cased.
STEP_CODES = {name.lower(): code for name, code in c_header.prefixed("ptl_runner.h", "PTL_STEP_").items()}


# lib_c features beyond the published API (shared/TRAINLIB_API.md, "Contract
# details checked against the published library"). A catalogue entry marks
# the cases that use one (OpEntry.features); each becomes the pytest marker
# feature_<name>, and --expect entries can name it.
FEATURES = {
    "any_stride": "shapes that break the stride precondition ((H + pads - Hk) divisible by the stride)",
    "dma_im2col": "DMA in an unrolling the published library runs on the cores only",
    "hwc_padding": "HWC unrolling with padding",
    "hwc_direct": "the direct conv kernels (USE_IM2COL=0) in HWC",
    "hwc_depthwise": "depthwise convolution in HWC",
    "transp_im2col": "transposed convolution through im2col (USE_IM2COL=1)",
    "hwc_transp": "transposed convolution in HWC",
    "negative_crop": "transposed convolution with a negative pad (torch's output_padding beyond its padding)",
    "caller_blocks": "matmul kernels that deal their rows (mm*) or columns (mm_M*) in the caller's blocks "
                     "of TRAINLIB_API_MORE.md, so that one core alone writes a known part of C",
}


@dataclass(frozen=True)
class KnownFailure:
    """A real bug not fixed yet: the matching variants are expected to fail."""

    matches: Callable[["Variant"], bool]
    reason: str


@dataclass
class ChainedCheck:
    """What a chained run is judged by, computed after the run from the
    device's own outputs (OpEntry.chained): the references by output name,
    and files for the report (name -> text, e.g. an SVG plot)."""

    references: dict[str, Reference]
    attachments: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class OpEntry:
    name: str
    # The runner op source that runs it, runtime/runner/ops_<unit>.c: the
    # (unit, dtype) build unit whose build failure fails this entry's cases.
    unit: str
    runner_op: Callable[[str], str]                       # dtype -> runner op name
    steps: tuple[str, ...]
    dtypes: tuple[str, ...]
    shapes: tuple[dict, ...]                              # each a dict of named sizes
    # Input tensors and params by the names the runner op describes
    # (struct ptl_op); the harness puts them in the runner's order.
    inputs: Callable[["Case"], dict[str, tuple[int, ...]]]
    params: Callable[["Case"], dict[str, int]]
    # Outputs by the runner op's output names; the ones this case's step produces.
    reference: Callable[["Case", dict], dict[str, Reference]]
    options: dict[str, tuple[int, ...]] = field(default_factory=dict)
    applies: Callable[["Case"], bool] = lambda case: True  # prune option combos per step
    cores: tuple[int, ...] = (1, 2, 3, 4, 7, 8)
    kernels: Callable[[str, str], tuple[int, ...]] = lambda dtype, step: tuple(range(len(kernel_table(dtype))))
    # Name of each kernel index. Primitives that do not go through a matmul
    # (direct kernels) name their single variant, e.g. lambda dtype: ("direct",).
    kernel_names: Callable[[str], tuple[str, ...]] = kernel_table
    # L1 bytes the primitive allocates, by buffer (inputs, weights, outputs,
    # gradients, im2col/transpose buffers), as it really allocates them. A
    # case over the target's L1 is reported not_fit instead of run.
    footprint: Callable[["Case"], dict[str, int]] | None = None
    # Edge values the seeded uniform inputs lack: maps them (float64, on the
    # dtype's grid, in [-1, 1)) to the entry's own inputs, which must stay on
    # the grid (exact zeros, saturating magnitudes, one tensor derived from
    # another). None keeps the uniform inputs.
    input_values: Callable[["Case", dict], dict] | None = None
    # A chained run (a training run: step k starts from the device's state
    # after step k-1) is judged against references that depend on the
    # device's outputs: chained(case, inputs, outputs as float64 by name)
    # gives them after the run, in place of `reference`'s, which then only
    # fixes the output shapes (and may serve as the float64 trajectory).
    chained: Callable[["Case", dict, dict], ChainedCheck] | None = None
    # Tensors (inputs or outputs, by name) in another format than the case's
    # dtype, e.g. the fp32 side of a cast: name -> dtype.
    tensor_dtypes: dict[str, str] = field(default_factory=dict)
    # Documented error bounds of the API approximations the primitive uses
    # (name -> bound, e.g. {"fastexp_gist_rel": 0.03}), each stated once here
    # with its source in a comment. The golden model propagates them to each
    # output element (golden.bundle.Reference.propagated); the reference
    # itself stays the exact math in float64.
    approximations: dict[str, float] = field(default_factory=dict)
    # Per-dtype factor on the error bound; each one must say why in a comment.
    tolerance_scale: dict[str, float] = field(default_factory=dict)
    known_failures: tuple[KnownFailure, ...] = ()
    # Features of lib_c beyond the published API that a case uses (e.g.
    # "hwc_depthwise", "dma_im2col"): a library without them fails these cases
    # for lacking the feature, not for being wrong. They become pytest markers
    # (feature_<name>) and --expect entries can name them.
    features: Callable[["Case"], tuple[str, ...]] = lambda case: ()
    # Cases whose call the API says refuses and prints why (residual's size
    # mismatch: "print, return"): each variant's run must print a console line
    # of its own besides the records, or the variant fails as numeric.
    prints: Callable[["Case"], bool] = lambda case: False
    # Cases the API says the call must reject so that the caller can see it
    # (mm_manager's kernel index out of range), where it does not say how:
    # judged by this rule instead of by the references, which then say what
    # a call that did not reject would have written. rejects(case, inputs,
    # references, outputs as float64 by name, the lines the variant printed)
    # returns why the rejection was not visible; empty when it was.
    rejects: Callable[["Case", dict, dict, dict, list], list[str]] | None = None
    # A per-core body its caller forks (TRAINLIB_API_MORE.md, "caller"): how
    # its units map to its outputs. Adds the option `alone`, under which one
    # core runs the body by itself and must write exactly its documented
    # block (harness/core_split.py).
    split: CoreSplit | KernelSplit | None = None   # KernelSplit: one per matmul kernel (by its name)

    def format_of(self, tensor: str, dtype: str) -> str:
        """The dtype a tensor travels in: its own, or the case's."""
        return self.tensor_dtypes.get(tensor, dtype)

    def cases(self) -> list["Case"]:
        out = []
        options = {**self.options, core_split.OPTION: tuple(core_split.ALONE.values())} if self.split else self.options
        names = list(options)
        for dtype, step, shape in itertools.product(self.dtypes, self.steps, self.shapes):
            for values in itertools.product(*(options[n] for n in names)):
                case = Case(self, dtype, step, tuple(shape.items()), tuple(zip(names, values)))
                if self.applies(case):
                    out.append(case)
        return out

    def variants(self) -> list["Variant"]:
        return [Variant(case, kernel, cores)
                for case in self.cases()
                for kernel in self.kernels(case.dtype, case.step)
                for cores in self.cores
                if core_split.runs_at(case, cores)]


@dataclass(frozen=True)
class Case:
    entry: OpEntry
    dtype: str
    step: str
    shape_items: tuple[tuple[str, int], ...]
    option_items: tuple[tuple[str, int], ...]

    @property
    def step_code(self) -> int:
        """The step as the runner's `step` param (a KeyError for a step the runner has no code for)."""
        return STEP_CODES[self.step]

    @property
    def shape(self) -> dict[str, int]:
        return dict(self.shape_items)

    @property
    def options(self) -> dict[str, int]:
        return dict(self.option_items)

    @property
    def params(self) -> dict[str, int]:
        """The runner's params by name: the entry's, and `alone` where the entry has a split."""
        params = self.entry.params(self)
        if self.entry.split:
            params = {**params, core_split.OPTION: self.options[core_split.OPTION]}
        return params

    @property
    def shape_text(self) -> str:
        return "x".join(f"{k}{v}" for k, v in self.shape_items)

    @property
    def id(self) -> str:
        opts = "".join(f"-{k}{v}" for k, v in self.option_items)
        return f"{self.entry.name}-{self.dtype}-{self.step}-{self.shape_text}{opts}"

    @property
    def features(self) -> tuple[str, ...]:
        features = tuple(self.entry.features(self))
        unknown = set(features) - set(FEATURES)
        if unknown:
            raise ValueError(f"catalogue entry {self.entry.name} names unknown feature(s) {sorted(unknown)}; "
                             f"add them to harness.cases.FEATURES with what they mean")
        return features

    @property
    def footprint(self) -> dict[str, int]:
        return self.entry.footprint(self) if self.entry.footprint else {}

    def description(self) -> dict:
        """What the golden bundle depends on (its cache key)."""
        return {"entry": self.entry.name, "dtype": self.dtype, "step": self.step,
                "shape": self.shape, "options": self.options}


@dataclass(frozen=True)
class Variant:
    case: Case
    kernel: int
    cores: int

    @property
    def kernel_name(self) -> str:
        names = self.case.entry.kernel_names(self.case.dtype)
        if not 0 <= self.kernel < len(names):
            raise ValueError(f"{self.case.entry.name}: unknown {self.case.dtype} kernel index {self.kernel}: "
                             f"valid indices are 0..{len(names) - 1}")
        return names[self.kernel]

    @property
    def id(self) -> str:
        return f"{self.case.id}-{self.kernel_name}-c{self.cores}"

    def describe(self, target: str) -> str:
        shape = " ".join(f"{k}={v}" for k, v in self.case.shape_items + self.case.option_items)
        return (f"variant: {self.case.entry.name} {self.case.step} {self.case.dtype} {shape} "
                f"kernel={self.kernel_name} (#{self.kernel}) cores={self.cores} target={target}")

    def known_failure(self) -> KnownFailure | None:
        return next((k for k in self.case.entry.known_failures if k.matches(self)), None)


def entry_source_digest(entry: OpEntry) -> str:
    """Hash of the source files of an entry's inputs, params, input values and
    reference code, and of the golden package they compute with: a change
    there must regenerate its golden bundles."""
    makers = (entry.inputs, entry.params, entry.reference) + tuple(
        hook for hook in (entry.input_values, entry.chained) if hook)
    files = {inspect.getsourcefile(fn) for fn in makers} - {None}
    return _files_digest(tuple(sorted(files | _golden_files(GOLDEN_DIR))))


@lru_cache(maxsize=None)
def _golden_files(directory: Path) -> frozenset[str]:
    return frozenset(str(path) for path in directory.glob("*.py"))


@lru_cache(maxsize=None)
def _files_digest(files: tuple[str, ...]) -> str:
    digest = hashlib.sha256()
    for name in files:
        digest.update(Path(name).name.encode())
        digest.update(Path(name).read_bytes())
    return digest.hexdigest()
