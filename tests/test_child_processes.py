"""Child processes die with their parent (issue 22): a session killed with
SIGKILL in the middle of a QEMU run leaves no QEMU running (it used to run
on past its own 120 s timeout), whether the killed process is the pytest
session itself, the xdist controller, or the worker that started QEMU. And a
session leaves no scratch directory (ptl-run-*) behind, after a normal end
or after Ctrl-C.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import toolchain
from harness.child_process import die_with_parent

ROOT = Path(__file__).resolve().parent.parent
# A library whose `mm` spins for ever, silently: QEMU then writes nothing, so
# nothing but the parent-death signal stops it when the session dies (a
# QEMU that writes dies of SIGPIPE anyway).
HANG = "void mm(void *matMul_args) { (void)matMul_args; for (volatile int spin = 1; spin;) {} }"
QEMU_SLICE = ["suite/test_ops.py", "--family", "linalg", "-k", "matmul-fp32-fw-N64xM64xK64-trans_B0-bias0-mm-c"]
HOST_SLICE = ["suite/test_ops.py", "--family", "pool", "-k", "maxpool and fp32"]


def processes_mentioning(text: str, name: str = "") -> dict[int, int]:
    """pid -> parent pid of the live processes whose command line holds `text`
    (and `name`); zombies, which run nothing, are not counted."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, parent = stat.rsplit(")", 1)[1].split()[:2]
        if text in argv and name in argv and state != "Z":
            found[int(entry.name)] = int(parent)
    return found


def runner_running(cache: Path) -> bool:
    """A host runner built under `cache` is running: a process whose program
    (argv[0]) is one. A compiler or linker writing `<cache>/.../runner` only
    mentions it, and may come before the session can take a Ctrl-C."""
    for entry in Path("/proc").iterdir():
        try:
            program = (entry / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        if entry.name.isdigit() and program.startswith(str(cache)) and program.endswith("/runner"):
            return True
    return False


def start_session(args: list[str], cache: Path, tmpdir: Path, *extra: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env["TMPDIR"] = str(tmpdir)
    tmpdir.mkdir(parents=True, exist_ok=True)
    # Its own session, as a run from a terminal has its own process group.
    return subprocess.Popen([sys.executable, "-m", "pytest", *args, "-q", "-p", "no:randomly",
                             "--ptl-cache", str(cache), "--reports-dir", str(tmpdir / "reports"), *extra],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def wait_for(condition, seconds: float):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.01)
    return condition()


def hanging_copy(library: Path) -> Path:
    """A copy of lib_c at `library` whose `mm` spins for ever."""
    shutil.copytree(ROOT / "lib_c", library)
    source = library / "sources" / "pulp_matmul_fp32.c"
    text = source.read_text()
    line = next(line for line in text.splitlines() if line.startswith("void mm(void *matMul_args)"))
    source.write_text(text.replace(line, HANG))
    return library


@pytest.fixture(scope="module")
def hanging_library(tmp_path_factory):
    """The library with a hanging `mm`, and a cache with its QEMU runner built."""
    reason = toolchain.unavailable_reason()
    if reason:
        pytest.fail(f"this test needs the QEMU toolchain: {reason}")
    root = tmp_path_factory.mktemp("qemu")
    library = hanging_copy(root / "lib_c")
    cache = root / "cache"
    session = start_session([QEMU_SLICE[0], "-k", "matmul-fp32-fw-N64xM64xK64-trans_B0-bias0-mm_u2-c1"], cache,
                            root / "tmp", "--target", "qemu", "-p", "no:xdist", "--trainlib", str(library))
    output = session.communicate(timeout=900)[0]
    assert session.returncode == 0 and "1 passed" in output, output[-3000:]
    return library, cache


@pytest.mark.parametrize("killed", ["session", "xdist controller", "xdist worker"])
def test_a_session_killed_mid_qemu_run_leaves_no_qemu_running(hanging_library, tmp_path, killed):
    library, qemu_cache = hanging_library
    workers = ["-p", "no:xdist"] if killed == "session" else ["-n", "1"]
    session = start_session(QEMU_SLICE, qemu_cache, tmp_path / "tmp", "--target", "qemu",
                            "--trainlib", str(library), "--run-timeout", "600", *workers)
    try:
        running = wait_for(lambda: processes_mentioning(str(qemu_cache), toolchain.QEMU), 300)
        assert running, "no QEMU run was seen: " + (session.communicate(timeout=60)[0][-2000:]
                                                     if session.poll() is not None else "still running")
        qemu, parent = next(iter(running.items()))
        time.sleep(1)   # in the spinning kernel by now
        victim = session.pid if killed != "xdist worker" else parent
        if killed == "xdist worker":
            assert parent != session.pid
        os.kill(victim, signal.SIGKILL)
        gone = wait_for(lambda: qemu not in processes_mentioning(str(qemu_cache), toolchain.QEMU), 5)
        assert gone, f"QEMU {qemu} still runs 5 s after its {killed} was killed with SIGKILL"
        if killed != "xdist worker":
            assert wait_for(lambda: not processes_mentioning(str(qemu_cache), toolchain.QEMU), 5)
    finally:
        if session.poll() is None:
            os.kill(session.pid, signal.SIGKILL)
        session.communicate(timeout=60)
        left = wait_for(lambda: not processes_mentioning(str(qemu_cache), toolchain.QEMU), 10)
        for pid in processes_mentioning(str(qemu_cache), toolchain.QEMU):   # a failed check's leftovers
            os.kill(pid, signal.SIGKILL)
    assert left


# A parent that starts PTL_CHILD_ARGV (JSON) through run_command, then sleeps;
# the marker is in its environment, not its command line, so that only the
# processes it starts mention it.
PARENT = """
import json, os, threading, time
from harness.target import run_command
argv = json.loads(os.environ["PTL_CHILD_ARGV"])
threading.Thread(target=run_command, args=(argv, 600), kwargs={"tree": os.environ["PTL_TREE"] == "1"},
                 daemon=True).start()
time.sleep(300)
"""
SLEEPER = "import time; time.sleep(300)"
# A launcher that does not exec its program: it starts it as its own child.
LAUNCHER = f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {SLEEPER!r}, sys.argv[1] + '-run']); " \
           f"time.sleep(300)"


