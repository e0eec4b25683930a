"""Name resolution inside the deadline, against a real name server that never answers.

The measurements run once, as root in a mount and network namespace of their own (see
dead_name_server.py): the host's own resolver and network are never touched.
"""

import json
import shutil
import socket
import subprocess
import sys
import threading
import time

import pytest

from service.outbound import Client, OutboundError, Policy, Reason
from service.outbound.resolver import Resolver
from testkit.servers import REPO


@pytest.fixture(scope="module")
def silent(tmp_path_factory):
    """What the client, a key set fetch and an AGS post did against the silent name server."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.fail("unshare and ip are needed: apt-get install util-linux iproute2")
    directory = tmp_path_factory.mktemp("dead-dns")
    done = subprocess.run(
        ["unshare", "--mount", "--net", sys.executable, "-m",
         "tests.service.outbound.dead_name_server", str(directory)],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_the_name_server_really_never_answers(silent):
    # glibc's own lookup waits its timeouts out (resolv.conf's defaults: 5 s, twice)
    assert silent["queries"] > 0
    assert silent["glibc"]["error"] == "gaierror" and silent["glibc"]["seconds"] >= 5


def test_a_request_ends_at_its_deadline_while_the_name_server_is_silent(silent):
    get = silent["get"]
    assert (get["error"], get["reason"]) == ("OutboundError", "late")
    assert "never-answers.example.test took longer than 2 s" in get["message"]
    assert "resolving its host name" in get["message"]
    assert get["seconds"] < 4  # a 2 s deadline; glibc alone took its 10 s


def test_lookups_on_a_silent_name_server_hold_a_bounded_number_of_threads(silent):
    crowd = silent["crowd"]
    assert crowd["reasons"] == ["late"] and crowd["slowest"] < 4
    assert 0 < crowd["resolver_threads"] <= Resolver().threads  # 20 requests at once


def test_a_key_set_fetch_ends_at_its_deadline(silent):
    found = silent["key_set"]
    assert found["error"] == "LaunchProblem" and found["message"].startswith("Key set unavailable")
    assert "took longer than 2 s" in found["message"] and found["seconds"] < 4


def test_an_ags_post_ends_at_its_deadline(silent):
    # no answer in time: the platform is taken to be away (its grades wait for it together)
    found = silent["ags"]
    assert found["error"] == "PlatformAway" and "took longer than 2 s" in found["message"]
    assert found["seconds"] < 4


def test_a_lookup_answered_in_time_is_used(monkeypatch):
    """The resolver hands back getaddrinfo's answer and its errors as they are."""
    real = socket.getaddrinfo
    monkeypatch.setattr(
        socket,
        "getaddrinfo",
        lambda host, *a, **k: real("127.0.0.1" if host == "a.test" else host, *a, **k),
    )
    client = Client(Policy(deadline_s=2))
    with pytest.raises(OutboundError) as info:  # resolved, then refused: it is loopback
        client.get("http://a.test:9/")
    assert info.value.reason is Reason.REFUSED and "a.test resolves to 127.0.0.1" in str(info.value)


def test_a_lookup_that_fails_fails_as_it_did(monkeypatch):
    def failing(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", failing)
    started = time.monotonic()
    with pytest.raises(Exception, match="NameResolutionError|Failed to resolve"):
        Client(Policy(deadline_s=2)).get("http://nowhere.test/")
    assert time.monotonic() - started < 1


def test_a_busy_resolver_makes_a_request_wait_only_within_its_deadline(monkeypatch):
    stuck = threading.Event()
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: stuck.wait(30))
    client = Client(Policy(deadline_s=1))
    client.resolver = Resolver(threads=1)
    try:
        first = threading.Thread(
            target=lambda: pytest.raises(OutboundError, client.get, "http://x.test/")
        )
        first.start()
        time.sleep(0.2)  # the one thread is taken
        started = time.monotonic()
        with pytest.raises(OutboundError) as info:
            client.get("http://y.test/")
        assert info.value.reason is Reason.LATE and "lookup threads still wait" in str(info.value)
        assert 0.5 < time.monotonic() - started < 2
        first.join(5)
    finally:
        stuck.set()
