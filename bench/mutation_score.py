"""Mutation score of the suite over lib_c (issue 25): seeded, generated
one-line mutants of lib_c's sources, each run against the slice of the
suite that reaches its family, on host; prints the kill rate per family and
lists every survivor.

    python bench/mutation_score.py --sample 200 --seed 1      # the wide net
    python bench/mutation_score.py --sample 4 --seed 1        # a smoke run

Operators (each applied to one occurrence on one source line; comments and
preprocessor lines are left alone): relational swaps (< <=, > >=, == !=),
arithmetic swaps (+ -, * /), off-by-one bounds and constants (n -> n + 1,
n - 1), a dropped statement (a line that is a whole statement, barriers
included), swapped operands of a subtraction or division.

A mutant that does not build is "stillborn" and not counted. A survivor is
printed as "unreviewed": whether it is equivalent (with the reason) or a gap
in the suite is a person's call; write it in the survivors list of the
report. The committed mutation checks (tests/test_mutations.py) are the
narrow, reviewed set; this is the wide net beside them.
"""
from __future__ import annotations

import argparse
import csv
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.mutants import LIBRARY, SourceEdit, mutant_library  # noqa: E402

# Source file stem prefix -> (family module of suite/, the entries' -k slice).
FAMILIES = [
    ("pulp_act", "act", "fp32 and -c3 or bf16 and -c3"),
    ("pulp_cast", "cast", "-c3"),
    ("pulp_conv2d", "conv2d", "conv2d-fp32 and -c3"),
    ("pulp_im2col", "conv2d", "fp32 and -c3"),
    ("pulp_conv_dw", "conv_dw_pw", "conv_dw-fp32 and -c3"),
    ("pulp_conv_pw", "conv_dw_pw", "conv_pw-fp32 and -c3"),
    ("pulp_transp_conv2d", "conv_dw_pw", "transp_conv2d-fp32 and -c3"),
    ("pulp_cordic", "cordic", "cordic"),
    ("pulp_dropout", "dropout", "dropout and -c3"),
    ("pulp_random", "dropout", "random"),
    ("pulp_embedding", "embedding", "-c3"),
    ("pulp_instnorm", "norm", "instnorm-fp32 and -c3"),
    ("pulp_norms", "norm", "-c3 and not instnorm"),
    ("pulp_interpolation", "interp", "-c3"),
    ("pulp_linear", "linalg", "linear-fp32 and -c3"),
    ("pulp_matmul", "linalg", "matmul-fp32 and -c3"),
    ("pulp_mm_", "linalg", "fp32 and -c3"),
    ("pulp_losses", "losses", "loss-fp32"),
    ("pulp_optimizers", "losses", "sgd-fp32"),
    ("pulp_mhsa", "mhsa", "mhsa-fp32 and -c3"),
    ("pulp_pooling", "pool", "fp32 and -c3"),
    ("pulp_residual", "residual", "fp32"),
    ("pulp_rnn", "rnn", "-c3"),
    ("pulp_softmax", "softmax", "fp32 and -c3"),
    ("pulp_train_utils", "utils", "fp32 and -c3"),
    ("pulp_utils", "utils", "fp32 and -c3"),
    ("pulp_core_block", "act", "-c3"),
]

SWAPS = [("<=", "<"), ("<", "<="), (">=", ">"), (">", ">="), ("==", "!="), ("!=", "=="),
         (" + ", " - "), (" - ", " + "), (" * ", " / "), (" / ", " * ")]
SKIP_LINE = re.compile(r"^\s*(#|/\*|\*|//)|->|^\s*$")


def family_of(path: Path):
    for prefix, module, select in FAMILIES:
        if path.stem.startswith(prefix):
            return module, select
    return None


