import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jwt
import pytest
import requests

from demo import DemoError, DemoServer, Link, Tool, parse_form, run_launch
from tests.demo.fake_tool import DL, LTI, FakeTool

AGS = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"


@pytest.fixture
def link(demo: DemoServer, registered: Tool) -> Link:
    return demo.platform.add_link(
        registered.client_id,
        "What is attention?",
        custom={"lesson": "expert/what-is-attention", "who": "$User.id"},
        score_maximum=10,
    )


def verified(demo: DemoServer, token: str, audience: str) -> dict[str, Any]:
    """Verify an id_token the way a tool does: the key from the platform's JWKS URL."""
    key = jwt.PyJWKClient(demo.platform.jwks_url).get_signing_key_from_jwt(token)
    claims: dict[str, Any] = jwt.decode(
        token, key.key, algorithms=["RS256"], audience=audience, issuer=demo.platform.issuer
    )
    return claims


@pytest.mark.parametrize(
    "login_method, storage_target", [("GET", None), ("POST", "_parent")], ids=["get", "post"]
)
def test_launch_reaches_the_tool_with_a_verifiable_id_token(
    state_dir: Path, tool: FakeTool, login_method: str, storage_target: str | None
) -> None:
    config = {"login_method": login_method, "storage_target": storage_target}
    with DemoServer(state_dir, **config) as demo:
        registered = tool.register_with(demo.platform)
        link = demo.platform.add_link(
            registered.client_id,
            "Attention",
            custom={"lesson": "expert/what-is-attention"},
            score_maximum=10,
        )
        [item] = demo.platform.lineitems_of(link)
        trace = run_launch(requests.Session(), demo.platform.launch("ali", link.id))

        [login] = tool.logins
        assert tool.login_methods == [login_method]
        assert login["iss"] == demo.platform.issuer
        assert login["login_hint"] == "demo-ali"
        assert login["target_link_uri"] == tool.launch_url
        assert login["client_id"] == registered.client_id
        assert login["lti_deployment_id"] == registered.deployment_id
        assert login["lti_message_hint"]
        assert login.get("lti_storage_target") == storage_target
        assert trace.launch.status_code == 200
        assert tool.launches == [trace.form.fields]
        assert trace.form.action == tool.launch_url

        token = trace.form.fields["id_token"]
        assert trace.form.fields["state"] == trace.auth_params["state"]
        assert jwt.get_unverified_header(token)["kid"] == demo.platform.key.kid
        claims = verified(demo, token, registered.client_id)
        assert claims == trace.form.claims
        assert claims["azp"] == registered.client_id
        assert claims["sub"] == "demo-ali"
        assert claims["nonce"] == trace.auth_params["nonce"]
        assert claims["exp"] - claims["iat"] == 60
        assert abs(claims["iat"] - time.time()) < 5
        assert claims[LTI + "message_type"] == "LtiResourceLinkRequest"
        assert claims[LTI + "version"] == "1.3.0"
        assert claims[LTI + "deployment_id"] == registered.deployment_id
        assert claims[LTI + "target_link_uri"] == tool.launch_url
        assert claims[LTI + "resource_link"] == {"id": link.id, "title": "Attention"}
        assert claims[LTI + "roles"] == [LEARNER]
        assert claims[LTI + "context"]["id"] == "demo-course-1"
        assert claims[LTI + "context"]["label"] == "DEMO101"
        assert claims[LTI + "context"]["title"] == "Demo course"
        assert (claims["name"], claims["given_name"], claims["family_name"]) == (
            "Ali Student",
            "Ali",
            "Student",
        )
        assert claims["email"] == "ali.student@example.com"
        assert claims[LTI + "custom"] == {"lesson": "expert/what-is-attention"}
        assert sorted(claims[AGS]["scope"]) == sorted(
            f"https://purl.imsglobal.org/spec/lti-ags/scope/{s}"
            for s in ("lineitem", "lineitem.readonly", "result.readonly", "score")
        )
        assert claims[AGS]["lineitems"] == demo.platform.lineitems_url("demo-course-1")
        assert claims[AGS]["lineitem"] == demo.platform.lineitem_url(item)
        assert claims[NRPS] == {
            "context_memberships_url": demo.platform.memberships_url("demo-course-1"),
            "service_versions": ["2.0"],
        }
        assert claims[LTI + "launch_presentation"] == {
            "document_target": "iframe",
            "return_url": demo.platform.issuer + "/",
            "locale": "en",  # Moodle sends the user's language in every launch
        }


