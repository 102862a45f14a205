"""Mutation score of the suite over lib_c (issue 25): seeded, generated
one-line mutants of lib_c's sources (bench/mutation_sites.py says which),
each run on host against the part of the suite that reaches its family,
then, if it survives, on qemu under the performance gate; prints the kill
rate per family and every survivor with its reviewed class.

    python bench/mutation_score.py --sample 160 --seed 1     # the wide net
    python bench/mutation_score.py --only 3f2a9c01d4         # one mutant again (its id)
    python bench/mutation_score.py --family elem_loops       # every site of a family
    python bench/mutation_score.py --reviewed                # every reviewed survivor again
    python bench/mutation_score.py --list                    # the sites per family
    python bench/mutation_score.py --combine a.csv b.csv     # one summary of runs that split a sample
    python bench/mutation_score.py --no-perf-stage ...       # host only (no RISC-V toolchain)

The sample is stratified: every family of FAMILIES gets at least
sample / (2 x families) mutants, the rest go by each family's share of the
sites; the same seed draws the same mutants.

A mutant runs in up to four stages, each only if it survived the one before:
  slice        the family's cases in the mutated file's format (fp32 for a
               file shared by both), one core count per case (3 where the
               case has it, else its largest), stopping at the first failure;
  family       the family's cases in every format at every core count, and
               the training runs that chain the family (the training family);
  concurrency  the passes of regression.yml's concurrency job on the
               family: --concurrency-slice 1 on host under PTL_TEAM_ORDER
               reverse, random:1 and random:2 and under --sanitize thread
               and --sanitize address,undefined (.ci/run's), and on qemu
               under PTL_TEAM_ORDER reverse (which sees a core that reads a
               lower core's results too soon, as qemu's own order cannot);
  perf         the family stage's cases on qemu with --perf-gate against the
               committed baseline (regression.yml's gate): exact instruction
               counts, so a mutant that only costs time (a core split that
               gives one core everything) is killed as `perf`, not by chance.
               Its threshold is --perf-threshold (default 10%), not CI's 0: at
               0 any edit that moves one instruction would count as a kill,
               though it only asks for a baseline update, which would let a
               bug through. Left out with --no-perf-stage.
Each stage first runs once on the clean library (no false alarm, and it
warms the cache). One cache serves every run (--ptl-cache, the bench's
own: no other run may share it while the bench runs): golden bundles and
objects are keyed by content, so a mutant recompiles only the sources its
edit reaches; each mutant's runner artefacts are removed after it.

A mutant that does not compile is stillborn and not counted. A survivor's
class is a person's call, written in bench/mutation_survivors.toml by its
id (file, operator, line, occurrence) and the line it makes (mutated, which
tells the mutants of one line apart): `equivalent`, with the reason no
output can change; `lawful`, with the page's words that allow the outputs
it changes (another reading of the contract, as tests/test_mutations.py's
LAWFUL changes, which the suite must pass); or `gap`. A review whose id no
longer makes that line is left out, with a warning. A survivor not in that
file is printed as `unreviewed` and counts as a gap. The kill rate is
killed / (killed + gaps): equivalent and lawful mutants are left out. The committed mutation checks
(tests/test_mutations.py) are the narrow, reviewed set; this is the wide net
beside them.
"""
from __future__ import annotations

import argparse
import csv
import fnmatch
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.mutation_sites import Mutant, mutants_of  # noqa: E402
from harness import cache_layout  # noqa: E402
from harness.child_process import die_with_parent  # noqa: E402
from tests.mutants import LIBRARY  # noqa: E402

REVIEW = Path(__file__).with_name("mutation_survivors.toml")
CLASSES = ("equivalent", "lawful", "gap")
# The classes left out of the kill rate, and what a review of each must give as its reason.
WHY_NOT_A_BUG = {"equivalent": "why no output can change",
                 "lawful": "the API page's words that allow the outputs it changes"}
NOT_BUGS = tuple(WHY_NOT_A_BUG)


@dataclass(frozen=True)
class Family:
    """A lib_c family: its sources, and the catalogue entries that call them."""
    name: str
    sources: tuple[str, ...]   # globs in lib_c/sources
    modules: tuple[str, ...]   # catalogue families (harness/catalogue/<module>.py)
    entries: str               # the entries' names (a case id's first field), a regex
    training: str = ""         # the training runs (the training family) that chain it, a regex


