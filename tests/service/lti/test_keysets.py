import html
import json
import logging
import socket
import threading
import time
from urllib.parse import urlsplit

import jwt
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import rsa
from sqlalchemy import update
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from demo.browser import run_launch
from demo.server import BackgroundServer
from service.lti.claims import LaunchProblem
from service.lti.keysets import KeySets
from service.outbound import Allowed, Client, Policy
from service.store.models import Platform
from testkit.lms import make_lms


def allowing(*servers, deadline_s=10.0):
    """The outbound client, allowed to reach exactly these test servers."""
    entries = ",".join(urlsplit(server["url"]).netloc for server in servers)
    return Client(Policy(Allowed.parse(entries), deadline_s))


def make_jwk(kid):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    return key, {**public, "kid": kid, "alg": "RS256"}


@pytest.fixture
def platform():
    """A real HTTP server publishing a JWKS that the test can change."""
    state = {"keys": [], "hits": 0, "status": 200}

    @Request.application
    def app(request):
        state["hits"] += 1
        return Response(
            json.dumps({"keys": state["keys"]}),
            status=state["status"],
            content_type="application/json",
        )

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state["url"] = f"http://127.0.0.1:{server.server_port}/jwks"
    yield state
    server.shutdown()


def test_known_kid_is_served_from_cache(platform):
    key, jwk = make_jwk("k1")
    platform["keys"] = [jwk]
    sets = KeySets(allowing(platform))
    token = jwt.encode({"a": 1}, key, algorithm="RS256", headers={"kid": "k1"})
    for _ in range(3):
        public = sets.public_key(platform["url"], "k1", "RS256")
        assert jwt.decode(token, public, algorithms=["RS256"]) == {"a": 1}
    assert platform["hits"] == 1


def test_unknown_kid_refetches_once_then_waits(platform):
    _, first = make_jwk("k1")
    platform["keys"] = [first]
    sets = KeySets(allowing(platform), refetch_s=60)
    sets.public_key(platform["url"], "k1", "RS256")
    for _ in range(5):
        with pytest.raises(LaunchProblem, match="Unknown key"):
            sets.public_key(platform["url"], "forged", "RS256")
    assert platform["hits"] == 1  # fetched at start; the forged kids did not refetch within 60 s


def test_rotated_key_is_picked_up(platform):
    _, first = make_jwk("k1")
    _, second = make_jwk("k2")
    platform["keys"] = [first]
    sets = KeySets(allowing(platform), refetch_s=0)
    sets.public_key(platform["url"], "k1", "RS256")
    platform["keys"] = [second]
    assert sets.public_key(platform["url"], "k2", "RS256") is not None
    assert platform["hits"] == 2


@pytest.mark.parametrize(
    ("kid", "alg", "message"),
    [
        (None, "RS256", "Missing kid"),
        ("k1", "none", "Refused algorithm"),
        ("k1", "HS256", "Refused algorithm"),
        ("k1", "RS384", "Key algorithm mismatch"),
    ],
)
def test_refused_headers(platform, kid, alg, message):
    _, jwk = make_jwk("k1")
    platform["keys"] = [jwk]
    with pytest.raises(LaunchProblem, match=message):
        KeySets(allowing(platform)).public_key(platform["url"], kid, alg)


def test_unreachable_or_broken_key_set_is_a_clear_problem(platform):
    platform["status"] = 500
    with pytest.raises(LaunchProblem) as info:
        KeySets(allowing(platform)).public_key(platform["url"], "k1", "RS256")
    assert str(info.value.title) == "Key set unavailable" and info.value.status == 502
    with pytest.raises(LaunchProblem, match="Key set unavailable"):
        KeySets(allowing({"url": "http://127.0.0.1:9"})).public_key(
            "http://127.0.0.1:9/jwks", "k1", "RS256"
        )


def test_a_failing_key_set_is_not_asked_again_within_refetch_s(platform):
    platform["status"] = 500
    sets = KeySets(allowing(platform), refetch_s=60)
    for _ in range(3):
        with pytest.raises(LaunchProblem, match="Key set unavailable"):
            sets.public_key(platform["url"], "k1", "RS256")
    assert platform["hits"] == 1


def test_a_key_set_on_a_refused_address_is_never_fetched(platform):
    sets = KeySets(Client(Policy()))  # the production rule: public addresses only
    with pytest.raises(LaunchProblem) as info:
        sets.public_key(platform["url"], "k1", "RS256")
    assert info.value.status == 502 and "is loopback" in str(info.value.detail)
    assert platform["hits"] == 0


@pytest.fixture
def trickling():
    """A key set URL whose server sends its headers, then a byte every 2 s (for a minute)."""
    listener = socket.create_server(("127.0.0.1", 0))
    state = {"url": f"http://127.0.0.1:{listener.getsockname()[1]}/jwks", "connections": 0}
    stop = threading.Event()

    def serve(conn):
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
            conn.sendall(b"Content-Length: 100\r\n\r\n")
            for _ in range(30):
                if stop.wait(2):
                    return
                try:
                    conn.sendall(b" ")
                except OSError:
                    return  # the client gave up

    def accept():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            state["connections"] += 1
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield state
    stop.set()
    listener.close()


