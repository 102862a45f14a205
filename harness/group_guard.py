"""Runs a command whose process tree must die with the session that started it.

    python -I -S group_guard.py FD ARGV...

The parent-death signal (child_process.py) reaches one process: the direct
child. A launcher that starts its simulator as a child of its own (GVSOC's
Python launcher starts gvsoc_launcher) leaves that grandchild running when
the session is killed. This guard is the direct child instead. It leads its
own process group, starts ARGV in that group, and holds the read end FD of a
pipe whose write end only the session holds:

- ARGV ends: the guard exits as ARGV did (its status, or its signal);
- the pipe reads end-of-file, that is, the session died, however it died:
  the guard kills its whole group, ARGV's descendants and itself.

Standard library only, run with -I -S: it starts in about 20 ms.
"""
import os
import select
import signal
import subprocess
import sys


def main() -> None:
    session = int(sys.argv[1])
    child = subprocess.Popen(sys.argv[2:])   # same group, same stdout and stderr
    alive = os.pidfd_open(child.pid)
    readable, _, _ = select.select([session, alive], [], [])
    if session in readable and alive not in readable:
        os.killpg(0, signal.SIGKILL)
    code = child.wait()
    if code < 0:   # die of the same signal, so that the session sees what ARGV saw
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


if __name__ == "__main__":
    main()