ALL_TRAINING = "train_cnn|train_dsblock|train_rnn|train_transformer"
FAMILIES = [
    Family("act", ("pulp_act_fp*.c", "pulp_act_impl.h"), ("act",), "relu|leakyrelu|sigmoid", "train_cnn|train_dsblock"),
    Family("act_extra", ("pulp_act_extra_*",), ("act",), "gelu|swiglu|tanh"),
    # the wrappers that fork their own team, and the per-core bodies whose split the `alone` cases check
    Family("core_block", ("pulp_core_block.h",), ("act", "residual", "cast", "utils"),
           "relu|leakyrelu|sigmoid|residual|gelu|swiglu|tanh|cast_to_fp16|cast_to_fp32|copy|set_to_value|vect_sum",
           "train_cnn|train_dsblock|train_transformer"),
    Family("cast", ("pulp_cast.c",), ("cast",), "cast_to_fp16|cast_to_fp32"),
    Family("conv2d", ("pulp_conv2d_*",), ("conv2d",), "conv2d", "train_cnn"),
    Family("im2col", ("pulp_im2col_*",), ("conv2d",), "im2col|im2row|blocktransp|conv2d", "train_cnn"),
    Family("conv_ranges", ("pulp_conv_ranges.h",), ("conv2d", "conv_dw_pw"), "conv2d|conv_dw|conv_pw|transp_conv2d",
           "train_cnn|train_dsblock"),
    Family("conv_dw", ("pulp_conv_dw_*",), ("conv_dw_pw",), "conv_dw", "train_dsblock"),
    Family("conv_pw", ("pulp_conv_pw_*",), ("conv_dw_pw",), "conv_pw", "train_dsblock"),
    Family("transp_conv2d", ("pulp_transp_conv2d_*",), ("conv_dw_pw",), "transp_conv2d"),
    Family("cordic", ("pulp_cordic.c",), ("cordic",), "cordic"),
    Family("dropout", ("pulp_dropout_*",), ("dropout",), "dropout"),
    Family("random", ("pulp_random.c",), ("dropout",), "random_float|random_bernoulli|random_stream|random_double|dropout"),
    Family("embedding", ("pulp_embedding_*",), ("embedding",), "embedding"),
    Family("elem_loops", ("pulp_elem_loops.h",), ("pool", "conv_dw_pw", "embedding"),
           "maxpool|transp_conv2d|embedding", "train_cnn"),
    Family("instnorm", ("pulp_instnorm_*",), ("norm",), "instnorm", "train_dsblock"),
    Family("norms", ("pulp_norms_*", "pulp_nonorm_impl.h"), ("norm",), "batchnorm|layernorm|nonorm|rmsnorm|sum_of_squares|weighted_scaling",
           "train_transformer"),
    Family("interpolation", ("pulp_interpolation_*",), ("interp",), "interpolation"),
    Family("linear", ("pulp_linear_*",), ("linalg",), "linear", ALL_TRAINING),
    Family("matmul", ("pulp_matmul_*", "pulp_mm_*"), ("linalg",), "matmul|linear", ALL_TRAINING),
    Family("losses", ("pulp_losses_*",), ("losses",), "ce_loss|mse_loss|l1_loss|berhu_loss", ALL_TRAINING),
    Family("optimizers", ("pulp_optimizers_*",), ("losses",), "sgd", ALL_TRAINING),
    Family("mhsa", ("pulp_mhsa_*",), ("mhsa",), "mhsa", "train_transformer"),
    Family("pooling", ("pulp_pooling_*",), ("pool",), "avgpool|maxpool", "train_cnn|train_dsblock"),
    Family("residual", ("pulp_residual_*",), ("residual",), "residual", "train_dsblock|train_transformer"),
    Family("rnn", ("pulp_rnn_*",), ("rnn",), "rnn", "train_rnn"),
    Family("softmax", ("pulp_softmax_fp*.c", "pulp_softmax_impl.h"), ("softmax",), "softmax|vector_softmax"),
    Family("softmax_parts", ("pulp_softmax_parts_*",), ("softmax",),
           "div|row_div|row_max|scalar_mul|sm_bw_op_1|sm_bw_op_2|mm_bias_add_transposed"),
    Family("utils", ("pulp_train_utils_*", "pulp_utils_*"), ("utils",), ".*"),
]
STAGE_TARGET = {"slice": "host", "family": "host", "concurrency": "host", "perf": "qemu"}   # in this order
STAGES = tuple(STAGE_TARGET)
# regression.yml's concurrency passes: (target, PTL_TEAM_ORDER, --sanitize);
# those on host are .ci/run's. The node ids a stage runs are the same on
# every target (the catalogue's), so the qemu pass takes the host's.
CONCURRENCY_PASSES = [("host", "reverse", None), ("host", "random:1", None), ("host", "random:2", None),
                      ("host", "free", "thread"), ("host", "free", "address,undefined"), ("qemu", "reverse", None)]