def test_login_initiation_is_posted_like_moodles(
    demo: DemoServer, link: Link, tool: FakeTool
) -> None:
    initiation = demo.platform.launch("ali", link.id)
    assert (initiation.method, initiation.login_url) == ("POST", tool.login_url)
    trace = run_launch(requests.Session(), initiation)
    assert trace.launch.status_code == 200
    assert tool.login_methods == ["POST"]
    assert set(tool.logins[0]) == {
        "iss",
        "login_hint",
        "target_link_uri",
        "lti_message_hint",
        "client_id",
        "lti_deployment_id",
    }


@pytest.mark.parametrize("deep", [False, True], ids=["resource link", "deep linking"])
def test_an_id_token_lives_60_seconds_like_moodles(
    demo: DemoServer, registered: Tool, link: Link, deep: bool
) -> None:
    if deep:
        initiation = demo.platform.deep_link("ada", registered.client_id)
    else:
        initiation = demo.platform.launch("ali", link.id)
    claims = run_launch(requests.Session(), initiation).form.claims
    assert claims["exp"] - claims["iat"] == 60


def test_teacher_launch_has_the_instructor_role_and_substituted_custom(
    demo: DemoServer, link: Link
) -> None:
    trace = run_launch(requests.Session(), demo.platform.launch("demo-ada", link.id))
    claims = trace.form.claims
    assert claims[LTI + "roles"] == [INSTRUCTOR]
    assert claims[LTI + "custom"] == {"lesson": "expert/what-is-attention", "who": "demo-ada"}


@pytest.mark.parametrize("deep", [False, True], ids=["resource link", "deep linking"])
def test_a_launch_says_the_users_language(demo: DemoServer, link: Link, deep: bool) -> None:
    started = (
        demo.platform.deep_link("demo-ada", link.client_id, "tr-TR")
        if deep
        else demo.platform.launch("ali", link.id, "tr-TR")
    )
    claims = run_launch(requests.Session(), started).form.claims
    assert claims[LTI + "launch_presentation"]["locale"] == "tr-TR"


def test_a_link_without_line_item_has_no_lineitem_url(demo: DemoServer, registered: Tool) -> None:
    link = demo.platform.add_link(registered.client_id, "Ungraded")
    claims = run_launch(requests.Session(), demo.platform.launch("can", link.id)).form.claims
    assert "lineitem" not in claims[AGS]
    assert LTI + "custom" not in claims


def test_deep_linking_request_carries_its_settings(
    demo: DemoServer, registered: Tool, tool: FakeTool
) -> None:
    trace = run_launch(requests.Session(), demo.platform.deep_link("ada", registered.client_id))
    claims = verified(demo, trace.form.fields["id_token"], registered.client_id)
    assert claims[LTI + "message_type"] == "LtiDeepLinkingRequest"
    assert claims[LTI + "roles"] == [INSTRUCTOR]
    assert LTI + "resource_link" not in claims
    settings = claims[DL + "deep_linking_settings"]
    assert settings["deep_link_return_url"] == demo.platform.issuer + "/deep_link_return"
    assert settings["accept_types"] == ["ltiResourceLink"]
    assert "iframe" in settings["accept_presentation_document_targets"]
    assert settings["accept_multiple"] is True and settings["auto_create"] is True
    assert isinstance(settings["data"], str) and settings["data"]


def test_only_an_instructor_may_deep_link(demo: DemoServer, registered: Tool) -> None:
    with pytest.raises(DemoError) as refused:
        demo.platform.deep_link("ali", registered.client_id)
    assert refused.value.status == 403


def _other_tool(demo: DemoServer, tool: FakeTool) -> dict[str, str]:
    other = demo.platform.register_tool(
        name="Other", login_url=tool.login_url, launch_url=tool.launch_url, jwks_url=tool.jwks_url
    )
    return {"client_id": other.client_id}