def candidates(path: Path) -> list[tuple[str, str, str]]:
    """(operator, original line, mutated line) for every site of a file."""
    out = []
    for line in path.read_text().splitlines(keepends=True):
        if SKIP_LINE.search(line.split("->")[0]) and "->" not in line:
            continue
        if line.lstrip().startswith(("#", "/*", "*", "//")):
            continue
        for old, new in SWAPS:
            if old in line and not (old in ("<", ">") and ("<<" in line or ">>" in line or "->" in line)):
                out.append((f"swap {old.strip()} {new.strip()}", line, line.replace(old, new, 1)))
        for m in re.finditer(r"(?<![\w.])(\d+)(?![\w.])", line):
            value = int(m.group(1))
            out.append(("constant +1", line, line[:m.start()] + str(value + 1) + line[m.end():]))
        bound = re.search(r"(\w+) (<|<=) (\w+(?:->\w+)?);", line)
        if bound:
            out.append(("bound - 1", line, line.replace(bound.group(0), f"{bound.group(1)} {bound.group(2)} "
                                                        f"{bound.group(3)} - 1;", 1)))
        if re.match(r"^\s+[\w\[\]\->. *+]+(=|\+=|-=)[^=].*;\s*$", line) or "pi_cl_team_barrier();" in line:
            out.append(("drop statement", line, re.sub(r"\S.*", ";", line, count=1)))
        sub = re.search(r"\((\w+) - (\w+)\)", line)
        if sub:
            out.append(("swap operands", line, line.replace(sub.group(0), f"({sub.group(2)} - {sub.group(1)})", 1)))
    return [c for c in out if c[1] != c[2]]


def run_slice(library: Path, module: str, select: str, workdir: Path, cache: Path) -> list[dict]:
    """The family's suite module, -k select, on host against library: its CSV rows."""
    reports = workdir / "reports"
    argv = [sys.executable, "-m", "pytest", str(ROOT / "suite" / f"test_{module}.py"), "-p", "no:xdist", "-q",
            "--target", "host", "--trainlib", str(library), "-k", select, "--reports-dir", str(reports),
            "--ptl-cache", str(cache), "--run-timeout", "60"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env, timeout=1800)
    if not (reports / "results.csv").exists():
        return []
    with open(reports / "results.csv") as f:
        return list(csv.DictReader(f))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sample", type=int, default=150, help="mutants to run")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    sites = []
    for path in sorted((LIBRARY / "sources").glob("*.[ch]")):
        fam = family_of(path)
        if fam:
            sites += [(path, fam, c) for c in candidates(path)]
    rng = random.Random(args.seed)
    chosen = rng.sample(sites, min(args.sample, len(sites)))
    print(f"{len(sites)} mutation sites over lib_c/sources; running {len(chosen)} (seed {args.seed})", flush=True)
    score = defaultdict(lambda: [0, 0, 0])   # family: killed, survived, stillborn
    survivors = []
    cache = Path(tempfile.mkdtemp(prefix="ptl-mutscore-cache"))
    for n, (path, (module, select), (op, original, mutated)) in enumerate(chosen, 1):
        tmp = Path(tempfile.mkdtemp(prefix="ptl-mutscore"))
        edit = SourceEdit(f"sources/{path.name}", original, mutated)
        started = time.monotonic()
        rows = run_slice(mutant_library(tmp / "lib", edit), module, select, tmp, cache)
        classes = {r["failure_class"] for r in rows if r["outcome"] == "failed"}
        if not rows:
            verdict, slot = "no report (empty slice or a broken run): not counted", 2
        elif classes == {"build"}:
            verdict, slot = "stillborn", 2
        elif classes:
            verdict, slot = "killed (" + ", ".join(sorted(classes)) + ")", 0
        else:
            verdict, slot = "SURVIVED", 1
            survivors.append((module, path.name, op, original.strip(), mutated.strip()))
        score[module][slot] += 1
        print(f"[{n}/{len(chosen)}] {module:10} {path.name}: {op}: {original.strip()[:60]!r} -> "
              f"{verdict}, {len(rows)} variants, {time.monotonic() - started:.0f} s", flush=True)
    print("\nfamily      killed  survived  stillborn  kill rate")
    for module, (k, s, b) in sorted(score.items()):
        print(f"{module:10} {k:7} {s:9} {b:10}  {k / (k + s):.0%}" if k + s else f"{module:10} {k:7} {s:9} {b:10}  -")
    print("\nsurvivors (unreviewed: equivalent, with the reason, or a gap):")
    for s in survivors:
        print("  " + " | ".join(s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