_VARIANT = re.compile(r"\[(?P<entry>[^\]]+?)-(?P<dtype>fp32|fp16|bf16)-(?P<rest>.*)-c(?P<cores>\d+)\]$")
NOT_KILLS = {"build", "environment"}   # a mutant that does not build; a machine that failed


def family_of(source: str) -> Family | None:
    return next((f for f in FAMILIES if any(fnmatch.fnmatch(source, g) for g in f.sources)), None)


def all_mutants() -> dict[str, list[Mutant]]:
    """Every mutant of lib_c/sources, by family name."""
    by_family: dict[str, list[Mutant]] = defaultdict(list)
    for path in sorted((LIBRARY / "sources").glob("*.[ch]")):
        family = family_of(path.name)
        if family is not None:
            by_family[family.name] += mutants_of(path)
    return by_family


def stratified_sample(by_family: dict[str, list[Mutant]], count: int, seed: int) -> list[Mutant]:
    """count mutants: every family at least count / (2 x families) (or all it
    has), the rest by each family's share of the sites; the same seed, the same
    mutants, in file order per family."""
    names = [f.name for f in FAMILIES if by_family.get(f.name)]
    floor = max(1, count // (2 * len(names)))
    quota = {name: min(floor, len(by_family[name])) for name in names}
    left = count - sum(quota.values())
    spare = {name: len(by_family[name]) - quota[name] for name in names}
    total_spare = sum(spare.values())
    if left > 0 and total_spare:
        shares = {name: left * spare[name] / total_spare for name in names}
        extra = {name: min(spare[name], int(shares[name])) for name in names}
        # the largest remainders take what rounding down left over
        for name in sorted(names, key=lambda n: (int(shares[n]) - shares[n], n)):
            if sum(extra.values()) >= left:
                break
            if extra[name] < spare[name]:
                extra[name] += 1
        for name in names:
            quota[name] += extra[name]
    rng = random.Random(seed)
    chosen = []
    for name in names:
        picked = sorted(rng.sample(range(len(by_family[name])), quota[name]))
        chosen += [by_family[name][i] for i in picked]
    return chosen


# ---- reviewed survivors ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Review:
    cls: str
    reason: str
    mutated: str     # the line as the reviewed mutant makes it: which mutant of its line the review means


def load_reviews(path: Path = REVIEW) -> dict[tuple[str, str, str, int], Review]:
    """The reviewed survivors by mutant key; a malformed entry is an error naming it."""
    if not path.exists():
        return {}
    reviews = {}
    for n, entry in enumerate(tomllib.loads(path.read_text()).get("survivor", []), 1):
        where = f"{path.name}, survivor {n}"
        missing = {"file", "operator", "line", "occurrence", "mutated", "class"} - set(entry)
        if missing:
            raise SystemExit(f"{where}: missing {sorted(missing)}; each survivor names file, operator, line, "
                             f"occurrence, mutated and class")
        if entry["class"] not in CLASSES:
            raise SystemExit(f"{where}: class {entry['class']!r}, expected one of {CLASSES}")
        if entry["class"] in NOT_BUGS and not entry.get("reason", "").strip():
            raise SystemExit(f"{where}: a mutant reviewed {entry['class']} needs its reason "
                             f"({WHY_NOT_A_BUG[entry['class']]})")
        key = (entry["file"], entry["operator"], entry["line"], int(entry["occurrence"]))
        if key in reviews:
            raise SystemExit(f"{where}: reviewed twice: {key}")
        reviews[key] = Review(entry["class"], entry.get("reason", "").strip(), entry["mutated"])
    return reviews


def stale_reviews(reviews: dict, mutants: list[Mutant]) -> dict[tuple, str]:
    """The reviews that no longer name the mutant they were written for, and
    why: its line changed or vanished, or the key now makes another mutant
    of the line (the review's `mutated` is not the mutant's)."""
    by_key = {m.key: m for m in mutants}
    stale = {}
    for key, review in reviews.items():
        if key not in by_key:
            stale[key] = "no such mutant (its line changed or vanished)"
        elif by_key[key].mutated != review.mutated:
            stale[key] = f"that key makes {by_key[key].mutated!r}, the review is of {review.mutated!r}"
    return stale


# ---- running the suite ------------------------------------------------------------------------------------

@dataclass
class Outcome:
    verdict: str                     # killed, survived, stillborn, not judged
    stage: str = ""                  # the stage that decided
    classes: list[str] = field(default_factory=list)
    variants: int = 0
    seconds: float = 0.0
    note: str = ""
    evidence: str = ""               # a kill's first failed variant and its message's first line


class Suite:
    """Runs the stages' selections of the suite, against a library."""

    def __init__(self, cache: Path, workdir: Path, run_timeout: float, stages: tuple[str, ...] = STAGES,
                 perf_threshold: float = 0.10):
        self.cache = cache
        self.workdir = workdir
        self.run_timeout = run_timeout
        self.stages = stages
        self.perf_threshold = perf_threshold
        self._collected: dict[tuple[str, str], list[str]] = {}
        self._clean: dict[tuple, int] = {}
        self.setup_seconds = 0.0       # collecting and the clean runs: not a mutant's cost

    def collected(self, module: str, target: str) -> list[str]:
        if (module, target) not in self._collected:
            started = time.monotonic()
            run = subprocess.run([sys.executable, "-m", "pytest", "suite/test_ops.py", "--family", module, "--collect-only", "-q",
                                  "--target", target, "-p", "no:xdist"], cwd=ROOT, capture_output=True, text=True,
                                 env=_environment("free"))
            ids = [line for line in run.stdout.splitlines() if "::" in line]
            if not ids:
                raise SystemExit(f"collecting --family {module} --target {target} found nothing:\n"
                                 f"{run.stdout[-2000:]}{run.stderr}")
            self._collected[module, target] = ids
            self.setup_seconds += time.monotonic() - started
        return self._collected[module, target]

    def selection(self, family: Family, stage: str, source: str) -> list[str]:
        """The node ids a stage runs for a mutant of `source`."""
        entries = re.compile(f"(?:{family.entries})")
        target = STAGE_TARGET[stage]
        ids = [(node, m) for module in family.modules for node in self.collected(module, target)
               if (m := _VARIANT.search(node)) and entries.fullmatch(m["entry"])]
        if stage != "slice":
            training = re.compile(f"(?:{family.training})") if family.training else None
            chained = [node for node in self.collected("training", target) if training
                       and (m := _VARIANT.search(node)) and training.fullmatch(m["entry"])]
            return [node for node, _ in ids] + chained
        dtypes = {m["dtype"] for _, m in ids}
        wanted = {"fp16"} if "_fp16" in source else {"fp32"} if "_fp32" in source else {"fp32"}
        wanted = (wanted & dtypes) or dtypes
        cores: dict[str, set[int]] = defaultdict(set)
        for node, m in ids:
            cores[node[:m.start("cores") - 2]].add(int(m["cores"]))
        keep = []
        for node, m in ids:
            counts = cores[node[:m.start("cores") - 2]]
            chosen = 3 if 3 in counts else max(counts)
            if m["dtype"] in wanted and int(m["cores"]) == chosen:
                keep.append(node)
        return keep

    def run(self, library: Path, nodes: list[str], stage: str, first_failure: bool,
            built: set[Path] | None = None) -> tuple[list[dict], str]:
        """Every pass of a stage over the nodes: (the CSV rows, the tail of
        pytest's output). The runner artefacts and library copies the passes
        add to the cache are added to `built`."""
        rows, tail = [], ""

        def entries() -> set[Path]:
            return {p for d in (self.cache / store for store in cache_layout.DIRECTORY_STORES) if d.is_dir() for p in d.iterdir()}
        passes = CONCURRENCY_PASSES if stage == "concurrency" else [(STAGE_TARGET[stage], "free", None)]
        for target, order, sanitize in passes:
            reports = Path(tempfile.mkdtemp(prefix="reports-", dir=self.workdir))
            args = reports / "nodes.txt"
            args.write_text("\n".join(nodes) + "\n")
            argv = [sys.executable, "-m", "pytest", f"@{args}", "-q", "--target", target,
                    "--trainlib", str(library), "--reports-dir", str(reports), "--ptl-cache", str(self.cache),
                    "--run-timeout", str(self.run_timeout)]
            # the perf stage: a whole family on QEMU, whose counts do not depend on the workers beside it
            argv += (["--perf-gate", "--perf-threshold", str(self.perf_threshold), "-n", "auto"] if stage == "perf"
                     else ["-p", "no:xdist"])
            argv += ["-x"] if first_failure else []
            argv += ["--concurrency-slice", "1"] if stage == "concurrency" else []
            argv += ["--sanitize", sanitize] if sanitize else []
            before = entries()
            # the pass dies with the bench (a SIGTERM to it would otherwise leave the pass running)
            run = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=_environment(order),
                                 preexec_fn=die_with_parent())
            if built is not None:
                built |= entries() - before
            tail = (run.stdout + run.stderr)[-3000:]
            if run.returncode == 5:      # nothing selected: a family without a multi-core case
                continue
            if (reports / "results.csv").exists():
                with open(reports / "results.csv") as f:
                    rows += [dict(r, pass_=_pass_name(target, order, sanitize, stage)) for r in csv.DictReader(f)]
            elif run.returncode != 0:
                return rows, tail
            shutil.rmtree(reports, ignore_errors=True)
            if first_failure and any(r["outcome"] in ("failed", "error") for r in rows):
                break
        return rows, tail

    def check_clean(self, family: Family, stage: str, nodes: list[str]) -> None:
        """The clean library passes the selection, once per selection; else no mutant can be judged there."""
        key = (family.name, stage, tuple(nodes))
        if key in self._clean:
            return
        started = time.monotonic()
        rows, tail = self.run(LIBRARY, nodes, stage, first_failure=False)
        bad = [r for r in rows if r["outcome"] not in ("passed", "xfailed", "skipped")]
        if (not rows and stage != "concurrency") or bad:
            shown = "\n".join(f"  {r['test_id']}: {r['outcome']} {r['failure_class']} {r['message'][:200]}"
                              for r in bad[:10])
            hint = ("\n(a baseline that no longer matches lib_c: `python -m harness baseline update --run`; "
                    "or --no-perf-stage)" if stage == "perf" else "")
            raise SystemExit(f"the clean library fails the {stage} stage of {family.name} "
                             f"({len(bad)} of {len(rows)} variants), so no mutant can be judged there:\n"
                             f"{shown or tail}{hint}")
        self._clean[key] = len(rows)
        self.setup_seconds += time.monotonic() - started
        print(f"    clean {family.name} {stage}: {len(rows)} variants passed, {time.monotonic() - started:.0f} s",
              flush=True)


