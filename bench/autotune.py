"""The autotuner's goals, measured in one run (issue: the autotuner):

  throughput  configurations per second: the tuner (one build, one run per
              tile shape measuring every kernel) against the seed's flow on
              20 of the same configurations, in the same run: per
              configuration a fresh golden process, a program of the op and
              the library sources it links compiled anew, one run
              (bench/seed_flow.py); both ratios, with and without the
              golden step; goal >= 50x
  pruning     on 20 layer shapes and every step, the greedy strategy
              against exhaustive: the same optimum with at most 30% of its
              target runs; the worst shape is printed; then the same on 6
              held-out shapes that played no part in choosing greedy
  dscnn       the exhaustive FW/WG/IG tuning of DS-CNN, FP32, 8 cores,
              64 KiB L1, from a cold cache, timed; then again: 0 target runs
  layers      (on --layers-target, gvsoc) per DS-CNN layer step with
              a whole-layer run, the best tiling by summed tile compute and
              the best by the whole layer's time with its DMA (tensors in L2,
              tiles double-buffered), and what the first costs as a layer
  step        (on --layers-target, gvsoc) a whole DS-CNN training step,
              every pass tiled through L2 (ops_train_ds_cnn.c), in three
              configurations: tuned per pass, the best single kernel with the
              tuned tiles, mm with the largest tiles; cycles per step, each
              run checked against PyTorch
  mutant      a library whose mm_unroll_4x4 is fast and wrong: never chosen

Usage: [PTL_GVSOC=...] python bench/autotune.py [--target qemu] [--layers-target gvsoc]
       [--only throughput,pruning,dscnn,layers,step,mutant]
Pruning compares the strategies on the same measurements: exhaustive runs
on the target, greedy replays them from the results database, and each is
charged the target runs a cold run of it makes (one per distinct tile shape
it evaluates).
"""
from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.seed_flow import SeedProgram  # noqa: E402
from bench.svg_bars import bar_chart  # noqa: E402
from harness.autotune.cli import open_tuning, print_table, tuning_meta  # noqa: E402
from harness.autotune.layers import Network, load_network, parse_layer  # noqa: E402
from harness.autotune.outputs import write_all  # noqa: E402
from harness.autotune.strategies import make_strategy  # noqa: E402
from harness.autotune.tiler import tilings  # noqa: E402
from harness.autotune.tuner import Evaluator, Outcome, StepResult, tune  # noqa: E402
from harness.cases import Variant  # noqa: E402
from harness.kernels import kernel_table  # noqa: E402
from harness.results_db import ResultsDB  # noqa: E402
from harness.session import Session  # noqa: E402
from harness.target import DEFAULT_LIBRARY  # noqa: E402
from harness.targets import make_target  # noqa: E402
from harness.catalogue.training import (DS_CNN_SHAPE, NEAR_BYTES, Pass, StepConfig, ds_cnn_config,  # noqa: E402
                                      ds_cnn_passes, ds_cnn_step_entry)
from tests.mutants import FAST_AND_WRONG, FAST_AND_WRONG_KERNEL, mutant_library  # noqa: E402

L1 = 64 * 1024
DSCNN = ROOT / "networks" / "ds_cnn.toml"