def test_a_slow_key_set_delays_no_other_platform(platform, trickling):
    """Platform A's key set trickles; B's launches go on, and A's fails at the deadline."""
    key, jwk = make_jwk("b1")
    platform["keys"] = [jwk]
    sets = KeySets(allowing(platform, trickling, deadline_s=3))
    outcome = {}

    def launch_a():
        started = time.monotonic()
        try:
            sets.public_key(trickling["url"], "a1", "RS256")
        except LaunchProblem as exc:
            outcome["a"] = exc
        outcome["a_s"] = time.monotonic() - started

    a = threading.Thread(target=launch_a, daemon=True)
    a.start()
    time.sleep(0.5)  # A's fetch is under way
    b_times = []
    for _ in range(3):
        started = time.monotonic()
        b = threading.Thread(
            target=lambda: sets.public_key(platform["url"], "b1", "RS256"), daemon=True
        )
        b.start()
        b.join(timeout=2)
        assert not b.is_alive(), "B's launch waited for A's key set"
        b_times.append(time.monotonic() - started)
    a.join(timeout=6)
    assert not a.is_alive(), "A's fetch outlived its 3 s deadline"
    assert max(b_times) < 1
    problem = outcome["a"]
    assert (str(problem.title), problem.status) == ("Key set unavailable", 502)
    assert "took longer than 3 s" in str(problem.detail)
    assert 2.5 < outcome["a_s"] < 4.5


def test_launches_waiting_on_one_key_set_share_its_fetch(trickling):
    sets = KeySets(allowing(trickling, deadline_s=2))
    errors, threads = [], []
    started = time.monotonic()
    for _ in range(4):
        thread = threading.Thread(
            target=lambda: errors.append(_problem(sets, trickling["url"])), daemon=True
        )
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join(timeout=5)
    assert time.monotonic() - started < 4.5
    assert [e.status for e in errors] == [502] * 4
    assert trickling["connections"] == 1


def _problem(sets, url):
    try:
        sets.public_key(url, "k1", "RS256")
    except LaunchProblem as exc:
        return exc
    raise AssertionError("the key set answered")


SECRET_PHRASE = "UPSTREAM-SECRET internal=10.0.0.5"


@pytest.fixture
def served(tmp_path):
    """A real launch whose platform's key set URL is a server that answers what a test sets."""
    state = {"status": "200 OK", "body": b"{}"}

    @Request.application
    def app(request):
        return Response(state["body"], status=state["status"], content_type="application/json")

    server = BackgroundServer(app).start()
    state["url"] = server.url + "/jwks"
    lms, tool_server = make_lms(tmp_path, allow=server.url.removeprefix("http://"))
    with lms.store.session() as session:
        session.execute(update(Platform).values(key_set_url=state["url"]))
    state["kid"] = requests.get(lms.platform.jwks_url, timeout=10).json()["keys"][0]["kid"]

    def launch():
        trace = run_launch(requests.Session(), lms.platform.launch("ali", lms.link().id))
        return trace.launch

    state["launch"] = launch
    yield state
    server.stop()
    lms.demo.stop()
    tool_server.stop()
    lms.store.dispose()


@pytest.mark.parametrize(
    ("body", "fault"),
    [
        (b"[" * 100_000, "answered JSON nested too deeply"),
        (b'{"keys": ' + b'{"a": ' * 100_000, "answered JSON nested too deeply"),
        (b"<html>SECRET-BODY</html>", "did not answer JSON"),
        (b'["SECRET-BODY"]', "did not answer a JSON object"),
    ],
)
def test_a_key_set_that_is_not_a_json_object_is_a_clear_page(served, body, fault):
    served["body"] = body
    page = served["launch"]()
    assert page.status_code == 502, page.text[:300]  # the platform's fault: never a 500
    text = html.unescape(page.text)
    assert "Bad key set" in text and "SECRET-BODY" not in text
    assert f"the key set at {served['url']} {fault}" in text


def test_a_key_sets_reason_phrase_never_reaches_the_page(served, caplog):
    served["status"] = "404 " + SECRET_PHRASE
    served["body"] = b"SECRET-BODY"
    with caplog.at_level(logging.WARNING):
        page = served["launch"]()
    text = html.unescape(page.text)
    assert page.status_code == 502 and "Key set unavailable" in text
    assert "HTTP 404 Not Found" in text
    for word in ("UPSTREAM-SECRET", "10.0.0.5", "SECRET-BODY"):
        assert word not in text
    assert SECRET_PHRASE in caplog.text  # for whoever runs the tool


def test_an_unreadable_key_is_a_clear_page_that_quotes_none_of_it(served):
    served["body"] = json.dumps({"keys": [{"kid": served["kid"], "x": "SECRET-KEY"}]}).encode()
    page = served["launch"]()
    text = html.unescape(page.text)
    assert page.status_code == 502 and "Unusable key" in text and "SECRET-KEY" not in text
