"""What a tuning writes in reports/autotune/:

  measurements.csv   every evaluated configuration: layer, step, tiling,
                     kernel, cores, status, total latency and work
  junit.xml          this run's tests, one per layer and step: passed with
                     the best configuration and its timings as properties,
                     failed when no configuration is correct or none fits
  best.json          the best configuration per layer and step, with the
                     macros the header gives it
  <network>.h        the same as C macros a deployment includes: tile sizes,
                     OPT_MATMUL_TYPE_FW/WG/IG (the opt_matmul_type_* index),
                     USE_IM2COL and the core count (names.py: how names
                     become identifiers and file names)
  heatmap_<layer>_<step>.svg   kernel x tiling, at the best core count, one
                     panel per method (im2col, direct)

A run that tunes some of a network's layers and steps (--layer, --steps)
updates their entries in best.json, measurements.csv and the header, and
keeps the others from the earlier run in the same directory when they are
still valid: same network, same layer sizes, same target, dtype, L1 and
library (KEPT_WHEN_SAME). An earlier entry that is dropped is said, with
why, in one line.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

from harness.files import write_atomically
from harness.autotune.heatmap import write_heatmap
from harness.autotune.layers import STEPS, Network
from harness.autotune.names import file_stem, include_guard, macro_prefixes
from harness.autotune.tuner import NOT_MEASURED, StepResult
from harness.reports import ReportRow, write_junit

CSV_COLUMNS = ["layer", "type", "step", "dtype", "method", "tiling", "calls", "l1_bytes", "kernel", "kernel_index",
               "cores", "status", "unit", "cost", "latency", "work", "best", "message"]
# An earlier entry is kept only if it was tuned with the same settings as this run.
KEPT_WHEN_SAME = ("target", "unit", "cost", "dtype", "l1_bytes", "library_digest")
# What each entry records of the run that tuned it (a kept entry may come from another run).
TUNED_WITH = ("strategy", "tiles", "cores")


def csv_rows(results: list[StepResult], dtype: str) -> list[dict]:
    rows = []
    for r in results:
        best = r.best
        for o in r.outcomes:
            rows.append({"layer": r.layer.name, "type": r.layer.kind.name, "step": r.step, "dtype": dtype,
                         "method": o.tiling.method.label, "tiling": o.tiling.label, "calls": o.tiling.calls,
                         "l1_bytes": o.tiling.l1_bytes, "kernel": o.kernel_name, "kernel_index": o.kernel,
                         "cores": o.cores, "status": o.status, "unit": o.unit or "", "cost": o.cost,
                         "latency": o.latency,
                         "work": o.work, "best": int(o is best), "message": o.message})
    return rows


def write_csv(rows: list[dict], path: Path) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, CSV_COLUMNS)
    writer.writeheader()
    writer.writerows(rows)
    write_atomically(path, buffer.getvalue().encode())


def header_macros(result: StepResult) -> dict[str, int]:
    """The header's macros of a step's best configuration, without the layer
    prefix and step suffix: OPT_MATMUL_TYPE, USE_IM2COL, NUM_CORES, TILE_<AXIS>."""
    b = result.best
    macros, options = {}, dict(b.tiling.method.options)
    if b.tiling.method.entry.kernel_names(b.tiling.pieces[0].case.dtype) != ("direct",):
        macros["OPT_MATMUL_TYPE"] = b.kernel
    if "im2col" in options:
        macros["USE_IM2COL"] = options["im2col"]
    macros["NUM_CORES"] = b.cores
    for axis, size in b.tiling.tile:
        macros[f"TILE_{axis.upper()}"] = size
    return macros


def best_record(result: StepResult) -> dict:
    b = result.best
    record = {"candidates": len(result.tilings), "evaluated": len(result.evaluated), "target_runs": result.runs}
    if b is None:
        wrong = sorted({o.status for o in result.outcomes if not o.passed})
        return {**record, "error": result.error or f"no correct configuration (outcomes: {', '.join(wrong)})"}
    return {**record, "method": b.tiling.method.label, "tiling": b.tiling.label, "tile": dict(b.tiling.tile),
            "calls": b.tiling.calls, "l1_bytes": b.tiling.l1_bytes, "kernel": b.kernel_name,
            "kernel_index": b.kernel, "cores": b.cores, "latency": b.latency, "work": b.work, "unit": b.unit,
            "cost": b.cost,
            "pieces": [{"shape": p.case.shape, "count": p.count} for p in b.tiling.pieces],
            "macros": header_macros(result)}


def layer_table(layer) -> dict:
    return {"type": layer.kind.name, "sizes": layer.sizes, "flags": dict(layer.flags),
            "description": layer.describe()}


@dataclass
class Entries:
    """The layer steps a set of reports holds: best.json's "layers", in
    network order, with their measurement rows."""

    layers: dict[str, dict] = field(default_factory=dict)       # name -> layer table with a record per step
    rows: dict[tuple[str, str], list[dict]] = field(default_factory=dict)
    kept: list[tuple[str, str]] = field(default_factory=list)   # entries from an earlier run

    def steps(self) -> list[tuple[str, str]]:
        return [(name, step) for name, table in self.layers.items() for step in table if step in STEPS]


def this_run(results: list[StepResult], meta: dict) -> Entries:
    entries = Entries()
    rows = csv_rows(results, meta["dtype"])
    for r in results:
        table = entries.layers.setdefault(r.layer.name, layer_table(r.layer))
        table[r.step] = {**best_record(r), "tuned_with": {k: meta[k] for k in TUNED_WITH}}
        entries.rows[r.layer.name, r.step] = [row for row in rows if (row["layer"], row["step"]) == (r.layer.name,
                                                                                                      r.step)]
    return entries


def _earlier(out: Path, notes: list[str]) -> tuple[dict | None, dict[tuple[str, str], list[dict]]]:
    """best.json and the measurement rows of the earlier run in `out`, if any."""
    path = out / "best.json"
    if not path.exists():
        return None, {}
    try:
        earlier = json.loads(path.read_text())
        if not isinstance(earlier, dict) or not isinstance(earlier.get("layers"), dict):
            raise ValueError("no \"layers\" table")
    except (OSError, ValueError) as exc:
        notes.append(f"{path} is unreadable ({exc}); none of its entries is kept: re-tune the whole network")
        return None, {}
    rows: dict[tuple[str, str], list[dict]] = {}
    try:
        with open(out / "measurements.csv", newline="") as f:
            for row in csv.DictReader(f):
                rows.setdefault((row["layer"], row["step"]), []).append({k: row.get(k, "") for k in CSV_COLUMNS})
    except (OSError, KeyError, csv.Error):
        rows = {}
    return earlier, rows


def _said(steps: list[tuple[str, str]], shown: int = 6) -> str:
    text = ", ".join(f"{layer} {step}" for layer, step in steps[:shown])
    return text + (f" and {len(steps) - shown} more" if len(steps) > shown else "")


def merge(new: Entries, meta: dict, out: Path, network: Network | None, notes: list[str]) -> Entries:
    """This run's entries, with those of the earlier run in `out` that it did
    not tune and that are still valid; each one dropped is said in `notes`."""
    earlier, earlier_rows = _earlier(out, notes)
    if earlier is None:
        return new
    old = {(name, step): record for name, table in earlier["layers"].items() if isinstance(table, dict)
           for step, record in table.items() if step in STEPS and isinstance(record, dict)}
    untouched = [key for key in old if key[0] not in new.layers or key[1] not in new.layers[key[0]]]
    replaced = [key for key in old if key not in untouched and "macros" in old[key]
                and "macros" not in new.layers[key[0]][key[1]]]
    if replaced:
        notes.append(f"{_said(replaced)}: the earlier best configuration is replaced by this run's NOT TUNED "
                     f"(see junit.xml for why)")
    if not untouched:
        return new
    if earlier.get("network") != meta["network"]:
        notes.append(f"{out}/best.json and measurements.csv held network {earlier.get('network')!r}; its "
                     f"{len(untouched)} layer steps are not kept (its header stays): give each network its own "
                     f"--reports-dir")
        return new
    differ = [f"{k} {earlier.get(k)} (this run: {meta[k]})" for k in KEPT_WHEN_SAME if earlier.get(k) != meta[k]]
    if differ:
        notes.append(f"the earlier results of {_said(untouched)} in {out} were tuned with {', '.join(differ)}; "
                     f"they are not kept: tune them again with this run's settings, or use another --reports-dir")
        return new
    current = {layer.name: layer_table(layer) for layer in network.layers} if network else None
    stale, kept = [], []
    for name, step in untouched:
        table, record = earlier["layers"][name], old[name, step]
        valid = ((_sound_macros(record.get("macros")) or isinstance(record.get("error"), str))
                 and isinstance(record.get("tuned_with"), dict) and "description" in table)
        same_layer = current is None or (name in current and all(table.get(k) == current[name][k]
                                                                  for k in ("type", "sizes", "flags"))
                                         and step in _layer_steps(network, name))
        (kept if valid and same_layer else stale).append((name, step))
    if stale:
        notes.append(f"the earlier results of {_said(stale)} in {out} are not kept: the layer changed or is no "
                     f"longer in {meta['source'] or meta['network']}, or the entry was written by an older tuner; "
                     f"tune them again")
    merged = Entries(kept=kept)
    order = ([(layer.name, step) for layer in network.layers for step in layer.steps] if network else
             list(dict.fromkeys([*old, *new.steps()])))
    chosen = set(kept) | set(new.steps())
    for name, step in sorted(chosen, key=lambda key: order.index(key) if key in order else len(order)):
        if (name, step) in new.rows:
            source, rows = new.layers[name], new.rows[name, step]
        else:
            source, rows = earlier["layers"][name], earlier_rows.get((name, step), [])
        table = merged.layers.setdefault(name, {k: v for k, v in source.items() if k not in STEPS})
        table[step] = source[step]
        merged.rows[name, step] = rows
    if kept:
        notes.append(f"kept {len(kept)} earlier layer steps not tuned in this run ({_said(kept)}) from {out}")
    unmeasured = [key for key in kept if not merged.rows[key]]
    if unmeasured:
        notes.append(f"{out}/measurements.csv had no rows for {_said(unmeasured)}: their best configurations are "
                     f"kept without their measurements")
    return merged


def _sound_macros(macros) -> bool:
    """An earlier entry's macros can go into the header as they are."""
    return (isinstance(macros, dict) and bool(macros)
            and all(isinstance(k, str) and k.isascii() and k.replace("_", "").isalnum() and k.upper() == k
                    and isinstance(v, int) and not isinstance(v, bool) for k, v in macros.items()))