def _pass_name(target: str, order: str, sanitize: str | None, stage: str) -> str:
    """free, reverse, free+thread; qemu:reverse for a pass on another target than its stage's."""
    return ("" if target == STAGE_TARGET[stage] else f"{target}:") + order + (f"+{sanitize}" if sanitize else "")


def _environment(order: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "PTL_TEAM_ORDER", "PTL_SHARD"))}
    if order != "free":
        env["PTL_TEAM_ORDER"] = order
    return env


def judge(suite: Suite, mutant: Mutant, family: Family, scratch: Path) -> Outcome:
    """Runs the stages on a copy of lib_c with the mutant in it, until one kills it."""
    library = scratch / "lib"
    shutil.copytree(LIBRARY, library)
    source = library / "sources" / mutant.file
    source.write_text(mutant.apply(source.read_text()))
    built: set[Path] = set()
    started, setup = time.monotonic(), suite.setup_seconds
    outcome = Outcome("survived")
    try:
        for stage in suite.stages:
            nodes = suite.selection(family, stage, mutant.file)
            suite.check_clean(family, stage, nodes)
            rows, tail = suite.run(library, nodes, stage, first_failure=True, built=built)
            outcome.variants += len(rows)
            failed = [r for r in rows if r["outcome"] in ("failed", "error")]
            classes = sorted({r["failure_class"] or r["outcome"] for r in failed})
            if not rows and stage != "concurrency":
                outcome = Outcome("not judged", stage, note="no report: " + tail.strip().splitlines()[-1][:200]
                                  if tail.strip() else "no report", variants=outcome.variants)
                break
            if failed and set(classes) <= {"build"}:
                outcome = Outcome("stillborn", stage, classes, outcome.variants,
                                  note=failed[0]["message"].splitlines()[0][:160] if failed[0]["message"] else "")
                break
            if failed and set(classes) <= NOT_KILLS:
                outcome = Outcome("not judged", stage, classes, outcome.variants, note=failed[0]["message"][:200])
                break
            if failed:
                passes = sorted({r["pass_"] for r in failed})
                first = failed[0]
                said = (first["message"] or "").strip().splitlines() or [""]
                outcome = Outcome("killed", stage, classes, outcome.variants,
                                  note="" if passes == ["free"] else ", ".join(passes),
                                  evidence=f"{first['test_id']} ({first['pass_']}): {said[0][:300]}")
                break
    finally:
        for entry in built:     # the mutant's runners and library copy: no later run asks for them
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
        shutil.rmtree(library, ignore_errors=True)
    outcome.seconds = time.monotonic() - started - (suite.setup_seconds - setup)
    return outcome


