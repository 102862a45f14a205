"""python -m harness autotune NET.toml (also ./ptl tune NET.toml).

Tunes every layer and step of a network (or those named with --layer and
--steps) on a target, and writes reports/autotune/. Measurements are kept in
the results database (.cache/ptl/results.sqlite), shared with the
regression: a re-run with nothing changed makes no target run, and an
interrupted run resumes where it stopped. --replay tunes from the database
alone, with no target, to develop and compare strategies.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

from harness import cache_layout, team_order
from harness.autotune.layers import STEPS, Network, NetworkError, load_network
from harness.autotune.names import macro_prefixes
from harness.autotune.outputs import best_record, write_all
from harness.autotune.strategies import STRATEGIES, make_strategy
from harness.autotune.tiler import LayerTooLarge, check_holdable
from harness.autotune.tuner import COSTS, Evaluator, StepResult, tune
from harness.dtypes import DTYPES
from harness.failures import CaseFailure
from harness.option_values import OptionValueError, core_counts
from harness.results_db import ResultsDB, ResultsDBError
from harness.session import Session
from harness.target import DEFAULT_LIBRARY
from harness.targets import choose_target, target_names

ROOT = Path(__file__).resolve().parents[2]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m harness autotune", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("network", type=Path, help="network description (TOML), e.g. networks/ds_cnn.toml")
    p.add_argument("--layer", action="append", default=[], help="tune only this layer (repeatable)")
    p.add_argument("--steps", default="", help="comma-separated steps to tune (default: each layer's steps)")
    p.add_argument("--target", default=os.environ.get("PTL_TARGET", "auto"),
                   help=f"{', '.join(target_names())}, or auto (qemu when its toolchain is installed, else host)")
    p.add_argument("--trainlib", type=Path, default=Path(os.environ.get("PTL_TRAINLIB", DEFAULT_LIBRARY)))
    p.add_argument("--dtype", default="fp32", choices=DTYPES)
    p.add_argument("--cores", default=None, help="comma-separated core counts (default: the target's maximum)")
    p.add_argument("--l1-bytes", type=int, default=None,
                   help="L1 budget of a tile (default: the target's L1; where a whole layer runs with the DMA "
                        "(GVSOC), the L1 its runner's heap has, for two sets of tile buffers)")
    p.add_argument("--strategy", default="exhaustive", choices=sorted(STRATEGIES))
    p.add_argument("--tiles", type=int, default=8,
                   help="candidate tilings per method, largest first (the seed's NUM_TILING_SOLUTIONS)")
    p.add_argument("--reports-dir", type=Path, default=ROOT / "reports" / "autotune")
    p.add_argument("--ptl-cache", type=Path, default=cache_layout.default_root())
    p.add_argument("--run-timeout", type=float, default=120.0, help="seconds one target run may take")
    p.add_argument("--replay", action="store_true", help="use only the results database; make no target run")
    return p


def _cores(text: str | None, max_cores: int, error) -> tuple[int, ...]:
    try:
        return core_counts("--cores", text, max_cores)
    except OptionValueError as exc:
        error(str(exc))


def _select(network: Network, layers: list[str], error) -> Network:
    if not layers:
        return network
    known = {layer.name for layer in network.layers}
    unknown = [name for name in layers if name not in known]
    if unknown:
        error(f"--layer {', '.join(unknown)}: not in {network.source}; its layers are {', '.join(sorted(known))}")
    return Network(network.name, tuple(layer for layer in network.layers if layer.name in layers), network.source)


def check_work(network: Network, layers: list[str], steps: tuple[str, ...], dtype: str) -> None:
    """What a tuning would do is possible, before anything runs: some layer
    step to tune (and each layer named with --layer has one of the steps), C
    identifiers that do not collide, and layers a target can hold. ValueError
    (or NetworkError) says what is wrong in one line."""
    macro_prefixes([layer.name for layer in network.layers], f"{network.source or network.name}: ")
    chosen = [layer for layer in network.layers if not layers or layer.name in layers]
    work = [(layer, step) for layer in chosen for step in layer.steps if not steps or step in steps]
    idle = [layer for layer in chosen if layers and not any(step in steps for step in layer.steps)] if steps else []
    if idle or not work:
        lacking = idle or chosen
        raise ValueError(f"--steps {','.join(steps)}: "
                         + "; ".join(f"{layer.name} ({layer.kind.name}) has steps {', '.join(layer.steps)}"
                                     for layer in lacking[:4]) + ("; ..." if len(lacking) > 4 else "")
                         + ": nothing to tune there; choose steps the layers have")
    for layer, step in work:
        check_holdable(layer, step, dtype)


class Progress:
    """One status line: steps done, the step being tuned, runs, elapsed and ETA.
    On a terminal it is redrawn in place; in a log it prints a line per step."""

    def __init__(self, stream=sys.stderr):
        self.stream, self.started = stream, time.monotonic()
        self.tty = stream.isatty()

    def __call__(self, result: StepResult, done: int, total: int) -> None:
        evaluated, candidates = len(result.evaluated), max(len(result.tilings), 1)
        finished = result.finished
        fraction = (done + (0 if finished else evaluated / candidates)) / total
        elapsed = time.monotonic() - self.started
        eta = f"ETA {_clock(elapsed / fraction - elapsed)}" if fraction > 0 else "ETA ?"
        line = (f"[{done}/{total} steps] {result.layer.name} {result.step}: {evaluated}/{len(result.tilings)} "
                f"tilings, {result.runs} target runs; {_clock(elapsed)} elapsed, {eta}")
        self._show(line, done == total, finished)

    def enumerating(self, result: StepResult, candidates: int, of: int) -> None:
        """While the tiler lists a large step's tilings."""
        elapsed = time.monotonic() - self.started
        self._show(f"{result.layer.name} {result.step}: listing tilings, {candidates}/{of} candidates; "
                   f"{_clock(elapsed)} elapsed", False, not self.tty)

    def _show(self, line: str, last: bool, log_it: bool) -> None:
        if self.tty:
            self.stream.write("\r" + line.ljust(100)[:160])
            if last:
                self.stream.write("\n")
        elif log_it:
            self.stream.write(line + "\n")
        self.stream.flush()


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