# Layer shapes for the pruning comparison: DS-CNN's, and the layers of
# small CNNs (CIFAR- and MNIST-sized, MobileNetV2-like blocks), linear heads.
SHAPES = """
conv1 = {type='conv2d', Ci=1, H=49, W=10, Co=64, Hk=10, Wk=4, sh=2, sw=2, U=4, D=5, L=1, R=1, steps=['fw','wg']}
dw = {type='conv_dw', C=64, H=25, W=5, Hk=3, Wk=3, L=1, R=1, U=1, D=1}
pw = {type='conv_pw', Ci=64, Co=64, H=25, W=5}
pool = {type='avgpool', C=64, H=25, W=5, Hk=25, Wk=5, Hs=1, Ws=1}
fc = {type='linear', inp=64, out=12, bias=1}
cifar1 = {type='conv2d', Ci=3, H=16, W=16, Co=16, Hk=3, Wk=3, L=1, R=1, U=1, D=1}
cifar2 = {type='conv2d', Ci=16, H=16, W=16, Co=32, Hk=3, Wk=3, sh=2, sw=2, L=1, R=1, U=1, D=1}
mnist1 = {type='conv2d', Ci=1, H=28, W=28, Co=8, Hk=5, Wk=5, steps=['fw','wg']}
conv5 = {type='conv2d', Ci=8, H=12, W=12, Co=8, Hk=5, Wk=5, L=2, R=2, U=2, D=2}
pw_wide = {type='conv_pw', Ci=32, Co=64, H=16, W=16}
pw_deep = {type='conv_pw', Ci=128, Co=128, H=8, W=8}
expand = {type='conv_pw', Ci=24, Co=96, H=12, W=12}
project = {type='conv_pw', Ci=96, Co=24, H=12, W=12}
dw_big = {type='conv_dw', C=32, H=32, W=32, Hk=3, Wk=3, L=1, R=1, U=1, D=1}
dw_s2 = {type='conv_dw', C=96, H=12, W=12, Hk=3, Wk=3, sh=2, sw=2, L=1, R=1, U=1, D=1}
fc_256 = {type='linear', inp=256, out=64}
fc_512 = {type='linear', inp=512, out=10, bias=1}
fc_sq = {type='linear', inp=100, out=100}
upconv = {type='transp_conv2d', Ci=16, Co=8, H=8, W=8, Hk=3, Wk=3, sh=2, sw=2, L=1, R=0, U=1, D=0}
maxpool = {type='maxpool', C=32, H=16, W=16, Hk=2, Wk=2, Hs=2, Ws=2}
"""


# Held out: shapes that played no part in choosing the greedy strategy's
# model and stop rule (those were chosen on SHAPES). Its result on these is
# the one that says how it does on a network nobody tuned it for.
HELD_OUT = """
ho_conv = {type='conv2d', Ci=8, H=20, W=20, Co=24, Hk=3, Wk=3, L=1, R=1, U=1, D=1}
ho_pw = {type='conv_pw', Ci=48, Co=80, H=10, W=10}
ho_dw = {type='conv_dw', C=48, H=20, W=20, Hk=5, Wk=5, L=2, R=2, U=2, D=2}
ho_fc = {type='linear', inp=200, out=40, bias=1}
ho_avg = {type='avgpool', C=48, H=12, W=12, Hk=3, Wk=3, Hs=3, Ws=3}
ho_tconv = {type='transp_conv2d', Ci=8, Co=16, H=10, W=10, Hk=4, Wk=4, sh=2, sw=2}
"""


def shapes_network(name: str, text: str) -> Network:
    layers = tuple(parse_layer({"name": layer, **raw}, f"bench shape {layer}")
                   for layer, raw in tomllib.loads(text).items())
    return Network(name, layers, "bench/autotune.py")


def session_in(cache: Path, target: str, library: Path = DEFAULT_LIBRARY) -> tuple[Session, ResultsDB]:
    session, db, _ = open_tuning(make_target(target), library, cache, 300.0, L1, (8,))
    return session, db


def run(network: Network, session: Session, db: ResultsDB, strategy: str, tiles: int,
        replay: bool = False) -> tuple[list[StepResult], Evaluator]:
    evaluator = Evaluator(session, db, (8,), replay=replay)
    try:
        return tune(network, evaluator, make_strategy(strategy), "fp32", L1, tiles), evaluator
    finally:
        shutil.rmtree(session.workdir, ignore_errors=True)


def distinct_shapes(result: StepResult) -> int:
    """Target runs a cold run of this step makes: one per distinct tile shape evaluated."""
    return len({p.case for t in result.evaluated for p in t.pieces})


# ---- the four measurements -------------------------------------------------------------

