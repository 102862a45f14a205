"""What a tuning writes in reports/autotune/ (every file replaced whole):

  measurements.csv   every evaluated configuration: layer, step, tiling,
                     kernel, cores, status, total latency and work
  junit.xml          one test per layer and step: passed with the best
                     configuration and its timings as properties, failed
                     when no configuration is correct or none fits
  best.json          the best configuration per layer and step
  <network>.h        the same as C macros a deployment includes: tile sizes,
                     OPT_MATMUL_TYPE_FW/WG/IG (the opt_matmul_type_* index),
                     USE_IM2COL and the core count
  heatmap_<layer>_<step>.svg   kernel x tiling, at the best core count
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from golden.bundle import write_atomically
from harness.autotune.heatmap import write_heatmap
from harness.autotune.tuner import StepResult
from harness.reports import ReportRow, write_junit

CSV_COLUMNS = ["layer", "type", "step", "dtype", "method", "tiling", "calls", "l1_bytes", "kernel", "kernel_index",
               "cores", "status", "unit", "latency", "work", "best", "message"]


def write_csv(results: list[StepResult], dtype: str, path: Path) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, CSV_COLUMNS)
    writer.writeheader()
    for r in results:
        best = r.best
        for o in r.outcomes:
            writer.writerow({"layer": r.layer.name, "type": r.layer.kind.name, "step": r.step, "dtype": dtype,
                             "method": o.tiling.method.label, "tiling": o.tiling.label, "calls": o.tiling.calls,
                             "l1_bytes": o.tiling.l1_bytes, "kernel": o.kernel_name, "kernel_index": o.kernel,
                             "cores": o.cores, "status": o.status, "unit": o.unit or "", "latency": o.latency,
                             "work": o.work, "best": int(o is best), "message": o.message})
    write_atomically(path, buffer.getvalue().encode())


def best_record(result: StepResult) -> dict:
    b = result.best
    record = {"candidates": len(result.tilings), "evaluated": len(result.evaluated), "target_runs": result.runs}
    if b is None:
        wrong = sorted({o.status for o in result.outcomes if not o.passed})
        return {**record, "error": result.error or f"no correct configuration (outcomes: {', '.join(wrong)})"}
    return {**record, "method": b.tiling.method.label, "tiling": b.tiling.label, "tile": dict(b.tiling.tile),
            "calls": b.tiling.calls, "l1_bytes": b.tiling.l1_bytes, "kernel": b.kernel_name,
            "kernel_index": b.kernel, "cores": b.cores, "latency": b.latency, "work": b.work, "unit": b.unit,
            "pieces": [{"shape": p.case.shape, "count": p.count} for p in b.tiling.pieces]}


def write_json(results: list[StepResult], meta: dict, path: Path) -> None:
    layers: dict[str, dict] = {}
    for r in results:
        layers.setdefault(r.layer.name, {"type": r.layer.kind.name, "sizes": r.layer.sizes,
                                         "flags": dict(r.layer.flags)})[r.step] = best_record(r)
    write_atomically(path, json.dumps({**meta, "layers": layers}, indent=2).encode())


def c_header(results: list[StepResult], meta: dict) -> str:
    guard = f"PTL_AUTOTUNE_{meta['network'].upper()}_H"
    lines = [f"/* The best configuration of each layer and step of {meta['network']}, by python -m harness",
             f" * autotune on {meta['target']} ({meta['unit']}), {meta['dtype']}, {meta['cores']} cores, L1 "
             f"{meta['l1_bytes']} bytes, strategy {meta['strategy']}.",
             f" * Library: {meta['library']}. Generated: re-run the tuner rather than edit. */",
             f"#ifndef {guard}", f"#define {guard}", ""]
    for r in results:
        prefix, b = f"{r.layer.name.upper()}", r.best
        lines.append(f"/* {r.layer.describe()}, {r.step}: "
                     + (f"{b.tiling.label}, {b.kernel_name}, {b.cores} cores, {b.latency} {b.unit} */" if b
                        else f"NOT TUNED: {best_record(r)['error'].splitlines()[0]} */"))
        if b is None:
            continue
        step = r.step.upper()
        if b.tiling.method.entry.kernel_names(meta["dtype"]) != ("direct",):
            lines.append(f"#define {prefix}_OPT_MATMUL_TYPE_{step} {b.kernel}  /* {b.kernel_name} */")
        if "im2col" in dict(b.tiling.method.options):
            lines.append(f"#define {prefix}_USE_IM2COL_{step} {dict(b.tiling.method.options)['im2col']}")
        lines.append(f"#define {prefix}_NUM_CORES_{step} {b.cores}")
        for axis, size in b.tiling.tile:
            lines.append(f"#define {prefix}_TILE_{axis.upper()}_{step} {size}")
        lines.append("")
    lines += [f"#endif /* {guard} */", ""]
    return "\n".join(lines)


def write_junit_report(results: list[StepResult], meta: dict, path: Path) -> None:
    rows = []
    for r in results:
        record = best_record(r)
        props = {"target": meta["target"], "family": r.layer.kind.name, "layer": r.layer.name, "step": r.step,
                 "dtype": meta["dtype"], **{k: v for k, v in record.items() if k not in ("pieces", "tile", "error")}}
        if "tile" in record:
            props["tile"] = " ".join(f"{k}={v}" for k, v in record["tile"].items())
        outcome = "passed" if r.best else "failed"
        rows.append(ReportRow(f"{meta['network']}.{r.layer.name}.{r.step}", outcome, r.seconds, props,
                              "" if r.best else why_not(r)))
    write_junit(rows, path, suite_name=f"autotune.{meta['network']}")


def why_not(result: StepResult) -> str:
    if result.error:
        return result.error
    lines = [f"no correct configuration among {len(result.outcomes)} evaluated:"]
    for o in result.outcomes[:20]:
        lines.append(f"  {o.tiling.label} {o.kernel_name} c{o.cores}: {o.status}: {o.message}")
    return "\n".join(lines)


def heatmap_path(out: Path, result: StepResult) -> Path:
    return out / f"heatmap_{result.layer.name}_{result.step}.svg"


def write_heatmaps(results: list[StepResult], meta: dict, out: Path) -> list[Path]:
    written = []
    for r in results:
        if not r.outcomes:
            continue
        cores = r.best.cores if r.best else max(o.cores for o in r.outcomes)
        shown = [o for o in r.outcomes if o.cores == cores]
        rows = list(dict.fromkeys(o.kernel_name for o in shown))
        columns = list(dict.fromkeys(o.tiling.label for o in shown))
        values = {(o.kernel_name, o.tiling.label): o.latency for o in shown if o.passed}
        failed = {(o.kernel_name, o.tiling.label): o.status for o in shown if not o.passed}
        best = (r.best.kernel_name, r.best.tiling.label) if r.best else None
        path = heatmap_path(out, r)
        write_heatmap(path, title=f"{meta['network']} {r.layer.describe()} {r.step}, {meta['dtype']}, {cores} cores "
                                  f"on {meta['target']}", rows=rows, columns=columns, values=values, failed=failed,
                      best=best, unit=meta["unit"])
        written.append(path)
    return written


def write_all(results: list[StepResult], meta: dict, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    header = out / f"{meta['network']}.h"
    write_csv(results, meta["dtype"], out / "measurements.csv")
    write_junit_report(results, meta, out / "junit.xml")
    write_json(results, meta, out / "best.json")
    write_atomically(header, c_header(results, meta).encode())
    return [out / "measurements.csv", out / "junit.xml", out / "best.json", header,
            *write_heatmaps(results, meta, out)]