def _layer_steps(network: Network, name: str) -> tuple[str, ...]:
    return next(layer.steps for layer in network.layers if layer.name == name)


def write_json(entries: Entries, meta: dict, path: Path) -> None:
    write_atomically(path, json.dumps({**meta, "layers": entries.layers}, indent=2).encode())


def c_header(entries: Entries, meta: dict) -> str:
    guard = include_guard(meta["network"])
    prefixes = macro_prefixes(entries.layers)
    lines = [f"/* The best configuration of each layer and step of {meta['network']}, by python -m harness",
             f" * autotune on {meta['target']} ({meta['unit']}), {meta['dtype']}, {meta['cores']} cores, L1 "
             f"{meta['l1_bytes']} bytes, strategy {meta['strategy']}, cost {meta['cost']}.",
             f" * Library: {meta['library']}. Generated: re-run the tuner rather than edit. */",
             f"#ifndef {guard}", f"#define {guard}", ""]
    for name, step in entries.steps():
        record = entries.layers[name][step]
        tuned_with = record.get("tuned_with", {})
        earlier = (f" (an earlier run: strategy {tuned_with.get('strategy')}, cores {tuned_with.get('cores')})"
                   if (name, step) in entries.kept else "")
        what = (f"{record.get('tiling')}, {record.get('kernel')}, {record.get('cores')} cores, "
                f"{record.get('latency')} {record.get('unit')}" if "macros" in record
                else f"NOT TUNED: {(record.get('error') or '?').splitlines()[0]}")
        description = entries.layers[name].get("description", name)
        lines.append(f"/* {_comment(description)}, {step}: {_comment(what)}{earlier} */")
        if "macros" not in record:
            continue
        for macro, value in record["macros"].items():
            kernel = f"  /* {_comment(record.get('kernel'))} */" if macro == "OPT_MATMUL_TYPE" else ""
            lines.append(f"#define {prefixes[name]}_{macro}_{step.upper()} {int(value)}{kernel}")
        lines.append("")
    lines += [f"#endif /* {guard} */", ""]
    return "\n".join(lines)


