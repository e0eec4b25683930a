"""The runner container's first program: put the run's files in /work, then exec the program.

Not imported by the worker: docker.py sends this file's text with `python3 -I -S -c`, so the
protocol lives with the worker and the image holds only the runtime (no version skew).
It runs as the run's uid, before any student code, and is handed nothing secret; all the
same it makes itself non-dumpable, so that nothing else of the run's uid can trace it or read
its memory (the exec of the program makes the program dumpable again, as it should be).

Stdin carries one line with the header's length in bytes, the JSON header
`{"files": {relative path: base64}, "entrypoint": relative path}`, then the program's own stdin,
which the program inherits unread. STARTED on stdout tells the worker to start the wall clock.
"""

import base64
import ctypes
import json
import os

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
    os.write(1, STARTED)
    os.execv(PYTHON, [PYTHON, "-E", "-s", "-B", os.path.join("/work", header["entrypoint"])])


if __name__ == "__main__":
    main()