# ---- the report ---------------------------------------------------------------------------------------------

def summary(results: list[tuple[Mutant, Family, Outcome]], reviews: dict) -> tuple[str, int, int]:
    """The per-family table, the survivors with their class, the overall kill
    rate; and (killed, gaps) overall."""
    table = defaultdict(lambda: defaultdict(int))
    survivors = []
    for mutant, family, outcome in results:
        row = table[family.name]
        row["mutants"] += 1
        if outcome.verdict == "survived":
            review = reviews.get(mutant.key)
            cls = review.cls if review else "unreviewed"
            row[cls if cls in NOT_BUGS else "gaps"] += 1
            survivors.append((cls, family.name, mutant, review))
        else:
            row[{"killed": "killed", "stillborn": "stillborn"}.get(outcome.verdict, "not judged")] += 1
    columns = ["mutants", "killed", "equivalent", "lawful", "gaps", "stillborn", "not judged"]
    lines = [f"{'family':14}" + "".join(f"{c:>12}" for c in columns) + f"{'kill rate':>11}"]
    totals = defaultdict(int)
    for family in FAMILIES:
        if family.name not in table:
            continue
        row = table[family.name]
        for c in columns:
            totals[c] += row[c]
        judged = row["killed"] + row["gaps"]
        lines.append(f"{family.name:14}" + "".join(f"{row[c]:12}" for c in columns)
                     + (f"{row['killed'] / judged:>11.0%}" if judged else f"{'-':>11}"))
    judged = totals["killed"] + totals["gaps"]
    lines.append(f"{'all':14}" + "".join(f"{totals[c]:12}" for c in columns)
                 + (f"{totals['killed'] / judged:>11.1%}" if judged else f"{'-':>11}"))
    lines.append("")
    lines.append(f"kill rate: {totals['killed']} of {judged} non-equivalent"
                 f"{', non-lawful' if totals['lawful'] else ''} mutants "
                 f"({totals['killed'] / judged:.1%})" if judged else "kill rate: no mutant judged")
    lines.append(f"{totals['equivalent']} equivalent, "
                 + (f"{totals['lawful']} lawful (the page allows what they change), " if totals["lawful"] else "")
                 + f"{totals['stillborn']} stillborn (do not compile; not counted)"
                 + (f", {totals['not judged']} not judged" if totals["not judged"] else ""))
    lines.append("")
    lines.append(f"survivors ({len(survivors)}; class, family, id, where, mutation):")
    order = {"unreviewed": 0, "gap": 1, "lawful": 2, "equivalent": 3}
    for cls, name, mutant, review in sorted(survivors, key=lambda s: (order[s[0]], s[1], s[2].file, s[2].lineno)):
        lines.append(f"  {cls:10} {name:14} {mutant.id} {mutant.file}:{mutant.lineno} {mutant.operator}: "
                     f"{mutant.line!r} -> {mutant.mutated!r}")
        if review and review.reason:
            lines.append(f"             {review.reason}")
    return "\n".join(lines), totals["killed"], totals["gaps"]


