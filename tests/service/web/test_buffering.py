"""`codeblanks serve` against slow clients: a request that trickles in holds no thread and is
cut at its deadline, while whole requests (kept alive, pipelined, chunked, 100-continue) pass."""

from __future__ import annotations

import json
import socket
import time

import pytest

from service.web.buffering import BODY_S, HEAD_S
from testkit import slowness
from testkit.webserver import WebServer, seed
from tests.tricklers import Tricklers

# /healthz takes milliseconds; before the buffering worker, 40 tricklers kept it waiting for
# as long as they trickled (issue 27: 2 processes x 16 threads, each held by one)
PROMPT_S = 5


@pytest.fixture
def served(tmp_path):
    """`codeblanks serve` with its defaults (2 processes x 16 threads), and one student."""
    env, students = seed(tmp_path, 1)
    server = WebServer(env, tmp_path / "web.log")
    try:
        yield server.start(), students[0]
    finally:
        server.stop()


def _healthz_s(server: WebServer) -> float:
    started = time.monotonic()
    answer = server.get("/healthz", timeout=slowness.scaled(PROMPT_S))
    assert answer.status == 200
    return time.monotonic() - started


def _wait_until_cut(tricklers: Tricklers, within: float) -> None:
    deadline = time.monotonic() + within
    while len(tricklers.cut()) < tricklers.count and time.monotonic() < deadline:
        time.sleep(0.2)


@pytest.mark.parametrize(
    ("count", "every_s", "body", "deadline"),
    [(200, 2.0, 0, HEAD_S), (100, 1.0, 1000, BODY_S)],
    ids=["two hundred trickled heads", "a hundred trickled bodies"],
)
def test_tricklers_leave_healthz_answering_and_are_cut_at_the_deadline(
    served, count, every_s, body, deadline
):
    server, _ = served
    tricklers = Tricklers(server.port, count, every_s=every_s, body=body).start()
    try:
        time.sleep(3)  # every one has sent a line or two: each would hold a thread now
        took = [_healthz_s(server) for _ in range(10)]
        assert max(took) < slowness.scaled(PROMPT_S), took
        assert not tricklers.cut(), "cut before the deadline"
        _wait_until_cut(tricklers, deadline + slowness.scaled(PROMPT_S))
        cut = tricklers.cut()
        assert len(cut) == count, f"{count - len(cut)} tricklers still held after {deadline} s"
        for trickler in cut:
            assert trickler.cut is not None
            assert deadline - 1 <= trickler.cut - trickler.opened <= deadline + slowness.scaled(5)
            assert trickler.answer.startswith(b"HTTP/1.1 408 "), trickler.answer
    finally:
        tricklers.stop()


def _exchange(port: int, data: bytes, answers: int = 1) -> bytes:
    """Send `data` on a connection of its own; return what came back until `answers` ended."""
    with socket.create_connection(("127.0.0.1", port), timeout=slowness.scaled(10)) as sock:
        sock.sendall(data)
        got = b""
        while got.count(b"HTTP/1.1 ") - got.count(b"HTTP/1.1 100 ") < answers or not _ended(got):
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += chunk
        return got


def _ended(got: bytes) -> bool:
    head, _, body = got.rpartition(b"\r\n\r\n")
    length = [line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
    return bool(length) and len(body) >= int(length[-1].split(b":")[1])


def _submission(student, size: int) -> tuple[bytes, bytes]:
    body = json.dumps({"source": "#" * size + "\nprint(1)\n"}).encode()
    head = (
        f"POST /api/placements/1/submissions HTTP/1.1\r\nHost: localhost\r\n"
        f"Content-Type: application/json\r\nX-CodeBlanks-Session: {student.token}\r\n"
    ).encode()
    return head, body


def test_whole_requests_pass_kept_alive_pipelined_chunked_and_with_100_continue(served):
    server, student = served
    get = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
    pipelined = _exchange(server.port, get * 3, answers=3)
    assert pipelined.count(b"HTTP/1.1 200 OK") == 3, pipelined
    head, body = _submission(student, 30_000)
    plain = _exchange(server.port, head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    assert plain.startswith(b"HTTP/1.1 202 "), plain[:300]
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:7000], body[7000:]))
    chunked = _exchange(
        server.port, head + b"Transfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"
    )
    assert chunked.startswith(b"HTTP/1.1 202 "), chunked[:300]
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        small = b'{"source": "print(2)"}'
        sock.sendall(head + b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(small))
        assert sock.recv(100).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        sock.sendall(small)
        assert b"HTTP/1.1 202 " in sock.recv(65536)


def test_a_body_over_the_limit_is_refused_at_once_by_the_app(served):
    server, student = served
    head, _ = _submission(student, 10)
    started = time.monotonic()
    refused = _exchange(server.port, head + b"Content-Length: %d\r\n\r\n" % (2 * 1024 * 1024))
    assert refused.startswith(b"HTTP/1.1 413 "), refused[:300]
    # in the API's own words (its JSON refusal), though the body never came
    assert json.loads(refused.partition(b"\r\n\r\n")[2])["error"] == "request_entity_too_large"
    assert time.monotonic() - started < slowness.scaled(PROMPT_S)
    huge = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n" + b"X-Long: " + b"a" * 100_000
    assert _exchange(server.port, huge + b"\r\n\r\n").startswith(b"HTTP/1.1 431 ")


def test_clients_that_never_close_after_their_answer_leave_healthz_answering(served):
    # gunicorn closes a connection gracefully (FIN, then reading until the client's FIN, 2 s
    # at most) in its loop: fifty clients that never close would stall it for 50 s
    server, _ = served
    silent = []
    try:
        for _ in range(50):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            silent.append(sock)
        time.sleep(1)
        took = [_healthz_s(server) for _ in range(5)]
        assert max(took) < slowness.scaled(PROMPT_S), took
        assert all(sock.recv(65536).startswith(b"HTTP/1.1 200 ") for sock in silent)
    finally:
        for sock in silent:
            sock.close()


def test_connections_closed_before_a_request_do_not_use_up_the_process(tmp_path):
    # a process takes 1000 connections at a time (gunicorn's worker_connections): one that
    # went before its request must be counted out, or the process stops accepting for good
    env, _ = seed(tmp_path, 1)
    server = WebServer(env, tmp_path / "web.log", "--workers", "1").start()
    try:
        for _ in range(1100):
            socket.create_connection(("127.0.0.1", server.port), timeout=10).close()
        time.sleep(1)
        assert _healthz_s(server) < slowness.scaled(PROMPT_S)
    finally:
        server.stop()