def print_table(results: list[StepResult], unit: str) -> None:
    print(f"{'layer':<10} {'step':<4} {'best tiling':<26} {'kernel':<18} {'cores':>5} {unit:>12} "
          f"{'tilings':>9} {'runs':>5} cost")
    for r in results:
        b, record = r.best, best_record(r)
        tried = f"{record['evaluated']}/{record['candidates']}"
        if b is None:
            print(f"{r.layer.name:<10} {r.step:<4} NOT TUNED: {record['error'].splitlines()[0]}")
            continue
        print(f"{r.layer.name:<10} {r.step:<4} {b.tiling.label:<26} {b.kernel_name:<18} {b.cores:>5} "
              f"{b.latency:>12} {tried:>9} {r.runs:>5} {b.cost}")


def open_tuning(target, trainlib: Path, cache: Path, timeout: float, l1: int, cores: tuple[int, ...],
                replay: bool = False) -> tuple[Session, ResultsDB, Evaluator]:
    """The session, results database and evaluator of one tuning (also the pytest mode's)."""
    db = ResultsDB(Path(cache) / cache_layout.RESULTS_DB)
    session = Session(target, trainlib, Path(cache), timeout=timeout, l1_bytes=l1, results_db=db)
    # Where the target has a cluster DMA beside the cores (GVSOC), a tiling costs its whole layer's time.
    return session, db, Evaluator(session, db, cores, replay=replay, layer_time=target.capabilities.dma)


def tuning_meta(network: Network, target, dtype: str, cores: tuple[int, ...], l1: int, strategy: str, tiles: int,
                library: Path, library_digest: str, runs: int, reused: int, seconds: float,
                cost: str = "tiles") -> dict:
    """What every output says about the tuning that made it; cost is the
    Evaluator's (tuner.COSTS)."""
    return {"network": network.name, "source": network.source, "target": target.name,
            "unit": target.capabilities.counter_unit, "dtype": dtype, "cores": ",".join(map(str, cores)),
            "l1_bytes": l1, "strategy": strategy, "tiles": tiles, "library": str(library),
            "library_digest": library_digest, "target_runs": runs, "reused_variants": reused,
            "seconds": round(seconds, 2), "cost": cost}