def orphans_after_killing_the_parent(child_argv: list[str], tree: bool, expect: list[str]) -> list[str]:
    """Starts PARENT with child_argv, waits until every marker of expect runs,
    kills the parent with SIGKILL, and returns the markers still running
    5 s later (their processes are killed before returning)."""
    import json
    env = {**os.environ, "PTL_CHILD_ARGV": json.dumps(child_argv), "PTL_TREE": "1" if tree else "0"}
    parent = subprocess.Popen([sys.executable, "-c", PARENT], cwd=ROOT, env=env)
    try:
        assert wait_for(lambda: all(processes_mentioning(m) for m in expect), 30), "the children never started"
        os.kill(parent.pid, signal.SIGKILL)
        wait_for(lambda: not any(processes_mentioning(m) for m in expect), 5)
        return [m for m in expect if processes_mentioning(m)]
    finally:
        parent.kill()
        parent.wait()
        for m in expect:
            for pid in processes_mentioning(m):
                os.kill(pid, signal.SIGKILL)


def test_a_child_started_with_die_with_parent_gets_sigkill_when_its_parent_dies():
    """The mechanism on its own, with a sleeping child of a killed parent."""
    marker = f"ptl-orphan-check-{os.getpid()}"
    assert orphans_after_killing_the_parent([sys.executable, "-c", SLEEPER, marker], False, [marker]) == []
    assert die_with_parent() is not None   # Linux: the mechanism is there, not silently skipped


# A farm's control server starts a board's QEMU from a request thread that
# then ends (harness/board/virtual.py); here a sleeper stands in for QEMU.
FARM = """
import sys, threading, time
from harness.board.virtual import spawn_dying_with_this_process
request = threading.Thread(target=spawn_dying_with_this_process,
                           args=([sys.executable, "-c", "import time; time.sleep(300)", sys.argv[1]],))
request.start()
request.join()
time.sleep(300)
"""