def throughput(target: str, work: Path, sample: int) -> None:
    print(f"\n== throughput on {target}: the tuner against the seed's flow (one program per configuration)",
          flush=True)
    dscnn_layers = load_network(DSCNN).layers
    network = Network("two", (dscnn_layers[1], dscnn_layers[2]), "ds_cnn dw1 and pw1")
    session, db = session_in(work / "tuner", target)
    start = time.monotonic()
    results, evaluator = run(network, session, db, "exhaustive", 4)
    ours = time.monotonic() - start
    configs = [o for r in results for o in r.outcomes]
    print(f"  tuner, cold (builds, golden, {session.runs} target runs): {len(configs)} configurations of "
          f"{', '.join(layer.name for layer in network.layers)} in {ours:.1f} s = {len(configs) / ours:.2f} "
          f"configurations/s", flush=True)
    chosen = random.Random(1).sample(configs, min(sample, len(configs)))
    seed_session, _ = session_in(work / "tuner", target)   # the suite build: for the layout and plugin
    programs: dict[str, SeedProgram] = {}
    timings, agree = [], 0
    for number, o in enumerate(chosen, 1):
        # The seed profiles one program per tile shape, step, cores and kernel: the tiling's first tile.
        variant = Variant(o.tiling.pieces[0].case, o.kernel, o.cores)
        unit = variant.case.entry.unit
        if unit not in programs:   # what the test's Makefile lists: found once, untimed
            programs[unit] = SeedProgram(seed_session, variant.case, work / f"seed-{unit}")
        timing, result = programs[unit].configuration(variant)
        timings.append(timing)
        tuned = evaluator.measurements(variant.case)[variant.kernel, variant.cores]
        same = result.passed == tuned.passed and (result.counters and result.counters.latency) == tuned.latency
        agree += same
        print(f"  seed flow {number}/{len(chosen)}: {variant.case.id} {o.kernel_name} c{o.cores}: golden "
              f"{timing.golden:.1f} s, build {timing.build:.1f} s, run {timing.run:.1f} s; "
              f"{'passed' if result.passed else result.failure.kind}, "
              f"{result.counters.latency if result.counters else '-'} (tuner: {tuned.latency}"
              f"{'' if same else ', DIFFERENT'})", flush=True)
    golden = sum(t.golden for t in timings)
    whole = sum(t.total for t in timings)
    rate = len(configs) / ours
    print(f"  seed flow: {len(timings)} configurations in {whole:.1f} s = {len(timings) / whole:.3f} "
          f"configurations/s ({golden:.1f} s of it the golden processes); the same verdict and count as the "
          f"tuner's on {agree}/{len(timings)}")
    print(f"THROUGHPUT tuner / seed flow: {rate / (len(timings) / whole):.0f}x with the seed's golden step, "
          f"{rate / (len(timings) / (whole - golden)):.0f}x without it (compile and run only) (goal >= 50x)")


def pruning(target: str, work: Path, tiles: int) -> None:
    for name, label, text in (("tuning", "the shapes the greedy strategy was chosen on", SHAPES),
                              ("held-out", "shapes held out (not used to choose it)", HELD_OUT)):
        compare_strategies(shapes_network(name, text), label, target, work, tiles)


def compare_strategies(network: Network, label: str, target: str, work: Path, tiles: int) -> None:
    print(f"\n== pruning on {target}, {label}: {len(network.layers)} layer shapes, every step, {tiles} "
          f"tilings per method: greedy against exhaustive", flush=True)
    session, db = session_in(work / network.name, target)
    start = time.monotonic()
    exhaustive, _ = run(network, session, db, "exhaustive", tiles)
    print(f"  exhaustive: {session.runs} target runs, {time.monotonic() - start:.0f} s", flush=True)
    greedy, _ = run(network, session, db, "greedy", tiles, replay=True)
    rows = []   # (share of exhaustive's runs, same optimum, layer step)
    print(f"  {'layer':<9} {'step':<4} {'exh runs':>8} {'greedy':>6} {'ratio':>6}  optimum")
    for e, g in zip(exhaustive, greedy):
        if e.best is None:
            print(f"  {e.layer.name:<9} {e.step:<4} not tuned: {(e.error or '').splitlines()[0][:80]}")
            continue
        runs_e, runs_g = distinct_shapes(e), distinct_shapes(g)
        hit = g.best is not None and g.best.latency == e.best.latency
        rows.append((runs_g / runs_e, hit, f"{e.layer.name} {e.step}"))
        print(f"  {e.layer.name:<9} {e.step:<4} {runs_e:>8} {runs_g:>6} {runs_g / runs_e:>6.0%}  "
              + ("same" if hit else f"DIFFERENT: greedy {g.best.latency if g.best else None} vs {e.best.latency}"))
    runs_e = sum(distinct_shapes(r) for r in exhaustive)
    runs_g = sum(distinct_shapes(r) for r in greedy)
    per_shape: dict[str, list[int]] = {}
    for e, g in zip(exhaustive, greedy):
        if e.best is not None:
            runs = per_shape.setdefault(e.layer.name, [0, 0])
            runs[0], runs[1] = runs[0] + distinct_shapes(e), runs[1] + distinct_shapes(g)
    worst = max((g / e, name) for name, (e, g) in per_shape.items())
    missed = [name for _, hit, name in rows if not hit]
    print(f"PRUNING {network.name}: greedy found the same optimum on {len(rows) - len(missed)}/{len(rows)} "
          f"layer steps ({len(per_shape)} shapes) with {runs_g}/{runs_e} = {runs_g / runs_e:.0%} of the target "
          f"runs; worst shape: {worst[1]} ({worst[0]:.0%} of its runs); missed: {', '.join(missed) or 'none'} "
          f"(goal: same optimum, <= 30%)")


