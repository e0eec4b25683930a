"""The zygote: Python and numpy loaded once, then one fork per run, and never a submission.

Started by the host inside bwrap as uid 0 of the slot's user namespace, holding only the
capabilities each run's set-up needs there (namespaces, mounts, loopback, uid map). It reads
"arm" requests on its control socket, each carrying a run socket and the run's stdin, stdout
and stderr pipes, and forks a supervisor into a new pid namespace for each (see run.py). It
never receives code: the supervisor does, after the fork, so no submission ever reaches this
process's heap.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import signal
import socket
import sys
from typing import Any

from . import linux, program, run

# numpy is the point of the zygote; the rest is what submissions import most
PRELOAD = (
    "numpy bisect collections copy dataclasses datetime decimal fractions functools heapq "
    "itertools json math random re statistics string time traceback typing"
).split()
_MAX_FDS = 4


def serve(control_fd: int, drawing: bool = False) -> dict[str, Any]:
    """Answer arm requests until the host hangs up; return only in a run's program process.

    `drawing`: import matplotlib's pyplot ahead too (see _preload_drawing).
    """
    control = socket.socket(fileno=control_fd)
    own_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    linux.prctl(linux.PR_SET_DUMPABLE, 0)  # our children's /proc/PID/mem stays closed to runs
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # supervisors are reaped by the kernel
    for name in PRELOAD:
        importlib.import_module(name)
    if drawing:
        _preload_drawing()
    program.remember_own()
    program.compile_prepared(os.path.join(os.path.dirname(os.path.abspath(__file__)), "prepared"))
    gc.collect()
    gc.freeze()  # a fork's children then never touch (and copy) our objects' pages in gc
    control.sendall(b"ready")
    while True:
        message, fds, _, _ = socket.recv_fds(control, 4096, _MAX_FDS)
        if not message:
            os._exit(0)  # the host closed the pool, or died
        linux.unshare(linux.CLONE_NEWPID)  # our next child is pid 1 of a new pid namespace
        pid = os.fork()
        if pid == 0:
            control.close()
            os.close(own_pid_ns)
            return run.supervise(json.loads(message), fds)
        linux.setns(own_pid_ns, linux.CLONE_NEWPID)  # later children start fresh again
        for fd in fds:
            os.close(fd)


def _preload_drawing() -> None:
    """Import matplotlib's pyplot with the tree's backend, and draw once (fonts, Agg), so
    that a run that draws starts there; leave no figure behind (each run starts empty).

    Measured here (benchmarks/sandbox.py --draw): a drawing run takes 93 ms instead of 310,
    and every other run ~1.5 ms more (8.7 against 7 ms; a third fewer runs a second), for the
    zygote's 28 MB more (62 against 33 MB resident) that each run's fork maps and its exit
    unmaps. So it is a setting (CODEBLANKS_WARM_DRAWING), off unless lessons draw a lot.
    """
    try:
        pyplot = importlib.import_module("matplotlib.pyplot")
    except ImportError:
        return  # a tree without matplotlib (runtime/build.sh before its v2)
    pyplot.switch_backend("agg")  # the drawing hook keeps its own, whatever the name
    figure = pyplot.figure()
    figure.gca().set_title("warm")
    figure.canvas.draw()
    pyplot.close("all")


def main() -> None:
    """Serve, and in a run's program process, run the submission (which never returns)."""
    job = serve(int(sys.argv[1]), drawing="--drawing" in sys.argv[2:])
    program.execute(job)


if __name__ == "__main__":
    main()