def test_a_virtual_boards_qemu_outlives_the_request_thread_that_started_it_but_not_the_farm():
    marker = f"ptl-virtual-board-{os.getpid()}"
    farm = subprocess.Popen([sys.executable, "-c", FARM, marker], cwd=ROOT)
    try:
        assert wait_for(lambda: processes_mentioning(marker), 30), "the board never started"
        time.sleep(1)
        assert processes_mentioning(marker), "the board died with the request thread that started it"
        os.kill(farm.pid, signal.SIGKILL)
        assert wait_for(lambda: not processes_mentioning(marker), 5), "the board outlived its farm"
    finally:
        farm.kill()
        farm.wait()
        for pid in processes_mentioning(marker):
            os.kill(pid, signal.SIGKILL)


def test_the_parent_death_signal_reaches_the_child_only_and_the_group_guard_the_whole_tree():
    """GVSOC's launcher starts the simulator as its own child: the signal kills
    the launcher and leaves the simulator running; run_command(tree=True)
    (harness/group_guard.py) takes both along."""
    launcher, program = f"ptl-launcher-{os.getpid()}", f"ptl-program-{os.getpid()}"
    argv = [sys.executable, "-c", LAUNCHER, program, launcher]   # the program's marker: program + "-run"
    running = [launcher, program + "-run"]
    assert orphans_after_killing_the_parent(argv, False, running) == [program + "-run"]
    assert orphans_after_killing_the_parent(argv, True, running) == []


def test_a_guarded_command_keeps_its_output_and_its_exit_status_or_signal():
    from harness.target import run_command
    raw = run_command([sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(7)"],
                      60, tree=True)
    assert (raw.output, raw.stderr, raw.returncode) == (b"out\n", b"err\n", 7)
    raw = run_command([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"], 60, tree=True)
    assert raw.returncode == -signal.SIGSEGV
    raw = run_command([sys.executable, "-c", SLEEPER], 1, tree=True)
    assert raw.timed_out and raw.returncode is None


def scratch_dirs(tmpdir: Path) -> list[str]:
    return sorted(p.name for p in tmpdir.glob("ptl-*"))


@pytest.mark.parametrize("workers", [["-p", "no:xdist"], ["-n", "2"]], ids=["one process", "xdist"])
def test_no_scratch_directory_is_left_after_a_normal_session_or_after_ctrl_c(tmp_path, workers):
    cache, tmpdir = tmp_path / "cache", tmp_path / "tmp"
    session = start_session(HOST_SLICE, cache, tmpdir, "--target", "host", *workers)
    output = session.communicate(timeout=900)[0]
    assert session.returncode == 0 and "60 passed" in output, output[-2000:]
    assert scratch_dirs(tmpdir) == []

    # Ctrl-C from a terminal: SIGINT to the session's whole process group, while a case runs: the
    # spinning `mm` keeps its runner busy until the signal, so the session cannot end first.
    library = hanging_copy(tmp_path / "hanging")
    session = start_session(QEMU_SLICE, cache, tmpdir, "--target", "host", "--trainlib", str(library),
                            "--run-timeout", "600", *workers)
    assert wait_for(lambda: runner_running(cache) or session.poll() is not None, 600)
    assert session.poll() is None, f"the session ended before it could be interrupted: {session.communicate()[0][-2000:]}"
    assert scratch_dirs(tmpdir), "no scratch directory while cases run: this test would not see a leftover"
    for _ in range(3):   # a second press, as a user would, when Python lost the first in a finaliser
        os.killpg(session.pid, signal.SIGINT)
        if wait_for(lambda: session.poll() is not None, 3):
            break
    output = session.communicate(timeout=120)[0]
    assert session.returncode != 0, output[-2000:]
    assert wait_for(lambda: scratch_dirs(tmpdir) == [], 5), (scratch_dirs(tmpdir), output[-2000:])
