"""A total deadline for one request: a watchdog that shuts its sockets down when time is up.

A socket timeout bounds each read, not the whole: a server that trickles a byte every 2 s
never trips a 5 s read timeout. Shutting the sockets down wakes whatever waits on them
(connect, TLS handshake, headers, body) at once, in any thread.
"""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType


class Deadline:
    """The time one request has left, and the watchdog that enforces it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._ends_at = time.monotonic() + seconds
        self._passed = False
        self._done = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    @property
    def passed(self) -> bool:
        """Return whether the watchdog has fired (and so ended whatever was in flight)."""
        return self._passed

    def left(self) -> float:
        """Return the seconds left (zero or less once the deadline has passed)."""
        return 0.0 if self._passed else self._ends_at - time.monotonic()

    def watch(self, sock: socket.socket) -> None:
        """Keep a duplicate of a new socket, to shut it down at the deadline.

        A duplicate, because TLS takes the original's descriptor over; shutting a duplicate
        down ends the connection under both, and it is ours to close (no descriptor reuse).
        """
        twin = sock.dup()
        with self._lock:
            if not self._done:
                self._sockets.append(twin)
                return
        twin.close()

    def __enter__(self) -> Deadline:
        self._timer.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._timer.cancel()
        with self._lock:
            self._done = True
            twins, self._sockets = self._sockets, []
        for twin in twins:
            twin.close()

    def _expire(self) -> None:
        with self._lock:
            if self._done:
                return
            self._passed = True
            for twin in self._sockets:
                try:
                    twin.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass  # not connected yet, or already closed by its peer
