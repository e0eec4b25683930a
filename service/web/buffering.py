"""gunicorn's gthread worker, with each request buffered whole in its poller before a thread
takes it (`codeblanks serve --worker-class service.web.buffering.BufferingWorker`).

gthread hands a connection to a thread as soon as its first bytes arrive, and the thread then
reads the rest of the head and the body itself, for as long as the client takes: forty
connections sending one header line every 2 s held every thread of `codeblanks serve` (2
processes x 16), and /healthz timed out (issue 27). Here the worker's own loop reads every
connection without blocking until its request is whole (head, then a Content-Length or
chunked body), and only then gives it to a thread, which parses it from memory. A request
must arrive within deadlines of its own, however it trickles: its head HEAD_S after the
connection opened (or its first byte, on a kept-alive connection), its body BODY_S after the
head; past them it is answered 408 and closed. A body over MAX_BODY is not waited for: the
app refuses it from its head (413, in its own words) and the connection is closed; a head over
MAX_HEAD is refused here (431). A connection is closed gracefully (FIN, then what the client
still sends is read and dropped until it closes, LINGER_S at most) in the poller too: gunicorn
did it blocking in its loop, so that clients that never close stalled it for 2 s each.
Plain HTTP only: TLS is the reverse proxy's (docs/operations.md).
"""

from __future__ import annotations

import errno
import selectors
import socket
import time
from functools import partial
from typing import Any

from gunicorn.workers.gthread import TConn, ThreadWorker

from service.web import MAX_BODY

HEAD_S = 10.0  # nginx's client_header_timeout is 60 s by default; a head is a few hundred bytes
BODY_S = 15.0  # the largest body (MAX_BODY, 1 MiB) at 1 Mbit/s takes 8 s
MAX_HEAD = 64 * 1024  # gunicorn's own limits allow 100 header lines of 8 KiB: ample
SWEEP_S = 0.25  # how often the deadlines are looked at
LINGER_S = 2.0  # gunicorn's own graceful close waits as long for the client's FIN

_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
_REFUSALS = {
    408: ("Request Timeout", "The request did not arrive in time."),
    431: ("Request Header Fields Too Large", "The request head is too large."),
}


