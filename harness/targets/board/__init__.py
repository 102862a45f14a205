"""The board target: the runner firmware on boards reached over serial.

Flash once, run many. The runner is built once per configuration as a
board firmware (for the virtual board: the QEMU runtime with its payload
and console on the UART, targets/board/runtime/). Each board of the inventory is
flashed with it the first time it runs a case of that build, through the
board's flash command. Every case then goes over the serial link
(harness/board/link.py): payload in, console output back, all in framed,
CRC-checked, acknowledged chunks. The records that come back are those of
every other target, checked the same way.

A board that stops answering is reset through its reset command, and power
cycled when the reset does not bring it back (or it has no reset command).
A failure of the board or its link (transport, load, a board that does not
come back) is retried on another board, up to `attempts` boards; a result
that arrived whole is never retried, so a numeric failure stays one. A
board that fails `quarantine_after` times in a row is quarantined for the
session (harness/board/farm.py), unless it passes the health check asked
at the failure that would quarantine it: a noisy cable's run of bad luck
does not take a working board out.

A case that runs past its timeout is not, by itself, the board's fault: a
library that hangs in one kernel would otherwise time out on every board
and quarantine a healthy farm. So the board is reset, the console output of
the hung run is read back (the board keeps it across the reset), and the
board runs a known-good health payload (the runner's describe payload,
which calls no library code). A board that passes is healthy: the case is
`timeout`, with the variants that finished before the hang kept, as on
qemu; it is not retried, and the board's failure count is not touched.
Only a board that fails the health check counts the failure, and the case
goes to another board.

Each case's result carries its delivery: the attempts, the boards, and the
classes of the attempts that failed (RawRun.delivery, the report's
attempts, boards and failed_attempts columns).

Options are constructor keywords: inventory, state_dir (the session's
state directory), attempts, quarantine_after, tags and answer_timeout.
options_from_environment reads them from PTL_BOARDS, PTL_BOARD_STATE,
PTL_BOARD_ATTEMPTS, PTL_BOARD_QUARANTINE_AFTER, PTL_BOARD_TAGS and
PTL_BOARD_ANSWER_TIMEOUT, which a pytest run's controller sets from its
options and its session (harness/board/pytest_board.py) and its xdist
workers inherit.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from harness import failures
from harness.board import drivers
from harness.board.drivers import BoardFault
from harness.board.farm import BoardFarm, Lease
from harness.board.inventory import Board, InventoryError, load
from harness.board.link import BoardLink, LinkBroken, LinkError, LinkTimeout, PayloadTooBig
from harness.build_units import UnitReport
from harness.failures import CaseFailure
from harness.option_values import env_number, from_env, given
from harness.delivery import check as check_delivery, options_from_environment as delivery_options
from harness.payload import payload_crc
from harness.payload import encode_payload
from harness.protocol import TransportError, decode_records
from harness.runner_contract import DESCRIBE_OP
from harness.target import BuildConfig, BuildError, Capabilities, RawRun, Target
from harness.targets import qemu

BOARD_RUNTIME = Path(__file__).resolve().parent / "runtime"
# The virtual board's payload delivery, in place of QEMU's loader: the serial link.
VIRTUAL_SOURCES = sorted(BOARD_RUNTIME.glob("*.c"))
BOARD_FLAGS = [f"-I{BOARD_RUNTIME}"]
PING_TRIES = 3          # answers missed before the board counts as hung and is reset
BOOT_TRIES = 15         # answers awaited after a reset or a power cycle
HEALTH_TIMEOUT = 60.0   # for the health payload to finish
ATTEMPTS = 3            # boards a case may try
QUARANTINE_AFTER = 3    # consecutive failures that quarantine a board
ANSWER_TIMEOUT = 1.0    # seconds the link waits for each answer


def farm_options_from_environment(environ: Mapping[str, str]) -> dict:
    """The farm's keyword arguments of BoardTarget from the environment:
    inventory from PTL_BOARDS, state_dir from PTL_BOARD_STATE, attempts from
    PTL_BOARD_ATTEMPTS, quarantine_after from PTL_BOARD_QUARANTINE_AFTER,
    tags from PTL_BOARD_TAGS (comma-separated), answer_timeout from
    PTL_BOARD_ANSWER_TIMEOUT (unset or empty: the default). A bad number is
    an OptionValueError. The pytest plugin checks these whatever the target."""
    count = "a whole number of at least 1"
    return given({
        "inventory": from_env("PTL_BOARDS", None, lambda name, text: Path(text), environ),
        "state_dir": from_env("PTL_BOARD_STATE", None, lambda name, text: Path(text), environ),
        "attempts": env_number("PTL_BOARD_ATTEMPTS", None, count, environ, integer=True, minimum=1),
        "quarantine_after": env_number("PTL_BOARD_QUARANTINE_AFTER", None, count, environ, integer=True, minimum=1),
        "tags": from_env("PTL_BOARD_TAGS", None, lambda name, text: [tag for tag in text.split(",") if tag], environ),
        "answer_timeout": env_number("PTL_BOARD_ANSWER_TIMEOUT", None, "a positive number of seconds", environ,
                                     above=0)})


def options_from_environment(environ: Mapping[str, str]) -> dict:
    """BoardTarget's keyword arguments from the environment: the farm's, and
    the payload delivery (PTL_PAYLOAD_DELIVERY: serial only)."""
    return {**farm_options_from_environment(environ), **delivery_options(environ, DELIVERIES)}


# Every payload goes over the serial link; a firmware per case is not built.
DELIVERIES = ("serial",)


class BoardTarget(Target):
    name = "board"

    def __init__(self, inventory: Path | None = None, state_dir: Path | None = None, attempts: int = ATTEMPTS,
                 quarantine_after: int = QUARANTINE_AFTER, tags: list[str] | None = None,
                 answer_timeout: float = ANSWER_TIMEOUT, delivery: str = "serial"):
        self.inventory_path = inventory
        self.attempts = attempts
        self.answer_timeout = answer_timeout
        tags = tags or []
        self.qemu = qemu.QemuTarget()    # the virtual board's firmware is QEMU's build; its run options do not matter
        self.problem: str | None = None
        self.boards: list[Board] = []
        self.platform = "qemu-virt"
        self._identities: dict[Path, str] = {}
        if not self.inventory_path:
            self.problem = "no board inventory: give --boards FILE.toml (or PTL_BOARDS); see the README's Board farm"
        else:
            try:
                inventory = load(Path(self.inventory_path))
                self.boards = inventory.select(tags)
                if inventory.labgrid is not None and not inventory.boards:
                    self.problem = (f"{self.inventory_path} takes its boards from labgrid: run it through pytest "
                                    f"(--boards), which reserves and acquires the places first")
                elif not self.boards:
                    self.problem = f"{self.inventory_path}: no board has all the tags {tags}"
            except InventoryError as exc:
                self.problem = str(exc)
        platforms = sorted({b.platform for b in self.boards})
        if len(platforms) > 1:
            self.problem = (f"{self.inventory_path}: boards of several platforms ({', '.join(platforms)}); one run "
                            f"uses one firmware: select boards with --board-tags")
        elif platforms:
            self.platform = platforms[0]
        unit = self.boards[0].counter_unit if self.boards else "cycles"
        formats = self.qemu.capabilities.fp16_formats if self.platform == "qemu-virt" else ("fp16",)
        self.capabilities = Capabilities(
            fp16_formats=formats, max_cores=min((b.max_cores for b in self.boards), default=8),
            counter_unit=unit, payload_delivery=check_delivery(self.name, delivery, DELIVERIES),
            l1_bytes=min((b.l1_bytes for b in self.boards), default=64 * 1024))
        self._farm: BoardFarm | None = None
        self._quarantine_after = quarantine_after
        self._state_dir = state_dir

    @property
    def farm(self) -> BoardFarm:
        if self._farm is None:
            state = self._state_dir or tempfile.mkdtemp(prefix="ptl-board-state-")
            self._farm = BoardFarm(self.boards, Path(state), quarantine_after=self._quarantine_after)
        return self._farm

    # ---- what it needs -----------------------------------------------------------

    def unavailable_reason(self) -> str | None:
        if self.problem:
            return self.problem
        if self.platform == "qemu-virt" and self.qemu.unavailable_reason():
            return self.qemu.unavailable_reason()
        missing = [f"board {b.name}: field {m}" for b in self.boards for m in drivers.missing(b)]
        if missing:
            return "board drivers that cannot work here: " + "; ".join(missing)
        return None

    # ---- build ----------------------------------------------------------------------

    def build_material(self, config: BuildConfig) -> dict:
        return {**self.qemu.build_material(config), "target": self.name, "platform": self.platform,
                "board_flags": BOARD_FLAGS}

    def toolchain_fingerprint(self) -> dict[str, str]:
        """The firmware's compilers; the board, not QEMU, makes the counts."""
        return {tool: version for tool, version in self.qemu.toolchain_fingerprint().items() if tool != "qemu"}

    def source_roots(self, config: BuildConfig) -> list[Path]:
        return [*self.qemu.source_roots(config), BOARD_RUNTIME]

    def compiler_choice(self, config: BuildConfig):
        return self.qemu.compiler_choice(config)   # the virtual board's firmware is QEMU's build

    def build(self, config: BuildConfig, outdir: Path, embedded_payload: Path | None = None) -> UnitReport:
        if embedded_payload is not None:
            raise BuildError("the board target sends each payload over the serial link; it builds no firmware "
                             "with a payload compiled in")
        if self.platform != "qemu-virt":
            raise BuildError(f"this checkout builds board firmware for the virtual board (qemu-virt) only; a "
                             f"{self.platform} firmware needs the runner's board link (targets/board/runtime/board_link.c) "
                             f"on the SDK's UART, built with the PULP-SDK")
        return self.qemu.build_firmware(config, outdir, VIRTUAL_SOURCES, BOARD_FLAGS)

    # ---- run ------------------------------------------------------------------------

    def run(self, artefact: Path, payload: bytes | None, timeout: float, workdir: Path,
            case_id: str = "") -> RawRun:
        if payload is None:
            raise CaseFailure(failures.LOAD, "the board target streams each payload; it runs no compiled-in payload")
        if self.problem:
            raise CaseFailure(failures.LOAD, self.problem)
        firmware = Path(artefact) / qemu.ELF_NAME
        identity = self._identity(firmware)
        faults: list[BoardFault] = []
        notes: list[str] = []
        avoid: set[str] = set()
        boards: list[str] = []
        for attempt in range(1, self.attempts + 1):
            try:
                with self.farm.lease(avoid, prefer=identity) as lease:
                    boards.append(lease.board.name)
                    try:
                        raw = self._attempt(lease, firmware, identity, payload, timeout)
                    except BoardFault as fault:
                        faults.append(fault)
                        notes.append(f"attempt {attempt} on board {lease.board.name}: [{fault.kind}] "
                                     f"{fault.message}")
                        if lease.failed(fault.kind, fault.message, self._checker(lease, fault)):
                            notes.append(f"board {lease.board.name} is quarantined for this session "
                                         f"({self.farm.quarantine_after} failures in a row)")
                        avoid.add(lease.board.name)
                        continue
                    lease.succeeded()
            except CaseFailure as failure:      # every board quarantined, or a case that does not fit
                failure.delivery = _delivery(boards, faults)
                raise
            if notes:
                raw.stderr += ("ptl board: retried after a board fault:\n  " + "\n  ".join(notes) + "\n").encode()
            raw.delivery = _delivery(boards, faults)
            return raw
        failure = CaseFailure(faults[-1].kind, f"failed on {len(faults)} board attempt(s):\n  " + "\n  ".join(notes))
        failure.delivery = _delivery(boards, faults)
        raise failure

    def _identity(self, firmware: Path) -> str:
        if firmware not in self._identities:
            try:
                self._identities[firmware] = hashlib.sha256(firmware.read_bytes()).hexdigest()[:16]
            except OSError as exc:
                raise CaseFailure(failures.LOAD, f"cannot read the firmware {firmware}: {exc.strerror}") from None
        return self._identities[firmware]

    def _attempt(self, lease: Lease, firmware: Path, identity: str, payload: bytes, timeout: float) -> RawRun:
        board = lease.board
        if lease.flashed != identity:
            lease.flashed = None        # a flash that fails half way leaves nothing known
            drivers.flasher(board).flash(firmware)
            lease.flashed = identity
            lease.note("flash", firmware=identity)
        start = time.monotonic()
        link = BoardLink(drivers.open_console(board), answer_timeout=self.answer_timeout)
        try:
            self._wake(lease, link)
            try:
                link.send_payload(payload)
            except PayloadTooBig as exc:
                raise CaseFailure(failures.NOT_FIT, f"board {board.name}: {exc}") from None
            try:
                finished = link.wait_finished(timeout)
            except LinkTimeout:
                return self._after_hang(lease, link, payload, timeout, start)
            output = link.fetch_output(finished)
            link.done()
        except LinkTimeout as exc:
            raise BoardFault(failures.TIMEOUT, f"board {board.name} stopped answering: {exc}") from None
        except LinkBroken as exc:
            raise BoardFault(failures.TRANSPORT, f"board {board.name}: {exc}") from None
        except LinkError as exc:
            raise BoardFault(failures.TRANSPORT, f"board {board.name}: {exc}") from None
        finally:
            _close(link.port)
        lease.note("run", pid=os.getpid(), crc=payload_crc(payload), resends=link.stats.resends,
                   damaged=link.stats.damaged, timeouts=link.stats.timeouts)
        if finished.overflowed:
            raise CaseFailure(failures.NOT_FIT, f"board {board.name}: the case's console output overflowed the "
                                                f"firmware's output buffer ({len(output)} bytes kept)")
        try:   # only output that answers this payload counts; anything else is the board's fault
            decode_records(output, payload_crc(payload))
        except TransportError as exc:
            raise BoardFault(failures.TRANSPORT, f"board {board.name}: its records do not check: {exc}") from None
        return RawRun(output, b"", finished.status, seconds=time.monotonic() - start)

    def _wake(self, lease: Lease, link: BoardLink) -> None:
        """PING until READY; a board that does not answer is reset (or power
        cycled) and given time to boot, on its console reopened. The link's
        own number of tries holds again after."""
        tries = link.attempts
        link.attempts = PING_TRIES
        try:
            link.ping()
            return
        except LinkTimeout:
            pass
        except LinkBroken as exc:
            raise BoardFault(failures.TRANSPORT, f"board {lease.board.name}: {exc}") from None
        finally:
            link.attempts = tries
        self._recover(lease, link, f"no answer to {PING_TRIES} pings")

    def _after_hang(self, lease: Lease, link: BoardLink, payload: bytes, timeout: float, start: float) -> RawRun:
        """The case ran past its timeout. Reset the board, read back what the
        run wrote before it hung, and check the board with the health
        payload: a healthy board gives the case `timeout` (the run's
        records so far are kept); a sick one is a BoardFault."""
        board = lease.board
        seconds = time.monotonic() - start
        self._recover(lease, link, f"no result within {timeout:g} s")
        try:
            leftover = link.fetch_leftover(payload_crc(payload)) or b""
        except LinkError:
            leftover = b""      # nothing kept, or not readable: the variants are then all `timeout`
        sick = self._health_check(link)
        if sick:
            raise BoardFault(failures.TIMEOUT, f"board {board.name}: no result within {timeout:g} s, and after "
                                               f"a reset it failed the health check: {sick}", checked=True)
        lease.note("hang", seconds=round(seconds, 3), kept=len(leftover))
        return RawRun(leftover, f"ptl board: board {board.name} ran the case past {timeout:g} s; it was reset "
                                f"and passed the health check, so the case hangs, not the board\n".encode(),
                      None, timed_out=True, seconds=seconds)

    def _checker(self, lease: Lease, fault: BoardFault):
        """The health check to ask before a link or timeout fault quarantines
        the board (None: no check). A failed flash is the board's for sure,
        and a fault that came from a health check was one already."""
        if fault.kind not in (failures.TRANSPORT, failures.TIMEOUT) or fault.checked:
            return None

        def healthy() -> bool:
            try:
                port = drivers.open_console(lease.board)
            except BoardFault:
                return False
            link = BoardLink(port, answer_timeout=self.answer_timeout)
            try:
                link.attempts = BOOT_TRIES
                return self._health_check(link) is None
            finally:
                _close(link.port)
        return healthy

    def _health_check(self, link: BoardLink) -> str | None:
        """Runs the known-good health payload (the runner's describe payload:
        no library code). None when the board answers it whole and right,
        else what went wrong."""
        payload = encode_payload(DESCRIBE_OP, [], [], [])
        try:
            link.ping()
            link.send_payload(payload)
            finished = link.wait_finished(HEALTH_TIMEOUT)
            output = link.fetch_output(finished)
            link.done()
            run = decode_records(output, payload_crc(payload))
        except (LinkError, TransportError) as exc:
            return str(exc)
        if finished.status != 0 or not run.descriptions:
            return f"the health payload ended with status {finished.status} and {len(run.descriptions)} records"
        return None

    def _recover(self, lease: Lease, link: BoardLink, why: str) -> None:
        """Brings a board that stopped answering back: its reset command
        first, then a power cycle when the reset did not do it (or there is
        no reset command). The link's port is reopened after each."""
        board = lease.board
        steps = [(name, driver) for name, driver in (("reset", drivers.resetter(board)),
                                                     ("power", drivers.power_switch(board))) if driver]
        if not steps:
            raise BoardFault(failures.TIMEOUT, f"board {board.name} stopped answering ({why}) and has neither a "
                                               f"reset nor a power command in the inventory")
        tries = link.attempts
        try:
            for step, driver in steps:
                lease.note(step, why=why)
                if step == "reset":
                    driver.reset()
                else:
                    driver.power(False)
                    driver.power(True)
                _close(link.port)
                link.reopen(drivers.open_console(board))
                link.attempts = BOOT_TRIES
                try:
                    link.ping()
                    return
                except LinkTimeout:
                    why = f"a {'reset' if step == 'reset' else 'power cycle'} did not bring it back"
                except LinkBroken as exc:
                    raise BoardFault(failures.TRANSPORT, f"board {board.name}: {exc}") from None
        finally:
            link.attempts = tries
        done = " and ".join({"reset": "a reset", "power": "a power cycle"}[s] for s, _ in steps)
        raise BoardFault(failures.TIMEOUT, f"board {board.name} stopped answering, and {done} did not bring it "
                                           f"back", checked=True)


def _delivery(boards: list[str], faults: list[BoardFault]) -> dict:
    """What the report says of a case's delivery: attempts, boards, and the classes of the failed attempts."""
    return {"attempts": len(boards), "boards": " ".join(boards),
            "failed_attempts": " ".join(f.kind for f in faults)}


def _close(port) -> None:
    try:
        port.close()
    except Exception:   # a port that died may fail to close; it is gone either way
        pass


TARGET_CLASS = BoardTarget
