"""python -m harness boards {serve,check,control} ...

  serve    start N virtual boards (QEMU behind a UART socket, or behind ser2net
           over RFC 2217), flash them with the runner firmware of lib_c, write
           their inventory, and keep them up until Ctrl-C
  check    validate an inventory and probe each board: its commands exist, its
           serial port opens, its firmware answers
  control  send one command to a virtual board's control server (what the
           virtual inventory's flash, reset and power templates run)
"""
from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from harness import cache_layout
from harness.board import drivers
from harness.board.drivers import BoardFault
from harness.board.fault_proxy import FaultSpec, FaultSpecError
from harness.board.inventory import InventoryError, load, write
from harness.board.link import BoardLink, LinkError
from harness.board.virtual import CONSOLES, BoardError, VirtualFarm, control

ROOT = Path(__file__).resolve().parent.parent.parent


def serve(args) -> int:
    try:
        faults = FaultSpec.parse(args.faults) if args.faults else None
    except FaultSpecError as exc:
        print(f"--faults: {exc}", file=sys.stderr)
        return 2
    farm = VirtualFarm(args.count, args.console, Path(args.workdir) if args.workdir else None, faults)
    try:
        farm.start()
    except BoardError as exc:
        print(f"ptl boards serve: {exc}", file=sys.stderr)
        return 1
    try:
        path = Path(args.inventory)
        text = write(farm.inventory(), path, f"{args.count} virtual boards from `python -m harness boards serve` "
                                             f"(console {args.console}); valid while it runs")
        print(text, end="")
        if not args.no_firmware:
            print(f"# flashing the runner firmware of {args.trainlib} onto every board ...", flush=True)
            firmware = build_firmware(path, Path(args.trainlib), Path(args.cache))
            for board in farm.boards:
                board.flash(firmware)
        print(f"# inventory written to {path}. Try:\n"
              f"#   python -m harness boards check {path}\n"
              f"#   python -m pytest suite/test_ops.py --family linalg --target board --boards {path} -n {args.count}\n"
              f"# Ctrl-C stops the boards.", flush=True)
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass
    except (BoardError, OSError) as exc:
        print(f"ptl boards serve: {exc}", file=sys.stderr)
        return 1
    finally:
        farm.stop()
    return 0


def build_firmware(inventory: Path, library: Path, cache: Path) -> Path:
    """The board firmware of a library (built through the build cache, like
    any run's), described on one of the boards."""
    from harness.session import Session
    from harness.targets.board import BoardTarget
    session = Session(BoardTarget(inventory=inventory), library, cache)
    return session.artefact_for("fp32").path / "runner.elf"


def check(args) -> int:
    try:
        inventory = load(Path(args.inventory))
    except InventoryError as exc:
        print(f"ptl boards check: {exc}", file=sys.stderr)
        return 1
    boards = inventory.select(args.tags.split(",") if args.tags else [])
    if inventory.labgrid is not None:
        print(f"labgrid: coordinator {inventory.labgrid['coordinator']}, reserves {inventory.labgrid['places']} "
              f"place(s) tagged {inventory.labgrid['reserve']} at the start of a run")
    bad = 0
    for board in boards:
        problems = [f"field {m}" for m in drivers.missing(board)]
        answer = ""
        try:
            port = drivers.open_console(board)
            try:
                link = BoardLink(port, attempts=args.tries)
                answer = f"firmware answers (payloads up to {link.ping()} bytes)"
            except LinkError as exc:
                answer = (f"the port opens, but nothing answers ({exc}): the runner firmware is flashed by the "
                          f"first run, or the board is hung (reset it)")
            finally:
                port.close()
        except BoardFault as exc:
            problems.append(exc.message.removeprefix(f"board {board.name}: "))
        status = "FAILED" if problems else "ok"
        bad += bool(problems)
        print(f"{board.name} ({board.platform}, {board.serial}): {status}" +
              "".join(f"\n  {p}" for p in problems) + (f"\n  {answer}" if answer else ""))
    print(f"{len(boards) - bad} of {len(boards)} board(s) reachable")
    return 1 if bad else 0


def control_command(args) -> int:
    try:
        answer = control(args.address, [args.board, *args.words])
    except BoardError as exc:
        print(f"board {args.board}: {exc}", file=sys.stderr)
        return 1
    if answer:
        print(answer)
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness boards", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("serve", help="start virtual boards until Ctrl-C")
    run.add_argument("--count", type=int, default=2)
    run.add_argument("--console", choices=CONSOLES, default="socket",
                     help="socket: QEMU's UART on a TCP socket; rfc2217: its pty exported by ser2net")
    run.add_argument("--inventory", default="boards.toml", help="where to write their inventory")
    run.add_argument("--faults", default=None, help="put a fault-injecting proxy in front of each board, e.g. "
                                                    "corrupt=1e-3,drop=1e-3,delay=0.01,disconnect=1e-4")
    run.add_argument("--workdir", default=None, help="QEMU logs and sockets (default: a temporary directory)")
    run.add_argument("--trainlib", default=str(ROOT / "lib_c"), help="library whose firmware to flash")
    run.add_argument("--cache", default=str(cache_layout.default_root()), help="the build cache")
    run.add_argument("--no-firmware", action="store_true", help="leave the boards blank (a run flashes them)")
    run.set_defaults(handler=serve)
    probe = sub.add_parser("check", help="validate an inventory and probe each board")
    probe.add_argument("inventory")
    probe.add_argument("--tags", default="", help="only boards with all these tags (comma-separated)")
    probe.add_argument("--tries", type=int, default=3, help="pings before a board counts as silent")
    probe.set_defaults(handler=check)
    ctl = sub.add_parser("control", help="one command to a virtual board: flash PATH, reset, power on|off, hang, wedge, status")
    ctl.add_argument("address", help="HOST:PORT of the control server")
    ctl.add_argument("board")
    ctl.add_argument("words", nargs="+")
    ctl.set_defaults(handler=control_command)
    args = parser.parse_args(argv)
    if args.command == "serve" and args.count < 1:
        parser.error("--count must be at least 1")
    return args.handler(args)
