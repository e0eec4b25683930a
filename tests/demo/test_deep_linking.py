import time
from collections.abc import Callable
from typing import Any

import pytest
import requests

from demo import DemoServer, Tool, run_launch
from tests.demo.fake_tool import DL, LTI, FakeTool, impostor_key

Claims = dict[str, Any]


@pytest.fixture
def dl_request(demo: DemoServer, registered: Tool) -> Claims:
    """The claims of a real deep-linking request the teacher sent to the fake tool."""
    trace = run_launch(requests.Session(), demo.platform.deep_link("ada", registered.client_id))
    return trace.form.claims


def items(tool: FakeTool) -> list[dict[str, Any]]:
    return [
        {
            "type": "ltiResourceLink",
            "title": "What is attention?",
            "url": tool.launch_url + "?lesson=what-is-attention",
            "custom": {"lesson": "expert/what-is-attention"},
            "lineItem": {
                "scoreMaximum": 10,
                "label": "Attention",
                "resourceId": "expert/what-is-attention",
                "tag": "lesson",
            },
        },
        {"type": "ltiResourceLink", "title": "Reading only"},
    ]


def post_return(demo: DemoServer, token: str) -> requests.Response:
    return requests.post(demo.config.url("/deep_link_return"), data={"JWT": token}, timeout=10)


def test_return_creates_links_and_line_items(
    demo: DemoServer, tool: FakeTool, dl_request: Claims
) -> None:
    claims = tool.deep_link_claims(dl_request, items(tool), **{DL + "msg": "2 lessons added"})
    answer = post_return(demo, tool.sign(claims))
    assert answer.status_code == 200, answer.text
    assert "What is attention?" in answer.text and "2 lessons added" in answer.text

    graded, plain = demo.platform.links()
    assert (graded.title, plain.title) == ("What is attention?", "Reading only")
    assert graded.url == tool.launch_url + "?lesson=what-is-attention"
    assert graded.custom == {"lesson": "expert/what-is-attention"}
    assert plain.url == tool.launch_url and plain.custom == {}
    [item] = demo.platform.lineitems()
    assert (item.label, item.score_maximum, item.resource_id, item.tag) == (
        "Attention",
        10.0,
        "expert/what-is-attention",
        "lesson",
    )
    assert item.resource_link_id == graded.id and item.client_id == tool.client_id

    launch = run_launch(requests.Session(), demo.platform.launch("berna", graded.id)).form.claims
    assert launch[LTI + "target_link_uri"] == graded.url
    assert launch[LTI + "custom"] == {"lesson": "expert/what-is-attention"}
    ags = launch["https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"]
    assert ags["lineitem"] == demo.platform.lineitem_url(item)


def _signed(**changes: Any) -> Callable[[FakeTool, Claims], str]:
    """Sign a correct response after changes (a value None drops the claim)."""

    def make(tool: FakeTool, request: Claims) -> str:
        return tool.sign(tool.deep_link_claims(request, items(tool), **changes))

    return make


def _item(**changes: Any) -> Callable[[FakeTool, Claims], str]:
    def make(tool: FakeTool, request: Claims) -> str:
        content = [{**items(tool)[0], **changes}]
        return tool.sign(tool.deep_link_claims(request, content))

    return make


def _bad_signature(tool: FakeTool, request: Claims) -> str:
    return tool.sign(tool.deep_link_claims(request, items(tool)), key=impostor_key())


def _unknown_kid(tool: FakeTool, request: Claims) -> str:
    return tool.sign(tool.deep_link_claims(request, items(tool)), kid="no-such-key")


NOW = int(time.time())
BAD: list[tuple[str, Callable[[FakeTool, Claims], str], str]] = [
    ("bad signature", _bad_signature, "signature does not verify"),
    ("unknown kid", _unknown_kid, "no key of the tool's key set"),
    ("wrong aud", _signed(aud="http://127.0.0.1:1/other"), "aud must be the platform issuer"),
    ("expired", _signed(iat=NOW - 600, exp=NOW - 300), "expired"),
    ("no exp", _signed(exp=None), "'exp'"),
    ("no iat", _signed(iat=None), "'iat'"),
    ("iat in future", _signed(iat=NOW + 3600, exp=NOW + 7200), "iat"),
    ("unknown iss", _signed(iss="stranger"), "not a registered client id"),
    ("no nonce", _signed(nonce=None), "no nonce"),
    ("wrong deployment", _signed(**{LTI + "deployment_id": "9:other"}), "deployment_id"),
    ("message type", _signed(**{LTI + "message_type": "LtiResourceLinkRequest"}), "message_type"),
    ("version", _signed(**{LTI + "version": "1.1"}), "version"),
    ("forged data", _signed(**{DL + "data": "forged"}), "data claim"),
    ("no data", _signed(**{DL + "data": None}), "data claim"),
    ("items not a list", _signed(**{DL + "content_items": {"type": "x"}}), "content_items"),
    ("unasked type", _item(type="html"), "not asked for"),
    ("zero points", _item(lineItem={"scoreMaximum": 0}), "scoreMaximum"),
    ("points as text", _item(lineItem={"scoreMaximum": "10"}), "scoreMaximum"),
    ("foreign url", _item(url="https://evil.example/x"), "not on the tool's host"),
    ("custom not strings", _item(custom={"n": 1}), "custom"),
]


@pytest.mark.parametrize("make, message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_return_refuses_a_bad_response(
    demo: DemoServer,
    tool: FakeTool,
    dl_request: Claims,
    make: Callable[[FakeTool, Claims], str],
    message: str,
) -> None:
    answer = post_return(demo, make(tool, dl_request))
    assert answer.status_code == 400
    assert message in answer.text.replace("&#39;", "'")
    assert demo.platform.links() == [] and demo.platform.lineitems() == []


def test_a_replayed_response_is_refused(
    demo: DemoServer, tool: FakeTool, dl_request: Claims
) -> None:
    token = tool.sign(tool.deep_link_claims(dl_request, items(tool)))
    assert post_return(demo, token).status_code == 200
    replay = post_return(demo, token)
    assert replay.status_code == 400 and "replayed" in replay.text
    second = post_return(demo, tool.sign(tool.deep_link_claims(dl_request, items(tool))))
    assert second.status_code == 400 and "pending deep-linking request" in second.text
    assert len(demo.platform.links()) == 2


def test_a_return_without_jwt_is_refused(demo: DemoServer) -> None:
    assert post_return(demo, "").status_code == 400
    garbage = post_return(demo, "not.a.jwt")
    assert garbage.status_code == 400 and "not a readable JWT" in garbage.text
