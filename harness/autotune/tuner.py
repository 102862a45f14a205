"""The autotuner: for each layer and step, the fastest correct (tiling,
kernel, cores) under an L1 budget.

It is the regression's machinery pointed at timings. Each distinct tile
shape is a catalogue case, run by the same Session: built once per 16-bit
format, one target run per tile shape that measures every kernel and core
count, every output compared with the golden reference. Measurements go
through the results database first, so nothing is measured twice and an
interrupted tuning resumes where it stopped. Only configurations whose
every tile passed compete; a wrong one is reported with its failure.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Callable

from harness.autotune.layers import Layer, Network
from harness.autotune.tiler import NoFit, Piece, Tiling, tilings, whole_layer_case
from harness.cases import Case, Variant
from harness.results_db import Measurement, ResultsDB
from harness.session import Session, measurement_of

NOT_MEASURED = "not_measured"
# What a configuration's latency is: the sum over its tiles of each tile's
# compute (tiles in L1, no transfer), or one run of the whole layer, its
# tensors in L2 and its tiles moved by the DMA beside the compute.
COSTS = {"tiles": "the sum over its tiles of each tile's compute (no DMA: tiles already in L1)",
         "layer": "the whole layer's time, tensors in L2, tiles moved by the DMA double-buffered"}


@dataclass(frozen=True)
class Outcome:
    """One configuration of a tiling: its total cost over every tile, or why it does not count."""

    tiling: Tiling
    kernel: int
    kernel_name: str
    cores: int
    status: str                  # "passed", a failure class, or "not_measured" (replay)
    latency: int | None = None   # sum over the tiles of count x latency
    work: int | None = None
    unit: str | None = None
    message: str = ""
    cost: str = "tiles"          # COSTS: what latency is

    @property
    def passed(self) -> bool:
        return self.status == "passed" and self.latency is not None

    def sort_key(self) -> tuple:
        return (self.latency, self.cores, -self.tiling.l1_bytes, self.tiling.method.label, self.kernel)


@dataclass
class StepResult:
    layer: Layer
    step: str
    tilings: list[Tiling] = field(default_factory=list)      # the candidates
    outcomes: list[Outcome] = field(default_factory=list)    # of the tilings the strategy evaluated
    error: str | None = None                                 # no tiling fits, or the search failed
    runs: int = 0                                            # target runs this step made
    seconds: float = 0.0
    finished: bool = False

    @property
    def best(self) -> Outcome | None:
        passing = [o for o in self.outcomes if o.passed]
        return min(passing, key=Outcome.sort_key) if passing else None

    @property
    def evaluated(self) -> list[Tiling]:
        return list(dict.fromkeys(o.tiling for o in self.outcomes))


class Evaluator:
    """Measures tilings: database first, then one target run per tile shape still missing."""

    def __init__(self, session: Session, db: ResultsDB, cores: tuple[int, ...], replay: bool = False,
                 layer_time: bool = False):
        self.session, self.db, self.cores, self.replay = session, db, cores, replay
        # Cost a tiling by its whole-layer run where the layer kind has one (COSTS).
        self.layer_time = layer_time
        self.cost = "layer" if layer_time else "tiles"
        self._pieces: dict[Case, dict[tuple[int, int], Measurement]] = {}
        self.reused = 0     # variants found in the database

    def kernels(self, case: Case) -> tuple[int, ...]:
        """The kernels a configuration may use: those the library has (a replay
        builds nothing, and offers every kernel the catalogue names)."""
        return case.entry.kernels(case.dtype, case.step) if self.replay else self.session.kernels_for(case)

    def measurements(self, case: Case, kernels: tuple[int, ...] | None = None) -> dict[tuple[int, int], Measurement]:
        """The case's measurements of every kernel (default: its entry's) and core count."""
        if case in self._pieces:
            return self._pieces[case]
        scope = self.session.scope_for(case.dtype, any_build=self.replay)
        found = self.db.lookup(scope, self.session.case_key(case))
        variants = [Variant(case, k, c) for k in (kernels or self.kernels(case)) for c in self.cores]
        missing = [v for v in variants if (v.kernel, v.cores) not in found]
        self.reused += len(variants) - len(missing)
        if missing and not self.replay:
            for variant, result in self.session.results_for(case, missing).items():
                found[variant.kernel, variant.cores] = measurement_of(result)
        self._pieces[case] = found
        return found

    def evaluate(self, tiling: Tiling) -> list[Outcome]:
        whole = whole_layer_case(tiling) if self.layer_time else None
        pieces = tiling.pieces if whole is None else (Piece(whole, 1),)
        first = tiling.pieces[0].case
        per_piece = [(piece, self.measurements(piece.case, self.kernels(first))) for piece in pieces]
        names = first.entry.kernel_names(first.dtype)
        outcomes = []
        for kernel in self.kernels(first):
            for cores in self.cores:
                outcome = _combine(tiling, kernel, names[kernel], cores,
                                   [(p, m.get((kernel, cores))) for p, m in per_piece])
                outcomes.append(outcome if whole is None else replace(outcome, cost="layer"))
        return outcomes


def _combine(tiling: Tiling, kernel: int, name: str, cores: int, measured) -> Outcome:
    """A configuration's cost over its tiles. The first tile that did not pass
    decides its status; a wrong configuration keeps its cost, to show how fast
    it would have been."""
    for piece, m in measured:
        if m is None:
            return Outcome(tiling, kernel, name, cores, NOT_MEASURED,
                           message=f"tile {piece.case.shape_text} is not in the results database")
        if m.passed and m.latency is None:
            return Outcome(tiling, kernel, name, cores, NOT_MEASURED,
                           message=f"tile {piece.case.shape_text}: the target reported no count")
    counted = all(m.latency is not None for _, m in measured)
    latency = sum(p.count * m.latency for p, m in measured) if counted else None
    work = sum(p.count * (m.work or 0) for p, m in measured) if counted else None
    failed = next(((p, m) for p, m in measured if not m.passed), None)
    if failed is not None:
        return Outcome(tiling, kernel, name, cores, failed[1].status, latency, work, failed[1].unit,
                       message=f"tile {failed[0].case.shape_text}: {failed[1].message}")
    return Outcome(tiling, kernel, name, cores, "passed", latency, work, measured[0][1].unit)


def tune(network: Network, evaluator: Evaluator, strategy, dtype: str, l1_bytes: int, limit: int,
         steps: tuple[str, ...] | None = None, progress: Callable[[StepResult, int, int], None] | None = None,
         enumerating: Callable[[StepResult, int, int], None] | None = None) -> list[StepResult]:
    """Every layer and step of the network, in order. progress(result, done,
    total) is called after each evaluated tiling (done: the steps finished
    before this one) and when the step ends (done includes it);
    enumerating(result, candidates done, candidates) while the tiler lists a
    step's tilings, when they are many."""
    work = [(layer, step) for layer in network.layers for step in layer.steps if not steps or step in steps]
    max_cores = max(evaluator.cores)
    results = []
    for done, (layer, step) in enumerate(work):
        result = StepResult(layer, step)
        started, runs = time.monotonic(), evaluator.session.runs
        try:
            result.tilings = tilings(layer, step, dtype, l1_bytes, max_cores, limit,
                                     (lambda n, of: enumerating(result, n, of)) if enumerating else None,
                                     evaluator.layer_time)
        except NoFit as exc:
            result.error = str(exc)
        else:
            def evaluate(tiling: Tiling) -> list[Outcome]:
                outcomes = evaluator.evaluate(tiling)
                result.outcomes.extend(outcomes)
                result.runs = evaluator.session.runs - runs
                if progress:
                    progress(result, done, len(work))
                return outcomes
            strategy.search(result.tilings, evaluate)
        result.runs = evaluator.session.runs - runs
        result.seconds = time.monotonic() - started
        result.finished = True
        results.append(result)
        if progress:
            progress(result, done + 1, len(work))
    return results