AUTH_CASES: list[tuple[str, Callable[[DemoServer, FakeTool], dict[str, Any]], str]] = [
    ("foreign redirect", lambda d, t: {"redirect_uri": "http://127.0.0.1:1/steal"}, "redirect_uri"),
    ("redirect + slash", lambda d, t: {"redirect_uri": t.launch_url + "/"}, "not one of the"),
    ("redirect + query", lambda d, t: {"redirect_uri": t.launch_url + "?x=1"}, "not one of the"),
    ("unknown client", lambda d, t: {"client_id": "nobody"}, "unknown client_id"),
    ("other client", _other_tool, "issued for another client_id"),
    ("wrong login_hint", lambda d, t: {"login_hint": "demo-berna"}, "login_hint does not match"),
    ("forged message hint", lambda d, t: {"lti_message_hint": "forged"}, "lti_message_hint is"),
    ("no nonce", lambda d, t: {"nonce": None}, "nonce is missing"),
    ("no state", lambda d, t: {"state": None}, "state is missing"),
    ("no login_hint", lambda d, t: {"login_hint": None}, "login_hint is missing"),
    ("response_type", lambda d, t: {"response_type": "code"}, "response_type must be"),
    ("scope", lambda d, t: {"scope": "openid profile"}, "scope must be"),
    ("response_mode", lambda d, t: {"response_mode": "query"}, "response_mode must be"),
    ("prompt", lambda d, t: {"prompt": "login"}, "prompt must be"),
]


@pytest.mark.parametrize(
    "change, message", [c[1:] for c in AUTH_CASES], ids=[c[0] for c in AUTH_CASES]
)
def test_auth_refuses_a_bad_authentication_request(
    demo: DemoServer,
    tool: FakeTool,
    link: Link,
    change: Callable[[DemoServer, FakeTool], dict[str, Any]],
    message: str,
) -> None:
    params = tool.auth_params(demo.platform.launch("ali", link.id).params, **change(demo, tool))
    answer = requests.get(demo.platform.auth_url, params=params, timeout=5)
    assert answer.status_code == 400
    assert message in answer.text
    assert 'name="id_token"' not in answer.text


def test_auth_accepts_a_post_and_each_message_hint_once(
    demo: DemoServer, tool: FakeTool, link: Link
) -> None:
    params = tool.auth_params(demo.platform.launch("ali", link.id).params)
    first = requests.post(demo.platform.auth_url, data=params, timeout=5)
    assert first.status_code == 200
    assert set(parse_form(first.text).fields) == {"id_token", "state"}
    again = requests.post(demo.platform.auth_url, data=params, timeout=5)
    assert again.status_code == 400
    assert "already used" in again.text


def test_a_refused_request_leaves_the_message_hint_usable(
    demo: DemoServer, tool: FakeTool, link: Link
) -> None:
    login = demo.platform.launch("ali", link.id).params
    with pytest.raises(DemoError, match="redirect_uri"):
        demo.platform.authorize(tool.auth_params(login, redirect_uri="http://127.0.0.1:1/x"))
    assert demo.platform.authorize(tool.auth_params(login)).fields["id_token"]


def test_authorize_tampers_after_checking_for_negative_tool_tests(
    demo: DemoServer, tool: FakeTool, link: Link
) -> None:
    def drop_exp(claims: dict[str, Any]) -> None:
        del claims["exp"]

    trace = run_launch(
        requests.Session(),
        demo.platform.launch("ali", link.id),
        authorize=lambda p: demo.platform.authorize(p, mutate=drop_exp, headers={"kid": "old"}),
    )
    token = tool.launches[0]["id_token"]
    assert jwt.get_unverified_header(token)["kid"] == "old"
    claims = jwt.decode(
        token, demo.platform.key.public_pem, algorithms=["RS256"], options={"verify_aud": False}
    )
    assert "exp" not in claims and claims == trace.form.claims
    replaced = demo.platform.authorize(
        tool.auth_params(demo.platform.launch("ali", link.id).params),
        mutate=lambda claims: {**claims, "aud": ["someone-else"]},
    )
    assert replaced.claims["aud"] == ["someone-else"]


@pytest.mark.parametrize("algorithm", ["RS256", "HS256", "none"])
def test_sign_crafts_tokens_with_the_platform_key(demo: DemoServer, algorithm: str) -> None:
    token = demo.platform.sign({"iss": demo.platform.issuer, "sub": "x"}, algorithm=algorithm)
    header = jwt.get_unverified_header(token)
    assert header["alg"] == algorithm and header["kid"] == demo.platform.key.kid
    if algorithm == "RS256":
        claims = jwt.decode(token, demo.platform.key.public_pem, algorithms=["RS256"])
        assert claims == {"iss": demo.platform.issuer, "sub": "x"}
    else:
        with pytest.raises(jwt.PyJWTError):
            jwt.decode(token, demo.platform.key.public_pem, algorithms=["RS256"])


def test_launching_an_unknown_link_or_user_is_refused(demo: DemoServer, link: Link) -> None:
    with pytest.raises(DemoError, match="no resource link"):
        demo.platform.launch("ali", "rl-missing")
    with pytest.raises(DemoError, match="no user"):
        demo.platform.launch("zed", link.id)
