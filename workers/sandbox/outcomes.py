"""Signs, shared by the backends, of how a sandboxed program ended."""

from __future__ import annotations


def memory_error(code: int, stderr: bytes) -> bool:
    """Return whether a failed run's last stderr line is Python's or numpy's MemoryError."""
    if code == 0:
        return False
    tail = stderr.rstrip().rsplit(b"\n", 1)[-1]
    return tail.startswith(b"MemoryError") or b"numpy.core._exceptions._ArrayMemoryError" in tail