def dscnn(target: str, work: Path, tiles: int, reports: Path) -> None:
    network = load_network(DSCNN)
    print(f"\n== DS-CNN on {target}: exhaustive FW/WG/IG, FP32, 8 cores, {L1} bytes of L1, cold cache", flush=True)
    cache = work / "dscnn"
    session, db = session_in(cache, target)
    start = time.monotonic()
    results, evaluator = run(network, session, db, "exhaustive", tiles)
    cold = time.monotonic() - start
    print_table(results, session.target.capabilities.counter_unit)
    meta = tuning_meta(network, session.target, "fp32", (8,), L1, "exhaustive", tiles, DEFAULT_LIBRARY,
                       session.scope_for("fp32").library, session.runs, evaluator.reused, cold, evaluator.cost)
    write_all(results, meta, reports)
    again, _ = session_in(cache, target)
    start = time.monotonic()
    run(network, again, db, "exhaustive", tiles)
    print(f"DSCNN cold: {session.runs} target runs, {cold:.1f} s (builds and golden included); "
          f"second run: {again.runs} target runs, {time.monotonic() - start:.1f} s; reports in {reports}")


def dma_target_ready(target: str, part: str) -> bool:
    """Whether the target has a cluster DMA and can run; if not, the part says NOT MEASURED and why."""
    chosen = make_target(target)
    why = (f"{target} has no cluster DMA beside the cores (--layers-target gvsoc)" if not chosen.capabilities.dma
           else chosen.unavailable_reason())
    if why:
        print(f"\n== {part}: NOT MEASURED: {why}")
    return not why


def layers(target: str, work: Path, tiles: int) -> None:
    """Per DS-CNN layer step that has a whole-layer run: the tilings that fit
    L1 double-buffered, each costed both ways (tuner.COSTS) from the same
    session: the best by summed tile compute, the best by the whole layer's
    time with its DMA, and what the first costs when the layer really runs."""
    if not dma_target_ready(target, "whole layers"):
        return
    network = load_network(DSCNN)
    chosen = [layer for layer in network.layers if layer.kind.whole_layer]
    session, db = session_in(work / "layers", target)
    near = session.target.near_memory_bytes(session.artefact_for("fp32").path)   # the L1 the heap has
    print(f"\n== whole layers on {target}: {', '.join(layer.name for layer in chosen)}, FP32, 8 cores, "
          f"{tiles} tilings per method (those whose two sets of tile buffers fit the {near} bytes of L1 the "
          f"runner's heap has)", flush=True)
    by_tiles, by_layer = Evaluator(session, db, (8,)), Evaluator(session, db, (8,), layer_time=True)
    print(f"  {'layer':<6} {'step':<4} {'fit':>5}  {'best by summed tile compute':<34} {'summed':>8} {'layer':>8}   "
          f"{'best by layer time with DMA':<34} {'summed':>8} {'layer':>8} {'ratio':>6}")
    ratios = []
    try:
        for layer in chosen:
            for step in layer.steps:
                candidates = tilings(layer, step, "fp32", near, 8, tiles, whole_layer=True)
                timed = {(o.tiling, o.kernel): o for t in candidates for o in by_layer.evaluate(t)}
                summed = {(o.tiling, o.kernel): o for t in candidates for o in by_tiles.evaluate(t)}
                # A tiling whose buffers did not fit at run time (the heap's own bookkeeping) is no candidate.
                fit = [t for t in candidates if any(o.status != "not_fit" for (u, _), o in timed.items() if u == t)]
                both = [key for key in timed if key[0] in fit and timed[key].passed and summed[key].passed]
                if not both:
                    print(f"  {layer.name:<6} {step:<4} {len(fit)}/{len(candidates)}: no configuration passed both ways")
                    continue
                a = min(both, key=lambda key: summed[key].sort_key())
                b = min(both, key=lambda key: timed[key].sort_key())
                ratios.append(timed[a].latency / timed[b].latency)
                print(f"  {layer.name:<6} {step:<4} {len(fit):>2}/{len(candidates):<2}  "
                      f"{a[0].label + ' ' + summed[a].kernel_name:<34} {summed[a].latency:>8} {timed[a].latency:>8}   "
                      f"{b[0].label + ' ' + summed[b].kernel_name:<34} {summed[b].latency:>8} {timed[b].latency:>8} "
                      f"{ratios[-1]:>6.3f}", flush=True)
    finally:
        shutil.rmtree(session.workdir, ignore_errors=True)
    print(f"LAYERS {len(ratios)} layer steps: the configuration that summed tile compute picks takes "
          f"{max(ratios, default=1):.3f}x the best layer time at worst, {sum(ratios) / max(len(ratios), 1):.3f}x on "
          f"average ({session.runs} target runs; cycles)")