def read_csv(path: Path, everything: dict[str, Mutant]) -> list[tuple[Mutant, Family, Outcome]]:
    """The results a run wrote (write_csv), for --combine; a mutant whose
    source line has changed since is an error naming it."""
    results = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["id"] not in everything:
                raise SystemExit(f"{path}: mutant {row['id']} ({row['file']}:{row['lineno']}) no longer exists: "
                                 f"its source changed since that run")
            mutant = everything[row["id"]]
            results.append((mutant, family_of(mutant.file),
                            Outcome(row["verdict"], row["stage"], row["failure_classes"].split(),
                                    int(row["variants"] or 0), float(row["seconds"] or 0), row["passes"],
                                    row.get("evidence", ""))))
    return results


def write_csv(path: Path, results: list[tuple[Mutant, Family, Outcome]], reviews: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["id", "family", "file", "lineno", "operator", "occurrence", "line", "mutated", "verdict",
                      "class", "stage", "failure_classes", "passes", "variants", "seconds", "evidence"])
        for mutant, family, o in results:
            review = reviews.get(mutant.key)
            cls = (review.cls if review else "unreviewed") if o.verdict == "survived" else ""
            out.writerow([mutant.id, family.name, mutant.file, mutant.lineno, mutant.operator, mutant.occurrence,
                          mutant.line, mutant.mutated, o.verdict, cls, o.stage, " ".join(o.classes), o.note,
                          o.variants, f"{o.seconds:.1f}", o.evidence])


