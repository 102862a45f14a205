"""Virtual boards: the QEMU runtime running the board firmware, reachable only
through its UART, so that the whole serial path can be tried without
hardware.

Each board is a qemu-system-riscv32 whose UART is a TCP socket (console
"socket", socket://), or a pty, the board's "USB serial device", that
ser2net (Debian's) exports over RFC 2217 (console "rfc2217", rfc2217://),
the way board farms expose serial ports; console "pty" leaves the exporting
to someone else (a labgrid exporter runs its own ser2net). The pty stays the
same when QEMU restarts: a relay thread joins it to QEMU's UART socket.
Nothing else reaches the firmware: payloads go over that UART exactly as to
a real board.

Flash, reset and power are what a lab does with a probe and a relay. Here a
small control server answers them, and the inventory's argv templates call
it: `python -m harness boards control HOST:PORT BOARD flash FILE`. Flashing
copies the ELF and restarts QEMU with it; reset is QEMU's system_reset (the
ELF is reloaded, as a board reboots from flash); power off stops QEMU. `hang`
pauses the machine: a board that stops answering, for the tests.

`python -m harness boards serve` runs a VirtualFarm until Ctrl-C; the tests
start one in-process.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import select
import shutil
import signal
import socket
import socketserver
import subprocess
import tempfile
import threading
import time
import tty
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from harness import toolchain
from harness.child_process import die_with_parent
from harness.board.fault_proxy import FaultProxy, FaultSpec
from harness.board.inventory import Board, DriverSpec
from harness.targets.qemu import ELF_NAME, MANIFEST_NAME, cpu_option

CONSOLES = ("socket", "rfc2217", "pty")
START_TIMEOUT = 20.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_listening(port: int, timeout: float, process: subprocess.Popen | None = None) -> bool:
    """Waits until something accepts on 127.0.0.1:port (without keeping the connection)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if process is not None and process.poll() is not None:
            return False
        with socket.socket() as sock:
            sock.settimeout(0.5)
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.05)
    return False


class BoardError(Exception):
    """A control command failed; the message says why."""


# A board's QEMU ran without the parent-death signal (harness/child_process.py)
# and outlived a farm killed mid-run (seen 2026-12-08: a test session
# stopped with SIGTERM left its virtual board running). It is (re)started
# from the control server's request threads, which end, and prctl(2) says
# the signal follows the thread that forks (this machine's kernel sends it
# only when the whole process dies). So every board's QEMU is forked by one
# thread that lives as long as this process: under either reading it gets
# SIGKILL when the process dies, however it dies, and not before.
_SPAWNER = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="ptl-board-spawner")


def spawn_dying_with_this_process(argv: list[str], **popen) -> subprocess.Popen:
    """subprocess.Popen(argv, **popen) in its own session, forked by the
    spawner thread with the parent-death signal."""
    return _SPAWNER.submit(subprocess.Popen, argv, start_new_session=True, preexec_fn=die_with_parent(),
                           **popen).result()


