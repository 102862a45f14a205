"""Command line: python -m harness {regress,autotune,merge,baseline,toolchain,boards,cache} ...

  regress    run the regression suite (pytest on suite/) and write reports/
  autotune   tune the tiles, kernels and cores of a network's layers (harness/autotune/cli.py)
  merge      join the reports of the shards of one run (harness/merge.py)
  baseline   rewrite the performance gate's baseline (harness/perf_gate.py),
             or compare two (harness/baseline_compare.py)
  toolchain  check the embedded toolchain, and install what is missing
  boards     serve virtual boards, check a board inventory (harness/board/cli.py)
  cache      what the cache holds; prune what no run has used lately (harness/cache_prune.py)
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def regress(args: argparse.Namespace, extra: list[str]) -> int:
    argv = [str(ROOT / "suite"), "--target", args.target, "--reports-dir", args.reports_dir,
            "-n", args.workers, "-q", "-p", "no:randomly",
            # harness is imported before pytest starts; nothing of it needs rewriting.
            "-W", "ignore::pytest.PytestAssertRewriteWarning", *extra]
    if args.trainlib:
        argv += ["--trainlib", args.trainlib]
    return pytest.main(argv)


def toolchain(args: argparse.Namespace, extra: list[str]) -> int:
    if args.target == "gvsoc":
        from harness.option_values import OptionValueError
        from harness.targets import make_target
        try:
            reason = make_target("gvsoc").gvsoc_reason()   # where the environment (PTL_GVSOC) says, else PATH
        except OptionValueError as exc:
            reason = str(exc)
        if reason:
            print(f"toolchain: {reason}", file=sys.stderr)
            return 1
    try:
        module = importlib.import_module("harness.toolchain")
    except ImportError:
        print("the embedded toolchain check is not part of this checkout yet; only the host target exists")
        return 0
    from harness.targets.qemu import smoke_test
    return module.main(["--install"] if args.install else [], smoke_test=smoke_test)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["autotune"]:   # its own parser: python -m harness autotune --help
        from harness.autotune.cli import main as autotune
        return autotune(argv[1:])
    if argv[:1] == ["merge"]:      # its own parser too: python -m harness merge --help
        from harness.merge import main as merge
        return merge(argv[1:])
    if argv[:2] == ["baseline", "compare"]:   # python -m harness baseline compare --help
        from harness.baseline_compare import main as compare
        return compare(argv[2:])
    if argv[:1] == ["baseline"]:   # python -m harness baseline update --help
        from harness.perf_gate import main as baseline
        return baseline(argv[1:])
    if argv[:1] == ["verdicts"]:   # python -m harness verdicts --help
        from harness.verdict_compare import main as verdicts
        return verdicts(argv[1:])
    if argv[:1] == ["cache"]:      # python -m harness cache [prune] --help
        from harness.cache_prune import main as cache
        return cache(argv[1:])
    if argv[:1] == ["boards"]:     # python -m harness boards {serve,check,control} --help
        from harness.board.cli import main as boards
        return boards(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m harness", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("regress", help="run the regression suite; extra args go to pytest")
    run.add_argument("--target", default=os.environ.get("PTL_TARGET", "auto"))
    run.add_argument("--trainlib", default=None, help="library under test (default lib_c/)")
    run.add_argument("--reports-dir", default=str(ROOT / "reports"))
    run.add_argument("-n", dest="workers", default="auto", help="pytest-xdist workers")
    run.set_defaults(handler=regress)
    sub.add_parser("autotune", help="tune tiles x kernels x cores of a network's layers (see autotune --help)")
    sub.add_parser("merge", help="join the reports of the shards of one run (see merge --help)")
    sub.add_parser("baseline", help="rewrite the performance gate's baseline, or compare two "
                                    "(see baseline update --help, baseline compare --help)")
    sub.add_parser("verdicts", help="which variants changed verdict between two runs (see verdicts --help)")
    sub.add_parser("boards", help="virtual boards, inventory checks, board control (see boards --help)")
    sub.add_parser("cache", help="what the cache holds; prune what no run has used lately (see cache --help)")
    tools = sub.add_parser("toolchain", help="check (and with --install, install) the RISC-V toolchain")
    tools.add_argument("--install", action="store_true")
    tools.add_argument("--target", choices=("qemu", "gvsoc"), default="qemu",
                       help="gvsoc: check for GVSOC first (scripts/install-gvsoc.sh), before any install")
    tools.set_defaults(handler=toolchain)
    args, extra = parser.parse_known_args(argv)
    return args.handler(args, extra)


if __name__ == "__main__":
    sys.exit(main())
