"""Children that die with their parent.

Simulators (QEMU, GVSOC), the host runner and serial bridges (ser2net) run
in their own session, so that a timeout can kill the whole group and a
terminal's Ctrl-C does not reach them half-way through a write. That also
means nothing stops them when the session that started them is killed with
SIGKILL: they would run on until their own timeout, or forever. So each is
started with a parent-death signal (Linux prctl PR_SET_PDEATHSIG): the
kernel sends it SIGKILL the moment its parent process dies, however it dies.

xdist workers ask the same for themselves (die_with_parent_now), so a killed
controller takes its workers, and through them their children, along.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def _load_prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):
        return None


# Loaded before any fork: the function given to Popen runs between fork and
# exec, where loading a library could deadlock on a lock another thread held.
_PRCTL = _load_prctl()


def die_with_parent():
    """A preexec_fn for subprocess.Popen: the child gets SIGKILL when this
    process dies. None where the platform has no parent-death signal (the
    child then lives on, as before)."""
    if _PRCTL is None:
        return None
    parent = os.getpid()

    def preexec() -> None:
        _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:   # the parent died before the signal was asked for
            os._exit(1)
    return preexec


def die_with_parent_now() -> bool:
    """Asks for this process to get SIGKILL when its parent dies (an xdist
    worker, whose parent is the controller). True when it could."""
    if _PRCTL is None:
        return False
    parent = os.getppid()
    if _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        return False
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)
    return True