def _best_matmul(result: StepResult) -> Outcome | None:
    """The step's best passing outcome that goes through a matmul kernel (the
    training step runs every conv through im2col)."""
    passing = [o for o in result.outcomes if o.passed and o.tiling.method.label != "direct"]
    return min(passing, key=Outcome.sort_key) if passing else None


def _step_configs(results: list[StepResult]) -> tuple[StepConfig, ...]:
    """The tuned configurations, the single best kernel with the tuned tiles,
    and mm with the largest tiles. The step cuts conv1 along Co only, so conv1
    takes its tuned kernel and the largest Co tile that fits; the other passes
    take their tuned tiles."""
    best = {(r.layer.name, r.step): _best_matmul(r) for r in results}
    missing = [key for key, outcome in best.items() if outcome is None]
    if missing:
        raise SystemExit(f"STEP: no passing matmul configuration for {missing}: the tuning table above says why")

    def tiles(p: Pass) -> dict[str, int]:
        return {} if p.layer == "conv1" else {a: v for a, v in best[p.layer, p.step].tiling.tile if a in p.axes}

    # The kernel whose summed cost over every pass, each at its tuned tiling, is least.
    at_tuned = {(r.layer.name, r.step): {o.kernel: o.latency for o in r.outcomes
                                         if o.passed and o.tiling == best[r.layer.name, r.step].tiling}
                for r in results}
    everywhere = set.intersection(*(set(latencies) for latencies in at_tuned.values()))
    single = min(everywhere, key=lambda k: sum(latencies[k] for latencies in at_tuned.values()))
    return (ds_cnn_config("tuned per pass", lambda p: (best[p.layer, p.step].kernel, tiles(p))),
            ds_cnn_config(f"best single kernel ({kernel_table('fp32')[single]}), tuned tiles",
                          lambda p: (single, tiles(p))),
            ds_cnn_config("mm, the largest tiles that fit", lambda p: (0, {})))