def _comment(text: str) -> str:
    """Text that cannot end a C comment early."""
    return str(text).replace("*/", "* /")


def write_junit_report(results: list[StepResult], meta: dict, path: Path) -> None:
    rows = []
    for r in results:
        record = best_record(r)
        props = {"target": meta["target"], "family": r.layer.kind.name, "layer": r.layer.name, "step": r.step,
                 "dtype": meta["dtype"],
                 **{k: v for k, v in record.items() if k not in ("pieces", "tile", "error", "macros")}}
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
    return out / f"heatmap_{file_stem(result.layer.name)}_{result.step}.svg"


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
        # A replay's configuration with no measurement is drawn as not measured, not as failed.
        failed = {(o.kernel_name, o.tiling.label): o.status for o in shown
                  if not o.passed and o.status != NOT_MEASURED}
        best = (r.best.kernel_name, r.best.tiling.label) if r.best else None
        path = heatmap_path(out, r)
        write_heatmap(path, title=f"{meta['network']} {r.layer.describe()} {r.step}, {meta['dtype']}, {cores} cores "
                                  f"on {meta['target']}", rows=rows, columns=columns, values=values, failed=failed,
                      best=best, unit=meta["unit"], groups={o.tiling.label: o.tiling.method.label for o in shown})
        written.append(path)
    return written


