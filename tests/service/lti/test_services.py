"""Platform calls that fail: the teacher's page gets the status, never the LMS's answer."""

import logging
import threading
import time
from dataclasses import replace
from urllib.parse import urlsplit

import pytest
import requests
from pylti1p3.exception import LtiServiceException
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from service.lti.keys import KeyRing
from service.lti.services import CachingConnector, PlatformAccess, TokenCache, describe
from service.outbound import Allowed, Client, Policy
from service.settings import Settings

SECRET = "<html>internal admin console: db password hunter2</html>"


@pytest.fixture
def lms():
    """A token endpoint that refuses, with a body an attacker would like to read back."""

    @Request.application
    def app(request):
        status = int(request.args.get("status", "409"))
        if request.args.get("slow"):  # an LMS that takes the connection and never answers
            time.sleep(2)
        if request.args.get("deep"):  # a token answer nested deeper than Python recurses
            return Response("[" * 100_000, content_type="application/json")
        if request.args.get("throttled"):  # Canvas's throttle (FINDINGS.md)
            return Response(
                "403 Forbidden (Rate Limit Exceeded)",
                status=403,
                headers={"X-Rate-Limit-Remaining": request.args["throttled"]},
                content_type="text/plain",
            )
        return Response(SECRET, status=status)

    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (409, "HTTP 409 Conflict"),
        (401, "HTTP 401 Unauthorized"),
        (599, "HTTP 599"),
        (200, "HTTP 200 OK (the answer is not JSON)"),
    ],
)
def test_a_refused_token_request_is_described_without_its_body(
    lms, tmp_path, caplog, status, expected
):
    access = PlatformAccess(
        1, "https://lms.example.org", "client-1", f"{lms}/token?status={status}",
        KeyRing(tmp_path / "keys").current(),
    )  # fmt: skip
    client = Client(Policy(Allowed.parse(urlsplit(lms).netloc)))
    connector = CachingConnector(access, TokenCache(), client)
    with pytest.raises(LtiServiceException) as info:
        connector.get_access_token(["scope"])
    with caplog.at_level(logging.WARNING, logger="service.lti.services"):
        description = describe(info.value)
    assert description == expected and "hunter2" not in description
    assert "hunter2" in caplog.text  # for whoever runs the tool, in the log


def test_demo_mode_allows_the_tools_own_origin_and_nothing_more():
    settings = replace(Settings(), demo=1, base_url="http://127.0.0.1:5123", outbound_allow="")
    allowed = Policy.from_settings(settings).allowed
    assert allowed.host_ports == frozenset() and allowed.networks == ()
    assert {(str(ip), port) for ip, port in allowed.address_ports} == {("127.0.0.1", 5123)}
    plain = Policy.from_settings(replace(settings, demo=0)).allowed
    assert plain == Allowed()


def test_a_token_answer_nested_too_deeply_is_a_clear_failure(lms, tmp_path):
    access = PlatformAccess(
        1, "https://lms.example.org", "client-1", f"{lms}/token?deep=1",
        KeyRing(tmp_path / "keys").current(),
    )  # fmt: skip
    client = Client(Policy(Allowed.parse(urlsplit(lms).netloc)))
    with pytest.raises(LtiServiceException) as info:
        CachingConnector(access, TokenCache(), client).get_access_token(["scope"])
    assert describe(info.value) == "HTTP 200 OK (the answer is JSON nested too deeply)"


@pytest.mark.parametrize(
    "error",
    [
        KeyError("UPSTREAM-SECRET"),  # pylti1p3 looking up what an odd answer lacks
        TypeError("UPSTREAM-SECRET"),
        requests.HTTPError("404 Client Error: UPSTREAM-SECRET for url: x", response=None),
        requests.ConnectionError("HTTPSConnectionPool(host='upstream-secret.example')"),
    ],
)
def test_no_failure_is_described_in_the_lmss_words(error, caplog):
    with caplog.at_level(logging.WARNING):
        words = describe(error)
    assert "upstream-secret" not in words.lower() and words
    assert "upstream-secret" in caplog.text.lower()  # for whoever runs the tool


@pytest.mark.parametrize(
    ("where", "is_away"),
    [
        # the LMS's web server without its PHP (Moodle with php-fpm stopped), maintenance,
        # a gateway's timeout, throttling: the platform is away, not this request wrong
        ("status=502", True),
        ("status=503", True),
        ("status=504", True),
        ("status=429", True),
        ("throttled=0.0", True),  # Canvas's throttle: a 403 with no request cost left
        ("throttled=412.5", False),  # a 403 with cost left: a refusal of this request
        # answers: a refusal of this request counts against it, as before
        ("status=400", False),
        ("status=401", False),
        ("status=403", False),
        ("status=404", False),
        ("status=422", False),
        ("status=500", False),
        ("refused", True),  # nothing listens on the port: the connection is refused
        ("late", True),  # no answer within the outbound deadline
        ("not allowed", False),  # the address rule's refusal: ours, about the configuration
    ],
)
def test_a_failed_platform_call_tells_an_lms_that_is_away_from_a_refusal(
    lms, tmp_path, where, is_away
):
    from service.lti.services import away
    from testkit.servers import free_port

    url, allow, deadline = f"{lms}/token?{where}", urlsplit(lms).netloc, 10.0
    if where == "refused":
        url = f"http://127.0.0.1:{free_port()}/token"
        allow = "127.0.0.1"
    elif where == "late":
        url, deadline = f"{lms}/token?slow=1", 0.3
    elif where == "not allowed":
        allow = "127.0.0.9"
    access = PlatformAccess(
        1, "https://lms.example.org", "client-1", url, KeyRing(tmp_path / "keys").current()
    )
    client = Client(Policy(Allowed.parse(allow), deadline_s=deadline))
    with pytest.raises(Exception) as info:  # noqa: PT011  what it raises is the question
        CachingConnector(access, TokenCache(), client).get_access_token(["scope"])
    assert away(info.value) is is_away, repr(info.value)