class Arrival(TConn):  # type: ignore[misc]
    """A connection and the request arriving on it: its bytes so far and its deadline."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.received = bytearray()
        self.deadline = 0.0
        self.head_end = 0  # where the body starts, once the head is whole
        self.body_end = 0  # where the request ends, when its length is known
        self.chunked = False
        self.scanned = 0  # how far a chunked body has been checked
        self.expects_continue = False
        self.continued = False  # 100 Continue sent
        self.oversize = False  # a body over MAX_BODY: the app refuses it, the connection ends

    def begin(self, data: bytes = b"") -> None:
        """Start a new request with the bytes already read of it."""
        self.received = bytearray(data)
        self.deadline = time.monotonic() + HEAD_S
        self.head_end = self.body_end = self.scanned = 0
        self.chunked = self.expects_continue = self.continued = self.oversize = False

    def progress(self) -> int | None:
        """Return 0 once the request is whole, an HTTP status to refuse it, or None to wait."""
        if not self.head_end:
            end = self.received.find(b"\r\n\r\n")
            if end < 0:
                return 431 if len(self.received) > MAX_HEAD else None
            self.head_end = end + 4
            if self.head_end > MAX_HEAD:
                return 431
            refused = self._frame(bytes(self.received[:end]))
            if refused is not None:
                return refused
            self.deadline = time.monotonic() + BODY_S
        if self.chunked:
            return self._scan_chunks()
        if len(self.received) >= self.body_end:
            return 0
        self._continue()
        return None

    def _frame(self, head: bytes) -> int | None:
        """Learn how the body ends from the head; a head gunicorn would refuse passes as it is."""
        fields = [line.partition(b":") for line in head.split(b"\r\n")[1:]]
        found = {name.strip().lower(): value.strip() for name, _, value in fields}
        self.expects_continue = found.get(b"expect", b"").lower() == b"100-continue"
        length, coding = found.get(b"content-length"), found.get(b"transfer-encoding")
        self.body_end = self.head_end
        if coding is not None:
            # gunicorn refuses a body framed twice, or by another coding: its parser answers
            self.chunked = length is None and coding.lower() == b"chunked"
            self.scanned = self.head_end
        elif length is not None and length.isdigit():
            if int(length) > MAX_BODY:
                self.oversize = True
                return 0
            self.body_end += int(length)
        return None

    def _scan_chunks(self) -> int | None:
        while True:
            line_end = self.received.find(b"\r\n", self.scanned)
            if line_end < 0:
                return None
            size_text = bytes(self.received[self.scanned : line_end]).split(b";")[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                return 0  # gunicorn's parser answers 400
            if size == 0:  # then trailer lines, up to an empty one
                if self.received[line_end + 2 : line_end + 4] == b"\r\n":
                    return 0
                return 0 if self.received.find(b"\r\n\r\n", line_end) >= 0 else None
            if line_end + 2 + size - self.head_end > MAX_BODY:
                self.oversize = True
                return 0
            if len(self.received) < line_end + 2 + size + 2:
                self._continue()
                return None
            self.scanned = line_end + 2 + size + 2

    def _continue(self) -> None:
        # the client waits for it before it sends the body (handle_request tells gunicorn)
        if self.expects_continue and not self.continued:
            self.continued = True
            self._send(_CONTINUE)

    def read(self) -> bytes | None:
        """Return what came (nothing when the client went), or None while nothing has."""
        try:
            data: bytes = self.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError:
            return b""
        return data

    def refuse(self, status: int) -> None:
        """Answer a refusal in a few bytes (the socket's buffer takes them), and close."""
        reason, text = _REFUSALS[status]
        body = text.encode() + b"\n"
        head = f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\n"
        head += f"Content-Type: text/plain; charset=utf-8\r\nContent-Length: {len(body)}\r\n\r\n"
        self._send(head.encode() + body)
        self.close()

    def _send(self, data: bytes) -> None:
        try:
            self.sock.send(data)
        except OSError:
            pass  # the client went: the next read or the deadline closes it


class BufferingWorker(ThreadWorker):  # type: ignore[misc]
    """The gthread worker with requests buffered in its poller under deadlines (see above)."""

    @classmethod
    def check_config(cls, cfg: Any, log: Any) -> None:
        """Refuse TLS: its handshake would block the poller (the proxy terminates TLS)."""
        if cfg.is_ssl:
            raise RuntimeError("BufferingWorker serves plain HTTP: terminate TLS in the proxy")
        super().check_config(cfg, log)

    def init_process(self) -> None:
        """Start with no request arriving and no connection closing."""
        self.arriving: set[Arrival] = set()
        self.lingering: set[Arrival] = set()
        self.next_sweep = 0.0
        super().init_process()

    def accept(self, listener: Any) -> None:
        """Accept a connection and wait, in the poller, for its request."""
        try:
            sock, client = listener.accept()
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        conn = Arrival(self.cfg, sock, client, listener.getsockname())
        self.arrive(conn)

    def arrive(self, conn: Arrival, data: bytes = b"") -> None:
        """Wait for the whole of a new request on `conn` (of which `data` came already)."""
        conn.begin(data)
        if data and self.judge(conn) is not None:
            return
        conn.sock.setblocking(False)
        self.arriving.add(conn)
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self.on_arrival, conn))

    def on_arrival(self, conn: Arrival, sock: Any) -> None:
        """Read what came; hand the request to a thread once whole."""
        data = conn.read()
        if data is None:
            return
        if not data:  # the client went
            self.forget(conn)
            self.nr_conns -= 1
            conn.close()
            return
        conn.received += data
        self.judge(conn)

    def judge(self, conn: Arrival) -> int | None:
        """Hand a whole request to a thread, or refuse it; return None while it arrives."""
        verdict = conn.progress()
        if verdict is not None:
            self.forget(conn)
        if verdict == 0:
            conn.data_ready = True
            self.enqueue_req(conn)
        elif verdict is not None:
            self.nr_conns -= 1
            conn.refuse(verdict)
        return verdict

    def forget(self, conn: Arrival) -> None:
        """Stop waiting for `conn` in the poller."""
        if conn in self.arriving:  # else judged before it was ever registered
            self.arriving.discard(conn)
            self.poller.unregister(conn.sock)

    def handle(self, conn: Arrival) -> Any:
        """Parse the buffered request in this thread and serve it."""
        conn.sock.setblocking(True)
        conn.init()
        conn.parser.unreader.unread(bytes(conn.received))
        conn.received = bytearray()
        return super().handle(conn)

    def _keepalive_after(self, conn: Arrival, keepalive: bool) -> bool:
        # an oversize body is never read (gunicorn would drain it in the thread): close
        return False if conn.oversize else bool(super()._keepalive_after(conn, keepalive))

    def handle_request(self, req: Any, conn: Arrival) -> Any:
        """Serve a request; gunicorn would send a 100 Continue that the poller sent already."""
        if conn.continued:
            req._expected_100_continue = False
        return super().handle_request(req, conn)

    def on_client_socket_readable(self, conn: Arrival, client: Any) -> None:
        """A kept-alive connection's next request starts: wait for it whole, here."""
        self.poller.unregister(client)
        self.keepalived_conns.remove(conn)
        self.arrive(conn)

    def finish_request(self, conn: Arrival, fs: Any) -> None:
        """After a response: a request read ahead (pipelined) waits to be whole, here; a
        connection that ends lingers here."""
        keep = not fs.cancelled() and fs.exception() is None and fs.result()
        if not keep:
            self.nr_conns -= 1
            self.linger(conn)
            return
        ahead = conn.parser.unreader.take_buffered() if self.alive else b""
        if ahead:
            self.arrive(conn, ahead)
            return
        super().finish_request(conn, fs)

    def linger(self, conn: Arrival) -> None:
        """Close gracefully without blocking: FIN now, the socket once the client closes."""
        try:
            conn.sock.shutdown(socket.SHUT_WR)
            conn.sock.setblocking(False)
        except OSError:
            conn.close()
            return
        conn.received = bytearray()
        conn.deadline = time.monotonic() + LINGER_S
        self.lingering.add(conn)
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self.on_linger, conn))

    def on_linger(self, conn: Arrival, sock: Any) -> None:
        """Drop what the closing client still sends; close at its end or at 64 KiB."""
        data = conn.read()
        if data is None:
            return
        conn.received += data
        if not data or len(conn.received) > 65536:
            self.lingering.discard(conn)
            self.poller.unregister(sock)
            conn.close()

    def murder_pending(self) -> None:
        """Close what missed its deadline: 408 to a request begun, nothing to a silent one."""
        super().murder_pending()
        now = time.monotonic()
        if now < self.next_sweep:
            return
        self.next_sweep = now + SWEEP_S
        # a stopping worker waits for no request that has not begun
        missed = [c for c in self.arriving if c.deadline <= now or not (self.alive or c.received)]
        for conn in missed:
            self.forget(conn)
            self.nr_conns -= 1
            if conn.received:
                conn.refuse(408)
            else:
                conn.close()
        for conn in [conn for conn in self.lingering if conn.deadline <= now]:
            self.lingering.discard(conn)
            self.poller.unregister(conn.sock)
            conn.close()