def header_path(out: Path, network: str) -> Path:
    """<out>/<network>.h, with a network name that cannot leave `out` (names.file_stem)."""
    return out / f"{file_stem(network)}.h"


def write_all(results: list[StepResult], meta: dict, out: Path, network: Network | None = None
              ) -> tuple[list[Path], list[str]]:
    """Writes the reports of this run, merged with the earlier entries in
    `out` it keeps (network: the whole network, to check those are still
    valid). Returns the files written and a line for each thing the merge
    kept or dropped. Raises ValueError for a run that tuned nothing, and
    names.NameCollision for two layers with the same C identifier, before
    writing anything."""
    if not results:
        raise ValueError("the tuning has no layer step to report: nothing is written")
    notes: list[str] = []
    entries = merge(this_run(results, meta), meta, out, network, notes)
    header_text = c_header(entries, meta)
    out.mkdir(parents=True, exist_ok=True)
    header = header_path(out, meta["network"])
    write_csv([row for key in entries.steps() for row in entries.rows.get(key, [])], out / "measurements.csv")
    write_junit_report(results, meta, out / "junit.xml")
    write_json(entries, meta, out / "best.json")
    write_atomically(header, header_text.encode())
    return [out / "measurements.csv", out / "junit.xml", out / "best.json", header,
            *write_heatmaps(results, meta, out)], notes
