"""Read a child's stdout and stderr with a byte budget and a deadline."""

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


def capture(stdout: IO[bytes], stderr: IO[bytes], budget: int, deadline: float) -> Captured:
    """Read both pipes until EOF, until either passes `budget` bytes, or until `deadline`.

    `deadline` is a time.monotonic() value. The caller kills the process afterwards.
    """
    result = Captured()
    targets = {stdout.fileno(): result.stdout, stderr.fileno(): result.stderr}
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
                targets[fd].extend(chunk)
                if len(targets[fd]) > budget:
                    result.over_budget = True
                    return result
    return result