class VirtualBoard:
    def __init__(self, name: str, workdir: Path, console: str = "socket", serial_port: int | None = None):
        if console not in CONSOLES:
            raise ValueError(f"console must be one of {CONSOLES}, not {console!r}")
        self.name = name
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.console = console
        self.uart_port = free_port()                    # QEMU's UART socket
        self.serial_port = serial_port or (self.uart_port if console == "socket" else free_port())  # ser2net's
        self.relay = PtyRelay(self.uart_port) if console != "socket" else None
        self.monitor_path = self.workdir / "monitor.sock"
        self.firmware = self.workdir / "firmware"
        self.process: subprocess.Popen | None = None
        self.lock = threading.RLock()
        self.counts = {"flash": 0, "reset": 0, "power": 0, "hang": 0}
        self.wedged = False     # hung so that only a power cycle helps

    # ---- QEMU -------------------------------------------------------------------------

    def argv(self) -> list[str]:
        manifest = json.loads((self.firmware / MANIFEST_NAME).read_text())
        console = f"socket,id=con0,host=127.0.0.1,port={self.uart_port},server=on,wait=off,nodelay=on"
        return [toolchain.QEMU, "-machine", "virt", "-bios", "none", "-nodefaults", "-display", "none",
                "-m", "128M", "-smp", "8", "-cpu", manifest.get("cpu", cpu_option(manifest["fp16_format"])),
                "-icount", "shift=0,sleep=off", "-chardev", console, "-serial", "chardev:con0",
                "-monitor", f"unix:{self.monitor_path},server=on,wait=off",
                "-kernel", str(self.firmware / ELF_NAME)]

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def _start(self) -> None:
        if not (self.firmware / ELF_NAME).exists():
            raise BoardError(f"{self.name} has no firmware: flash it first")
        self.monitor_path.unlink(missing_ok=True)
        log = open(self.workdir / "qemu.log", "ab")
        self.process = spawn_dying_with_this_process(self.argv(), stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        log.close()
        if not wait_listening(self.uart_port, START_TIMEOUT, self.process):
            self._stop()
            raise BoardError(f"{self.name}: QEMU did not come up (see {self.workdir / 'qemu.log'})")

    def _stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.process = None

    def _monitor(self, *commands: str) -> None:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(5)
            sock.connect(str(self.monitor_path))
            for command in commands:
                sock.sendall(command.encode() + b"\n")
            time.sleep(0.05)

    # ---- what a lab does -----------------------------------------------------------------

    def flash(self, elf: Path) -> None:
        elf = Path(elf)
        manifest = elf.parent / MANIFEST_NAME
        if not elf.is_file() or not manifest.is_file():
            raise BoardError(f"{elf} is not a board firmware (expected {ELF_NAME} with {MANIFEST_NAME} beside it)")
        with self.lock:
            self._stop()
            staging = self.workdir / "firmware.new"
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir()
            shutil.copy2(elf, staging / ELF_NAME)
            shutil.copy2(manifest, staging / MANIFEST_NAME)
            shutil.rmtree(self.firmware, ignore_errors=True)
            staging.rename(self.firmware)
            self.counts["flash"] += 1
            self._start()

    def reset(self) -> None:
        with self.lock:
            self.counts["reset"] += 1
            if self.wedged:
                return              # the probe's reset does not reach a wedged chip
            if not self.running():
                self._start()
                return
            self._monitor("system_reset", "cont")

    def power(self, on: bool) -> None:
        with self.lock:
            self.counts["power"] += 1
            if not on:
                self.wedged = False
                self._stop()
            elif not self.running():
                self._start()

    def hang(self) -> None:
        """Freezes the machine: it stops answering until reset."""
        with self.lock:
            self.counts["hang"] += 1
            self._monitor("stop")

    def wedge(self) -> None:
        """Freezes the machine so that a reset does not help: only a power cycle does."""
        self.hang()
        self.wedged = True

    @property
    def tty(self) -> str | None:
        """The board's serial device (pty consoles)."""
        return self.relay.path if self.relay else None

    def shutdown(self) -> None:
        with self.lock:
            self._stop()
            if self.relay:
                self.relay.stop()


class PtyRelay:
    """A pty whose other end is QEMU's UART socket, reconnected whenever
    QEMU restarts, so the device path stays put like a USB serial port's."""

    def __init__(self, uart_port: int):
        self.uart_port = uart_port
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)       # no echo: the board must not hear itself
        self.path = os.ttyname(self.slave)
        self.stopped = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while not self.stopped.is_set():
            try:
                sock = socket.create_connection(("127.0.0.1", self.uart_port), timeout=1)
            except OSError:
                self.stopped.wait(0.05)
                continue
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                self._pump(sock)
            except OSError:
                pass
            finally:
                sock.close()

    def _pump(self, sock: socket.socket) -> None:
        sock.setblocking(True)
        while not self.stopped.is_set():
            ready, _, _ = select.select([self.master, sock], [], [], 0.2)
            if self.master in ready:
                data = os.read(self.master, 65536)
                if data:
                    sock.sendall(data)
            if sock in ready:
                data = sock.recv(65536)
                if not data:
                    return      # QEMU went away: wait for the next one
                os.write(self.master, data)

    def stop(self) -> None:
        self.stopped.set()
        for fd in (self.master, self.slave):
            with contextlib.suppress(OSError):
                os.close(fd)


