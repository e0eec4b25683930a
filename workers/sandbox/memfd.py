"""Anonymous in-memory files, for handing a child process data by fd rather than by path."""

from __future__ import annotations

import os


def holding(data: bytes, name: str) -> int:
    """Return a new close-on-exec memfd that holds `data`, its offset at the start."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd
