from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from demo import DemoError, DemoServer, run_launch
from tests.demo.fake_tool import LTI, TOOL_CONFIG, FakeTool

SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
LINEITEM = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
MEMBERSHIPS = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"


def registration_token(demo: DemoServer, tool: FakeTool) -> str:
    url = demo.platform.start_registration(tool.register_url)
    return parse_qs(urlsplit(url).query)["registration_token"][0]


def test_dynamic_registration_end_to_end(demo: DemoServer, tool: FakeTool) -> None:
    url = demo.platform.start_registration(tool.register_url)
    query = parse_qs(urlsplit(url).query)
    assert url.startswith(tool.register_url + "?")
    assert query["openid_configuration"] == [demo.platform.openid_config_url]

    page = requests.get(url, timeout=10)  # what the browser's frame opens
    assert "org.imsglobal.lti.close" in page.text
    [answer] = tool.registrations
    assert answer.status_code == 200, answer.text
    body = answer.json()
    client_id = body["client_id"]
    deployment_id = body[TOOL_CONFIG]["deployment_id"]
    assert set(body["scope"].split()) == {LINEITEM, SCORE, MEMBERSHIPS}  # unknown one dropped
    assert body["redirect_uris"] == [tool.launch_url]

    registered = demo.platform.tool(client_id)
    assert registered.active and registered.deployment_id == deployment_id
    assert registered.login_url == tool.login_url
    assert registered.launch_url == tool.launch_url
    assert registered.deep_link_url == tool.launch_url
    assert registered.jwks_url == tool.jwks_url
    assert registered.redirect_uris == (tool.launch_url,)

    link = demo.platform.add_link(client_id, "Lesson")
    trace = run_launch(requests.Session(), demo.platform.launch("berna", link.id))
    assert trace.launch.status_code == 200
    assert trace.form.claims[LTI + "deployment_id"] == deployment_id
    assert trace.form.claims[LTI + "custom"] == {"who": "demo-berna"}

    requests.get(url, timeout=10)  # the same token a second time
    assert tool.registrations[1].status_code == 401
    assert "already used" in tool.registrations[1].json()["error_description"]
    assert len(demo.platform.tools()) == 1


def test_registration_can_wait_for_activation_like_moodle(state_dir: Path, tool: FakeTool) -> None:
    with DemoServer(state_dir, activate_registrations=False) as demo:
        requests.get(demo.platform.start_registration(tool.register_url), timeout=10)
        client_id = tool.client_id
        assert not demo.platform.tool(client_id).active
        link = demo.platform.add_link(client_id, "Lesson")
        with pytest.raises(DemoError, match="activation"):
            demo.platform.launch("ali", link.id)
        tool.auth_url = demo.platform.auth_url
        assertion = tool.sign(tool.assertion_claims(demo.platform.token_url))
        refused = tool.token_request(demo.platform.token_url, SCORE, assertion)
        assert refused.status_code == 401 and "not activated" in refused.text

        activated = requests.post(demo.config.url(f"/admin/tools/{client_id}/activate"), timeout=5)
        assert activated.json()["active"] is True
        trace = run_launch(requests.Session(), demo.platform.launch("ali", link.id))
        assert trace.launch.status_code == 200


def _drop(name: str) -> Callable[[dict[str, Any]], None]:
    return lambda body: body.pop(name)


def _conf(**changes: Any) -> Callable[[dict[str, Any]], None]:
    return lambda body: body[TOOL_CONFIG].update(changes)