def choose(args, by_family: dict[str, list[Mutant]], reviews: dict) -> tuple[list[Mutant], str]:
    """The mutants a run asks for (--only, --family, --reviewed, else the
    seeded sample), each once, and how to say which."""
    everything = {m.id: m for ms in by_family.values() for m in ms}
    if not (args.only or args.reviewed or args.family):
        chosen = stratified_sample(by_family, args.sample, args.seed)
        return chosen, (f"{len(chosen)} sampled (seed {args.seed}) over "
                        f"{len({family_of(m.file).name for m in chosen})} families")
    unknown = [i for i in args.only or [] if i not in everything]
    if unknown:
        raise SystemExit(f"no mutant has the id {', '.join(unknown)}; `--list` counts the sites, and the "
                         f"progress lines print each mutant's id")
    names = [f.name for f in FAMILIES]
    strangers = [name for name in args.family or [] if name not in names]
    if strangers:
        raise SystemExit(f"no family is called {', '.join(strangers)}; the families: {', '.join(names)}")
    picked = [everything[i] for i in args.only or []]
    picked += [m for name in args.family or [] for m in by_family.get(name, [])]
    picked += [m for m in everything.values() if args.reviewed and m.key in reviews]
    chosen = list({m.id: m for m in picked}.values())   # each once, in the order asked
    return chosen, f"{len(chosen)} chosen mutants"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sample", type=int, default=160, help="mutants to run (default 160)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", nargs="+", metavar="ID", help="run these mutants (ids as printed)")
    parser.add_argument("--family", nargs="+", metavar="NAME",
                        help="run every mutant of these families (names as --list prints them)")
    parser.add_argument("--reviewed", action="store_true", help="run every mutant of the survivors file")
    parser.add_argument("--list", action="store_true", help="print the sites per family and exit")
    parser.add_argument("--combine", nargs="+", type=Path, metavar="CSV",
                        help="print one summary of the results of runs that each ran a part of a sample "
                             "(--only), each mutant once, and exit")
    parser.add_argument("--ptl-cache", type=Path, default=cache_layout.default_root().with_name("ptl-mutants"),
                        help="the harness cache the mutants' runs share, apart from the user's (default: ptl-mutants "
                             "beside the harness cache, .cache/ptl-mutants unless PTL_CACHE_DIR moves it)")
    parser.add_argument("--run-timeout", type=float, default=30, help="seconds per runner invocation (default 30)")
    parser.add_argument("--no-perf-stage", action="store_true",
                        help="leave out the perf stage (QEMU with the performance gate): host stages only")
    parser.add_argument("--perf-threshold", type=float, default=0.10,
                        help="the growth of a variant's instructions that the perf stage kills (default 0.10)")
    parser.add_argument("--csv", type=Path, default=ROOT / "reports" / "bench" / "mutation_score.csv",
                        help="one row per mutant (default reports/bench/mutation_score.csv)")
    args = parser.parse_args(argv)
    reviews = load_reviews()
    by_family = all_mutants()
    everything = {m.id: m for ms in by_family.values() for m in ms}
    for key, why in stale_reviews(reviews, list(everything.values())).items():
        print(f"warning: {REVIEW.name}: a review of {key} no longer holds, so it is left out: {why}",
              file=sys.stderr)
        del reviews[key]
    if args.list:
        for family in FAMILIES:
            mutants = by_family.get(family.name, [])
            print(f"{family.name:14} {len(mutants):5} sites in {', '.join(sorted({m.file for m in mutants}))}")
        print(f"{'all':14} {len(everything):5}")
        return 0
    if args.combine:
        results = [result for path in args.combine for result in read_csv(path, everything)]
        repeated = sorted(mutant_id for mutant_id, n in Counter(m.id for m, _, _ in results).items() if n > 1)
        if repeated:
            raise SystemExit(f"mutants in more than one of the files: {', '.join(repeated)}")
        print(f"{len(results)} mutants from {len(args.combine)} runs\n\n" + summary(results, reviews)[0])
        return 0
    chosen, what = choose(args, by_family, reviews)
    print(f"{len(everything)} mutation sites in lib_c/sources; running {what}", flush=True)
    started = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="ptl-mutscore-"))
    suite = Suite(args.ptl_cache, workdir, args.run_timeout,
                  tuple(s for s in STAGES if not (args.no_perf_stage and s == "perf")), args.perf_threshold)
    results = []
    try:
        for n, mutant in enumerate(chosen, 1):
            family = family_of(mutant.file)
            scratch = Path(tempfile.mkdtemp(prefix="mutant-", dir=workdir))
            outcome = judge(suite, mutant, family, scratch)
            shutil.rmtree(scratch, ignore_errors=True)
            results.append((mutant, family, outcome))
            said = outcome.verdict + (f" at {outcome.stage}" if outcome.stage else "")
            said += f" ({', '.join(outcome.classes)}{'; ' + outcome.note if outcome.note else ''})" \
                if outcome.classes or outcome.note else ""
            if outcome.verdict == "survived":
                review = reviews.get(mutant.key)
                said = "SURVIVED, " + (review.cls if review else "unreviewed")
            print(f"[{n}/{len(chosen)}] {family.name:14} {mutant.id} {mutant.file}:{mutant.lineno} "
                  f"{mutant.operator}: {mutant.line[:70]!r} -> {said}; {outcome.variants} variants, "
                  f"{outcome.seconds:.0f} s", flush=True)
            if outcome.evidence:
                print(f"    {outcome.evidence}", flush=True)
    except KeyboardInterrupt:
        print(f"interrupted after {len(results)} mutants", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    killed_reviewed = [m for m, _, o in results if o.verdict == "killed" and m.key in reviews]
    text, _, _ = summary(results, reviews)
    print("\n" + text)
    for mutant in killed_reviewed:
        print(f"note: {mutant.id} ({mutant.file}:{mutant.lineno} {mutant.operator}) is reviewed as "
              f"{reviews[mutant.key].cls} but was killed: remove its entry from {REVIEW.name}")
    print(f"\nwall time {time.monotonic() - started:.0f} s; one row per mutant in {args.csv}")
    write_csv(args.csv, results, reviews)
    return 0


if __name__ == "__main__":
    sys.exit(main())
