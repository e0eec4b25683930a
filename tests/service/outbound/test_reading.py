"""Reading answers against real servers: heads and bodies capped, JSON read one way, and no
word of an answer (reason phrase, body, header, redirect target) in an error's message."""

import json
import logging
import socket
import time

import pytest
import requests
from werkzeug.wrappers import Request, Response

from demo.server import BackgroundServer
from service.outbound import (
    Allowed,
    Client,
    Fault,
    OutboundError,
    Policy,
    Reason,
    Unreadable,
    document,
    explain,
)
from service.outbound.reading import MAX_DEPTH, MAX_HEAD_BYTES, parse
from tests.service.outbound.raw_server import listen

SECRET_PHRASE = "UPSTREAM-SECRET internal=10.0.0.5"
HEADER = b"X-Filler: " + b"a" * 60_000 + b"\r\n"  # 60 KB, under http.client's 64 KiB a line


def client(netloc, deadline_s=5.0):
    return Client(Policy(Allowed.parse(netloc), deadline_s))


def raw_server(answer):
    """A server that reads a request, then lets `answer(conn, state)` write; notes how far."""
    state = {"sent": 0, "cut": False}

    def serve(conn):
        with conn:
            conn.recv(65536)
            try:
                answer(conn, state)
            except OSError:
                state["cut"] = True  # the client closed the connection on us

    listener = listen(serve)
    state["netloc"] = f"127.0.0.1:{listener.getsockname()[1]}"
    return state, listener


@pytest.fixture
def serve():
    """Start raw servers for a test; close them after."""
    listeners = []

    def start(answer):
        state, listener = raw_server(answer)
        listeners.append(listener)
        return state

    yield start
    for listener in listeners:
        listener.close()


def headers_then_ok(count, header=HEADER):
    def answer(conn, state):
        conn.sendall(b"HTTP/1.1 200 OK\r\n")
        for _ in range(count):
            conn.sendall(header)
            state["sent"] += 1
        conn.sendall(b"Content-Length: 2\r\nConnection: close\r\n\r\nok")

    return answer


def refusal(call):
    with pytest.raises(OutboundError) as info:
        call()
    return info.value


def test_ninety_headers_of_60_kb_are_refused(serve):
    state = serve(headers_then_ok(90))
    error = refusal(lambda: client(state["netloc"]).get(f"http://{state['netloc']}/"))
    assert error.reason is Reason.TOO_LARGE
    assert f"headers of the answer to 127.0.0.1 are over {MAX_HEAD_BYTES} bytes" in str(error)


def test_an_endless_head_is_refused_before_it_is_read(serve):
    state = serve(headers_then_ok(1000))  # 60 MB of headers, more than any socket buffers
    started = time.monotonic()
    error = refusal(lambda: client(state["netloc"]).get(f"http://{state['netloc']}/"))
    assert error.reason is Reason.TOO_LARGE and time.monotonic() - started < 3
    for _ in range(50):
        if state["cut"]:
            break
        time.sleep(0.1)
    assert state["cut"] and state["sent"] < 1000  # the client stopped reading and hung up


def test_too_many_small_headers_are_refused(serve):
    state = serve(headers_then_ok(150, b"X-A: b\r\n"))
    error = refusal(lambda: client(state["netloc"]).get(f"http://{state['netloc']}/"))
    assert error.reason is Reason.TOO_LARGE and "100 lines" in str(error)


def test_endless_interim_answers_are_refused(serve):
    def answer(conn, state):
        while True:
            conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n" * 100)

    state = serve(answer)
    started = time.monotonic()
    error = refusal(lambda: client(state["netloc"], deadline_s=5).get(f"http://{state['netloc']}/"))
    assert error.reason is Reason.TOO_LARGE and time.monotonic() - started < 2


def test_a_normal_head_still_works(serve):
    state = serve(headers_then_ok(40, b"X-Lms: " + b"v" * 1000 + b"\r\n"))
    answer = client(state["netloc"]).get(f"http://{state['netloc']}/")
    assert answer.status_code == 200 and answer.text == "ok"
    assert len(answer.headers["X-Lms"]) > 1000  # 40 of them, folded by requests