BAD_METADATA: list[tuple[str, Callable[[dict[str, Any]], Any], str]] = [
    ("no tool configuration", _drop(TOOL_CONFIG), "lti-tool-configuration object is missing"),
    ("no jwks_uri", _drop("jwks_uri"), "jwks_uri is missing"),
    ("no login uri", _drop("initiate_login_uri"), "initiate_login_uri is missing"),
    ("client secret", lambda b: b.update(token_endpoint_auth_method="none"), "private_key_jwt"),
    ("no redirect uris", lambda b: b.update(redirect_uris=[]), "redirect_uris must be"),
    ("grant types", lambda b: b.update(grant_types=["implicit"]), "client_credentials"),
    ("response types", lambda b: b.update(response_types=["code"]), "'id_token'"),
    ("application type", lambda b: b.update(application_type="native"), "application_type"),
    (
        "redirect off domain",
        lambda b: b.update(redirect_uris=["http://127.0.0.2:9/launch"]),
        "not on the tool's domain",
    ),
    (
        "plain http off loopback",
        lambda b: b.update(jwks_uri="http://tool.example/jwks"),
        "https URL",
    ),
    ("no domain", _conf(domain=""), "domain is missing"),
    ("bad message type", _conf(messages=[{"type": "LtiSubmissionReview"}]), "messages must be"),
    ("custom not strings", _conf(custom_parameters={"n": 1}), "custom_parameters"),
]


@pytest.mark.parametrize(
    "change, message", [c[1:] for c in BAD_METADATA], ids=[c[0] for c in BAD_METADATA]
)
def test_registration_refuses_bad_metadata_and_keeps_the_token(
    demo: DemoServer, tool: FakeTool, change: Callable[[dict[str, Any]], Any], message: str
) -> None:
    headers = {"Authorization": f"Bearer {registration_token(demo, tool)}"}
    body = tool.registration_request()
    change(body)
    answer = requests.post(demo.platform.registration_url, json=body, headers=headers, timeout=5)
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid_client_metadata"
    assert message in answer.json()["error_description"]
    assert demo.platform.tools() == []
    fixed = requests.post(
        demo.platform.registration_url, json=tool.registration_request(), headers=headers, timeout=5
    )
    assert fixed.status_code == 200


@pytest.mark.parametrize("authorization", [None, "Bearer", "Bearer forged", "Basic abc"])
def test_registration_needs_a_live_token(
    demo: DemoServer, tool: FakeTool, authorization: str | None
) -> None:
    registration_token(demo, tool)
    headers = {"Authorization": authorization} if authorization else {}
    answer = requests.post(
        demo.platform.registration_url, json=tool.registration_request(), headers=headers, timeout=5
    )
    assert answer.status_code == 401
    assert answer.json()["error"] == "invalid_token"


def test_registration_must_be_json(demo: DemoServer, tool: FakeTool) -> None:
    headers = {"Authorization": f"Bearer {registration_token(demo, tool)}"}
    answer = requests.post(demo.platform.registration_url, data="x=1", headers=headers, timeout=5)
    assert answer.status_code == 400 and "application/json" in answer.text


def test_register_by_hand_through_the_admin_api(demo: DemoServer, tool: FakeTool) -> None:
    fields = {
        "name": "By hand",
        "login_url": tool.login_url,
        "launch_url": tool.launch_url,
        "jwks_url": tool.jwks_url,
        "client_id": "hand-1",
        "deployment_id": "7:abc",
        "redirect_uris": [tool.launch_url, tool.url + "/lti/other"],
    }
    answer = requests.post(demo.config.url("/admin/tools"), json=fields, timeout=5)
    assert answer.status_code == 201
    tool_ = demo.platform.tool("hand-1")
    assert tool_.deployment_id == "7:abc"
    assert tool_.redirect_uris == (tool.launch_url, tool.url + "/lti/other")
    assert set(tool_.scopes) >= {SCORE, LINEITEM}

    bad = requests.post(
        demo.config.url("/admin/tools"), json={**fields, "jwks_url": None}, timeout=5
    )
    assert bad.status_code == 400 and "jwks" in bad.json()["error_description"]
    odd = requests.post(
        demo.config.url("/admin/tools"), json={**fields, "colour": "red"}, timeout=5
    )
    assert odd.status_code == 400 and "colour" in odd.json()["error_description"]


def test_a_tool_can_be_registered_with_an_inline_key_set(demo: DemoServer, tool: FakeTool) -> None:
    registered = tool.register_with(demo.platform, jwks_url=None, jwks={"keys": [tool.jwk]})
    tool.server.stop()  # nothing is fetched from the tool now
    token = tool.sign(tool.assertion_claims(demo.platform.token_url))
    answer = tool.token_request(demo.platform.token_url, SCORE, token)
    assert answer.status_code == 200, answer.text
    assert registered.jwks_url is None