def report_wrong(results: list[StepResult], shown: int = 10) -> None:
    """Configurations that did not pass (a wrong result, a crash, a build
    failure, a timeout): never chosen; said with the first failing tile and,
    when one would have beaten the chosen configuration, by how much."""
    wrong = [(r, o) for r in results for o in r.outcomes if o.status not in ("passed", "not_measured")]
    if not wrong:
        return
    kinds = sorted({f"{o.kernel_name} ({o.status})" for _, o in wrong})
    print(f"autotune: {len(wrong)} configurations did not pass and were not chosen: "
          f"{', '.join(kinds[:12])}" + (" ..." if len(kinds) > 12 else ""))
    for r, o in sorted(wrong, key=lambda ro: ro[1].latency or 0)[:shown]:
        faster = (f"; {o.latency} {o.unit}, faster than the chosen {r.best.latency}"
                  if r.best and o.latency is not None and o.latency < r.best.latency else "")
        print(f"  {r.layer.name} {r.step} {o.tiling.label} {o.kernel_name} c{o.cores}: {o.status}{faster}: "
              f"{o.message.splitlines()[0][:160]}")


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    if args.target != "auto" and args.target not in target_names():
        p.error(f"--target {args.target}: unknown target; choose one of {', '.join(target_names())}, or auto")
    if args.l1_bytes is not None and args.l1_bytes <= 0:
        p.error(f"--l1-bytes {args.l1_bytes}: must be a positive number of bytes (the cluster L1 size)")
    if args.tiles < 1:
        p.error(f"--tiles {args.tiles}: must be at least 1")
    if not args.run_timeout > 0:
        p.error(f"--run-timeout {args.run_timeout}: must be a positive number of seconds")
    steps = tuple(s for s in args.steps.split(",") if s)
    if any(s not in STEPS for s in steps):
        p.error(f"--steps {args.steps}: steps are {', '.join(STEPS)} (bw for pooling)")
    try:
        whole = load_network(args.network)
        network = _select(whole, args.layer, p.error)
        check_work(whole, args.layer, steps, args.dtype)
    except (NetworkError, ValueError, LayerTooLarge) as exc:
        p.error(str(exc))
    try:
        target = choose_target(args.target)
    except OptionValueError as exc:   # a target's environment variable, e.g. PTL_TEAM_ORDER=sideways
        p.error(str(exc))
    if refusal := team_order.timing_refusal(target.team_order):
        p.error(refusal)
    cores = _cores(args.cores, target.capabilities.max_cores, p.error)
    l1 = args.l1_bytes or target.capabilities.l1_bytes or 64 * 1024
    if not args.replay and target.unavailable_reason():
        print(f"autotune: target {target.name} is not available: {target.unavailable_reason()}", file=sys.stderr)
        return 1
    try:
        session, db, evaluator = open_tuning(target, args.trainlib, args.ptl_cache, args.run_timeout, l1, cores,
                                             args.replay)
    except ResultsDBError as exc:
        print(f"autotune: {exc}", file=sys.stderr)
        return 1
    try:
        scope = session.scope_for(args.dtype, any_build=args.replay)
        if evaluator.layer_time and args.l1_bytes is None and not args.replay:
            # Two sets of tile buffers must fit what the runner's heap has in L1, not the L1's size.
            l1 = target.near_memory_bytes(session.artefact_for(args.dtype).path)
    except CaseFailure as exc:   # not a library checkout, or its runner does not build
        shutil.rmtree(session.workdir, ignore_errors=True)
        print(f"autotune: {exc}", file=sys.stderr)
        return 1
    print(f"autotune {network.name} ({len(network.layers)} layers) on {target.name} "
          f"({target.capabilities.counter_unit}), {args.dtype}, cores {','.join(map(str, cores))}, L1 {l1} bytes, "
          f"strategy {args.strategy}, {args.tiles} tilings per method" + (", REPLAY from the database" if args.replay
                                                                          else ""))
    print(f"cost of a configuration: {COSTS[evaluator.cost]}"
          + ("; a layer kind without a whole-layer run: the sum over its tiles" if evaluator.layer_time else ""))
    started = time.monotonic()
    try:
        progress = Progress()
        results = tune(network, evaluator, make_strategy(args.strategy), args.dtype, l1, args.tiles, steps,
                       progress, progress.enumerating)
    except KeyboardInterrupt:
        print(f"\nautotune: interrupted after {session.runs} target runs; every finished run is kept in "
              f"{db.path}: run the same command again to resume", file=sys.stderr)
        return 130
    except ResultsDBError as exc:
        print(f"autotune: {exc}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(session.workdir, ignore_errors=True)
    seconds = time.monotonic() - started
    if session.results_db_error:
        print(f"autotune: {session.results_db_error}; measurements of this run were not kept", file=sys.stderr)
    unit = target.capabilities.counter_unit
    meta = tuning_meta(network, target, args.dtype, cores, l1, args.strategy, args.tiles, args.trainlib,
                       scope.library, session.runs, evaluator.reused, seconds, evaluator.cost)
    print_table(results, unit)
    try:
        written, notes = write_all(results, meta, args.reports_dir, whole)
    except OSError as exc:
        print(f"autotune: cannot write the reports in {args.reports_dir}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    for note in notes:
        print(f"autotune: {note}", file=sys.stderr)
    print(f"autotune: {session.runs} target runs, {evaluator.reused} measurements reused from {db.path}, "
          f"{seconds:.1f} s; reports: {', '.join(str(w) for w in written[:4])} and {len(written) - 4} heatmaps")
    report_wrong(results)
    return 0 if all(r.best for r in results) else 1
