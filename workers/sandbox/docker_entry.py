"""The runner container's first program: put the run's files in /work, then exec the program.

Not imported by the worker: docker.py sends this file's text with `python3 -I -S -c`, so the
protocol lives with the worker and the image holds only the runtime (no version skew).
It runs as the run's uid, before any student code, and is handed nothing secret; all the
same it makes itself non-dumpable, so that nothing else of the run's uid can trace it or read
its memory (the exec of the program makes the program dumpable again, as it should be).

Stdin carries one line with the header's length in bytes, the JSON header
`{"files": {relative path: base64}, "entrypoint": relative path, "figures": ...}`, then the
program's own stdin, which the program inherits unread. STARTED on stdout tells the worker to
start the wall clock.

When the header asks for the run's figures (`figures`: their bounds, the run's own file names,
the text of zygote/figure_files.py and a marker made for this run), this entry forks the
program instead of becoming it, waits for it, kills whatever it left running, collects its
figures and writes them on stdout after the marker, then exits as the program did (by its
signal, which tini reports as 128 + N). The marker is never where the program can read it:
it came on stdin before the program started, and this process is not dumpable; a program
that prints a marker of its own only puts its figures behind ours.
"""

import base64
import ctypes
import json
import os
import signal
from typing import Any

STARTED = b"\x00codeblanks-started\x00"
PYTHON = "/usr/bin/python3"
_MAX_HEADER_LINE = 20
_PR_SET_DUMPABLE = 4


def _read_exact(size: int) -> bytes:
    """Read exactly `size` bytes of stdin, and not one more (the rest is the program's)."""
    parts = []
    while size > 0:
        chunk = os.read(0, min(size, 1 << 20))
        if not chunk:
            raise SystemExit("codeblanks: the run's header was cut short")
        parts.append(chunk)
        size -= len(chunk)
    return b"".join(parts)


def _read_length() -> int:
    """Read the header's length line one byte at a time, never past its newline."""
    line = b""
    while not line.endswith(b"\n"):
        if len(line) > _MAX_HEADER_LINE:
            raise SystemExit("codeblanks: bad header length line")
        line += _read_exact(1)
    return int(line)


def main() -> None:
    """Write the files, signal the start, and replace this process with the program."""
    if ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise SystemExit(f"codeblanks: prctl: {os.strerror(ctypes.get_errno())}")
    header = json.loads(_read_exact(_read_length()))
    for name, data in header["files"].items():
        path = os.path.join("/work", name)  # names were checked by the worker
        os.makedirs(os.path.dirname(path), exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        fd = os.open(path, flags, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(base64.b64decode(data))
    argv = [PYTHON, "-E", "-s", "-B", os.path.join("/work", header["entrypoint"])]
    figures = header.get("figures")
    os.write(1, STARTED)
    if figures is None:
        os.execv(PYTHON, argv)
    child = os.fork()
    if child == 0:
        os.execv(PYTHON, argv)
    _, status = os.waitpid(child, 0)
    try:
        os.kill(-1, signal.SIGKILL)  # all else of the run (tini, pid 1, and we are spared)
    except ProcessLookupError:
        pass
    _write_all(figures["marker"].encode() + _collected(figures))
    if os.WIFSIGNALED(status):
        ended_by = os.WTERMSIG(status)
        if ended_by not in (signal.SIGKILL, signal.SIGSTOP):  # these two have no handler
            signal.signal(ended_by, signal.SIG_DFL)
        os.kill(os.getpid(), ended_by)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def _collected(figures: dict[str, Any]) -> bytes:
    """Return the run's figures, packed, by the collector the worker sent (figure_files.py)."""
    collector: dict[str, Any] = {"__name__": "figure_files"}
    exec(compile(figures["collector"], "figure_files.py", "exec"), collector)  # noqa: S102
    found, dropped = collector["collect"]("/", figures["skip"], figures)
    packed: bytes = collector["pack"](found, dropped)
    return packed


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]


if __name__ == "__main__":
    main()