def training_step(target: str, work: Path, tiles: int) -> None:
    """A whole DS-CNN training step (ops_train_ds_cnn.c) on a target with a
    DMA, in three configurations: the passes' kernels and tiles as the tuner
    picks them on that target (layer time with the DMA where a whole-layer run
    exists), the one kernel that is best summed over every pass with those
    tiles, and mm everywhere with the largest tiles that fit. Each run is
    judged against PyTorch's trajectory like every training case."""
    if not dma_target_ready(target, "the training step"):
        return
    network = load_network(DSCNN)
    names = {p.layer for p in ds_cnn_passes()}
    matmul_layers = Network("ds_cnn, the layers with a matmul", tuple(l for l in network.layers if l.name in names),
                            network.source)
    session, db = session_in(work / "layers", target)
    print(f"\n== the DS-CNN training step on {target}: tuning {', '.join(sorted(names))} (greedy, FP32, 8 cores, "
          f"{NEAR_BYTES} bytes of near memory, cost: layer time where a whole-layer run exists)",
          flush=True)
    try:
        results = tune(matmul_layers, Evaluator(session, db, (8,), layer_time=True), make_strategy("greedy"), "fp32",
                       NEAR_BYTES, tiles)
        print_table(results, session.target.capabilities.counter_unit)
        configs = _step_configs(results)
        entry = ds_cnn_step_entry(configs, shapes=(DS_CNN_SHAPE,))
        cycles = {}
        for case in entry.cases():
            config = next(c for c in configs if c.id == case.options["config"])
            variant = Variant(case, 0, 8)
            result = session.results_for(case, [variant])[variant]
            if not result.passed or result.counters is None:
                print(f"STEP {config.label}: {result.failure}")
                continue
            cycles[config.label] = result.counters.latency / case.shape["N"]
            print(f"  {config.label:<52} {cycles[config.label]:>12,.0f} cycles per step   passed against PyTorch\n"
                  f"    {config.describe()}", flush=True)
    finally:
        shutil.rmtree(session.workdir, ignore_errors=True)
    if len(cycles) == len(configs):
        tuned, single, mm = (cycles[c.label] for c in configs)
        chart = ROOT / "reports" / "bench" / "ds_cnn_step.svg"
        short = ("tuned per pass", f"one kernel ({kernel_table('fp32')[configs[1].rows[0][0]]})", "mm, largest tiles")
        bar_chart(chart, f"DS-CNN training step on {target}, FP32, 8 cores: FW, BW, SGD, every pass tiled "
                         f"through L2", "M cycles",
                  {"million cycles per step": [(label, cycles[c.label] / 1e6) for label, c in zip(short, configs)]})
        print(f"  chart: {chart}")
        print(f"STEP DS-CNN training step on {target}, 8 cores, cycles per step: tuned {tuned:,.0f}, "
              f"best single kernel {single:,.0f}, mm {mm:,.0f}; tuned is {single / tuned:.3f}x the single kernel "
              f"and {mm / tuned:.3f}x mm")


def mutant(target: str, work: Path) -> None:
    print(f"\n== a fast and wrong {FAST_AND_WRONG_KERNEL} on {target}", flush=True)
    library = mutant_library(work / "mutant-lib", FAST_AND_WRONG)
    network = Network("one", (load_network(DSCNN).layers[2],), "ds_cnn pw1")
    session, db = session_in(work / "mutant", target, library)
    results, _ = run(network, session, db, "exhaustive", 2)
    for r in results:
        wrong = [o for o in r.outcomes if o.kernel_name == FAST_AND_WRONG_KERNEL]
        fastest = min((o.latency for o in wrong if o.latency is not None), default=None)
        print(f"MUTANT {r.layer.name} {r.step}: chosen {r.best.kernel_name if r.best else None} "
              f"({r.best.latency if r.best else '-'}); {FAST_AND_WRONG_KERNEL}: {fastest} but "
              f"{sorted({o.status for o in wrong})}: {wrong[0].message.splitlines()[0][:120] if wrong else ''}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="qemu")
    parser.add_argument("--only", default="throughput,pruning,dscnn,layers,step,mutant")
    parser.add_argument("--layers-target", default="gvsoc",
                        help="the target of the whole-layer comparison: one with a cluster DMA")
    parser.add_argument("--tiles", type=int, default=8, help="tilings per method for DS-CNN and the layers")
    parser.add_argument("--pruning-tiles", type=int, default=16, help="tilings per method for the pruning run")
    parser.add_argument("--sample", type=int, default=20, help="configurations run by the seed's flow")
    parser.add_argument("--reports", type=Path, default=ROOT / "reports" / "bench" / "autotune_ds_cnn")
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep the caches here and reuse them (the pruning comparison then replays "
                             "exhaustive's measurements too: develop a strategy without re-measuring)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="ptl-bench-autotune-"))
    try:
        parts = args.only.split(",")
        if "throughput" in parts:
            throughput(args.target, work, args.sample)
        if "pruning" in parts:
            pruning(args.target, work, args.pruning_tiles)
        if "dscnn" in parts:
            dscnn(args.target, work, args.tiles, args.reports)
        if "layers" in parts:
            layers(args.layers_target, work, args.tiles)
        if "step" in parts:
            training_step(args.layers_target, work, args.tiles)
        if "mutant" in parts:
            mutant(args.target, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
