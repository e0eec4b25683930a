"""Read a child's stdout and stderr with a byte budget and a deadline.

A run whose figures follow its output on stdout (the docker backend's, after a marker only
its entry knows: docker_entry.py) has them split off into `trailer`, with a budget of their
own; the output budget is the program's output's alone.
"""

from __future__ import annotations

import os
import selectors
import time
from dataclasses import dataclass, field
from typing import IO

_CHUNK = 65536


@dataclass
class Captured:
    """What was read, and whether the budget or the deadline ran out first."""

    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    over_budget: bool = False
    timed_out: bool = False
    trailer: bytearray | None = None  # what followed the marker, when it came
    trailer_over: bool = False  # the trailer passed its budget: it is cut, so unreadable


def capture(
    stdout: IO[bytes],
    stderr: IO[bytes],
    budget: int,
    deadline: float,
    marker: bytes = b"",
    trailer_budget: int = 0,
) -> Captured:
    """Read both pipes until EOF, until either passes `budget` bytes, or until `deadline`.

    `deadline` is a time.monotonic() value. The caller kills the process afterwards. With a
    `marker`, what follows it on stdout is the trailer, read up to `trailer_budget` bytes.
    """
    result = Captured()
    out_fd = stdout.fileno()
    targets = {out_fd: result.stdout, stderr.fileno(): result.stderr}
    with selectors.DefaultSelector() as selector:
        for fd in targets:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        while targets:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                result.timed_out = True
                break
            for key, _ in selector.select(timeout=remaining):
                fd = int(key.fd)
                try:
                    chunk = os.read(fd, _CHUNK)
                except BlockingIOError:
                    continue
                if not chunk:
                    selector.unregister(fd)
                    del targets[fd]
                    continue
                if fd == out_fd and marker:
                    _split(result, chunk, marker, trailer_budget)
                else:
                    targets[fd].extend(chunk)
                if len(targets[fd]) > budget:
                    result.over_budget = True
                    return result
    return result


def _split(result: Captured, chunk: bytes, marker: bytes, trailer_budget: int) -> None:
    """Add a chunk of stdout: to the output until the marker, to the trailer after it."""
    if result.trailer is not None:
        if len(result.trailer) + len(chunk) > trailer_budget:
            result.trailer_over = True
        else:
            result.trailer.extend(chunk)
        return
    start = max(0, len(result.stdout) - len(marker) + 1)
    result.stdout.extend(chunk)
    at = result.stdout.find(marker, start)
    if at < 0:
        return
    rest = bytes(result.stdout[at + len(marker) :])
    del result.stdout[at:]
    result.trailer = bytearray()
    _split(result, rest, marker, trailer_budget)
