import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import jwt
import pytest
import requests

from demo import DemoServer, Tool
from tests.demo.fake_tool import FakeTool, impostor_key

SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
LINEITEM = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def test_token_endpoint_grants_a_bearer_token(
    demo: DemoServer, tool: FakeTool, registered: Tool
) -> None:
    assertion = tool.sign(tool.assertion_claims(demo.platform.token_url))
    answer = tool.token_request(demo.platform.token_url, f"{SCORE} {LINEITEM}", assertion)
    assert answer.status_code == 200, answer.text
    assert answer.headers["Content-Type"] == "application/json"
    assert answer.headers["Cache-Control"] == "no-store"
    body = answer.json()
    assert body["token_type"] == "Bearer" and body["expires_in"] == 3600
    assert body["scope"] == f"{SCORE} {LINEITEM}"
    claims = jwt.decode(
        body["access_token"],
        demo.platform.key.public_pem,
        algorithms=["RS256"],
        audience=demo.platform.issuer,
    )
    assert claims["sub"] == registered.client_id
    assert claims["exp"] - claims["iat"] == 3600


NOW = int(time.time())
BAD_ASSERTIONS: list[tuple[str, dict[str, Any], str]] = [
    ("aud is the issuer", {"aud": "ISSUER"}, "aud must be"),
    ("aud elsewhere", {"aud": "http://127.0.0.1:1/token"}, "aud must be"),
    ("unknown client", {"iss": "stranger", "sub": "stranger"}, "unknown client id"),
    ("iss is not sub", {"iss": "someone"}, "iss and sub"),
    ("expired", {"iat": NOW - 600, "exp": NOW - 300}, "expired"),
    ("no exp", {"exp": None}, "'exp'"),
    ("no iat", {"iat": None}, "'iat'"),
    ("iat in future", {"iat": NOW + 3600, "exp": NOW + 7200}, "iat"),
    ("no jti", {"jti": None}, "no jti"),
]


@pytest.mark.parametrize(
    "changes, message", [b[1:] for b in BAD_ASSERTIONS], ids=[b[0] for b in BAD_ASSERTIONS]
)
def test_token_endpoint_refuses_a_bad_client_assertion(
    demo: DemoServer, tool: FakeTool, registered: Tool, changes: dict[str, Any], message: str
) -> None:
    if changes.get("aud") == "ISSUER":
        changes = {"aud": demo.platform.issuer}
    assertion = tool.sign(tool.assertion_claims(demo.platform.token_url, **changes))
    answer = tool.token_request(demo.platform.token_url, SCORE, assertion)
    assert answer.status_code == 401
    assert answer.json()["error"] == "invalid_client"
    assert message in answer.json()["error_description"]


@pytest.mark.parametrize("signing", ["impostor key", "unknown kid"])
def test_token_endpoint_refuses_a_bad_signature(
    demo: DemoServer, tool: FakeTool, registered: Tool, signing: str
) -> None:
    claims = tool.assertion_claims(demo.platform.token_url)
    if signing == "impostor key":
        assertion = tool.sign(claims, key=impostor_key())
    else:
        assertion = tool.sign(claims, kid="rotated-away")
    answer = tool.token_request(demo.platform.token_url, SCORE, assertion)
    assert answer.status_code == 401 and answer.json()["error"] == "invalid_client"


def test_a_jti_is_accepted_once(demo: DemoServer, tool: FakeTool, registered: Tool) -> None:
    assertion = tool.sign(tool.assertion_claims(demo.platform.token_url))
    assert tool.token_request(demo.platform.token_url, SCORE, assertion).status_code == 200
    again = tool.token_request(demo.platform.token_url, SCORE, assertion)
    assert again.status_code == 401 and "used before" in again.json()["error_description"]


def test_a_jti_is_accepted_once_even_under_concurrent_requests(
    demo: DemoServer, tool: FakeTool, registered: Tool
) -> None:
    assertion = tool.sign(tool.assertion_claims(demo.platform.token_url))
    with ThreadPoolExecutor(8) as pool:
        answers = list(
            pool.map(
                lambda _: tool.token_request(demo.platform.token_url, SCORE, assertion), range(8)
            )
        )
    assert sorted(a.status_code for a in answers) == [200] + [401] * 7


def test_scopes_beyond_the_registration_are_refused(demo: DemoServer, tool: FakeTool) -> None:
    tool.register_with(demo.platform, scopes=[SCORE])
    assertion = tool.sign(tool.assertion_claims(demo.platform.token_url))
    answer = tool.token_request(demo.platform.token_url, f"{SCORE} {LINEITEM}", assertion)
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid_scope" and LINEITEM in answer.text


FORM_ERRORS = [
    ({"grant_type": "password"}, "unsupported_grant_type"),
    ({"client_assertion_type": "urn:other"}, "invalid_request"),
    ({"client_assertion": ""}, "invalid_request"),
    ({"scope": ""}, "invalid_scope"),
]


@pytest.mark.parametrize("changes, error", FORM_ERRORS)
def test_token_endpoint_refuses_a_malformed_request(
    demo: DemoServer, tool: FakeTool, registered: Tool, changes: dict[str, str], error: str
) -> None:
    form = {
        "grant_type": "client_credentials",
        "client_assertion_type": JWT_BEARER,
        "client_assertion": tool.sign(tool.assertion_claims(demo.platform.token_url)),
        "scope": SCORE,
        **changes,
    }
    answer = requests.post(demo.platform.token_url, data=form, timeout=5)
    assert answer.status_code == 400 and answer.json()["error"] == error


def test_token_answer_can_be_typed_like_moodle(state_dir: Path, tool: FakeTool) -> None:
    with DemoServer(state_dir, token_content_type="text/html") as demo:
        tool.register_with(demo.platform)
        assertion = tool.sign(tool.assertion_claims(demo.platform.token_url))
        answer = tool.token_request(demo.platform.token_url, SCORE, assertion)
        assert answer.headers["Content-Type"].startswith("text/html")
        assert answer.json()["token_type"] == "Bearer"


def test_expired_or_foreign_bearer_tokens_are_refused(
    demo: DemoServer, tool: FakeTool, registered: Tool
) -> None:
    url = demo.platform.lineitems_url("demo-course-1")
    base = {"iss": demo.platform.issuer, "aud": demo.platform.issuer, "sub": tool.client_id}
    now = int(time.time())  # not NOW: a long session would expire these for the wrong reason
    expired = demo.platform.sign({**base, "scope": LINEITEM, "iat": now - 7200, "exp": now - 60})
    id_token_like = demo.platform.sign(
        {**base, "aud": tool.client_id, "scope": LINEITEM, "iat": now, "exp": now + 60}
    )
    forged = jwt.encode(
        {**base, "scope": LINEITEM, "iat": now, "exp": now + 60}, impostor_key(), "RS256"
    )
    for token, message in [(expired, "expired"), (id_token_like, "invalid"), (forged, "invalid")]:
        answer = requests.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=5)
        assert answer.status_code == 401
        assert message in answer.json()["error_description"]
        assert answer.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'