# ---- the control server ------------------------------------------------------------------

class ControlServer(socketserver.ThreadingTCPServer):
    """One line per request: `BOARD flash PATH`, `BOARD reset`, `BOARD power on|off`,
    `BOARD hang`, `BOARD wedge`, `BOARD status`; the answer is `ok ...` or `error ...`."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, boards: dict[str, VirtualBoard], port: int = 0):
        self.boards = boards
        super().__init__(("127.0.0.1", port), _ControlHandler)

    def handle_command(self, words: list[str]) -> str:
        if len(words) < 2 or words[0] not in self.boards:
            return f"error: expected BOARD COMMAND ...; boards are {', '.join(self.boards)}"
        board, command, args = self.boards[words[0]], words[1], words[2:]
        try:
            if command == "flash" and len(args) == 1:
                board.flash(Path(args[0]))
            elif command == "reset" and not args:
                board.reset()
            elif command == "power" and args in (["on"], ["off"]):
                board.power(args[0] == "on")
            elif command == "hang" and not args:
                board.hang()
            elif command == "wedge" and not args:
                board.wedge()
            elif command == "status" and not args:
                return "ok " + json.dumps({"running": board.running(), **board.counts})
            else:
                return f"error: unknown command {' '.join(words[1:])!r}; use flash PATH, reset, power on|off, hang, wedge, status"
        except (BoardError, OSError) as exc:
            return f"error: {exc}"
        return "ok"


class _ControlHandler(socketserver.StreamRequestHandler):
    def handle(self):
        line = self.rfile.readline().decode(errors="replace").split()
        self.wfile.write((self.server.handle_command(line) + "\n").encode())


def control(address: str, words: list[str], timeout: float = 60.0) -> str:
    """Sends one control request; returns the answer after 'ok', raises BoardError on 'error'."""
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as sock:
            sock.sendall((" ".join(words) + "\n").encode())
            answer = sock.makefile().readline().strip()
    except (OSError, ValueError) as exc:
        raise BoardError(f"cannot reach the virtual board control server at {address}: {exc}") from None
    if not answer.startswith("ok"):
        raise BoardError(answer.removeprefix("error: ") or "no answer")
    return answer[2:].strip()


# ---- ser2net -----------------------------------------------------------------------------

def ser2net_config(boards: list[VirtualBoard]) -> str:
    """ser2net's YAML: each board's pty exported over telnet with RFC 2217."""
    parts = []
    for board in boards:
        parts.append(f"connection: &{board.name}\n"
                     f"  accepter: telnet(rfc2217),tcp,127.0.0.1,{board.serial_port}\n"
                     f"  connector: serialdev,{board.tty},115200n81,local\n"
                     f"  options:\n"
                     f"    kickolduser: true\n")
    return "\n".join(parts)


def start_ser2net(config: str, workdir: Path) -> subprocess.Popen:
    binary = shutil.which("ser2net") or ("/usr/sbin/ser2net" if Path("/usr/sbin/ser2net").exists() else None)
    if binary is None:
        raise BoardError("ser2net is not installed: apt-get install ser2net")
    path = Path(workdir) / "ser2net.yaml"
    path.write_text(config)
    log = open(Path(workdir) / "ser2net.log", "ab")
    # SIGKILL when this process dies (harness/child_process.py), as every board's QEMU.
    process = spawn_dying_with_this_process(
        [binary, "-n", "-u", "-c", str(path), "-P", str(Path(workdir) / "ser2net.pid")],
        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    return process


# ---- a farm of virtual boards --------------------------------------------------------------

@dataclass
class VirtualFarm:
    """N virtual boards, their control server, ser2net for rfc2217 consoles,
    and a fault-injecting proxy in front of each when `faults` is given."""

    count: int = 2
    console: str = "socket"
    workdir: Path | None = None
    faults: FaultSpec | None = None
    prefix: str = "vb"
    boards: list[VirtualBoard] = field(default_factory=list)
    proxies: dict[str, FaultProxy] = field(default_factory=dict)

    def __post_init__(self):
        self._tmp = None
        self.server: ControlServer | None = None
        self.ser2net: subprocess.Popen | None = None

    def start(self) -> "VirtualFarm":
        if self.workdir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="ptl-virtual-boards-")
            self.workdir = Path(self._tmp.name)
        self.boards = [VirtualBoard(f"{self.prefix}{i}", Path(self.workdir) / f"{self.prefix}{i}", self.console)
                       for i in range(self.count)]
        self.server = ControlServer({b.name: b for b in self.boards})
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        if self.console == "rfc2217":
            self.ser2net = start_ser2net(ser2net_config(self.boards), Path(self.workdir))
            for board in self.boards:
                if not wait_listening(board.serial_port, START_TIMEOUT, self.ser2net):
                    self.stop()
                    raise BoardError(f"ser2net did not open port {board.serial_port} "
                                     f"(see {Path(self.workdir) / 'ser2net.log'})")
        if self.faults is not None:
            if self.console != "socket":
                raise BoardError("the fault proxy relays TCP: use it with console socket")
            for board in self.boards:
                self.proxies[board.name] = FaultProxy(("127.0.0.1", board.serial_port), self.faults,
                                                      seed=zlib.crc32(board.name.encode())).start()
        return self

    @property
    def control_address(self) -> str:
        return f"127.0.0.1:{self.server.server_address[1]}"

    def serial_url(self, board: VirtualBoard) -> str:
        """socket://, rfc2217:// or (pty) the device itself; through the proxy if there is one."""
        if board.name in self.proxies:
            return f"socket://127.0.0.1:{self.proxies[board.name].port}"
        if self.console == "pty":
            return board.tty
        return f"{self.console}://127.0.0.1:{board.serial_port}"

    def inventory(self, driver: str = "command") -> list[Board]:
        """The inventory entries of these boards: flash, reset and power as
        commands (`python -m harness boards control ...`), or with driver
        "virtual_board" through that driver's Python API (harness/board/drivers/)."""
        def command(*words: str) -> tuple[str, ...] | DriverSpec:
            if driver == "virtual_board":
                return DriverSpec("virtual_board", (("control", self.control_address),))
            return ("{python}", "-m", "harness", "boards", "control", self.control_address, "{name}", *words)
        if driver not in ("command", "virtual_board"):
            raise ValueError(f"a virtual board's driver is command or virtual_board, not {driver!r}")
        return [Board(b.name, "qemu-virt", self.serial_url(b), 115200, command("flash", "{firmware}"),
                      command("reset"), command("power", "{state}"), 8, 64 * 1024, ("virtual", self.console))
                for b in self.boards]

    def board(self, name: str) -> VirtualBoard:
        return next(b for b in self.boards if b.name == name)

    def stop(self) -> None:
        for proxy in self.proxies.values():
            proxy.stop()
        for board in self.boards:
            board.shutdown()
        if self.ser2net is not None and self.ser2net.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.ser2net.pid, signal.SIGTERM)
            try:
                self.ser2net.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.ser2net.pid, signal.SIGKILL)
                self.ser2net.wait()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> "VirtualFarm":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