def test_a_redirect_to_a_huge_head_is_refused(serve):
    huge = serve(headers_then_ok(90))

    def answer(conn, state):
        conn.sendall(
            f"HTTP/1.1 302 Found\r\nLocation: http://{huge['netloc']}/\r\n"
            "Content-Length: 0\r\n\r\n".encode()
        )

    first = serve(answer)
    allowed = f"{first['netloc']},{huge['netloc']}"
    error = refusal(lambda: client(allowed).get(f"http://{first['netloc']}/"))
    assert error.reason is Reason.TOO_LARGE


@pytest.mark.parametrize(
    ("content", "fault"),
    [
        (b"[" * 100_000, Fault.TOO_DEEP),
        (b'{"a":' * 100_000, Fault.TOO_DEEP),
        (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), Fault.TOO_DEEP),
        (b'{"keys": ' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"}", Fault.TOO_DEEP),
        (b"<html>not json</html>", Fault.NOT_JSON),
        (b"", Fault.NOT_JSON),
        (b'{"a": "\xff"}', Fault.NOT_JSON),
        (b"[1, 2]", Fault.NOT_OBJECT),
        (b'"text"', Fault.NOT_OBJECT),
    ],
)
def test_what_is_not_a_json_object_is_refused_in_our_words(content, fault):
    answer = requests.Response()
    answer._content = content
    with pytest.raises(Unreadable) as info:
        document(answer)
    assert info.value.fault is fault and str(info.value) == f"the answer is {fault}"
    assert isinstance(info.value, ValueError)  # what requests' own json() raises


@pytest.mark.parametrize(
    "content",
    [b"[" * MAX_DEPTH + b"]" * MAX_DEPTH, b'{"keys": [{"kid": "k1", "n": "x"}]}', b"3", b"null"],
)
def test_json_within_the_depth_is_read(content):
    assert parse(content) == json.loads(content)


@pytest.fixture
def platform():
    """A real server whose answers a test sets: status line, body."""
    state = {"status": "200 OK", "body": b"{}"}

    @Request.application
    def app(request):
        return Response(state["body"], status=state["status"], content_type="application/json")

    server = BackgroundServer(app).start()
    state["url"] = server.url
    state["netloc"] = server.url.removeprefix("http://")
    yield state
    server.stop()


def test_the_clients_json_is_the_one_reader(platform):
    """pylti1p3 calls response.json(): deep JSON is a ValueError, never a RecursionError."""
    platform["body"] = b"[" * 100_000
    answer = client(platform["netloc"]).get(platform["url"])
    with pytest.raises(Unreadable) as info:
        answer.json()
    assert info.value.fault is Fault.TOO_DEEP


def test_a_reason_phrase_never_reaches_the_words(platform, caplog):
    platform["status"] = "404 " + SECRET_PHRASE
    platform["body"] = b"SECRET-BODY"
    answer = client(platform["netloc"]).get(platform["url"])
    assert answer.reason == SECRET_PHRASE  # the server did send it
    with pytest.raises(requests.HTTPError) as info:
        answer.raise_for_status()
    assert SECRET_PHRASE in str(info.value)  # requests' own words quote it
    with caplog.at_level(logging.WARNING):
        words = explain(info.value)
    assert words == "it answered HTTP 404 Not Found"
    assert "SECRET-BODY" in caplog.text and SECRET_PHRASE in caplog.text  # for the operator


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (requests.Timeout("read timed out: SECRET"), "it did not answer in time"),
        (requests.TooManyRedirects("SECRET"), "it redirected too many times"),
        (requests.exceptions.SSLError("SECRET"), "the TLS connection failed"),
        (requests.ConnectionError("http://SECRET/ refused"), "the connection failed"),
        (requests.exceptions.ChunkedEncodingError("SECRET"), "the request failed"),
        (Unreadable(Fault.TOO_DEEP), "the answer is JSON nested too deeply"),
    ],
)
def test_every_failure_is_told_in_our_words(error, words):
    assert explain(error).startswith(words) and "SECRET" not in explain(error)


def test_a_name_that_does_not_resolve_is_said_so(monkeypatch):
    def unknown(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", unknown)
    with pytest.raises(requests.ConnectionError) as info:
        client("").get("http://lms.example.test/")
    assert explain(info.value) == "its host name does not resolve"
