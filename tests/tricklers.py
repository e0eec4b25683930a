"""Slow clients for tests: connections that send a request a line at a time and never finish.

Used by tests/service/web/test_buffering.py and tests/deploy/test_compose.py.
"""

from __future__ import annotations

import selectors
import socket
import threading
import time
from dataclasses import dataclass, field

HEAD = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n"


@dataclass
class Trickler:
    """One connection and what became of it: when the server cut it, and what it said."""

    sock: socket.socket
    opened: float
    cut: float | None = None  # monotonic seconds when the server closed it
    answer: bytes = b""


@dataclass
class Tricklers:
    """`count` connections to a port, each sending one more header line every `every_s`.

    With `body`, each sends a whole head announcing a body of that many bytes, then trickles
    the body a byte at a time. A thread of its own sends and notes every cut; stop() closes all.
    """

    port: int
    count: int
    every_s: float = 2.0
    body: int = 0
    host: str = "127.0.0.1"
    held: list[Trickler] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> Tricklers:
        """Open the connections and send each its first line(s); start trickling."""
        for _ in range(self.count):
            sock = socket.create_connection((self.host, self.port), timeout=10)
            sock.sendall(self._first())
            sock.setblocking(False)
            self.held.append(Trickler(sock, time.monotonic()))
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _first(self) -> bytes:
        if not self.body:
            return HEAD
        return b"POST /healthz HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\n" + (
            f"Content-Length: {self.body}\r\n\r\n".encode()
        )

    def _run(self) -> None:
        selector = selectors.DefaultSelector()
        for trickler in self.held:
            selector.register(trickler.sock, selectors.EVENT_READ, trickler)
        sent = 0
        next_send = time.monotonic() + self.every_s
        while not self._stop.is_set():
            for key, _ in selector.select(max(0.0, next_send - time.monotonic())):
                trickler = key.data
                try:
                    data = trickler.sock.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                trickler.answer += data
                if not data:
                    trickler.cut = time.monotonic()
                    selector.unregister(trickler.sock)
            if time.monotonic() >= next_send:
                sent += 1
                line = b"x" if self.body else f"X-Trickle-{sent}: {sent}\r\n".encode()
                for trickler in self.held:
                    if trickler.cut is None:
                        try:
                            trickler.sock.send(line)
                        except OSError:
                            pass  # cut: the next select sees it
                next_send += self.every_s
        selector.close()

    def cut(self) -> list[Trickler]:
        """Return the connections that the server has closed so far."""
        return [trickler for trickler in self.held if trickler.cut is not None]

    def stop(self) -> None:
        """Stop trickling and close every connection."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        for trickler in self.held:
            trickler.sock.close()
